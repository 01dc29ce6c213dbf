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
//! and its number `"seq"`; a slot without its end line is ignored.
//!
//! A load reads the base (its lines up to its last end line; a file in the
//! seed's plain form, with no end line, whole), then every slot whose batch
//! is newer than the base, in `seq` order (slots count only beside a base of
//! ours, `seq` >= 1: a session file edited by hand, or the vendor library's,
//! is what it says, and the first flush writes the base), replaying them onto the ring
//! exactly as RAM saw them: pushes, and compactions (a `summary` line with
//! `"keep":K` keeps the newest K turns before it).
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
//! again as batch 1 (should that write fail, the next flush does). A cut at
//! any point leaves the ring readable: the base at `SEQ_TOP` beside
//! retired slots, or the base at 1 once they are gone. So about four
//! billion flushes, or a file that says a number near the top, cost one
//! flush that writes the base twice, and nothing is lost.
//!
//! # Laziness and failures
//!
//! `init` touches no file. The first call that needs the ring loads it; a
//! file that exists but cannot be read is left alone and read again later.
//! `add` never writes flash; `flush` does, and keeps the ring dirty when it
//! fails (the retry writes the same batch again, from RAM). `clear` removes
//! the base, which retires every slot at once (slots count only beside a
//! base), then the slots; when the remove fails it writes an empty base
//! whose `seq` retires them; only when that fails too does the clear stay
//! pending (the next flush retries it), and only then could a reboot before
//! it read the old conversation back.

#[cfg(feature = "lasting")]
pub mod archive;
pub mod ring;

use core::ffi::CStr;

use crate::format::lines::{ByteReader, LineWriter, NO_FD};
use crate::format::session::{self as fmt, End, Read, StatsArray};
use crate::message::{MSG_MAX_BYTES, Message, Role};
use crate::port::{Errno, Mode, Port, SESSION_PATH, SESSION_TMP_PATH};
use crate::text::utf8_prefix;
use ring::{MAX_MSGS, SessionRing};

/// Slot files beside the base.
pub const SLOTS: usize = 6;

/// The number no slot batch takes: a base of it retires every slot (see
/// the module docs, "Numbers at the top of `u32`").
pub const SEQ_TOP: u32 = u32::MAX;

/// The slot files, by `seq % SLOTS`.
pub const SLOT_PATHS: [&CStr; SLOTS] = crate::port::SESSION_SLOT_PATHS;

/// Largest batch written with a compaction in it: littlefs keeps a file
/// of up to 512 bytes (an eighth of a 4 KiB block) inline in its
/// directory; a larger one takes a data block, and erases it. So a
/// compaction whose batch would be larger goes to flash first, in a batch
/// of its own (its summary and any turns before it: the ring as it was
/// right after the compaction), and the turns after it in the next.
const INLINE_MAX: usize = 512;

/// What a flush step writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Part {
    /// Everything pending.
    All,
    /// The pending compaction and the turns before it.
    Compaction,
}

/// `replay`'s name for the base (the slots are 0 to 5).
const BASE_FILE: usize = SLOTS;
/// While loading, an entry's `seq` is where its text was read: the file
/// (a slot's index or [`BASE_FILE`]) from this bit up, the offset of its
/// line below (a file of 512 MiB does not fit the device's flash).
const ORIGIN_SHIFT: u32 = 29;
const ORIGIN_OFFSET: u32 = (1 << ORIGIN_SHIFT) - 1;

fn origin(file: usize, offset: u32) -> u32 {
    ((file as u32) << ORIGIN_SHIFT) | offset.min(ORIGIN_OFFSET)
}

fn file_path(file: usize) -> &'static CStr {
    SLOT_PATHS.get(file).copied().unwrap_or(SESSION_PATH)
}

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

/// What a first pass over one file found.
#[derive(Clone, Copy)]
struct Scan {
    /// Offset just past the last end line (the whole file when it has none).
    cut: u32,
    /// No line was skipped and nothing follows the cut.
    clean: bool,
    /// Whether there was an end line.
    ended: bool,
    /// `seq` of that line.
    seq: u32,
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
    /// a fresh `Session` built on the stack and copied would cost its 2.6 KB
    /// of stack.
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

    /// Writes what is dirty to flash: one batch into its slot, or a fold
    /// (see the module docs). On failure the ring stays dirty.
    pub fn flush<P: Port>(&mut self, port: &mut P) -> Result<(), Errno> {
        if !self.dirty {
            return Ok(());
        }
        // A compaction whose batch would not stay inline on littlefs goes
        // first, in a batch of its own (see `INLINE_MAX`).
        if self.compaction_pending() && !self.fold_planned() && self.batch_size(port) > INLINE_MAX {
            self.flush_step(port, Part::Compaction)?;
        }
        self.flush_step(port, Part::All)
    }

    #[cfg(feature = "lasting")]
    fn compaction_pending(&self) -> bool {
        self.compaction.is_some()
    }

    #[cfg(not(feature = "lasting"))]
    fn compaction_pending(&self) -> bool {
        false
    }

    fn next_batch(&self) -> u32 {
        self.next_seq.max(self.base_seq.saturating_add(1))
    }

    /// Whether the next flush step rewrites the base.
    fn fold_planned(&self) -> bool {
        let turns = self.ring.len() - self.head();
        // Slots count only beside a base of ours (seq >= 1): the first
        // flush after a seed-form base, or none, writes the base.
        // A batch numbered SEQ_TOP is the base (the renumbering).
        let next = self.next_batch();
        self.fold_due
            || self.base_seq == 0
            || next == SEQ_TOP
            || self.live & (1 << slot_of(next)) != 0
            || usize::from(self.unflushed) > turns
    }

    /// Bytes of the pending batch. Its own frame: its writer and statistics
    /// are not on the stack under the flush that follows.
    #[inline(never)]
    fn batch_size<P: Port>(&self, port: &mut P) -> usize {
        // Counted, not written: the port is not called.
        let mut w = LineWriter::new(NO_FD);
        let stats = self.stats_to_write();
        let end = End {
            seq: self.next_batch(),
            stats: stats.as_ref(),
        };
        let _ = self.write_batch(port, &mut w, &end, Part::All);
        w.written() as usize
    }

    /// One batch (or a fold) to flash; on success RAM records what is there.
    fn flush_step<P: Port>(&mut self, port: &mut P, part: Part) -> Result<(), Errno> {
        let seq = self.next_batch();
        let fold = self.fold_planned();
        if fold {
            self.write_base(port, seq)?;
        } else {
            self.write_slot(port, seq, part)?;
        }
        // On flash now: number what was pending.
        let turns = self.ring.len() - self.head();
        let pending = usize::from(self.unflushed).min(turns);
        let first = self.ring.len() - pending;
        let done = match (fold, part) {
            (false, Part::Compaction) => self.before().min(pending),
            _ => pending,
        };
        // (A fold holds the whole ring: every entry is in its batch, also
        // after a renumbering, when the older entries' numbers are larger.)
        let from = if fold { 0 } else { first };
        for i in from..first + done {
            if let Some(m) = self.ring.get_mut(i) {
                m.seq = seq;
            }
        }
        #[cfg(feature = "lasting")]
        if self.compaction.is_some() {
            if let Some(m) = self.ring.get_mut(0) {
                m.seq = seq;
            }
        }
        if fold {
            self.base_seq = seq;
        }
        self.next_seq = seq.saturating_add(1);
        self.unflushed = (pending - done) as u8;
        #[cfg(feature = "lasting")]
        {
            self.compaction = None;
        }
        self.dirty = self.unflushed > 0;
        self.fold_due = false;
        self.no_files = false;
        self.live = self.live_slots();
        // (Only a fold retires the slots.)
        if fold && self.clearing {
            self.clearing = false;
            // The base retired them; removing them frees the space and the
            // old text. The base goes last, and only when no slot is left
            // that it would have to keep retired.
            let gone = |r: Result<(), Errno>| matches!(r, Ok(()) | Err(Errno::ENOENT));
            // (Turns added since the clear are in the base now: it stays.)
            if SLOT_PATHS.iter().all(|path| gone(port.remove(path)))
                && self.ring.is_empty()
                && self.stats_to_write().is_none()
                && gone(port.remove(SESSION_PATH))
            {
                // No files: as on a fresh device (the next flush writes the
                // base).
                self.no_files = true;
                self.base_seq = 0;
                self.next_seq = 0;
            }
        }
        if fold && seq == SEQ_TOP && !self.no_files {
            self.renumber(port);
        }
        Ok(())
    }

