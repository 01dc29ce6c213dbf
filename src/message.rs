//! One message of the conversation: who said it ([`Role`]) and what
//! ([`Text`], at most [`MSG_MAX_BYTES`] bytes). A leaf: the ring that holds
//! messages, the session file's format and the context all build on it.

use core::fmt;
use core::ops::Deref;

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
    /// `CLAW_ROLE_SUMMARY`: a compaction summary; only ever the first entry
    /// of the ring, never added by `claw_session_add`.
    Summary = 4,
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
            Role::Summary => b"summary",
        }
    }

    /// Parses a file name.
    pub fn from_name(name: &[u8]) -> Option<Role> {
        // A build without `lasting` does not know summaries: their lines are
        // skipped like any unknown record.
        #[cfg(feature = "lasting")]
        let roles = [
            Role::User,
            Role::Assistant,
            Role::System,
            Role::Tool,
            Role::Summary,
        ];
        #[cfg(not(feature = "lasting"))]
        let roles = [Role::User, Role::Assistant, Role::System, Role::Tool];
        roles.into_iter().find(|r| r.name() == name)
    }
}

/// The bytes of a message, at most [`MSG_MAX_BYTES`] (a one-byte length:
/// 256 bytes a slot). Reads as a byte slice.
#[derive(Clone)]
pub struct Text {
    // The ring decodes a file's record straight into them.
    pub(crate) len: u8,
    pub(crate) buf: [u8; MSG_MAX_BYTES],
}

impl Text {
    pub(crate) const EMPTY: Text = Text {
        len: 0,
        buf: [0; MSG_MAX_BYTES],
    };

    /// Replaces the text by (at most [`MSG_MAX_BYTES`] bytes of) `s`.
    pub(crate) fn set(&mut self, s: &[u8]) {
        crate::text::copy_prefix(&mut self.buf, s);
        self.len = s.len().min(MSG_MAX_BYTES) as u8;
    }

    /// Rewrites the text in place: `f` fills the buffer and returns the
    /// length (cut to [`MSG_MAX_BYTES`]).
    pub fn fill(&mut self, f: impl FnOnce(&mut [u8; MSG_MAX_BYTES]) -> usize) {
        let n = f(&mut self.buf);
        self.len = n.min(MSG_MAX_BYTES) as u8;
    }

    pub(crate) fn swap(&mut self, other: &mut Text) {
        // In place, byte for byte: no 256-byte temporary on the stack.
        self.buf.swap_with_slice(&mut other.buf);
        core::mem::swap(&mut self.len, &mut other.len);
    }
}

impl Deref for Text {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        self.buf.get(..usize::from(self.len)).unwrap_or(&[])
    }
}

impl PartialEq for Text {
    fn eq(&self, other: &Text) -> bool {
        **self == **other
    }
}

impl Eq for Text {}

impl fmt::Debug for Text {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        (**self).fmt(f)
    }
}

/// One stored message: valid UTF-8 of at most [`MSG_MAX_BYTES`] bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Message {
    /// Who said it.
    pub role: Role,
    /// What was said.
    pub text: Text,
    /// The batch that wrote it to flash (0: not written yet). See
    /// [`crate::session`].
    pub seq: u32,
}
