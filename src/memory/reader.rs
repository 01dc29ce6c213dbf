//! The merged reader: [`Store`]'s passes over the base and the shards
//! (the base's pairs, each overridden by its shard's record, then the keys
//! new since the base, then the shards the index could not hold), one
//! reader slot at a time; and the reads of one pair where a pass found it.

use core::ffi::CStr;

use super::hash::{fnv, place};
use super::{
    DROP, KEEP, OVERFLOW, PART, PART_BASE, PART_END, PART_NEW, PART_UNINDEXED, SCAN, SHARD_PATHS,
    SHARDS, Store,
};
use crate::format::lines::NO_FD;
use crate::format::memory::{KEY_MAX_BYTES, KeyRec, Pair, PairReader, Rec};
use crate::kernel::packed::{Packed, Tagged, out_of_line};
use crate::port::{Errno, Fd, MEMORY_PATH, Mode, Port};

/// A reader of `fd` set up in `slot` (one copy of its set-up for every
/// reader of the store: code size).
#[inline(never)] // size: see docs/STACK.md
pub(super) fn put_reader<'a>(
    slot: &'a mut Option<PairReader<'static>>,
    fd: Fd,
) -> &'a mut PairReader<'static> {
    slot.insert(PairReader::new(fd))
}

pub(super) fn open_opt<P: Port>(port: &mut P, path: &'static CStr) -> Result<Option<Fd>, Errno> {
    match port.open(path, Mode::Read) {
        Ok(fd) => Ok(Some(fd)),
        Err(Errno::ENOENT) => Ok(None),
        Err(e) => Err(e),
    }
}

/// What the store's passes read each line into: a whole [`Pair`], or a
/// [`KeyRec`] (no value buffer) for a pass that wants the value of one key
/// and reads it again where it found it.
pub(crate) trait Slot {
    /// Its key buffer (the load reads keys only).
    fn key_buf(&mut self) -> &mut [u8; KEY_MAX_BYTES];
    /// The next record of `r` into the slot.
    fn read<P: Port>(&mut self, r: &mut PairReader, port: &mut P) -> Result<Option<Rec>, Errno>;
}

impl Slot for Pair {
    fn key_buf(&mut self) -> &mut [u8; KEY_MAX_BYTES] {
        &mut self.key
    }
    fn read<P: Port>(&mut self, r: &mut PairReader, port: &mut P) -> Result<Option<Rec>, Errno> {
        let got = r.rec(port, &mut self.key, &mut self.val)?;
        Ok(got.map(|(rec, kl, vl, pinned)| {
            self.key_len = kl;
            self.val_len = vl;
            self.pinned = pinned;
            rec
        }))
    }
}

impl Slot for KeyRec {
    fn key_buf(&mut self) -> &mut [u8; KEY_MAX_BYTES] {
        &mut self.key
    }
    fn read<P: Port>(&mut self, r: &mut PairReader, port: &mut P) -> Result<Option<Rec>, Errno> {
        let got = r.rec(port, &mut self.key, &mut [])?;
        Ok(got.map(|(rec, kl, vl, pinned)| {
            self.key_len = kl;
            self.val_len = vl;
            self.pinned = pinned;
            rec
        }))
    }
}

/// Whether bit `j` of `bits` is set, tested in its 32-bit half (no 64-bit
/// shift: the record loop's frame keeps no 64-bit values across a call).
fn has(bits: u64, j: usize) -> bool {
    let half = if j < 32 {
        bits as u32
    } else {
        (bits >> 32) as u32
    };
    j < 64 && (half >> (j % 32)) & 1 != 0
}

pub(super) fn bit64(j: usize) -> u64 {
    if j < 64 { 1 << j } else { 0 }
}

impl Store {
    /// Opens the shard of entry `j` in the reader slot (free: the base is
    /// closed or parked) and seeks `j`; false when there is no such shard.
    fn open_entry<P: Port>(&mut self, port: &mut P, j: usize) -> Result<bool, Errno> {
        let Some((s, first)) = self.entry_shard(j) else {
            return Ok(false);
        };
        let path = SHARD_PATHS.get(s).copied().unwrap_or(MEMORY_PATH);
        let Some(fd) = open_opt(port, path)? else {
            return Ok(false);
        };
        put_reader(&mut self.reader, fd);
        self.seek.on = true;
        self.seek.k = first as u8;
        self.seek.j = j as u8;
        Ok(true)
    }

