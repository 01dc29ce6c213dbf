//! The session: the conversation ring in RAM and its copy on flash.
//!
//! # On flash: a base and six slots
//!
//! ```text
//! /.bentoclaw_session        the base: the ring as of its last fold
//! /.bentoclaw_session.0 … .5 one flush ("batch") each, slot = seq mod 6
//! ```
//!
//! The record format is in [`crate::format::session`]. Every flush writes
//! the messages added since the last flush as one batch into the slot of
//! its number (`"wb"`: on littlefs one metadata commit, a single 256-byte
//! page for a short exchange). The batch's last line carries `"end":true`
//! and its number `"seq"`; a slot without its end line is ignored, so a
//! batch cut short by a power loss is dropped whole.
//!
//! A load reads the base (its lines up to its last end line; a file in the
//! seed's plain form, with no end line, whole), then every slot whose batch
//! is newer than the base, in `seq` order (slots count only beside a base of
//! ours, `seq` >= 1: a session file edited by hand, or the vendor library's,
//! is what it says, and the first flush writes the base), replaying them onto the ring
//! exactly as RAM saw them: pushes, and compactions (a `summary` line with
//! `"keep":K` keeps the newest K turns before it).
//!
//! **A compaction** goes into the next batch. One whose batch would pass
//! 512 bytes (what littlefs keeps inline on the upstream port's 4 KiB
//! blocks; 1,022 on the BENTO board's 256 KiB ones) goes to flash first in
//! a batch of its own — the ring right after the compaction, a state the
//! session passed through — and the exchange's turns in the next.
//!
//! **When the base is rewritten ("fold").** A flush overwrites the slot of
//! batch `seq - 6`. When that batch still holds an entry of the ring as it
//! is on flash now, the flush instead writes the whole ring to
//! `/.bentoclaw_session.tmp` and renames it over the base, whose end line
//! then carries this batch's `seq` (the slots up to it are ignored from
//! then on). So a cut at any point of a flush leaves the old ring readable
//! (the slot being overwritten holds nothing of it) or the new one, on any
//! file system. With short exchanges the six slots hold the whole ring
//! (ten messages in five batches) and the base is not rewritten at all; see
//! `docs/DESIGN.md` for what the alternatives measured.
//!
//! **Numbers at the top of `u32`.** A `seq` is read as the number it is,
//! one past `u32::MAX` (`10^20`) as `u32::MAX`; anything else (negative,
//! a fraction, not a number) as 0, which no batch of ours has. No batch is
//! ever numbered [`SEQ_TOP`] (`u32::MAX`): the flush that would take that
//! number folds instead, writing the base as batch `SEQ_TOP`, which retires
//! every slot whatever it holds, then removes the slots and writes the base
//! again as batch 1 (should that write fail, the next flush does). While a
//! slot cannot be removed, the numbers stay at the top (each flush a fold)
//! and the removal is tried again. A cut at
//! any point leaves the ring readable: the base at `SEQ_TOP` beside
//! retired slots, or the base at 1 once they are gone. So about four
//! billion flushes, or a file that says a number near the top, cost one
//! flush that writes the base twice, and nothing is lost.
//!
//! # Laziness and failures
//!
//! `init` touches no file. The first call that needs the ring loads it; a
//! file that exists but cannot be read is left alone and read again later
//! (the session stays unloaded and `add` refuses until then: a flush never
//! replaces a good file with an empty ring). A damaged base (lines that are
//! not records) is rewritten by the next flush. `add` never writes flash;
//! `flush` does, and keeps the ring dirty when it fails (the retry writes
//! the same batch again, from RAM, through a fresh handle). `clear` removes
//! the base, which retires every slot at once (slots count only beside a
//! base), then the slots; when the remove fails it writes an empty base
//! whose `seq` retires them; only when that fails too does the clear stay
//! pending (the next flush retries it), and only then could a reboot before
//! it read the old conversation back.

#[cfg(feature = "lasting")]
pub mod archive;
mod flush;
#[cfg(feature = "lasting")]
mod lasting;
mod load;
pub mod ring;
#[cfg(test)]
mod tests;
#[cfg(all(test, feature = "lasting"))]
mod tests_lasting;

