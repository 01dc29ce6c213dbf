//! The conversation ring: the newest [`MAX_MSGS`] messages, in RAM.

use crate::message::{MSG_MAX_BYTES, Message, Role, Text};

/// Messages kept (`CLAW_SESSION_MAX_MSGS`).
pub(crate) const MAX_MSGS: usize = 10;

const EMPTY: Message = Message {
    role: Role::User,
    text: Text::EMPTY,
    seq: 0,
};

/// The newest messages, oldest first, in a circular array of slots.
///
/// Messages are written into their slot in place: a message is 260 bytes,
/// and moving one through the stack (as a `Deque` of values does) would
/// cost that much stack per copy on a 1 KiB stack budget.
pub struct SessionRing {
    slots: [Message; MAX_MSGS],
    head: usize,
    len: usize,
}

impl SessionRing {
    /// An empty ring.
    pub const fn new() -> Self {
        Self {
            slots: [EMPTY; MAX_MSGS],
            head: 0,
            len: 0,
        }
    }

    fn slot(&self, i: usize) -> usize {
        // head < MAX_MSGS and i <= MAX_MSGS: one subtraction, no division.
        let j = self.head + i;
        if j >= MAX_MSGS { j - MAX_MSGS } else { j }
    }

    fn write(&mut self, slot: usize, role: Role, text: &[u8]) {
        if let Some(m) = self.slots.get_mut(slot) {
            m.role = role;
            m.seq = 0;
            m.text.set(text);
        }
    }

    /// Copies slot `from` over slot `to`, in place.
    fn copy_slot(&mut self, from: usize, to: usize) {
        if let Ok([a, b]) = self.slots.get_disjoint_mut([from, to]) {
            b.role = a.role;
            b.seq = a.seq;
            b.text.clone_from(&a.text);
        }
    }

    /// Swaps the texts of two slots (not their roles nor numbers).
    fn swap_text(&mut self, a: usize, b: usize) {
        if let Ok([a, b]) = self.slots.get_disjoint_mut([a, b]) {
            a.text.swap(&mut b.text);
        }
    }

    // Reading a file: a record is decoded straight into the slot it lands
    // in (no 255-byte buffer on the stack under the file reader), then
    // committed. When the ring is full that slot holds a message (the
    // oldest turn): see [`SessionRing::load_slot`].

    /// The slot the next message read from a file is decoded into: a free
    /// one, or when the ring is full the one a push drops (the oldest turn,
    /// after the summary). Its text is clobbered by the decode; its role
    /// and number are not. [`SessionRing::is_full`] says whether it held a
    /// message.
    pub(crate) fn load_slot(&self) -> usize {
        if self.len < MAX_MSGS {
            self.slot(self.len)
        } else {
            self.slot(usize::from(self.summary().is_some()))
        }
    }

    /// Whether every slot holds a message.
    pub(crate) fn is_full(&self) -> bool {
        self.len >= MAX_MSGS
    }

    /// The buffer of slot `slot`'s text, to decode into; then
    /// [`SessionRing::set_loaded_len`].
    pub(crate) fn slot_buf(&mut self, slot: usize) -> Option<&mut [u8; MSG_MAX_BYTES]> {
        self.slots.get_mut(slot).map(|m| &mut m.text.buf)
    }

    /// The length of the text decoded into slot `slot`.
    pub(crate) fn set_loaded_len(&mut self, slot: usize, len: usize) {
        if let Some(m) = self.slots.get_mut(slot) {
            m.text.len = len.min(MSG_MAX_BYTES) as u8;
        }
    }

    /// The number of slot `slot` (see [`SessionRing::load_slot`]).
    pub(crate) fn slot_seq(&self, slot: usize) -> u32 {
        self.slots.get(slot).map_or(0, |m| m.seq)
    }

    /// [`SessionRing::push`] of the text decoded into `slot` (which is
    /// [`SessionRing::load_slot`]).
    pub(crate) fn push_loaded(&mut self, slot: usize, role: Role) {
        #[cfg(feature = "lasting")]
        if role == Role::Summary {
            self.head = slot;
            self.len = 1;
            self.set_role(slot, role);
            return;
        }
        if self.len >= MAX_MSGS {
            if self.summary().is_some() {
                // `slot` is the oldest turn's: the summary moves there, the
                // new text goes to the summary's old slot.
                let (s, t) = (self.slot(0), slot);
                self.swap_text(s, t);
                if let Ok([a, b]) = self.slots.get_disjoint_mut([s, t]) {
                    b.role = a.role;
                    b.seq = a.seq;
                }
                self.head = t;
                self.set_role(s, role);
                return;
            }
            self.head = self.slot(1);
            self.len -= 1;
        }
        self.len += 1;
        self.set_role(slot, role);
    }

    /// [`SessionRing::fold_keep`] with the summary decoded into `slot`
    /// (which is [`SessionRing::load_slot`]). False when that slot held a
    /// message the fold keeps: its text must be read again (its role and
    /// number are intact).
    #[cfg(feature = "lasting")]
    pub(crate) fn fold_keep_loaded(&mut self, slot: usize, keep: usize) -> bool {
        let head = usize::from(self.summary().is_some());
        let fold = (self.len - head).saturating_sub(keep);
        let full = self.is_full();
        let (to, intact) = if head + fold > 0 {
            // As `fold`: the slots of the `gone` oldest entries go, the last
            // of them takes the summary and becomes the head.
            let gone = (head + fold).min(self.len);
            let intact = !full || (0..gone).any(|j| self.slot(j) == slot);
            let to = self.slot(gone - 1);
            self.head = to;
            self.len -= gone - 1;
            (to, intact)
        } else {
            // No summary, all turns kept: in front of them (full: over the
            // oldest, which is `slot`).
            if full {
                self.head = self.slot(1);
                self.len -= 1;
            }
            self.head = self.slot(MAX_MSGS - 1);
            self.len += 1;
            (self.head, true)
        };
        if to != slot {
            self.swap_text(to, slot);
        }
        self.set_role(to, Role::Summary);
        intact
    }

