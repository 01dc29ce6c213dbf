//! Sessions that last (feature `lasting`): counting bytes and tokens into
//! the session's [`Stats`], compaction into a summary at the head of the
//! ring, the archive of what is folded, a fresh session on demand.

use crate::message::{MSG_MAX_BYTES, Message, Role};
use crate::port::{Errno, Port};
use crate::text::utf8_prefix;

use super::{Session, Stats, TOKENS_MAX, archive};

impl Session {
    /// Counts one exchange (feature `lasting`); no flash write, but the
    /// session is dirty until the next flush records it.
    #[cfg(feature = "lasting")]
    pub fn account<P: Port>(&mut self, port: &mut P, add: &Stats) {
        let _ = self.ensure_loaded(port);
        self.account_loaded(add);
    }

    /// [`Session::account`] into a ring already loaded (no I/O); nothing
    /// when it is not: counting onto an unread file would overwrite its
    /// figures.
    #[cfg(feature = "lasting")]
    pub fn account_loaded(&mut self, add: &Stats) {
        if !self.loaded {
            return;
        }
        // Whoever reports them (the agent, or a caller of the C export).
        let tokens = |v: u32| if v <= TOKENS_MAX { v } else { 0 };
        let s = &mut self.stats;
        s.in_bytes = s.in_bytes.saturating_add(add.in_bytes);
        s.out_bytes = s.out_bytes.saturating_add(add.out_bytes);
        s.in_tokens = s.in_tokens.saturating_add(tokens(add.in_tokens));
        s.out_tokens = s.out_tokens.saturating_add(tokens(add.out_tokens));
        s.context_bytes = add.context_bytes;
        s.exchanges = s.exchanges.saturating_add(1);
        if add.last_active != 0 {
            s.last_active = add.last_active;
        }
        self.dirty = true;
    }

    /// The statistics (feature `lasting`).
    #[cfg(feature = "lasting")]
    pub fn stats<P: Port>(&mut self, port: &mut P) -> Stats {
        let _ = self.ensure_loaded(port);
        self.stats
    }

    /// The statistics as they are in RAM (after [`Session::ring`] loaded
    /// the ring; feature `lasting`).
    #[cfg(feature = "lasting")]
    pub fn stats_loaded(&self) -> Stats {
        self.stats
    }

    /// Folds all but the newest `keep` turns (and the old summary) into one
    /// summary entry at the head of the ring (feature `lasting`). The
    /// folded turns go to the archive first when it is on; a tool turn
    /// stays with the turn before it (the one that asked for it), and a
    /// reply with its question (folding one turn less). `summary` is the
    /// text the backend wrote, or `None` for a local digest. Returns how
    /// many turns were folded; the next flush records the compaction as a
    /// summary line with `"keep"` in its batch.
    #[cfg(feature = "lasting")]
    pub fn compact<P: Port>(
        &mut self,
        port: &mut P,
        summary: Option<&[u8]>,
        keep: usize,
    ) -> Result<usize, Errno> {
        self.ensure_loaded(port)?;
        self.compact_loaded(port, summary, keep)
    }

    /// [`Session::compact`] of a ring already loaded (the port writes the
    /// archive only): `EIO` when it is not.
    #[cfg(feature = "lasting")]
    pub fn compact_loaded<P: Port>(
        &mut self,
        port: &mut P,
        summary: Option<&[u8]>,
        keep: usize,
    ) -> Result<usize, Errno> {
        if !self.loaded {
            return Err(Errno::EIO);
        }
        let head = self.head();
        let fold = self.fold_plan(keep);
        if fold == 0 {
            return Ok(0);
        }
        if self.archive {
            archive::append(port, self.ring.iter().skip(head).take(fold))?;
        }
        let turns = self.ring.len() - head;
        let kept = turns - fold;
        if usize::from(self.unflushed) > turns {
            // Pending turns the ring lost: only a fold records the ring.
            self.fold_due = true;
        }
        let pending = usize::from(self.unflushed).min(kept);
        self.summarize(head, fold, summary);
        self.unflushed = pending as u8;
        self.compaction = Some((pending as u8, kept as u8));
        self.dirty = true;
        Ok(fold)
    }

