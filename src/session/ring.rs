//! The conversation ring: the newest [`MAX_MSGS`] messages, in RAM.

use heapless::{Deque, Vec};

/// Messages kept (`CLAW_SESSION_MAX_MSGS`).
pub(crate) const MAX_MSGS: usize = 10;
/// Bytes of a stored message (`CLAW_MSG_MAX_LEN` - 1 for the C NUL).
pub(crate) const MSG_MAX_BYTES: usize = 255;

/// Who said it (`claw_role_t`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Role {
    /// `CLAW_ROLE_USER`.
    User = 0,
    /// `CLAW_ROLE_ASSISTANT`.
    Assistant = 1,
    /// `CLAW_ROLE_SYSTEM`.
    System = 2,
    /// `CLAW_ROLE_TOOL`.
    Tool = 3,
}

impl Role {
    /// The C value, or `None` when it is not a role.
    pub fn from_c(v: u8) -> Option<Role> {
        match v {
            0 => Some(Role::User),
            1 => Some(Role::Assistant),
            2 => Some(Role::System),
            3 => Some(Role::Tool),
            _ => None,
        }
    }

    /// The name used in the session file and in the rendered context.
    pub fn name(self) -> &'static [u8] {
        match self {
            Role::User => b"user",
            Role::Assistant => b"assistant",
            Role::System => b"system",
            Role::Tool => b"tool",
        }
    }

    /// Parses a file name.
    pub fn from_name(name: &[u8]) -> Option<Role> {
        [Role::User, Role::Assistant, Role::System, Role::Tool]
            .into_iter()
            .find(|r| r.name() == name)
    }
}

/// One stored message: valid UTF-8 of at most [`MSG_MAX_BYTES`] bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Message {
    /// Who said it.
    pub role: Role,
    /// What was said.
    pub text: Vec<u8, MSG_MAX_BYTES>,
}

/// The newest messages, oldest first.
pub struct SessionRing {
    msgs: Deque<Message, MAX_MSGS>,
}

impl SessionRing {
    /// An empty ring.
    pub const fn new() -> Self {
        Self { msgs: Deque::new() }
    }

    /// Appends `text` (already validated and cut to [`MSG_MAX_BYTES`]),
    /// dropping the oldest message when full.
    pub fn push(&mut self, role: Role, text: &[u8]) {
        let mut m = Message {
            role,
            text: Vec::new(),
        };
        let keep = text.get(..MSG_MAX_BYTES.min(text.len())).unwrap_or(&[]);
        // Cannot fail: `keep` is at most the capacity.
        let _ = m.text.extend_from_slice(keep);
        if self.msgs.is_full() {
            self.msgs.pop_front();
        }
        let _ = self.msgs.push_back(m);
    }

    /// Messages held.
    pub fn len(&self) -> usize {
        self.msgs.len()
    }

    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.msgs.is_empty()
    }

    /// Drops every message.
    pub fn clear(&mut self) {
        self.msgs.clear();
    }

    /// Oldest first.
    pub fn iter(&self) -> impl Iterator<Item = &Message> {
        self.msgs.iter()
    }

    /// The `i`-th message, oldest first.
    pub fn get(&self, i: usize) -> Option<&Message> {
        self.msgs.iter().nth(i)
    }
}

impl Default for SessionRing {
    fn default() -> Self {
        Self::new()
    }
}