    /// After the base was written as batch [`SEQ_TOP`] (every slot retired):
    /// the slots removed, then the base written again as batch 1 (when that
    /// write fails, the next flush writes it: as beside a seed-form file).
    /// While a slot cannot be removed the numbers stay at the top, and the
    /// next flush tries again: a slot left over must never be taken for a
    /// batch newer than the base.
    #[inline(never)]
    fn renumber<P: Port>(&mut self, port: &mut P) {
        let gone = |r: Result<(), Errno>| matches!(r, Ok(()) | Err(Errno::ENOENT));
        if !SLOT_PATHS.iter().all(|path| gone(port.remove(path))) {
            return;
        }
        let written = self.write_base(port, 1).is_ok();
        for i in 0..self.ring.len() {
            if let Some(m) = self.ring.get_mut(i) {
                m.seq = u32::from(written);
            }
        }
        self.base_seq = u32::from(written);
        self.next_seq = 1 + u32::from(written);
        self.live = 0;
    }

    /// Pending turns that go before a compaction's summary.
    fn before(&self) -> usize {
        #[cfg(feature = "lasting")]
        if let Some((before, _)) = self.compaction {
            return usize::from(before);
        }
        usize::from(self.unflushed)
    }

    fn live_slots(&self) -> u8 {
        self.ring
            .iter()
            .filter(|m| m.seq > self.base_seq)
            .fold(0u8, |mask, m| mask | 1 << slot_of(m.seq))
    }

    #[cfg(feature = "lasting")]
    fn stats_to_write(&self) -> Option<StatsArray> {
        (self.stats != Stats::ZERO).then(|| self.stats.values())
    }

    #[cfg(not(feature = "lasting"))]
    fn stats_to_write(&self) -> Option<StatsArray> {
        None
    }

    /// The batch: pending turns, a pending compaction's summary among them.
    #[inline(never)]
    fn write_slot<P: Port>(&mut self, port: &mut P, seq: u32, part: Part) -> Result<(), Errno> {
        let path = SLOT_PATHS
            .get(slot_of(seq))
            .copied()
            .unwrap_or(SESSION_TMP_PATH);
        let fd = port.open(path, Mode::Write)?;
        let mut w = LineWriter::new(fd);
        let stats = self.stats_to_write();
        let end = End {
            seq,
            stats: stats.as_ref(),
        };
        let written = self
            .write_batch(port, &mut w, &end, part)
            .and_then(|()| w.flush(port));
        let closed = port.close(fd);
        written.and(closed)
    }

    fn write_batch<P: Port>(
        &self,
        port: &mut P,
        w: &mut LineWriter,
        end: &End<'_>,
        part: Part,
    ) -> Result<(), Errno> {
        let len = self.ring.len();
        let pending = usize::from(self.unflushed).min(len - self.head());
        // Lines in order: (ring index, keep); the summary goes after the
        // pending turns the compaction kept. Bytes (an index is under
        // MAX_MSGS, NO_KEEP is none): 22 bytes on the stack, not 88.
        const NO_KEEP: u8 = u8::MAX;
        const _: () = assert!(MAX_MSGS < u8::MAX as usize);
        let mut order = [(0u8, NO_KEEP); MAX_MSGS + 1];
        let mut n = 0usize;
        let mut put = |i: usize, keep: Option<u8>| {
            if let Some(slot) = order.get_mut(n) {
                // A keep is at most 255 turns; 255 is as many as "all".
                *slot = (i as u8, keep.map_or(NO_KEEP, |k| k.min(NO_KEEP - 1)));
                n += 1;
            }
        };
        #[cfg(feature = "lasting")]
        let (before, keep) = match self.compaction {
            Some((before, keep)) => (usize::from(before).min(pending), Some(keep)),
            None => (pending, None),
        };
        #[cfg(not(feature = "lasting"))]
        let (before, keep) = (pending, None::<u8>);
        for i in len - pending..len - pending + before {
            put(i, None);
        }
        if keep.is_some() {
            put(0, keep);
        }
        if part == Part::All {
            for i in len - pending + before..len {
                put(i, None);
            }
        }
        if n == 0 {
            return fmt::write_end(port, w, end);
        }
        for (k, &(i, keep)) in order.iter().take(n).enumerate() {
            let keep = (keep != NO_KEEP).then_some(keep);
            if let Some(m) = self.ring.get(usize::from(i)) {
                fmt::write(port, w, m, keep, (k + 1 == n).then_some(end))?;
            }
        }
        Ok(())
    }

    /// The fold: the whole ring into the base, through a temporary file.
    #[inline(never)]
    fn write_base<P: Port>(&mut self, port: &mut P, seq: u32) -> Result<(), Errno> {
        let fd = port.open(SESSION_TMP_PATH, Mode::Write)?;
        let mut w = LineWriter::new(fd);
        let stats = self.stats_to_write();
        let end = End {
            seq,
            stats: stats.as_ref(),
        };
        let mut written = Ok(());
        let last = self.ring.len();
        for (k, m) in self.ring.iter().enumerate() {
            written = fmt::write(port, &mut w, m, None, (k + 1 == last).then_some(&end));
            if written.is_err() {
                break;
            }
        }
        if last == 0 {
            written = fmt::write_end(port, &mut w, &end);
        }
        let written = written.and_then(|()| w.flush(port));
        let closed = port.close(fd);
        let result = written
            .and(closed)
            .and_then(|()| port.rename(SESSION_TMP_PATH, SESSION_PATH));
        if result.is_err() {
            let _ = port.remove(SESSION_TMP_PATH);
        }
        result
    }

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

    /// Empties the ring and retires its files; see the module docs.
    pub fn clear<P: Port>(&mut self, port: &mut P) {
        let nothing_on_flash = self.loaded && self.no_files;
        self.ring.clear();
        self.loaded = true;
        self.forget_pending();
        #[cfg(feature = "lasting")]
        {
            self.stats = Stats::ZERO;
        }
        if nothing_on_flash {
            self.fold_due = false;
            self.clearing = false;
            return;
        }
        // Removing the base retires every slot at once (slots count only
        // beside a base): one commit, and the old conversation is gone.
        let gone = |r: Result<(), Errno>| matches!(r, Ok(()) | Err(Errno::ENOENT));
        if gone(port.remove(SESSION_PATH)) {
            self.base_seq = 0;
            self.fold_due = false;
            self.clearing = false;
            if SLOT_PATHS.iter().all(|path| gone(port.remove(path))) {
                self.no_files = true;
                self.next_seq = 0;
            }
            return;
        }
        // Else an empty base whose seq retires the slots; when that fails
        // too the clear stays pending and the next flush retries it.
        self.fold_due = true;
        self.clearing = true;
        self.dirty = true;
        let _ = self.flush(port);
    }

