//! Writing the ring to flash: a batch into its slot, or a fold into the
//! base, and the renumbering at the top of `u32`; clearing the files (see
//! the module docs of [`super`]).

use crate::format::lines::{LineWriter, NO_FD};
use crate::format::session::{self as fmt, End, StatsArray};
use crate::port::{Errno, Mode, Port, SESSION_PATH, SESSION_TMP_PATH};

#[cfg(feature = "lasting")]
use super::Stats;
use super::ring::MAX_MSGS;
use super::{SEQ_TOP, SLOT_PATHS, Session, slot_of};

/// Largest batch written with a compaction in it: littlefs keeps a file
/// of up to 512 bytes (an eighth of a 4 KiB block) inline in its
/// directory; a larger one takes a data block, and erases it. So a
/// compaction whose batch would be larger goes to flash first, in a batch
/// of its own (its summary and any turns before it: the ring as it was
/// right after the compaction), and the turns after it in the next.
pub(super) const INLINE_MAX: usize = 512;

/// What a flush step writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Part {
    /// Everything pending.
    All,
    /// The pending compaction and the turns before it.
    Compaction,
}

impl Session {
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
    // stack: see docs/STACK.md
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
    // stack: see docs/STACK.md
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

    pub(super) fn live_slots(&self) -> u8 {
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
    // stack: see docs/STACK.md
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
        // MAX_MSGS, NO_KEEP is none), not words.
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
    // stack: see docs/STACK.md
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
}