    /// Ends reading a shard record: closes the shard, and the base reader
    /// parked meanwhile takes the slot back.
    fn end_seek<P: Port>(&mut self, port: &mut P) {
        if let Some(r) = self.reader.take() {
            let _ = port.close(r.fd());
        }
        self.seek.on = false;
        let fd = core::mem::replace(&mut self.parked, NO_FD);
        if fd != NO_FD {
            put_reader(&mut self.reader, fd).skipped = self.base_skipped;
        }
    }

    /// Nothing is open: opens what is read next (the base, or the shard of
    /// the next new key); false at the store's end.
    #[inline(always)] // instructions: see docs/STACK.md
    fn open_next<P: Port>(&mut self, port: &mut P) -> Result<bool, Errno> {
        if self.phase == PART_BASE {
            match open_opt(port, MEMORY_PATH)? {
                Some(fd) => {
                    put_reader(&mut self.reader, fd);
                }
                None => self.phase = PART_NEW,
            }
            return Ok(true);
        }
        // The keys new since the base: by "n", then by place (at most
        // ENTRIES rounds: each takes one entry).
        let total = usize::from(self.start.get(SHARDS).copied().unwrap_or(0));
        while self.phase == PART_NEW {
            let used = self.dels | self.matched | self.emitted;
            let mut next: Option<(u8, usize)> = None;
            for (j, &n) in self.ns.iter().enumerate().take(total) {
                if used & bit64(j) == 0 && next.is_none_or(|(best, _)| n < best) {
                    next = Some((n, j));
                }
            }
            let Some((_, j)) = next else {
                // (The load's file counter is free: it counts the shards
                // the index could not hold.)
                self.phase = PART_UNINDEXED;
                self.ld.file = 0;
                break;
            };
            self.emitted |= bit64(j);
            self.from_base = false;
            if self.open_entry(port, j)? {
                return Ok(true);
            }
        }
        // Then the shards the index could not hold, streamed ([`OVERFLOW`]).
        while let Some(path) = SHARD_PATHS.get(usize::from(self.ld.file)) {
            let s = usize::from(self.ld.file);
            self.ld.file += 1;
            if has(self.dels, OVERFLOW + s) {
                if let Some(fd) = open_opt(port, path)? {
                    put_reader(&mut self.reader, fd);
                    self.from_base = false;
                    self.base_off = 0;
                    return Ok(true);
                }
            }
        }
        self.phase = PART_END;
        Ok(false)
    }

    /// Whether a shard was left out of the index ([`OVERFLOW`]).
    pub(super) fn overflowed(&self) -> bool {
        self.dels >> OVERFLOW != 0
    }

    /// Entry `j` overrides the base pair just read: parks the base (closed
    /// and reopened where it was, its bytes read again up to there into
    /// `pair`'s value buffer, free until the record goes there) and opens
    /// the shard in the store's one reader slot. A second reader would sit
    /// on the deepest stack path of every pass.
    fn begin_override<P: Port>(
        &mut self,
        port: &mut P,
        scratch: &mut [u8],
        j: usize,
    ) -> Result<(), Errno> {
        if let Some(r) = self.reader.as_ref() {
            self.base_off = self.base_off.saturating_add(r.offset());
            self.base_skipped = r.skipped;
        }
        self.close(port);
        let fd = open_opt(port, MEMORY_PATH)?.ok_or(Errno::ENOENT)?;
        self.parked = fd;
        skip(port, fd, self.base_off, scratch)?;
        if !self.open_entry(port, j)? {
            self.end_seek(port);
        }
        Ok(())
    }

    /// Where the last pair returned (not pending) is.
    pub(super) fn last_at(&self) -> Loc {
        if self.from_base {
            Loc::Base(self.rec_off)
        } else if self.phase == PART_UNINDEXED {
            Loc::Line(self.ld.file.wrapping_sub(1), self.rec_off)
        } else {
            self.entry_at(usize::from(self.seek.j))
        }
    }

    /// Where entry `j` is.
    pub(super) fn entry_at(&self, j: usize) -> Loc {
        let (shard, first) = self.entry_shard(j).unwrap_or((0, 0));
        Loc::Entry {
            shard: shard as u8,
            first: first as u8,
            j: j as u8,
        }
    }