    /// Loads the ring on first use. A file that exists but cannot be read
    /// leaves the session unloaded (and the files alone): the next call
    /// tries again, rather than a later flush replacing a good file with an
    /// empty ring.
    // Out of line (as the other file passes are): each pass has its own
    // decode buffers, and inlined into one frame they would add up on a
    // 1 KiB stack budget instead of taking turns.
    #[inline(never)]
    fn ensure_loaded<P: Port>(&mut self, port: &mut P) -> Result<(), Errno> {
        if self.loaded {
            return Ok(());
        }
        if let Err(e) = self.load(port) {
            self.ring.clear();
            // As before the load (a session not loaded has none: `init`).
            self.put_stats(None);
            return Err(e);
        }
        self.loaded = true;
        Ok(())
    }

    /// Reads the base, then the newer slots in `seq` order.
    fn load<P: Port>(&mut self, port: &mut P) -> Result<(), Errno> {
        self.ring.clear();
        self.base_seq = 0;
        self.fold_due = false;
        self.no_files = true;
        let mut newest = 0u32;
        // The statistics go straight to `self.stats` (no copy of them on
        // the stack): those of the base's end line, then of each replayed
        // slot line that has them.
        self.put_stats(None);
        if let Some(scan) = scan_file(port, SESSION_PATH, Some(self))? {
            self.no_files = false;
            self.base_seq = scan.seq;
            newest = scan.seq;
            // A damaged base is rewritten at the next flush.
            self.fold_due = !scan.clean;
            self.replay(port, BASE_FILE, scan.cut, false)?;
        }
        // The slots newer than the base (by slot), then replayed oldest
        // first: the smallest `seq` not replayed yet, six times at most.
        let mut found = [(0u32, 0u32); SLOTS];
        for (i, path) in SLOT_PATHS.iter().enumerate() {
            let Some(scan) = scan_file(port, path, None::<&mut Self>)? else {
                continue;
            };
            self.no_files = false;
            newest = newest.max(scan.seq);
            if scan.ended && self.base_seq > 0 && scan.seq > self.base_seq && slot_of(scan.seq) == i
            {
                if let Some(f) = found.get_mut(i) {
                    *f = (scan.seq, scan.cut);
                }
            }
        }
        let mut done = self.base_seq;
        loop {
            let next = found
                .iter()
                .enumerate()
                .filter(|(_, f)| f.0 > done)
                .min_by_key(|(_, f)| f.0);
            let Some((i, &(seq, cut))) = next else {
                break;
            };
            done = seq;
            self.replay(port, i, cut, true)?;
        }
        // Each entry's number is its batch's (while loading: where it was
        // read, see `replay`).
        for i in 0..self.ring.len() {
            if let Some(m) = self.ring.get_mut(i) {
                let file = (m.seq >> ORIGIN_SHIFT) as usize;
                m.seq = match found.get(file) {
                    Some(f) => f.0,
                    None => self.base_seq,
                };
            }
        }
        self.next_seq = newest.saturating_add(1);
        self.live = self.live_slots();
        Ok(())
    }

    /// Pass 2 over one file (`file`: a slot's index, or [`BASE_FILE`]): its
    /// records up to `cut` onto the ring. The statistics of its last line
    /// that has them go to `stats` (when given; left as they are when no
    /// line has them).
    ///
    /// A message is decoded straight into the ring's slot (no buffer for it
    /// on the stack). When the ring is full that slot held a message, which
    /// a line that turns out not to be a record (or a compaction that keeps
    /// it) must not lose: its text is read again from where it was read
    /// (while loading, an entry's `seq` is that place: the file in its top
    /// bits, the line's offset below; `load` sets the batch numbers at the
    /// end). That costs a second read of two files, on damaged files only.
    #[inline(never)]
    fn replay<P: Port>(
        &mut self,
        port: &mut P,
        file: usize,
        cut: u32,
        stats: bool,
    ) -> Result<(), Errno> {
        let mut r = ByteReader::new(port.open(file_path(file), Mode::Read)?);
        let mut st: StatsArray = [0; 7];
        let res = loop {
            let start = r.offset();
            if start >= cut {
                break Ok(());
            }
            let slot = self.ring.load_slot();
            let full = self.ring.is_full();
            let rec = match fmt::read(port, &mut r, self.ring.slot_buf(slot), Some(&mut st)) {
                Ok(Read::Record(rec)) => Some(rec),
                Ok(Read::Skipped) => None,
                Ok(Read::Eof) => break Ok(()),
                Err(e) => break Err(e),
            };
            let mut intact = !full;
            if let Some(rec) = rec {
                if rec.stats && stats {
                    self.put_stats(Some(&st));
                }
                // A bare end line: nothing was decoded.
                let Some(role) = rec.role else {
                    continue;
                };
                self.ring.set_loaded_len(slot, usize::from(rec.len));
                intact = true;
                match rec.keep {
                    #[cfg(feature = "lasting")]
                    Some(keep) => intact = self.ring.fold_keep_loaded(slot, usize::from(keep)),
                    _ => self.ring.push_loaded(slot, role),
                }
                // The entry just written is the newest, or the summary.
                let i = if rec.keep.is_some() || role == Role::Summary {
                    0
                } else {
                    self.ring.len() - 1
                };
                if let Some(m) = self.ring.get_mut(i) {
                    m.seq = origin(file, start);
                }
            }
            if !intact {
                if let Err(e) = self.reread(port, &mut r, file, slot) {
                    break Err(e);
                }
            }
        };
        if r.fd() != NO_FD {
            let _ = port.close(r.fd());
        }
        res
    }

    /// Reads the text of the message in `slot` again from where it was
    /// read, then puts `r` back where it was in `file`. On an error `r` is
    /// left closed ([`NO_FD`]).
    // Inlined: its read is the same depth as `replay`'s own.
    #[inline(always)]
    fn reread<P: Port>(
        &mut self,
        port: &mut P,
        r: &mut ByteReader<'_>,
        file: usize,
        slot: usize,
    ) -> Result<(), Errno> {
        let resume = r.offset();
        let _ = port.close(r.fd());
        *r = ByteReader::new(NO_FD);
        let from = self.ring.slot_seq(slot);
        let fd = port.open(file_path((from >> ORIGIN_SHIFT) as usize), Mode::Read)?;
        *r = ByteReader::new(fd);
        let read = r.skip_to(port, from & ORIGIN_OFFSET).and_then(|()| {
            match fmt::read(port, r, self.ring.slot_buf(slot), None)? {
                Read::Record(rec) => {
                    self.ring.set_loaded_len(slot, usize::from(rec.len));
                    Ok(())
                }
                // It was a record a moment ago.
                _ => Err(Errno::EIO),
            }
        });
        let _ = port.close(fd);
        *r = ByteReader::new(NO_FD);
        read?;
        *r = ByteReader::new(port.open(file_path(file), Mode::Read)?);
        r.skip_to(port, resume)
    }
}

impl Default for Session {
    fn default() -> Self {
        Self::new()
    }
}

/// Where a load puts the statistics it reads.
trait PutStats {
    /// The statistics read (`None`: none, zeros).
    fn put_stats(&mut self, values: Option<&StatsArray>);
}

impl PutStats for Session {
    fn put_stats(&mut self, values: Option<&StatsArray>) {
        #[cfg(feature = "lasting")]
        {
            self.stats = values.map_or(Stats::ZERO, Stats::from_values);
        }
        #[cfg(not(feature = "lasting"))]
        let _ = values;
    }
}