    fn set_role(&mut self, slot: usize, role: Role) {
        if let Some(m) = self.slots.get_mut(slot) {
            m.role = role;
            m.seq = 0;
        }
    }

    /// Appends `text` (already validated and cut to [`MSG_MAX_BYTES`]),
    /// dropping the oldest turn when full. A summary stays at the head: the
    /// oldest turn after it goes instead. A summary pushed here (the file
    /// reader meeting a summary line) replaces everything before it.
    pub fn push(&mut self, role: Role, text: &[u8]) {
        #[cfg(feature = "lasting")]
        if role == Role::Summary {
            self.head = 0;
            self.len = 1;
            self.write(0, role, text);
            return;
        }
        if self.len >= MAX_MSGS {
            if self.summary().is_some() {
                // The summary moves one slot on, over the oldest turn.
                self.copy_slot(self.slot(0), self.slot(1));
            }
            self.head = self.slot(1);
            self.len -= 1;
        }
        self.write(self.slot(self.len), role, text);
        self.len += 1;
    }

    /// The summary at the head, if any.
    pub fn summary(&self) -> Option<&Message> {
        #[cfg(feature = "lasting")]
        return self.get(0).filter(|m| m.role == Role::Summary);
        #[cfg(not(feature = "lasting"))]
        None
    }

    /// Makes `summary` the head and keeps only the newest `keep` turns after
    /// it (all of them when there are fewer): how a compaction record is
    /// replayed.
    #[cfg(feature = "lasting")]
    pub fn fold_keep(&mut self, keep: usize, summary: &[u8]) {
        let head = usize::from(self.summary().is_some());
        let fold = (self.len - head).saturating_sub(keep);
        if head + fold > 0 {
            self.fold(fold, summary);
            return;
        }
        // Nothing to reuse: the summary goes in front of the turns.
        if self.len >= MAX_MSGS {
            self.head = self.slot(1);
            self.len -= 1;
        }
        self.head = self.slot(MAX_MSGS - 1);
        self.len += 1;
        self.write(self.head, Role::Summary, summary);
    }

    /// Replaces the summary (if any) and the `fold` oldest turns after it
    /// by one summary entry.
    #[cfg(feature = "lasting")]
    pub fn fold(&mut self, fold: usize, summary: &[u8]) {
        let gone = (usize::from(self.summary().is_some()) + fold).min(self.len);
        let Some(reuse) = gone.checked_sub(1) else {
            return;
        };
        // The last slot that goes takes the summary and becomes the head.
        let slot = self.slot(reuse);
        self.write(slot, Role::Summary, summary);
        self.head = slot;
        self.len -= reuse;
    }

    /// Messages held.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Drops every message.
    pub fn clear(&mut self) {
        self.head = 0;
        self.len = 0;
    }

    /// Oldest first.
    pub fn iter(&self) -> impl Iterator<Item = &Message> {
        (0..self.len).filter_map(|i| self.slots.get(self.slot(i)))
    }

    /// The `i`-th message, to change its `seq`.
    pub fn get_mut(&mut self, i: usize) -> Option<&mut Message> {
        if i < self.len {
            let slot = self.slot(i);
            self.slots.get_mut(slot)
        } else {
            None
        }
    }

    /// The `i`-th message, oldest first.
    pub fn get(&self, i: usize) -> Option<&Message> {
        if i < self.len {
            self.slots.get(self.slot(i))
        } else {
            None
        }
    }
}

impl Default for SessionRing {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(r: &SessionRing) -> std::vec::Vec<String> {
        r.iter()
            .map(|m| String::from_utf8(m.text.to_vec()).unwrap())
            .collect()
    }

    #[test]
    fn keeps_the_newest_in_order_across_wraps() {
        let mut r = SessionRing::new();
        for i in 0..37 {
            r.push(Role::User, format!("m{i}").as_bytes());
            assert_eq!(r.len(), (i + 1).min(MAX_MSGS));
        }
        assert_eq!(texts(&r).first().unwrap(), "m27");
        assert_eq!(texts(&r).last().unwrap(), "m36");
    }

    #[cfg(feature = "lasting")]
    #[test]
    fn a_summary_stays_at_the_head() {
        let mut r = SessionRing::new();
        r.push(Role::User, b"old");
        r.push(Role::Summary, b"S");
        assert_eq!(texts(&r), ["S"], "a summary line replaces what came before");
        for i in 0..12 {
            r.push(Role::User, format!("t{i}").as_bytes());
        }
        assert_eq!(r.len(), MAX_MSGS);
        assert_eq!(r.summary().map(|m| &m.text[..]), Some(&b"S"[..]));
        assert_eq!(texts(&r)[1], "t3");
        assert_eq!(texts(&r)[9], "t11");
    }

    #[cfg(feature = "lasting")]
    #[test]
    fn fold_replaces_summary_and_oldest_turns() {
        let mut r = SessionRing::new();
        for i in 0..14 {
            r.push(Role::User, format!("t{i}").as_bytes());
        }
        r.fold(3, b"S1");
        assert_eq!(
            texts(&r),
            ["S1", "t7", "t8", "t9", "t10", "t11", "t12", "t13"]
        );
        r.fold(2, b"S2");
        assert_eq!(texts(&r), ["S2", "t9", "t10", "t11", "t12", "t13"]);
        r.push(Role::Tool, b"x");
        assert_eq!(r.len(), 7);
    }
}