    /// [`Store::next`] where a base pair that a shard overrides is not read
    /// from its shard: `Some(ValueAt::Entry(j))` then, the slot holding the
    /// base's line (its key is the record's: a shard record overrides the
    /// base pair with its key's fingerprint, and a key sharing another's
    /// fingerprint is folded, never written to a shard), the record being
    /// at [`Store::entry_at`]. No shard opened per override: for the passes
    /// that want the value of one key (read at its place afterwards).
    #[inline(always)] // stack: see docs/STACK.md
    pub(crate) fn next_key<P: Port>(
        &mut self,
        port: &mut P,
        pair: &mut KeyRec,
    ) -> Result<Option<ValueAt>, Errno> {
        let got = self.step(port, &mut pair.key, &mut [], Pass::Keys).get()?;
        (pair.key_len, pair.val_len, pair.pinned) = self.got;
        Ok(got.at())
    }

    /// [`Store::next_key`] over the base's lines only (`None` at the base's
    /// end): the keys new since the base are the entries the load read.
    /// No check ([`OVERFLOW`]): an edit of a store with a shard the index
    /// could not hold folds, and the fold reads the store whole.
    pub(crate) fn next_base<P: Port>(
        &mut self,
        port: &mut P,
        pair: &mut KeyRec,
    ) -> Result<Option<ValueAt>, Errno> {
        let got = self
            .step(port, &mut pair.key, &mut [], Pass::BaseKeys)
            .get()?;
        (pair.key_len, pair.val_len, pair.pinned) = self.got;
        Ok(got.at())
    }

    /// One reader slot, one call site of the record reader (a small frame
    /// above the deepest path): the base's records, a shard's up to the
    /// record sought, by turns. Its result packed in a `u64`
    /// ([`Stepped`]).
    /// (One copy per slot type: the modes are not type parameters.)
    pub(super) fn step<P: Port>(
        &mut self,
        port: &mut P,
        key: &mut [u8; KEY_MAX_BYTES],
        val: &mut [u8],
        mode: Pass,
    ) -> Stepped {
        loop {
            let Some(r) = self.reader.as_mut() else {
                if mode == Pass::BaseKeys && self.phase != PART_BASE {
                    return Step::End.word();
                }
                // (Out of line, its result packed: back in registers, not
                // in a slot of this frame.)
                match out_of_line(&mut *self, &mut *port, (), (), |s, p, (), ()| {
                    s.open_next(p)
                })
                .get()
                {
                    Ok(true) => continue,
                    Ok(false) => return Step::End.word(),
                    Err(e) => return failed(e),
                }
            };
            if !self.seek.on {
                self.rec_off = self.base_off.saturating_add(r.offset());
            }
            let got = match r.rec(port, key, val) {
                Ok(got) => got,
                Err(e) => return failed(e),
            };
            let rec = match got {
                Some((rec, kl, vl, pinned)) => {
                    self.got = (kl, vl, pinned);
                    Some(rec)
                }
                None => None,
            };
            let skipped = r.skipped;
            if self.seek.on {
                if self.phase >= SCAN {
                    // A check: the end, or a record of the key checked
                    // (its length in `seek.j`, its hash in `last_fnv`),
                    // ends it, and the pair's file takes the slot back.
                    let kl = self.got.0;
                    let outcome = match rec {
                        None => KEEP,
                        Some(_)
                            if kl == self.seek.j
                                && fnv(key.get(..usize::from(kl)).unwrap_or(&[]))
                                    == self.last_fnv =>
                        {
                            DROP
                        }
                        Some(_) => continue,
                    };
                    self.phase = (self.phase & PART) | outcome;
                    self.end_seek(port);
                    continue;
                }
                match rec {
                    Some(Rec::Header(_)) => {}
                    Some(rec) if self.seek.k == self.seek.j => {
                        self.end_seek(port);
                        if matches!(rec, Rec::Pair(_)) {
                            return Step::Pair.word();
                        }
                    }
                    Some(_) => self.seek.k = self.seek.k.saturating_add(1),
                    None => self.end_seek(port),
                }
                continue;
            }
            if self.phase & PART == PART_UNINDEXED {
                // A shard the index could not hold: its pairs in order,
                // each checked first ([`OVERFLOW`]).
                match rec {
                    None => self.close(port),
                    Some(Rec::Pair(_)) => {
                        let began = self.begin_check(port, key);
                        if !began.get().is_ok_and(Step::ready) {
                            return began;
                        }
                    }
                    Some(_) => {}
                }
                continue;
            }
            match rec {
                None => {
                    self.skipped = skipped;
                    self.close(port);
                    self.phase = PART_NEW;
                }
                Some(Rec::Pair(_)) => {
                    // (A pair read again after a check is counted once.)
                    if self.phase == PART_BASE {
                        self.base_pairs = self.base_pairs.saturating_add(1);
                    }
                    self.from_base = true;
                    let kl = usize::from(self.got.0);
                    let Some(j) = self.entry(key.get(..kl).unwrap_or(&[])) else {
                        // (A shard not indexed: a check, or its end.)
                        if self.overflowed() {
                            let began = self.begin_check(port, key);
                            if !began.get().is_ok_and(Step::ready) {
                                return began;
                            }
                            continue;
                        }
                        return Step::Pair.word();
                    };
                    self.rematch = has(self.matched, j);
                    self.matched |= bit64(j);
                    if !has(self.dels, j) {
                        if mode != Pass::Resolve {
                            return Step::Pending(j).word();
                        }
                        if let Err(e) = self.begin_override(port, val, j) {
                            return failed(e);
                        }
                    }
                }
                Some(_) => {}
            }
        }
    }