use core::ffi::CStr;

#[cfg(feature = "lasting")]
use crate::format::session::StatsArray;
use crate::message::{MSG_MAX_BYTES, Message, Role};
use crate::port::{Errno, Port};
use crate::text::utf8_prefix;
use ring::{MAX_MSGS, SessionRing};

/// Slot files beside the base.
pub const SLOTS: usize = 6;

/// The number no slot batch takes: a base of it retires every slot (see
/// the module docs, "Numbers at the top of `u32`").
pub const SEQ_TOP: u32 = u32::MAX;

/// The slot files, by `seq % SLOTS`.
pub const SLOT_PATHS: [&CStr; SLOTS] = crate::port::SESSION_SLOT_PATHS;

fn slot_of(seq: u32) -> usize {
    (seq % SLOTS as u32) as usize
}

/// Why `add` refused a message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AddError {
    /// The content is not UTF-8.
    NotUtf8,
    /// The session file exists but could not be read; the ring is not
    /// touched, and the next call tries again.
    Io(Errno),
}

/// Byte and token accounting of a session (feature `lasting`). Persisted
/// on the end line of every batch as `"st":[in,out,tin,tout,ctx,n,at]`;
/// Most tokens one exchange may count in each direction (`TOKENS_MAX`;
/// the backend's `X-Tokens-In`, `X-Tokens-Out`, docs/BACKEND.md §3, or a
/// caller of `claw_session_account`): a count beyond it is ignored (taken
/// as 0 for that exchange; its bytes still count), so one reply cannot pin
/// or wrap the session's counters. A million: past any model's context
/// window for a request of at most `PROMPT_MAX` + `CONTEXT_MAX` bytes, and
/// 4,295 such exchanges before a `u32` counter (saturating) is full.
#[cfg(feature = "lasting")]
pub const TOKENS_MAX: u32 = 1_000_000;

/// reset with the session.
#[cfg(feature = "lasting")]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Request bytes sent (bodies).
    pub in_bytes: u32,
    /// Reply bytes received.
    pub out_bytes: u32,
    /// Input tokens, when the backend reports them.
    pub in_tokens: u32,
    /// Output tokens, when the backend reports them.
    pub out_tokens: u32,
    /// Context bytes of the last request.
    pub context_bytes: u32,
    /// Exchanges counted.
    pub exchanges: u32,
    /// The host's clock (seconds) at the last exchange; 0 when unknown.
    pub last_active: u32,
}

#[cfg(feature = "lasting")]
impl Stats {
    const ZERO: Stats = Stats {
        in_bytes: 0,
        out_bytes: 0,
        in_tokens: 0,
        out_tokens: 0,
        context_bytes: 0,
        exchanges: 0,
        last_active: 0,
    };

    fn values(&self) -> StatsArray {
        [
            self.in_bytes,
            self.out_bytes,
            self.in_tokens,
            self.out_tokens,
            self.context_bytes,
            self.exchanges,
            self.last_active,
        ]
    }

    fn from_values(v: &StatsArray) -> Stats {
        let [
            in_bytes,
            out_bytes,
            in_tokens,
            out_tokens,
            context_bytes,
            exchanges,
            last_active,
        ] = *v;
        Stats {
            in_bytes,
            out_bytes,
            in_tokens,
            out_tokens,
            context_bytes,
            exchanges,
            last_active,
        }
    }
}

/// The ring plus what is known about its files.
pub struct Session {
    ring: SessionRing,
    loaded: bool,
    dirty: bool,
    /// Newest turns of the ring that are not on flash yet.
    unflushed: u8,
    /// A compaction since the last flush: (pending turns before its
    /// summary, turns it kept).
    #[cfg(feature = "lasting")]
    compaction: Option<(u8, u8)>,
    /// The newest batch the base holds.
    base_seq: u32,
    /// The number of the next batch.
    next_seq: u32,
    /// Slots (bit `seq % SLOTS`) holding an entry of the ring as on flash.
    live: u8,
    /// The next flush rewrites the base (a pending clear, or pending turns
    /// the ring no longer holds).
    fold_due: bool,
    /// A clear is pending: the slots go once the empty base is written.
    clearing: bool,
    /// Whether no session file was found (nor written) since the load.
    no_files: bool,
    #[cfg(feature = "lasting")]
    stats: Stats,
    /// Whether compacted and retired turns go to the archive (opt-in).
    #[cfg(feature = "lasting")]
    pub archive: bool,
}