/// Pass 1 over one file: where its last end line ends. `None` when the file
/// does not exist. That line's statistics (`None`: it has none) go to
/// `stats` when given.
#[inline(never)]
fn scan_file<P: Port, S: PutStats>(
    port: &mut P,
    path: &'static CStr,
    mut stats: Option<&mut S>,
) -> Result<Option<Scan>, Errno> {
    let fd = match port.open(path, Mode::Read) {
        Ok(fd) => fd,
        Err(Errno::ENOENT) => return Ok(None),
        Err(e) => return Err(e),
    };
    let mut r = ByteReader::new(fd);
    let mut st: StatsArray = [0; 7];
    let mut scan = Scan {
        cut: 0,
        clean: true,
        ended: false,
        seq: 0,
    };
    let res = loop {
        // The messages are checked, not kept: no buffer for them.
        match fmt::read(port, &mut r, None, Some(&mut st)) {
            Ok(Read::Record(rec)) if rec.end => {
                scan.cut = r.offset();
                scan.ended = true;
                scan.seq = rec.seq;
                if let Some(stats_to) = stats.as_deref_mut() {
                    stats_to.put_stats(rec.stats.then_some(&st));
                }
            }
            Ok(Read::Record(_)) => {}
            Ok(Read::Skipped) => scan.clean = false,
            Ok(Read::Eof) => break Ok(()),
            Err(e) => break Err(e),
        }
    };
    let _ = port.close(fd);
    res?;
    if !scan.ended {
        // The seed's plain form: every line is trusted.
        scan.cut = r.offset();
    }
    scan.clean &= scan.cut == r.offset();
    Ok(Some(scan))
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{MemPort, Op};

    fn texts(s: &mut Session, port: &mut MemPort) -> Vec<String> {
        s.ring(port)
            .iter()
            .map(|m| String::from_utf8(m.text.to_vec()).unwrap())
            .collect()
    }

    fn reboot(port: &mut MemPort) -> Session {
        let _ = port;
        Session::new()
    }

    /// The ring a load gave before messages were decoded straight into
    /// it: each record into a buffer, then pushed (or folded in).
    fn reference_load(port: &mut MemPort, files: &[(usize, u32)]) -> Vec<(Role, Vec<u8>, u32)> {
        let mut ring = SessionRing::new();
        for &(file, seq) in files {
            let cut = scan_file(port, file_path(file), None::<&mut Session>)
                .unwrap()
                .unwrap()
                .cut;
            let fd = port.open(file_path(file), Mode::Read).unwrap();
            let mut r = ByteReader::new(fd);
            let mut text = [0u8; MSG_MAX_BYTES];
            while r.offset() < cut {
                let rec = match fmt::read(port, &mut r, Some(&mut text), None).unwrap() {
                    Read::Record(rec) => rec,
                    Read::Skipped => continue,
                    Read::Eof => break,
                };
                let Some(role) = rec.role else { continue };
                let body = &text[..usize::from(rec.len)];
                match rec.keep {
                    #[cfg(feature = "lasting")]
                    Some(keep) => ring.fold_keep(usize::from(keep), body),
                    _ => ring.push(role, body),
                }
                let i = if rec.keep.is_some() || role == Role::Summary {
                    0
                } else {
                    ring.len() - 1
                };
                ring.get_mut(i).unwrap().seq = seq;
            }
            port.close(fd).unwrap();
        }
        ring.iter()
            .map(|m| (m.role, m.text.to_vec(), m.seq))
            .collect()
    }

    #[test]
    #[cfg_attr(miri, ignore)] // long; no unsafe code under test
    fn damaged_files_load_as_when_records_went_through_a_buffer() {
        let mut rng = 0x1234_5678u32;
        let mut next = move |n: u32| {
            rng ^= rng << 13;
            rng ^= rng >> 17;
            rng ^= rng << 5;
            rng % n
        };
        let roles = ["user", "assistant", "tool", "system", "summary"];
        for case in 0..400 {
            let mut port = MemPort::new();
            let line = |next: &mut dyn FnMut(u32) -> u32, n: usize| -> String {
                let body = "ก".repeat(next(4) as usize * 30) + &format!("m{case}-{n}");
                let body = if next(12) == 0 { "x".repeat(256) } else { body };
                let role = roles[next(5) as usize];
                match next(16) {
                    0 => "garbage\n".to_string(),
                    1 => format!("{{\"role\":\"{role}\",\"content\":\"{body}\",\"zz\":[[1]]}}\n"),
                    2 => format!("{{\"role\":\"bogus\",\"content\":\"{body}\"}}\n"),
                    3 => format!("{{\"content\":\"{body}\"}}\n"),
                    4 => format!("{{\"role\":\"{role}\",\"content\":\"{body}"),
                    5 | 6 => format!(
                        "{{\"role\":\"summary\",\"content\":\"S{body}\",\"keep\":{}}}\n",
                        next(13)
                    ),
                    _ => format!("{{\"role\":\"{role}\",\"content\":\"{body}\"}}\n"),
                }
            };
            let seed_form = next(4) == 0;
            let base_seq = if seed_form { 0 } else { 1 + next(20) };
            let mut base = String::new();
            for n in 0..next(25) as usize {
                base += &line(&mut next, n);
                if !base.ends_with('\n') {
                    // A torn line (its end line is not lost).
                    base += "\n";
                }
            }
            if !seed_form {
                base += &format!("{{\"end\":true,\"seq\":{base_seq}}}\n");
                if next(3) == 0 {
                    base += "{\"role\":\"user\",\"content\":\"after the cut\"}\n";
                }
            }
            port.put(SESSION_PATH, base.as_bytes());
            let mut files = vec![(BASE_FILE, base_seq)];
            if !seed_form {
                for k in 1..=next(7) {
                    let seq = base_seq + k;
                    let mut batch = String::new();
                    for n in 0..next(6) as usize {
                        batch += &line(&mut next, 100 + n);
                        if !batch.ends_with('\n') {
                            batch += "\n";
                        }
                    }
                    batch += &format!("{{\"end\":true,\"seq\":{seq}}}\n");
                    port.put(SLOT_PATHS[slot_of(seq)], batch.as_bytes());
                    files.push((slot_of(seq), seq));
                }
            }
            let want = reference_load(&mut port, &files);
            let mut s = Session::new();
            let got: Vec<_> = s
                .ring(&mut port)
                .iter()
                .map(|m| (m.role, m.text.to_vec(), m.seq))
                .collect();
            assert_eq!(got, want, "case {case}");
            assert_eq!(port.open_count(), 0);
        }
    }

    #[test]
    fn add_keeps_newest_ten_without_writing() {
        let mut port = MemPort::new();
        let mut s = Session::new();
        for i in 0..25 {
            s.add(&mut port, Role::User, format!("m{i}").as_bytes())
                .unwrap();
        }
        assert_eq!(s.count(&mut port), 10);
        assert_eq!(texts(&mut s, &mut port)[0], "m15");
        assert_eq!(port.writes, 0, "add must not write flash");
        assert!(s.is_dirty());
    }

    fn file(port: &MemPort, path: &CStr) -> String {
        String::from_utf8(port.get(path).unwrap()).unwrap()
    }

    #[test]
    fn flush_writes_one_batch_per_slot_and_reloads() {
        let mut port = MemPort::new();
        let mut s = Session::new();
        s.add(&mut port, Role::User, "สวัสดี \"quoted\"\nline".as_bytes())
            .unwrap();
        s.add(&mut port, Role::Assistant, b"hi").unwrap();
        s.flush(&mut port).unwrap();
        assert!(!s.is_dirty());
        s.add(&mut port, Role::Tool, b"42").unwrap();
        s.flush(&mut port).unwrap();
        let one = file(&port, SESSION_PATH);
        assert_eq!(
            one.lines().count(),
            2,
            "the first flush writes the base: {one}"
        );
        assert!(
            one.lines()
                .nth(1)
                .unwrap()
                .ends_with("\"end\":true,\"seq\":1}")
        );
        assert_eq!(
            file(&port, SLOT_PATHS[2]),
            "{\"role\":\"tool\",\"content\":\"42\",\"end\":true,\"seq\":2}\n"
        );
        let mut s2 = reboot(&mut port);
        assert_eq!(
            texts(&mut s2, &mut port),
            ["สวัสดี \"quoted\"\nline", "hi", "42"]
        );
        assert_eq!(s2.ring(&mut port).get(2).unwrap().role, Role::Tool);
        // The next batch after a reboot takes the next number.
        s2.add(&mut port, Role::User, b"again").unwrap();
        s2.flush(&mut port).unwrap();
        assert!(file(&port, SLOT_PATHS[3]).contains("\"seq\":3"));
    }

    #[test]
    #[cfg_attr(miri, ignore)] // long; no unsafe code under test
    fn folds_only_when_the_slot_to_overwrite_is_live() {
        let mut port = MemPort::new();
        let mut s = Session::new();
        let mut folds = 0;
        for i in 0..100 {
            s.add(&mut port, Role::User, format!("q{i}").as_bytes())
                .unwrap();
            s.add(&mut port, Role::Assistant, format!("a{i}").as_bytes())
                .unwrap();
            let renames = port.count(Op::Rename);
            s.flush(&mut port).unwrap();
            folds += port.count(Op::Rename) - renames;
            // Every state read back is the ring in RAM.
            let mut again = Session::new();
            assert_eq!(
                texts(&mut again, &mut port),
                texts(&mut s, &mut port),
                "{i}"
            );
        }
        assert_eq!(
            folds, 1,
            "two-message batches: six slots hold the ring (the first flush writes the base)"
        );
        // One-message batches: the ring spans ten batches, so slots are live.
        for i in 0..20 {
            s.add(&mut port, Role::User, format!("u{i}").as_bytes())
                .unwrap();
            s.flush(&mut port).unwrap();
            let mut again = Session::new();
            assert_eq!(texts(&mut again, &mut port), texts(&mut s, &mut port));
        }
        assert_eq!(Session::new().count(&mut port), 10);
        let base = file(&port, SESSION_PATH);
        assert!(base.lines().count() <= 10, "{base}");
    }

    #[test]
    fn reads_the_seed_plain_form_and_the_previous_release() {
        let mut port = MemPort::new();
        // What the vendor library leaves: one message a line, no markers.
        let mut seed = String::new();
        for i in 0..12 {
            seed += &format!("{{\"role\":\"user\",\"content\":\"s{i}\"}}\n");
        }
        port.put(SESSION_PATH, seed.as_bytes());
        let mut s = Session::new();
        let t = texts(&mut s, &mut port);
        assert_eq!((t.len(), t[0].as_str(), t[9].as_str()), (10, "s2", "s11"));
        s.add(&mut port, Role::User, b"next").unwrap();
        s.flush(&mut port).unwrap();
        assert_eq!(
            texts(&mut Session::new(), &mut port).last().unwrap(),
            "next"
        );
        let base = file(&port, SESSION_PATH);
        assert!(
            base.ends_with("\"seq\":1}\n"),
            "converted by the first flush: {base}"
        );
        // A hand-written seed-form file is what it says: no slot applies.
        s.add(&mut port, Role::User, b"more").unwrap();
        s.flush(&mut port).unwrap();
        port.put(
            SESSION_PATH,
            b"{\"role\":\"user\",\"content\":\"by hand\"}\n",
        );
        assert_eq!(texts(&mut Session::new(), &mut port), ["by hand"]);

        // The previous release: appended batches, statistics as fields.
        let mut port = MemPort::new();
        port.put(
            SESSION_PATH,
            b"{\"role\":\"user\",\"content\":\"a\",\"end\":true}\n\
              {\"role\":\"user\",\"content\":\"b\",\"in\":5,\"n\":2,\"end\":true}\n\
              {\"role\":\"user\",\"content\":\"torn\"}\n",
        );
        assert_eq!(texts(&mut Session::new(), &mut port), ["a", "b"]);
    }

    #[test]
    fn truncates_on_a_character_boundary() {
        let mut port = MemPort::new();
        let mut s = Session::new();
        let long = "ก".repeat(100); // 300 bytes
        s.add(&mut port, Role::User, long.as_bytes()).unwrap();
        let t = &s.ring(&mut port).get(0).unwrap().text;
        assert_eq!(t.len(), 255);
        assert!(core::str::from_utf8(t).is_ok());
        assert_eq!(
            s.add(&mut port, Role::User, &[0xE0, 0xB8]),
            Err(AddError::NotUtf8)
        );
    }

    #[test]
    fn failed_flush_stays_dirty_and_the_retry_writes_the_batch_again() {
        let mut port = MemPort::new();
        let mut s = Session::new();
        s.add(&mut port, Role::User, b"one").unwrap();
        s.flush(&mut port).unwrap();
        s.add(&mut port, Role::User, b"two").unwrap();
        port.fail(Op::Write, 0, Errno::ENOSPC);
        assert_eq!(s.flush(&mut port), Err(Errno::ENOSPC));
        assert!(s.is_dirty());
        // Nothing of the failed batch is read back.
        assert_eq!(Session::new().count(&mut port), 1);
        s.add(&mut port, Role::User, b"three").unwrap();
        s.flush(&mut port).unwrap();
        assert_eq!(
            texts(&mut Session::new(), &mut port),
            ["one", "two", "three"]
        );
        assert!(
            file(&port, SLOT_PATHS[2]).contains("three"),
            "same batch number"
        );
    }

    #[test]
    fn torn_slots_and_stale_slots_are_ignored() {
        let mut port = MemPort::new();
        port.put(
            SESSION_PATH,
            b"{\"role\":\"user\",\"content\":\"base\",\"end\":true,\"seq\":7}\n",
        );
        // Older than the base: retired.
        port.put(
            SLOT_PATHS[1],
            b"{\"role\":\"user\",\"content\":\"old\",\"end\":true,\"seq\":7}\n",
        );
        // No end line: torn.
        port.put(SLOT_PATHS[0], b"{\"role\":\"user\",\"content\":\"torn\"}\n");
        // In the wrong slot for its number.
        port.put(
            SLOT_PATHS[3],
            b"{\"role\":\"user\",\"content\":\"moved\",\"end\":true,\"seq\":8}\n",
        );
        port.put(
            SLOT_PATHS[2],
            b"{\"role\":\"user\",\"content\":\"new\",\"end\":true,\"seq\":8}\n",
        );
        port.put(SLOT_PATHS[4], b"garbage\n{\"end\":true,\"seq\":10}\n");
        let mut s = Session::new();
        assert_eq!(texts(&mut s, &mut port), ["base", "new"]);
        s.add(&mut port, Role::User, b"x").unwrap();
        s.flush(&mut port).unwrap();
        assert!(
            file(&port, SLOT_PATHS[5]).contains("\"seq\":11"),
            "after the newest seen"
        );
    }

    #[test]
    fn clear_retires_every_slot_and_survives_failures() {
        let mut port = MemPort::new();
        let mut s = Session::new();
        s.add(&mut port, Role::User, b"secret").unwrap();
        s.flush(&mut port).unwrap();
        s.clear(&mut port);
        assert_eq!(s.count(&mut port), 0);
        assert_eq!(Session::new().count(&mut port), 0);
        assert!(port.get(SLOT_PATHS[1]).is_none(), "the slot is removed");

        // Removes fail: an empty base retires the slots.
        s.add(&mut port, Role::User, b"secret2").unwrap();
        s.flush(&mut port).unwrap();
        port.fail_all(Op::Remove, Errno::EIO);
        s.clear(&mut port);
        assert_eq!(Session::new().count(&mut port), 0);
        assert!(!s.is_dirty());

        // One failed write (the empty base) does not matter: the remove of
        // the base is what retires the conversation.
        port.heal();
        s.add(&mut port, Role::User, b"secret2b").unwrap();
        s.flush(&mut port).unwrap();
        port.fail(Op::Write, 0, Errno::EIO);
        s.clear(&mut port);
        assert_eq!(Session::new().count(&mut port), 0);
        port.heal();
        s.add(&mut port, Role::User, b"after").unwrap();
        s.flush(&mut port).unwrap();
        assert_eq!(texts(&mut Session::new(), &mut port), ["after"]);

        // The base can be neither removed nor written: pending until the
        // next flush.
        port.heal();
        s.add(&mut port, Role::User, b"secret3").unwrap();
        s.flush(&mut port).unwrap();
        port.fail_all(Op::Open, Errno::EIO);
        port.fail_all(Op::Remove, Errno::EIO);
        s.clear(&mut port);
        assert!(s.is_dirty());
        assert_eq!(s.count(&mut port), 0);
        port.heal();
        assert!(s.flush(&mut port).is_ok());
        assert_eq!(Session::new().count(&mut port), 0);
    }

    /// The `seq` values a file can hold at the top of `u32`, past it, and
    /// not numbers at all (issue 23: turns flushed past 2^32 were lost).
    const EDGE_SEQS: [&str; 11] = [
        "4294967290",
        "4294967293",
        "4294967294",
        "4294967295",
        "4294967296",
        "100000000000000000000",
        "-5",
        "1.5",
        "\"x\"",
        "0",
        "1000",
    ];

    /// Flushes `rounds` batches of one or two turns; after each, the ring a
    /// reboot reads is the ring in RAM, and it holds the batch just flushed.
    fn flush_and_reread(port: &mut MemPort, s: &mut Session, rounds: usize, tag: &str) {
        for i in 0..rounds {
            let text = format!("{tag} turn {i}");
            s.add(port, Role::User, text.as_bytes()).unwrap();
            if i % 3 == 1 {
                s.add(port, Role::Assistant, b"reply").unwrap();
            }
            s.flush(port).unwrap();
            assert!(!s.is_dirty(), "{tag} {i}");
            let ram = texts(s, port);
            let read = texts(&mut reboot(port), port);
            assert_eq!(read, ram, "{tag}: flush {i}");
            assert!(read.contains(&text), "{tag}: flush {i} lost");
        }
    }

    /// The number the newest end line of `path` carries.
    fn end_seq(port: &MemPort, path: &CStr) -> Option<u64> {
        let text = String::from_utf8(port.get(path)?).ok()?;
        let line = text.lines().rev().find(|l| l.contains("\"end\":true"))?;
        let at = line.find("\"seq\":")? + 6;
        line[at..]
            .split(|c: char| !c.is_ascii_digit())
            .next()?
            .parse()
            .ok()
    }

    #[test]
    fn seq_at_the_top_of_u32_or_past_it_loses_nothing() {
        for base_seq in EDGE_SEQS {
            // (slot: none, or a batch beside the base in each slot file.)
            for slot in [None, Some(0), Some(1), Some(2), Some(3), Some(4), Some(5)] {
                for slot_seq in EDGE_SEQS {
                    if slot.is_none() && slot_seq != EDGE_SEQS[0] {
                        continue;
                    }
                    let tag = format!("base {base_seq} slot {slot:?} {slot_seq}");
                    let mut port = MemPort::new();
                    port.put(
                        SESSION_PATH,
                        format!(
                            "{{\"role\":\"user\",\"content\":\"b0\"}}\n\
                             {{\"role\":\"assistant\",\"content\":\"b1\",\"end\":true,\"seq\":{base_seq}}}\n"
                        )
                        .as_bytes(),
                    );
                    if let Some(i) = slot {
                        port.put(
                            SLOT_PATHS[i],
                            format!(
                                "{{\"role\":\"user\",\"content\":\"s{i}\",\"end\":true,\"seq\":{slot_seq}}}\n"
                            )
                            .as_bytes(),
                        );
                    }
                    let mut s = Session::new();
                    let first = texts(&mut s, &mut port);
                    assert_eq!(first[..2], ["b0", "b1"], "{tag}: the base is read");
                    flush_and_reread(&mut port, &mut s, 14, &tag);
                    // Numbered from 1 again once past the top: the base
                    // is small, and every slot beside it newer.
                    let near_top = |v: &str| v.parse::<f64>().is_ok_and(|n| n >= 4294967290.0);
                    let top = near_top(base_seq) || slot.is_some() && near_top(slot_seq);
                    let base = end_seq(&port, SESSION_PATH).unwrap();
                    assert!(base < if top { 20 } else { 1100 }, "{tag}: base {base}");
                    for path in SLOT_PATHS {
                        if let Some(n) = end_seq(&port, path) {
                            assert!(n < u64::from(SEQ_TOP), "{tag}");
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn the_renumbering_survives_a_cut_and_slots_that_stay() {
        // Every flush from a base near the top, with the slots' removal
        // failing for a while: the numbers stay at the top (a fold each
        // flush) until the slots are gone, and nothing is lost.
        let mut port = MemPort::new();
        port.put(
            SESSION_PATH,
            b"{\"role\":\"user\",\"content\":\"b0\",\"end\":true,\"seq\":4294967292}\n",
        );
        let mut s = Session::new();
        flush_and_reread(&mut port, &mut s, 2, "before");
        assert_eq!(
            end_seq(&port, SLOT_PATHS[slot_of(4294967294)]),
            Some(4294967294)
        );
        port.fail_all(Op::Remove, Errno::EIO);
        flush_and_reread(&mut port, &mut s, 3, "stuck");
        assert_eq!(end_seq(&port, SESSION_PATH), Some(u64::from(SEQ_TOP)));
        assert!(end_seq(&port, SLOT_PATHS[slot_of(4294967294)]).is_some());
        port.heal();
        flush_and_reread(&mut port, &mut s, 1, "freed");
        assert!(SLOT_PATHS.iter().all(|p| port.get(p).is_none()), "removed");
        assert_eq!(end_seq(&port, SESSION_PATH), Some(1), "in the same flush");
        flush_and_reread(&mut port, &mut s, 3, "after");
        assert_eq!(
            end_seq(&port, SESSION_PATH),
            Some(1),
            "the base again as batch 1"
        );
        assert_eq!(end_seq(&port, SLOT_PATHS[3]), Some(3));
        // The base at 1 not written (its rename fails; or a cut there): a
        // reboot reads the base at the top and renumbers at its first
        // flush; without a reboot the next flush writes it.
        for reboot_between in [true, false] {
            let mut port = MemPort::new();
            port.put(
                SESSION_PATH,
                b"{\"role\":\"user\",\"content\":\"b0\",\"end\":true,\"seq\":4294967294}\n",
            );
            let mut s = Session::new();
            port.fail(Op::Rename, 1, Errno::EIO);
            flush_and_reread(&mut port, &mut s, 1, "top");
            assert_eq!(end_seq(&port, SESSION_PATH), Some(u64::from(SEQ_TOP)));
            if reboot_between {
                s = reboot(&mut port);
            }
            flush_and_reread(&mut port, &mut s, 1, "next");
            assert_eq!(end_seq(&port, SESSION_PATH), Some(1));
            flush_and_reread(&mut port, &mut s, 3, "then");
            assert_eq!(texts(&mut s, &mut port)[0], "b0");
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(96))]
        /// Files whose numbers sit anywhere near the top of `u32` (or past
        /// it), then flushes of one to three turns with reboots and failed
        /// slot removals between them: every flush that returned `Ok` is
        /// read back whole by a reboot, and the numbers come down again.
        #[test]
        #[cfg_attr(miri, ignore)] // long; no unsafe code under test
        fn flushes_near_the_top_of_u32_are_read_back(
            base in 0u32..24,
            slots in proptest::collection::vec((0usize..SLOTS, 0u32..24), 0..4),
            steps in proptest::collection::vec((1usize..4, 0u8..8), 1..30),
        ) {
            let seq = |k: u32| match k {
                20 => "100000000000000000000".to_string(),
                21 => "-1".to_string(),
                22 => "7".to_string(),
                23 => "\"x\"".to_string(),
                k => (u32::MAX - k).to_string(),
            };
            let mut port = MemPort::new();
            port.put(
                SESSION_PATH,
                format!("{{\"role\":\"user\",\"content\":\"base\",\"end\":true,\"seq\":{}}}\n", seq(base))
                    .as_bytes(),
            );
            for (i, k) in slots {
                port.put(
                    SLOT_PATHS[i],
                    format!("{{\"role\":\"user\",\"content\":\"slot {i}\",\"end\":true,\"seq\":{}}}\n", seq(k))
                        .as_bytes(),
                );
            }
            let mut s = Session::new();
            let mut n = 0;
            for (turns, what) in steps {
                for _ in 0..turns {
                    n += 1;
                    s.add(&mut port, Role::User, format!("turn {n}").as_bytes()).unwrap();
                }
                if what == 0 {
                    port.fail_all(Op::Remove, Errno::EIO);
                }
                proptest::prop_assert_eq!(s.flush(&mut port), Ok(()));
                port.heal();
                let ram = texts(&mut s, &mut port);
                proptest::prop_assert_eq!(texts(&mut reboot(&mut port), &mut port), ram);
                if what == 1 {
                    s = reboot(&mut port);
                }
            }
            // Once slots can be removed, a base at the top is followed by
            // the base as batch 1.
            let mut at_top = 0;
            for _ in 0..8 {
                s.add(&mut port, Role::User, b"last").unwrap();
                s.flush(&mut port).unwrap();
                match end_seq(&port, SESSION_PATH) {
                    Some(n) if n == u64::from(SEQ_TOP) => at_top += 1,
                    Some(n) => {
                        proptest::prop_assert!(at_top == 0 || n == 1);
                        at_top = 0;
                    }
                    None => {}
                }
                proptest::prop_assert!(at_top <= 1);
            }
        }
    }

    #[test]
    fn clear_on_a_fresh_device_writes_nothing() {
        let mut port = MemPort::new();
        let mut s = Session::new();
        assert_eq!(s.count(&mut port), 0);
        s.clear(&mut port);
        assert_eq!(port.writes, 0);
        assert!(!s.is_dirty());
    }

    #[test]
    fn an_unreadable_slot_leaves_the_session_unloaded() {
        let mut port = MemPort::new();
        let mut s = Session::new();
        s.add(&mut port, Role::User, b"keep").unwrap();
        s.flush(&mut port).unwrap();
        let mut again = Session::new();
        port.fail(Op::Read, 0, Errno::EIO);
        assert_eq!(
            again.add(&mut port, Role::User, b"x"),
            Err(AddError::Io(Errno::EIO))
        );
        assert_eq!(texts(&mut again, &mut port), ["keep"]);
    }

    #[test]
    fn init_drops_unflushed_ram() {
        let mut port = MemPort::new();
        let mut s = Session::new();
        s.add(&mut port, Role::User, b"x").unwrap();
        s.init();
        assert_eq!(s.count(&mut port), 0);
        assert!(!s.is_dirty());
    }
}

#[cfg(all(test, feature = "lasting"))]
mod lasting_tests {
    use super::archive::ARCHIVE_PATH;
    use super::*;
    use crate::testing::{MemPort, Op};

    fn texts(s: &mut Session, port: &mut MemPort) -> Vec<(Role, String)> {
        s.ring(port)
            .iter()
            .map(|m| (m.role, String::from_utf8(m.text.to_vec()).unwrap()))
            .collect()
    }

    #[test]
    fn stats_persist_with_the_session_and_reset_with_it() {
        let mut port = MemPort::new();
        let mut s = Session::new();
        s.add(&mut port, Role::User, b"q").unwrap();
        let add = Stats {
            in_bytes: 100,
            out_bytes: 20,
            in_tokens: 7,
            out_tokens: 3,
            context_bytes: 60,
            exchanges: 1,
            last_active: 1_700_000_000,
        };
        s.account(&mut port, &add);
        s.account(&mut port, &add);
        s.flush(&mut port).unwrap();
        let mut again = Session::new();
        let st = again.stats(&mut port);
        assert_eq!((st.in_bytes, st.out_tokens, st.exchanges), (200, 6, 2));
        assert_eq!((st.context_bytes, st.last_active), (60, 1_700_000_000));
        // Statistics alone make the session dirty, and a flush records them.
        again.account(&mut port, &add);
        assert!(again.is_dirty());
        again.flush(&mut port).unwrap();
        assert_eq!(Session::new().stats(&mut port).exchanges, 3);
        again.clear(&mut port);
        assert_eq!(again.stats(&mut port), Stats::default());
    }

    #[test]
    fn compaction_folds_old_turns_into_a_summary_and_archives_them() {
        let mut port = MemPort::new();
        let mut s = Session::new();
        s.archive = true;
        for i in 0..8 {
            let role = if i % 2 == 0 {
                Role::User
            } else {
                Role::Assistant
            };
            s.add(&mut port, role, format!("turn {i}").as_bytes())
                .unwrap();
        }
        s.flush(&mut port).unwrap();
        // keep 3 would keep a reply without its question: one turn less folds.
        assert_eq!(s.compact(&mut port, None, 3).unwrap(), 4);
        let t = texts(&mut s, &mut port);
        assert_eq!(t.len(), 5);
        assert_eq!(t[0].0, Role::Summary);
        assert!(
            t[0].1.starts_with("user: turn 0; assistant: turn 1;"),
            "{}",
            t[0].1
        );
        assert_eq!(t[1].1, "turn 4");
        s.flush(&mut port).unwrap();
        assert_eq!(
            texts(&mut Session::new(), &mut port),
            t,
            "the summary survives a reboot"
        );
        let archive = String::from_utf8(port.get(ARCHIVE_PATH).unwrap()).unwrap();
        assert_eq!(archive.lines().count(), 4);
        assert!(archive.contains("turn 3"));
        // A backend summary replaces the old one; turns keep arriving after it.
        s.add(&mut port, Role::User, b"turn 8").unwrap();
        assert_eq!(
            s.compact(&mut port, Some("the owner likes tea".as_bytes()), 1)
                .unwrap(),
            4
        );
        let t = texts(&mut s, &mut port);
        assert_eq!(t[0], (Role::Summary, "the owner likes tea".to_string()));
        assert_eq!(t.len(), 2);
        for i in 0..20 {
            s.add(&mut port, Role::User, format!("more {i}").as_bytes())
                .unwrap();
        }
        let t = texts(&mut s, &mut port);
        assert_eq!(t.len(), 10);
        assert_eq!(t[0].0, Role::Summary, "the summary stays at the head");
        s.flush(&mut port).unwrap();
        assert_eq!(texts(&mut Session::new(), &mut port), t);
    }

    #[test]
    fn a_tool_turn_stays_with_its_asker() {
        let mut port = MemPort::new();
        let mut s = Session::new();
        s.add(&mut port, Role::User, b"hi").unwrap();
        s.add(&mut port, Role::Assistant, b"hello").unwrap();
        s.add(&mut port, Role::System, b"connected").unwrap();
        s.add(&mut port, Role::Assistant, b"run led").unwrap();
        s.add(&mut port, Role::Tool, b"led: on").unwrap();
        s.add(&mut port, Role::Assistant, b"done").unwrap();
        // keep 2 would start the kept part with the tool turn: fold less.
        assert_eq!(s.compact(&mut port, None, 2).unwrap(), 3);
        let t = texts(&mut s, &mut port);
        assert_eq!(t[1], (Role::Assistant, "run led".to_string()));
        assert_eq!(t[2].0, Role::Tool);

        // A reply keeps its question.
        let mut s = Session::new();
        s.clear(&mut port);
        for (r, t) in [
            (Role::User, "q1"),
            (Role::Assistant, "a1"),
            (Role::User, "q2"),
            (Role::Assistant, "a2"),
        ] {
            s.add(&mut port, r, t.as_bytes()).unwrap();
        }
        assert_eq!(s.compact(&mut port, None, 1).unwrap(), 2);
        let t = texts(&mut s, &mut port);
        assert_eq!(t[1], (Role::User, "q2".to_string()));
    }

    #[test]
    fn a_long_digest_keeps_its_newest_part_on_character_boundaries() {
        let mut port = MemPort::new();
        let mut s = Session::new();
        for round in 0..6 {
            for i in 0..4 {
                s.add(
                    &mut port,
                    Role::User,
                    format!("ข้อความ {round}-{i} ").repeat(5).as_bytes(),
                )
                .unwrap();
            }
            s.compact(&mut port, None, 1).unwrap();
            let head = &s.ring(&mut port).get(0).unwrap().text;
            assert!(head.len() <= MSG_MAX_BYTES);
            assert!(core::str::from_utf8(head).is_ok());
        }
        let t = texts(&mut s, &mut port);
        assert!(
            t[0].1.contains("5-2"),
            "the newest folded turn is in the digest: {}",
            t[0].1
        );
    }

    #[test]
    fn a_new_session_archives_the_old_one() {
        let mut port = MemPort::new();
        let mut s = Session::new();
        s.archive = true;
        s.add(&mut port, Role::User, b"old chat").unwrap();
        s.flush(&mut port).unwrap();
        s.start_new(&mut port).unwrap();
        assert_eq!(s.count(&mut port), 0);
        assert_eq!(Session::new().count(&mut port), 0);
        let archive = String::from_utf8(port.get(ARCHIVE_PATH).unwrap()).unwrap();
        assert!(archive.contains("old chat"));
        // Nothing changes when the archive cannot be written.
        s.add(&mut port, Role::User, b"keep me").unwrap();
        port.fail(crate::testing::Op::Open, 0, Errno::ENOSPC);
        assert!(s.start_new(&mut port).is_err());
        assert_eq!(s.count(&mut port), 1);
    }

    fn file_has(port: &MemPort, path: &CStr, text: &str) -> bool {
        String::from_utf8(port.get(path).unwrap_or_default())
            .unwrap()
            .contains(text)
    }

    fn check_reload(s: &mut Session, port: &mut MemPort) {
        let want = texts(s, port);
        assert_eq!(texts(&mut Session::new(), port), want);
    }

    #[test]
    fn a_compaction_is_one_summary_line_in_the_next_batch() {
        let mut port = MemPort::new();
        let mut s = Session::new();
        for i in 0..4 {
            s.add(&mut port, Role::User, format!("q{i}").as_bytes())
                .unwrap();
            s.add(&mut port, Role::Assistant, format!("a{i}").as_bytes())
                .unwrap();
            s.flush(&mut port).unwrap();
        }
        let before = port.writes;
        assert_eq!(s.compact(&mut port, None, 4).unwrap(), 4);
        assert_eq!(port.writes, before, "compact writes nothing by itself");
        assert!(port.get(ARCHIVE_PATH).is_none(), "the archive is opt-in");
        s.add(&mut port, Role::User, b"q4").unwrap();
        s.add(&mut port, Role::Assistant, b"a4").unwrap();
        s.flush(&mut port).unwrap();
        let batch = String::from_utf8(port.get(SLOT_PATHS[5]).unwrap()).unwrap();
        let lines: Vec<&str> = batch.lines().collect();
        assert_eq!(lines.len(), 3, "{batch}");
        assert!(lines[0].starts_with("{\"role\":\"summary\",\"content\":\"user: q0;"));
        assert!(lines[0].ends_with(",\"keep\":4}"), "{}", lines[0]);
        assert!(!file_has(&port, SESSION_PATH, "q4"), "no fold");
        check_reload(&mut s, &mut port);
        assert_eq!(texts(&mut s, &mut port).len(), 7);
    }

    #[test]
    #[cfg_attr(miri, ignore)] // long; no unsafe code under test
    fn compactions_between_flushes_replay_exactly() {
        // Compactions before a flush, with pending turns before and after
        // them, a backend summary, tool rounds, failed flushes: every state
        // read back is the ring in RAM.
        let mut port = MemPort::new();
        let mut s = Session::new();
        let mut n = 0u32;
        for step in 0..400u32 {
            let r = step.wrapping_mul(2_654_435_761) >> 7;
            match r % 7 {
                0..=2 => {
                    let role = [Role::User, Role::Assistant, Role::Tool, Role::System]
                        [(r / 7 % 4) as usize];
                    n += 1;
                    s.add(&mut port, role, format!("t{n}").as_bytes()).unwrap();
                }
                3 => {
                    let text = format!("backend summary {n}");
                    let summary = (r / 7 % 2 == 0).then_some(text.as_bytes());
                    let _ = s.compact(&mut port, summary, (r / 14 % 6) as usize);
                }
                4 if r / 7 % 5 == 0 && s.is_dirty() => {
                    port.fail(Op::Write, 0, Errno::ENOSPC);
                    assert!(s.flush(&mut port).is_err());
                    port.heal();
                }
                _ => {
                    s.flush(&mut port).unwrap();
                    check_reload(&mut s, &mut port);
                }
            }
        }
    }

    #[test]
    fn a_compaction_too_big_to_stay_inline_goes_first_in_a_batch_of_its_own() {
        let mut port = MemPort::new();
        let mut s = Session::new();
        let long = "ข".repeat(60); // 180 bytes
        for i in 0..8 {
            let role = if i % 2 == 0 {
                Role::User
            } else {
                Role::Assistant
            };
            s.add(&mut port, role, format!("{i} {long}").as_bytes())
                .unwrap();
            s.flush(&mut port).unwrap();
        }
        assert!(s.compact(&mut port, None, 4).unwrap() > 0);
        s.add(&mut port, Role::User, long.as_bytes()).unwrap();
        s.add(&mut port, Role::Assistant, long.as_bytes()).unwrap();
        // The second step fails: the compaction alone is on flash.
        port.fail(Op::Open, 1, Errno::ENOSPC);
        assert!(s.flush(&mut port).is_err());
        assert!(s.is_dirty());
        let mid = texts(&mut Session::new(), &mut port);
        assert_eq!(mid.len(), 5, "the summary and the 4 kept turns");
        assert_eq!(mid[0].0, Role::Summary);
        let summary_slot = String::from_utf8(port.get(SLOT_PATHS[9 % 6]).unwrap()).unwrap();
        assert!(summary_slot.contains("\"keep\":4"), "{summary_slot}");
        assert!(summary_slot.len() <= INLINE_MAX);
        s.flush(&mut port).unwrap();
        check_reload(&mut s, &mut port);
        assert_eq!(texts(&mut s, &mut port).len(), 7);
        for path in SLOT_PATHS {
            assert!(port.get(path).map_or(0, |f| f.len()) <= 512, "stays inline");
        }
    }
}