    /// The pair just read (its key in `key`), when it may be checked
    /// ([`SCAN`]): read again after a check, [`Step::Pair`] (returned as
    /// it is) or [`Step::Ready`] (left out); else a check begins when it
    /// is a pair of the base whose key's shard the index could not hold
    /// (its key's hash in [`Store::last_fnv`]), or a pair of such a shard
    /// ([`Step::Ready`]), or not ([`Step::Pair`]).
    fn begin_check<P: Port>(&mut self, port: &mut P, key: &mut [u8; KEY_MAX_BYTES]) -> Stepped {
        let part = self.phase & PART;
        let after = self.phase & !PART;
        self.phase = part;
        if after != 0 {
            return if after == DROP {
                Step::Ready.word()
            } else {
                Step::Pair.word()
            };
        }
        let s = if part == PART_BASE {
            place(self.last_fnv).0
        } else {
            self.last_fnv = fnv(key.get(..usize::from(self.got.0)).unwrap_or(&[]));
            usize::from(self.ld.file.wrapping_sub(1))
        };
        if !has(self.dels, OVERFLOW + s) {
            return Step::Pair.word();
        }
        self.seek.j = self.got.0;
        self.base_off = self.rec_off;
        self.phase = part | SCAN;
        // (Seeking once parked: a close ends it.)
        let parked = self.park(port, key, s);
        self.seek.on = true;
        match parked {
            Ok(()) => Step::Ready.word(),
            Err(e) => failed(e),
        }
    }

    /// A check's files: the pair's file reopened at the pair's start and
    /// parked (`scratch` clobbered: the pair is read again); the reader
    /// reads the shard `s` on, from its start for a pair of the base.
    /// (The parked reader's `skipped` is not kept: only the scan reads
    /// it, which checks nothing.)
    fn park<P: Port>(&mut self, port: &mut P, scratch: &mut [u8], s: usize) -> Result<(), Errno> {
        let shard = SHARD_PATHS[s % SHARDS];
        let mut here = shard;
        if self.phase == PART_BASE | SCAN {
            self.close(port);
            put_reader(&mut self.reader, port.open(shard, Mode::Read)?);
            here = MEMORY_PATH;
        }
        let fd = port.open(here, Mode::Read)?;
        self.parked = fd;
        skip(port, fd, self.base_off, scratch)
    }
}

/// What a [`Store::step`] found: the end, a pair, a pair whose override
/// is pending (its entry), or ([`Store::begin_check`] only) a file open to
/// read on.
#[derive(Clone, Copy)]
pub(super) enum Step {
    End,
    Pair,
    Pending(usize),
    Ready,
}

/// [`Store::step`]'s result packed ([`Packed`]): a `Result` of its size
/// comes back through memory, a slot on the frame of every pass (which the
/// record reader is under).
pub(super) type Stepped = Packed<Result<Step, Errno>>;

fn failed(e: Errno) -> Stepped {
    Packed::new(Err(e))
}

impl Step {
    fn word(self) -> Stepped {
        Packed::new(Ok(self))
    }

