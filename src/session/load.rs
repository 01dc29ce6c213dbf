//! Reading the files into the ring: the base, then the newer slots in
//! `seq` order (see the module docs of [`super`]).

use core::ffi::CStr;

use crate::format::lines::{ByteReader, NO_FD};
use crate::format::session::{self as fmt, Read, StatsArray};
use crate::message::Role;
use crate::port::{Errno, Mode, Port, SESSION_PATH};

#[cfg(feature = "lasting")]
use super::Stats;
use super::{SLOT_PATHS, SLOTS, Session, slot_of};

/// `replay`'s name for the base (the slots are 0 to 5).
pub(super) const BASE_FILE: usize = SLOTS;
/// While loading, an entry's `seq` is where its text was read: the file
/// (a slot's index or [`BASE_FILE`]) from this bit up, the offset of its
/// line below (a file of 512 MiB does not fit the device's flash).
const ORIGIN_SHIFT: u32 = 29;
const ORIGIN_OFFSET: u32 = (1 << ORIGIN_SHIFT) - 1;

fn origin(file: usize, offset: u32) -> u32 {
    ((file as u32) << ORIGIN_SHIFT) | offset.min(ORIGIN_OFFSET)
}

pub(super) fn file_path(file: usize) -> &'static CStr {
    SLOT_PATHS.get(file).copied().unwrap_or(SESSION_PATH)
}

/// What a first pass over one file found.
#[derive(Clone, Copy)]
pub(super) struct Scan {
    /// Offset just past the last end line (the whole file when it has none).
    pub(super) cut: u32,
    /// No line was skipped and nothing follows the cut.
    clean: bool,
    /// Whether there was an end line.
    ended: bool,
    /// `seq` of that line.
    seq: u32,
}

impl Session {
    /// Loads the ring on first use. A file that exists but cannot be read
    /// leaves the session unloaded (and the files alone): the next call
    /// tries again, rather than a later flush replacing a good file with an
    /// empty ring.
    pub(super) fn ensure_loaded<P: Port>(&mut self, port: &mut P) -> Result<(), Errno> {
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
    // stack: see docs/STACK.md
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

/// Where a load puts the statistics it reads.
pub(super) trait PutStats {
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
pub(super) fn scan_file<P: Port, S: PutStats>(
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