    /// How many turns `compact(_, keep)` folds, without folding them: all
    /// but the newest `keep` after the summary, less what keeps a tool turn
    /// with the turn that asked for it, and a reply with its question.
    #[cfg(feature = "lasting")]
    pub fn fold_plan(&self, keep: usize) -> usize {
        let head = self.head();
        let turns = self.ring.len() - head;
        let role_at = |f: usize| self.ring.get(head + f).map(|m| m.role);
        let mut fold = turns.saturating_sub(keep);
        while fold > 0 && role_at(fold) == Some(Role::Tool) {
            fold -= 1;
        }
        if fold > 0
            && role_at(fold) == Some(Role::Assistant)
            && role_at(fold - 1) == Some(Role::User)
        {
            fold -= 1;
        }
        fold
    }

    /// Builds the new summary and folds it into the ring. Out of line: its
    /// 255-byte buffer must not sit on the stack under the file passes.
    #[cfg(feature = "lasting")]
    // stack: see docs/STACK.md
    #[inline(never)]
    fn summarize(&mut self, head: usize, fold: usize, summary: Option<&[u8]>) {
        let mut text: heapless::Vec<u8, MSG_MAX_BYTES> = heapless::Vec::new();
        match summary {
            Some(s) => {
                let n = utf8_prefix(s, MSG_MAX_BYTES).unwrap_or(0);
                let _ = text.extend_from_slice(s.get(..n).unwrap_or(&[]));
            }
            None => {
                if let Some(old) = self.ring.summary() {
                    let _ = text.extend_from_slice(&old.text);
                }
                for m in self.ring.iter().skip(head).take(fold) {
                    digest(&mut text, m);
                }
            }
        }
        self.ring.fold(fold, &text);
    }

    /// Retires the session (feature `lasting`): with the archive on, every
    /// entry goes there first; then the session is cleared (statistics
    /// too). Nothing changes when the archive cannot be written.
    #[cfg(feature = "lasting")]
    pub fn start_new<P: Port>(&mut self, port: &mut P) -> Result<(), Errno> {
        self.ensure_loaded(port)?;
        self.start_new_loaded(port)
    }

    /// [`Session::start_new`] of a ring already loaded (the port archives
    /// and retires the files): `EIO` when it is not.
    #[cfg(feature = "lasting")]
    pub fn start_new_loaded<P: Port>(&mut self, port: &mut P) -> Result<(), Errno> {
        if !self.loaded {
            return Err(Errno::EIO);
        }
        if self.archive && !self.ring.is_empty() {
            archive::append(port, self.ring.iter())?;
        }
        self.clear(port);
        Ok(())
    }
}

/// Appends a short account of `m` to a local digest, dropping the oldest
/// bytes (on a character boundary) when it would pass the message size.
#[cfg(feature = "lasting")]
fn digest(text: &mut heapless::Vec<u8, MSG_MAX_BYTES>, m: &Message) {
    /// Bytes of each folded turn kept in a local digest.
    const PIECE: usize = 60;
    let body = m
        .text
        .get(..crate::text::floor_char_boundary(&m.text, PIECE))
        .unwrap_or(&[]);
    let sep: &[u8] = if text.is_empty() { b"" } else { b"; " };
    let need = sep.len() + m.role.name().len() + 2 + body.len();
    let over = (text.len() + need).saturating_sub(MSG_MAX_BYTES);
    if over > 0 {
        // Keep the newest part: cut the front on a character boundary.
        let mut cut = over.min(text.len());
        while text.get(cut).is_some_and(|b| b & 0xC0 == 0x80) {
            cut += 1;
        }
        // Shift in place (a second buffer would double the stack).
        let keep = text.len() - cut;
        for i in 0..keep {
            if let Some(b) = text.get(i + cut).copied() {
                if let Some(d) = text.get_mut(i) {
                    *d = b;
                }
            }
        }
        text.truncate(keep);
    }
    for piece in [sep, m.role.name(), b": ", body] {
        let _ = text.extend_from_slice(piece);
    }
}