    fn ready(self) -> bool {
        matches!(self, Step::Ready)
    }

    /// Where the pair's value is; `None` at the end.
    pub(super) fn at(self) -> Option<ValueAt> {
        match self {
            Step::Pair => Some(ValueAt::Line),
            Step::Pending(j) => Some(ValueAt::Entry(j)),
            Step::End | Step::Ready => None,
        }
    }
}

impl Tagged for Step {
    #[inline(always)] // instructions: see docs/STACK.md
    fn tag(self) -> (u32, u32) {
        match self {
            Step::End => (1, 0),
            Step::Pair => (2, 0),
            Step::Pending(j) => (3, j as u32),
            Step::Ready => (4, 0),
        }
    }

    #[inline(always)] // instructions: see docs/STACK.md
    fn untag(tag: u32, low: u32) -> Self {
        match tag {
            1 => Step::End,
            2 => Step::Pair,
            3 => Step::Pending(low as usize),
            _ => Step::Ready,
        }
    }
}

/// Where the value of a pair that [`Store::next_key`] or
/// [`Store::next_base`] read is.
#[derive(Clone, Copy)]
pub(crate) enum ValueAt {
    /// At the line just read ([`Store::last_at`]).
    Line,
    /// At shard entry `j`, whose record overrides the base's line just
    /// read: its override is pending ([`Store::entry_at`]).
    Entry(usize),
}

/// How [`Store::step`] reads.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Pass {
    /// Every pair, overrides read from their shard ([`Store::next`]).
    Resolve,
    /// Every pair, overrides left pending ([`Store::next_key`]).
    Keys,
    /// The base's pairs only, overrides left pending
    /// ([`Store::next_base`]).
    BaseKeys,
}

/// Reads the first `n` bytes of `fd` (into `buf`, clobbered).
fn skip<P: Port>(port: &mut P, fd: Fd, mut n: u32, buf: &mut [u8]) -> Result<(), Errno> {
    while n > 0 {
        let want = buf.len().min(n as usize);
        let Some(room) = buf.get_mut(..want).filter(|r| !r.is_empty()) else {
            return Ok(());
        };
        match port.read(fd, room)? {
            0 => return Ok(()),
            got => n = n.saturating_sub(got.min(want) as u32),
        }
    }
    Ok(())
}

/// Reads the records of a shard (entries from `first` on) up to entry `j`,
/// into `pair`; true when it is a pair.
fn seek_entry<P: Port, S: Slot>(
    port: &mut P,
    r: &mut PairReader,
    first: usize,
    j: usize,
    pair: &mut S,
) -> Result<bool, Errno> {
    let mut k = first;
    loop {
        match pair.read(r, port)? {
            Some(Rec::Header(_)) => {}
            Some(rec) if k == j => return Ok(matches!(rec, Rec::Pair(_))),
            Some(_) => k += 1,
            None => return Ok(false),
        }
    }
}

/// Where a line of the store is.
#[derive(Clone, Copy)]
pub(super) enum Loc {
    /// The first pair of the base from this offset on.
    Base(u32),
    /// The first pair of shard `.0` from offset `.1` on (a shard the index
    /// could not hold).
    Line(u8, u32),
    /// Shard record `j`, the shard's first being `first`.
    Entry { shard: u8, first: u8, j: u8 },
}

/// Reads the pair at `at` into `pair`; false when it is not there.
pub(super) fn read_at<P: Port>(port: &mut P, at: Loc, pair: &mut Pair) -> Result<bool, Errno> {
    let path = match at {
        Loc::Base(_) => MEMORY_PATH,
        Loc::Entry { shard, .. } | Loc::Line(shard, _) => SHARD_PATHS
            .get(usize::from(shard))
            .copied()
            .unwrap_or(MEMORY_PATH),
    };
    let Some(fd) = open_opt(port, path)? else {
        return Ok(false);
    };
    let mut slot = None;
    let r = put_reader(&mut slot, fd);
    // The base's pair is the first record from its offset on.
    let res = match at {
        Loc::Base(off) | Loc::Line(_, off) => skip(port, fd, off, &mut pair.val).map(|()| (0, 0)),
        Loc::Entry { first, j, .. } => Ok((usize::from(first), usize::from(j))),
    }
    .and_then(|(first, j)| seek_entry(port, r, first, j, pair));
    let _ = port.close(fd);
    res
}