impl Session {
    /// Fresh RAM state; nothing loaded yet.
    pub const fn new() -> Self {
        Self {
            ring: SessionRing::new(),
            loaded: false,
            dirty: false,
            unflushed: 0,
            #[cfg(feature = "lasting")]
            compaction: None,
            base_seq: 0,
            next_seq: 0,
            live: 0,
            fold_due: false,
            clearing: false,
            no_files: false,
            #[cfg(feature = "lasting")]
            stats: Stats::ZERO,
            #[cfg(feature = "lasting")]
            archive: false,
        }
    }

    /// Forgets the RAM ring, unflushed (`claw_session_init`). In place:
    /// a fresh `Session` built on the stack and copied would cost its size
    /// in stack.
    pub fn init(&mut self) {
        self.ring.clear();
        self.loaded = false;
        self.forget_pending();
        self.fold_due = false;
        self.clearing = false;
        self.no_files = false;
        #[cfg(feature = "lasting")]
        {
            self.stats = Stats::ZERO;
        }
    }

    fn forget_pending(&mut self) {
        self.dirty = false;
        self.unflushed = 0;
        #[cfg(feature = "lasting")]
        {
            self.compaction = None;
        }
    }

    /// The ring, loading it first when needed (empty while the file cannot
    /// be read).
    pub fn ring<P: Port>(&mut self, port: &mut P) -> &SessionRing {
        let _ = self.ensure_loaded(port);
        &self.ring
    }

    /// The ring as it is in RAM (after [`Session::ring`] loaded it).
    pub fn ring_loaded(&self) -> &SessionRing {
        &self.ring
    }

    /// The newest message in RAM, to finish in place what [`Session::add`]
    /// just appended (no I/O; the ring stays dirty).
    pub fn newest_mut(&mut self) -> Option<&mut Message> {
        let last = self.ring.len().checked_sub(1)?;
        self.ring.get_mut(last)
    }

    /// Appends a message; no flash write.
    pub fn add<P: Port>(&mut self, port: &mut P, role: Role, text: &[u8]) -> Result<(), AddError> {
        let keep = utf8_prefix(text, MSG_MAX_BYTES).ok_or(AddError::NotUtf8)?;
        self.ensure_loaded(port).map_err(AddError::Io)?;
        self.push_turn(role, text.get(..keep).unwrap_or(&[]));
        Ok(())
    }

    /// [`Session::add`] to a ring already loaded (no I/O, so no loading
    /// frames under a deep caller): `Io(EIO)` when it is not.
    pub fn add_loaded(&mut self, role: Role, text: &[u8]) -> Result<(), AddError> {
        let keep = utf8_prefix(text, MSG_MAX_BYTES).ok_or(AddError::NotUtf8)?;
        if !self.loaded {
            return Err(AddError::Io(Errno::EIO));
        }
        self.push_turn(role, text.get(..keep).unwrap_or(&[]));
        Ok(())
    }

    /// Appends checked text (both `add`s: the text is checked once).
    fn push_turn(&mut self, role: Role, text: &[u8]) {
        self.ring.push(role, text);
        self.dirty = true;
        self.unflushed = self.unflushed.saturating_add(1).min(MAX_MSGS as u8);
    }

    /// Messages in the ring.
    pub fn count<P: Port>(&mut self, port: &mut P) -> u16 {
        self.ring(port).len() as u16
    }

    /// Whether RAM holds changes the file does not (no I/O).
    pub fn is_dirty(&self) -> bool {
        self.dirty
    }

    fn head(&self) -> usize {
        usize::from(self.ring.summary().is_some())
    }
}

impl Default for Session {
    fn default() -> Self {
        Self::new()
    }
}
