//! The persistent key/value store.
//!
//! # On flash: a base and eight shards
//!
//! ```text
//! /.bentoclaw_memory        the base: {"seq":G}, then one pair a line
//! /.bentoclaw_memory.0 … .7 pairs set since the base was written, by key hash
//! ```
//!
//! ```text
//! {"seq":3}                                    the base's generation
//! {"key":"name","value":"สมชาย"}
//! {"key":"wifi","value":"hunter2","pin":true}
//! ```
//!
//! * A key is 1..=31 bytes of UTF-8, a value 0..=127 bytes (the C buffers are
//!   `CLAW_MEM_KEY_MAX` = 32 and `CLAW_MEM_VAL_MAX` = 128 with the NUL).
//! * The store holds at most [`MAX_ENTRIES`] keys; a new key beyond that is
//!   refused ("full"). Replacing a key is always possible. A store with
//!   more keys on flash (a base edited by hand, a seed-form base of 40
//!   pairs, shards edited by hand) is read whole, key by key: new keys are
//!   refused until it holds fewer than [`MAX_ENTRIES`], replacing,
//!   forgetting and pinning its keys work (by a fold, which writes every
//!   key it reads: the base has no limit of its own), and no edit drops
//!   a key. A shard with more records than the readers index (a hand
//!   edit) is checked by reading it again: its last record of a key wins
//!   over the base, a `"del"` too (see [`OVERFLOW`]).
//! * The store is not kept in RAM (that would cost 5 KB of a 4 KB budget):
//!   every read streams the files.
//! * **A `set` rewrites one shard**: `/.bentoclaw_memory.<h>` with
//!   `h = FNV-1a(key) mod 8` holds a header `{"seq":G}` naming the base's
//!   generation, then the pairs of its keys set since that base was written
//!   (`{"key":"k","del":true}` for a forgotten key). The shard is written
//!   whole with `"wb"`, which littlefs commits at close: a power cut leaves
//!   the old shard or the new one (a single 256-byte page for a shard of up
//!   to 220 bytes). A shard whose header names another generation is stale
//!   and ignored.
//! * **When a shard would pass 220 bytes ("fold")**, the merged store is
//!   written to `/.bentoclaw_memory.tmp` under `{"seq":G+1}` and renamed over
//!   the base: one rename commits it, and every shard is stale from then on.
//!   So is a store that needs repair (garbage lines, a key twice).
//! * A reader takes the base's pairs in their order, each replaced by its
//!   shard's record when there is one (a forgotten key is left out), then
//!   the keys added since the base in the order they were added (a shard
//!   pair of a new key carries its place as `"n":N`). So a key keeps its
//!   place when it changes, and a fold keeps the order. Shard keys are
//!   recognised by a 16-bit fingerprint within their shard; a `set` whose
//!   key shares one with another key folds instead, so the fingerprints
//!   the files hold are unique.
//! * A base in the seed's plain form (no header: generation 0) is read as it
//!   is, and no shard applies to it (so a store edited by hand is what it
//!   says); the first change removes the shards (all stale) and writes it
//!   under `{"seq":1}`. So does the first change to a store with no base.
//! * Generations past `u32`: a header's number reads as what it is (one
//!   past `u32::MAX` as `u32::MAX`). The fold after generation 4294967295
//!   writes generation 0, beside which no shard applies, so a stale shard
//!   of any number never comes back; the next change removes the shards and
//!   writes generation 1.
//! * A reader skips lines that are not records (torn, garbage, invalid UTF-8,
//!   over-long). When a key appears twice in the base (a hand-edited file),
//!   the last line wins, and the next `set` folds, writing each key once.
//! * Setting a key to the value it already has writes nothing.

use core::ffi::CStr;

use crate::format::lines::{LineWriter, NO_FD};
pub use crate::format::memory::Pair;
use crate::format::memory::{
    KeyRec, PairReader, Rec, RecWord, write_del, write_header, write_pair,
};
use crate::port::{Errno, Fd, MEMORY_PATH, MEMORY_TMP_PATH, Mode, Port};

/// Keys the store holds (`CLAW_MEM_MAX_ENTRIES`).
pub(crate) const MAX_ENTRIES: usize = 32;
pub(crate) use crate::format::memory::{KEY_MAX_BYTES, VAL_MAX_BYTES};
/// Key hashes `set` remembers for its duplicate pre-check (a file with more
/// pairs, only possible by hand, gets the exact check for the rest).
const HASHED: usize = MAX_ENTRIES;
/// Pairs among which duplicated keys are merged by a rewrite.
const DEDUP_PAIRS: usize = 128;
/// Shard files beside the base.
pub const SHARDS: usize = 8;
/// The shard files, by `FNV-1a(key) % SHARDS`.
pub const SHARD_PATHS: [&CStr; SHARDS] = crate::port::MEMORY_SHARD_PATHS;
/// Largest shard written: one 256-byte page with littlefs's commit
/// overhead (`tests/bench/FLASH_LAYOUTS.md`).
const SHARD_MAX: usize = 220;
/// Records a shard holds at most when an edit writes it (a shard that
/// would hold more folds, as one that would pass [`SHARD_MAX`]). Small: the
/// edit keeps a range per record on a 1 KiB stack. A shard with more (a
/// hand edit) is read all the same, see [`OVERFLOW`].
const SHARD_RECORDS: usize = 6;
/// The shards' records of the base's generation that a load indexes in
/// all ([`ENTRIES`], 48: what eight shards of ours hold). The records of a
/// shard that does not fit (only a hand edit makes one) are not indexed:
/// bit `OVERFLOW + s` of [`Store::dels`] marks shard `s`, and a reader
/// checks them by reading the files again (a check: [`SCAN`]):
///
/// * a pair of the base whose key has a record in such a shard (its
///   key's shard) gives way to it: it is left out;
/// * after the keys new since the base, such a shard's pairs are read in
///   file order, each one that is its key's last record there.
///
/// So a key's last record in the shard wins over the base (a `"del"`
/// leaves the key out everywhere), no key is hidden or read twice, and
/// the next edit folds the store (each key once). A key such a shard
/// changes is read there, after the keys new since the base, not at its
/// place in the base. The checks cost reads (the shard again for each
/// pair of the base in it, the rest of the shard for each of its pairs),
/// on hand-edited stores only. The bits are above the entries' (at most
/// 48).
const OVERFLOW: usize = 56;
/// [`Store::phase`]: the part being read in bits 0-1 (0: the base, 1: the
/// keys new since the base, 2: the shards the index could not hold, 3:
/// the end), and a check above them ([`OVERFLOW`]). A check of the pair
/// just read parks its file reopened at the pair's start (the start in
/// [`Store::base_off`]: [`Store::begin_override`]'s way), and the reader
/// reads the shard (from its start for a pair of the base, on from the
/// pair for a pair of the shard) up to a record of the pair's key
/// (`DROP`) or the shard's end (`KEEP`); then the parked file takes the
/// reader slot back and reads the pair again: left out, or returned as it
/// is. A check knows the key by its length ([`Store::seek_j`]) and its
/// 32-bit FNV-1a hash ([`Store::last_fnv`]): no second key buffer on the
/// stack of every pass (the index knows a shard's keys by 16 bits).
const SCAN: u8 = 3 << 2;
const KEEP: u8 = 1 << 2;
const DROP: u8 = 2 << 2;

/// Why a memory operation failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MemError {
    /// Empty or over-long key, over-long value, or not UTF-8.
    Invalid,
    /// A new key and already [`MAX_ENTRIES`] keys.
    Full,
    /// The key is not in the store.
    NotFound,
    /// The value does not fit the caller's buffer.
    TooSmall,
    /// The file system failed.
    Io(Errno),
}

impl From<Errno> for MemError {
    fn from(e: Errno) -> Self {
        MemError::Io(e)
    }
}

/// Forgets the whole store (the `wipe_memory` tool): an empty base of a new
/// generation retires every shard, then the files are removed. A store that
/// is not there is already wiped.
// Out of line: its store and writer stay out of the tool dispatcher's
// frame (and out of each other's: the load, then the writes).
#[inline(never)]
pub fn wipe<P: Port>(port: &mut P) -> Result<(), Errno> {
    let _ = port.remove(MEMORY_TMP_PATH);
    match newest(port)? {
        Some(generation) => retire(port, generation),
        None => Ok(()),
    }
}

/// [`wipe`]'s load: the newest generation the files name (the largest of
/// the base's and the shards' headers, as a load finds it), `None` when
/// there is neither a base nor a shard. Only each file's first record is
/// read: no store state, no pair buffer.
#[inline(never)]
fn newest<P: Port>(port: &mut P) -> Result<Option<u32>, Errno> {
    let mut reader = None;
    let mut key = [0u8; KEY_MAX_BYTES];
    let mut newest = first_gen(port, MEMORY_PATH, &mut reader, &mut key)?;
    // By reference: an iterator by value holds a copy of the paths.
    for path in SHARD_PATHS.iter() {
        if let Some(g) = first_gen(port, path, &mut reader, &mut key)? {
            newest = Some(newest.map_or(g, |n| n.max(g)));
        }
    }
    Ok(newest)
}

/// [`wipe`]'s writes: an empty base past `generation`, then the files
/// removed.
#[inline(never)]
fn retire<P: Port>(port: &mut P, generation: u32) -> Result<(), Errno> {
    let tmp = port.open(MEMORY_TMP_PATH, Mode::Write)?;
    let mut w = LineWriter::new(tmp);
    let written =
        write_header(port, &mut w, generation.wrapping_add(1)).and_then(|()| w.flush(port));
    let closed = port.close(tmp);
    let result = written
        .and(closed)
        .and_then(|()| port.rename(MEMORY_TMP_PATH, MEMORY_PATH));
    if result.is_err() {
        let _ = port.remove(MEMORY_TMP_PATH);
        return result;
    }
    let gone = |r: Result<(), Errno>| matches!(r, Ok(()) | Err(Errno::ENOENT));
    if SHARD_PATHS.iter().all(|p| gone(port.remove(p))) {
        let _ = port.remove(MEMORY_PATH);
    }
    Ok(())
}

/// Checks a key and value against the limits.
pub fn validate(key: &[u8], value: &[u8]) -> Result<(), MemError> {
    let key_ok = !key.is_empty() && key.len() <= KEY_MAX_BYTES && crate::text::is_utf8(key);
    let val_ok = value.len() <= VAL_MAX_BYTES && crate::text::is_utf8(value);
    if key_ok && val_ok {
        Ok(())
    } else {
        Err(MemError::Invalid)
    }
}

fn fnv(key: &[u8]) -> u32 {
    let step = |h: u32, b: &u8| (h ^ u32::from(*b)).wrapping_mul(0x0100_0193);
    // Two bytes a step (one loop test for two).
    let (mut h, mut s) = (0x811c_9dc5, key);
    while let [a, b, rest @ ..] = s {
        h = step(step(h, a), b);
        s = rest;
    }
    s.iter().fold(h, step)
}

/// The shard of `key`.
pub fn shard_of(key: &[u8]) -> usize {
    (fnv(key) % SHARDS as u32) as usize
}

/// The fingerprint of `key` within its shard.
fn sig(key: &[u8]) -> u16 {
    (fnv(key) >> 16) as u16
}

/// The shard and the fingerprint of a key from its FNV-1a hash `h` (one
/// hash of the key serves both, and [`hash16`]).
fn place(h: u32) -> (usize, u16) {
    ((h % SHARDS as u32) as usize, (h >> 16) as u16)
}

/// [`place`] in 3 bytes (the scan's tally keeps it).
fn small_place(h: u32) -> (u8, u16) {
    let (s, f) = place(h);
    (s as u8, f)
}

/// A reader of `fd` set up in `slot` (one copy of its set-up for every
/// reader of the store: code size).
#[inline(never)]
fn put_reader<'a>(
    slot: &'a mut Option<PairReader<'static>>,
    fd: Fd,
) -> &'a mut PairReader<'static> {
    slot.insert(PairReader::new(fd))
}

fn open_opt<P: Port>(port: &mut P, path: &'static CStr) -> Result<Option<Fd>, Errno> {
    match port.open(path, Mode::Read) {
        Ok(fd) => Ok(Some(fd)),
        Err(Errno::ENOENT) => Ok(None),
        Err(e) => Err(e),
    }
}

/// The generation `path` names in its header: `None` without the file, 0
/// for one without a header (the base in the seed's plain form). Read with
/// the caller's reader slot and key buffer (left `None` and clobbered).
fn first_gen<P: Port>(
    port: &mut P,
    path: &'static CStr,
    reader: &mut Option<PairReader<'static>>,
    key: &mut [u8; KEY_MAX_BYTES],
) -> Result<Option<u32>, Errno> {
    let Some(fd) = open_opt(port, path)? else {
        return Ok(None);
    };
    let first = put_reader(reader, fd)
        .rec(port, key, &mut [])
        .map(|got| got.map(|(rec, ..)| rec));
    *reader = None;
    let _ = port.close(fd);
    Ok(Some(match first? {
        Some(Rec::Header(g)) => g,
        _ => 0,
    }))
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
    #[inline(always)]
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
    #[inline(always)]
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

/// Records the shards of one generation hold at most (8 shards).
const ENTRIES: usize = SHARDS * SHARD_RECORDS;

/// The merged store, streamed: the base's pairs in their order, each with
/// its shard's record when one overrides it (a forgotten key is left out),
/// then the keys new since the base, in the order they were added. At
/// most two files open at a time.
pub struct Store {
    reader: Option<PairReader<'static>>,
    /// The part being read, and a check ([`SCAN`]).
    phase: u8,
    /// The base's generation.
    generation: u32,
    /// The newest generation any file names (a fold goes past it: stale
    /// shards must not come back).
    newest: u32,
    /// The shards' records: fingerprint, `"n"`; shard `s` at
    /// `start[s]..start[s+1]`.
    sigs: [u16; ENTRIES],
    ns: [u8; ENTRIES],
    start: [u8; SHARDS + 1],
    /// Records that are `"del"` (bit per entry).
    dels: u64,
    /// Records that override a pair of the base.
    matched: u64,
    /// New keys already returned.
    emitted: u64,
    /// The largest `"n"`.
    max_n: u8,
    /// Pairs of the base read so far (overridden ones included; it stops
    /// at 65,535, far past the pairs a fold sorts out: 2 bytes, not 4).
    base_pairs: u16,
    /// Whether the base had a line that is not a record.
    skipped: bool,
    /// Whether the last pair holds a place of the base.
    from_base: bool,
    /// FNV-1a of the last base pair's key (and of the key a check looks
    /// for, [`SCAN`]).
    last_fnv: u32,
    /// The last record's key and value lengths and pin.
    got: (u8, u8, bool),
    /// Whether the entry that overrides the last base pair overrode one
    /// before (a key the base holds twice).
    rematch: bool,
    /// Where the base's reader started (it is reopened past an override).
    base_off: u32,
    /// Whether the base had a line that is not a record before there.
    base_skipped: bool,
    /// Where the base's last record was looked for.
    rec_off: u32,
    /// The base, reopened where it was, while a shard record that
    /// overrides its last pair is read ([`NO_FD`]: none; 4 bytes, not 8).
    parked: Fd,
    /// The reader holds a shard, read up to entry `seek_j` (the next record
    /// being entry `seek_k`). After a pair of the new keys, `seek_j` is the
    /// entry it was read from.
    seeking: bool,
    seek_k: u8,
    seek_j: u8,
    /// A load: the file being read (0: the base, then the shards), whether
    /// its first record is next, its first entry, its next entry and its
    /// largest `"n"` so far.
    ld_file: u8,
    ld_first: bool,
    ld_from: u8,
    ld_j: u8,
    ld_max_n: u8,
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

fn bit64(j: usize) -> u64 {
    if j < 64 { 1 << j } else { 0 }
}

impl Store {
    /// Reads the base's generation and the shards' keys.
    #[inline(never)]
    pub fn open<P: Port>(port: &mut P) -> Result<Store, Errno> {
        let mut s = Store::new();
        s.load_with(port, &mut Pair::new())?;
        Ok(s)
    }

    /// A store not read yet. (One copy of its set-up, written in place:
    /// code size.)
    #[inline(never)]
    pub const fn new() -> Store {
        Store {
            reader: None,
            phase: 0,
            generation: 0,
            newest: 0,
            sigs: [0; ENTRIES],
            ns: [0; ENTRIES],
            start: [0; SHARDS + 1],
            dels: 0,
            matched: 0,
            emitted: 0,
            max_n: 0,
            base_pairs: 0,
            skipped: false,
            from_base: false,
            rematch: false,
            last_fnv: 0,
            got: (0, 0, false),
            base_off: 0,
            base_skipped: false,
            rec_off: 0,
            parked: NO_FD,
            seeking: false,
            seek_k: 0,
            seek_j: 0,
            ld_file: 0,
            ld_first: false,
            ld_from: 0,
            ld_j: 0,
            ld_max_n: 0,
        }
    }

    /// [`Store::open`] in place (no copy of the struct between frames).
    pub fn load<P: Port>(&mut self, port: &mut P) -> Result<(), Errno> {
        self.load_with(port, &mut Pair::new())
    }

    /// [`Store::load`] with the caller's pair buffer (clobbered). The files
    /// are read through the store's own reader slot, free until the first
    /// [`Store::next`]: the frames of a load hold no reader nor pair of
    /// their own, and the record reader is called from this small frame.
    #[inline(never)]
    pub(crate) fn load_with<P: Port, S: Slot>(
        &mut self,
        port: &mut P,
        pair: &mut S,
    ) -> Result<(), Errno> {
        self.load_into(port, pair.key_buf(), None)
    }

    /// [`Store::load_with`], telling `sink` the shard records (an edit's
    /// scan: the keys new since the base without reading the shards again).
    #[inline(never)]
    fn load_into<P: Port>(
        &mut self,
        port: &mut P,
        key: &mut [u8; KEY_MAX_BYTES],
        mut sink: Option<&mut Tally<'_>>,
    ) -> Result<(), Errno> {
        self.reset(port);
        loop {
            let Some(r) = self.reader.as_mut() else {
                if !self.load_open(port)? {
                    return Ok(());
                }
                continue;
            };
            // Keys only (the values checked, not kept): one copy of the
            // load for every slot.
            // (The record packed, passed in registers: no copy of it on
            // this frame.)
            let got = r.rec_word(port, key, &mut []);
            if let Err(e) = got.get() {
                self.close(port);
                return Err(e);
            }
            self.load_rec(port, got, key, sink.as_deref_mut());
        }
    }

    /// The next file of a load opened in the reader slot: the base, then
    /// each shard there is; false when all are read.
    #[inline(never)]
    fn load_open<P: Port>(&mut self, port: &mut P) -> Result<bool, Errno> {
        loop {
            let f = usize::from(self.ld_file);
            let path = match f {
                0 => MEMORY_PATH,
                _ => match SHARD_PATHS.get(f - 1) {
                    Some(p) => p,
                    None => return Ok(false),
                },
            };
            if let Some(fd) = open_opt(port, path)? {
                put_reader(&mut self.reader, fd);
                self.ld_first = true;
                self.ld_j = self.ld_from;
                self.ld_max_n = self.max_n;
                return Ok(true);
            }
            // No base: generation 0. No shard: no entries.
            self.ld_next_file();
        }
    }

    /// Past the file being loaded: its shard's entries end at `ld_from`.
    fn ld_next_file(&mut self) {
        if let Some(st) = self.start.get_mut(usize::from(self.ld_file)) {
            if self.ld_file > 0 {
                *st = self.ld_from;
            }
        }
        self.ld_file = self.ld_file.saturating_add(1);
    }

    /// One record of a load (`None`: the end of the file): the base's first
    /// gives its generation; a shard's, its entries (a stale shard, or one
    /// with more than [`SHARD_RECORDS`] records, gives none).
    #[inline(never)]
    fn load_rec<P: Port>(
        &mut self,
        port: &mut P,
        got: RecWord,
        key: &[u8; KEY_MAX_BYTES],
        mut sink: Option<&mut Tally<'_>>,
    ) {
        let (rec, key) = match got.get().ok().flatten() {
            Some((rec, kl, _, _)) => (Some(rec), key.get(..usize::from(kl)).unwrap_or(&[])),
            None => (None, &[][..]),
        };
        if self.ld_file == 0 {
            let generation = match rec {
                Some(Rec::Header(g)) => g,
                _ => 0,
            };
            self.generation = generation;
            self.newest = generation;
            self.close(port);
            self.ld_next_file();
            return;
        }
        if self.ld_first {
            self.ld_first = false;
            if let Some(Rec::Header(g)) = rec {
                self.newest = self.newest.max(g);
            }
            if rec != Some(Rec::Header(self.generation)) || self.generation == 0 {
                self.ld_reject(port);
                if let Some(t) = sink.as_deref_mut() {
                    t.shard_done(false);
                }
            }
            return;
        }
        let j = usize::from(self.ld_j);
        let mut del = false;
        let n = match rec {
            None => {
                // The shard counts.
                self.ld_from = self.ld_j;
                self.max_n = self.ld_max_n;
                self.close(port);
                self.ld_next_file();
                if let Some(t) = sink.as_deref_mut() {
                    t.shard_done(true);
                }
                return;
            }
            Some(Rec::Header(_)) => return,
            Some(Rec::Pair(n)) => n,
            Some(Rec::Del) => {
                self.dels |= bit64(j);
                del = true;
                0
            }
        };
        match (self.sigs.get_mut(j), self.ns.get_mut(j)) {
            (Some(sg), Some(nn)) => {
                *sg = sig(key);
                *nn = n;
            }
            _ => {
                // The index is full: the shard is streamed (`OVERFLOW`).
                self.dels |= bit64(OVERFLOW + usize::from(self.ld_file) - 1);
                self.ld_reject(port);
                if let Some(t) = sink.as_deref_mut() {
                    t.shard_done(false);
                }
                return;
            }
        }
        if let Some(t) = sink {
            t.entry(j, key, del);
        }
        self.ld_max_n = self.ld_max_n.max(n);
        self.ld_j = self.ld_j.saturating_add(1);
    }

    /// The shard being loaded is not one of ours: none of its records
    /// count.
    fn ld_reject<P: Port>(&mut self, port: &mut P) {
        for j in usize::from(self.ld_from)..=usize::from(self.ld_j) {
            self.dels &= !bit64(j);
        }
        self.close(port);
        self.ld_next_file();
    }

    /// [`Store::new`] in place (`*self = Store::new()` would build one on
    /// the stack and copy it).
    fn reset<P: Port>(&mut self, port: &mut P) {
        self.close(port);
        self.phase = 0;
        self.generation = 0;
        self.newest = 0;
        // (The fingerprints and "n"s are read only within `start`'s
        // ranges; the load writes every one of those but the first, 0.)
        self.dels = 0;
        self.matched = 0;
        self.emitted = 0;
        self.max_n = 0;
        self.base_pairs = 0;
        self.skipped = false;
        self.from_base = false;
        self.rematch = false;
        self.base_off = 0;
        self.base_skipped = false;
        self.rec_off = 0;
        self.seek_k = 0;
        self.seek_j = 0;
        self.ld_file = 0;
        self.ld_first = false;
        self.ld_from = 0;
        self.ld_j = 0;
        self.ld_max_n = 0;
    }

    /// The entry of the shards that holds `key`.
    fn entry(&mut self, key: &[u8]) -> Option<usize> {
        self.last_fnv = fnv(key);
        let (s, k) = place(self.last_fnv);
        let a = usize::from(self.start.get(s).copied().unwrap_or(0));
        let b = usize::from(self.start.get(s + 1).copied().unwrap_or(0));
        (a..b).find(|&j| self.sigs.get(j) == Some(&k))
    }

    /// The shard of entry `j` and its first entry.
    fn entry_shard(&self, j: usize) -> Option<(usize, usize)> {
        (0..SHARDS).find_map(|s| {
            let a = usize::from(self.start.get(s).copied().unwrap_or(0));
            let b = usize::from(self.start.get(s + 1).copied().unwrap_or(0));
            (a..b).contains(&j).then_some((s, a))
        })
    }

    /// Opens the shard of entry `j` in the reader slot (free: the base is
    /// closed or parked) and seeks `j`; false when there is no such shard.
    #[inline(never)]
    fn open_entry<P: Port>(&mut self, port: &mut P, j: usize) -> Result<bool, Errno> {
        let Some((s, first)) = self.entry_shard(j) else {
            return Ok(false);
        };
        let path = SHARD_PATHS.get(s).copied().unwrap_or(MEMORY_PATH);
        let Some(fd) = open_opt(port, path)? else {
            return Ok(false);
        };
        put_reader(&mut self.reader, fd);
        self.seeking = true;
        self.seek_k = first as u8;
        self.seek_j = j as u8;
        Ok(true)
    }

    /// Ends reading a shard record: closes the shard, and the base reader
    /// parked meanwhile takes the slot back.
    #[inline(never)]
    fn end_seek<P: Port>(&mut self, port: &mut P) {
        if let Some(r) = self.reader.take() {
            let _ = port.close(r.fd());
        }
        self.seeking = false;
        let fd = core::mem::replace(&mut self.parked, NO_FD);
        if fd != NO_FD {
            put_reader(&mut self.reader, fd).skipped = self.base_skipped;
        }
    }

    /// Nothing is open: opens what is read next (the base, or the shard of
    /// the next new key): [`Stepped::READY`], or what [`Store::step`]
    /// returns ([`Stepped::END`] at the store's end, or the error). Packed:
    /// back in registers, not in a slot of the step's frame.
    #[inline(never)]
    fn prepare<P: Port>(&mut self, port: &mut P) -> Stepped {
        match self.prepare_in(port) {
            Ok(true) => Stepped::READY,
            Ok(false) => Stepped::END,
            Err(e) => Stepped::err(e),
        }
    }

    #[inline(always)]
    fn prepare_in<P: Port>(&mut self, port: &mut P) -> Result<bool, Errno> {
        if self.phase == 0 {
            match open_opt(port, MEMORY_PATH)? {
                Some(fd) => {
                    put_reader(&mut self.reader, fd);
                }
                None => self.phase = 1,
            }
            return Ok(true);
        }
        // The keys new since the base: by "n", then by place (at most
        // ENTRIES rounds: each takes one entry).
        let total = usize::from(self.start.get(SHARDS).copied().unwrap_or(0));
        while self.phase == 1 {
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
                self.phase = 2;
                self.ld_file = 0;
                break;
            };
            self.emitted |= bit64(j);
            self.from_base = false;
            if self.open_entry(port, j)? {
                return Ok(true);
            }
        }
        // Then the shards the index could not hold, streamed ([`OVERFLOW`]).
        while let Some(path) = SHARD_PATHS.get(usize::from(self.ld_file)) {
            let s = usize::from(self.ld_file);
            self.ld_file += 1;
            if has(self.dels, OVERFLOW + s) {
                if let Some(fd) = open_opt(port, path)? {
                    put_reader(&mut self.reader, fd);
                    self.from_base = false;
                    self.base_off = 0;
                    return Ok(true);
                }
            }
        }
        self.phase = 3;
        Ok(false)
    }

    /// Whether a shard was left out of the index ([`OVERFLOW`]).
    fn overflowed(&self) -> bool {
        self.dels >> OVERFLOW != 0
    }

    /// Entry `j` overrides the base pair just read: parks the base (closed
    /// and reopened where it was, its bytes read again up to there into
    /// `pair`'s value buffer, free until the record goes there) and opens
    /// the shard in the store's one reader slot. A second reader would cost
    /// its 116 bytes on the deepest stack path of every pass.
    #[inline(never)]
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
    fn last_at(&self) -> Loc {
        if self.from_base {
            Loc::Base(self.rec_off)
        } else if self.phase == 2 {
            Loc::Line(self.ld_file.wrapping_sub(1), self.rec_off)
        } else {
            self.entry_at(usize::from(self.seek_j))
        }
    }

    /// Where entry `j` is.
    fn entry_at(&self, j: usize) -> Loc {
        let (shard, first) = self.entry_shard(j).unwrap_or((0, 0));
        Loc::Entry {
            shard: shard as u8,
            first: first as u8,
            j: j as u8,
        }
    }

    /// The next pair of the merged store, or `None` at its end.
    #[inline(always)]
    pub fn next<P: Port>(&mut self, port: &mut P, pair: &mut Pair) -> Result<Option<()>, Errno> {
        let got = self
            .step(port, &mut pair.key, &mut pair.val, Pass::Resolve)
            .get()?;
        (pair.key_len, pair.val_len, pair.pinned) = self.got;
        Ok(got.map(|_| ()))
    }

    /// [`Store::next`] where a base pair that a shard overrides is not read
    /// from its shard: `Some(Some(j))` then, the slot holding the base's
    /// line (its key is the record's: a shard record overrides the base
    /// pair with its key's fingerprint, and a key sharing another's
    /// fingerprint is folded, never written to a shard), the record being
    /// at [`Store::entry_at`]. No shard opened per override: for the passes
    /// that want the value of one key (read at its place afterwards).
    #[inline(always)]
    pub(crate) fn next_key<P: Port>(
        &mut self,
        port: &mut P,
        pair: &mut KeyRec,
    ) -> Result<Option<Option<usize>>, Errno> {
        let got = self.step(port, &mut pair.key, &mut [], Pass::Keys).get()?;
        (pair.key_len, pair.val_len, pair.pinned) = self.got;
        Ok(got)
    }

    /// [`Store::next_key`] over the base's lines only (`None` at the base's
    /// end): the keys new since the base are the entries the load read.
    /// No check ([`OVERFLOW`]): an edit of a store with a shard the index
    /// could not hold folds, and the fold reads the store whole.
    #[inline(always)]
    pub(crate) fn next_base<P: Port>(
        &mut self,
        port: &mut P,
        pair: &mut KeyRec,
    ) -> Result<Option<Option<usize>>, Errno> {
        let got = self
            .step(port, &mut pair.key, &mut [], Pass::BaseKeys)
            .get()?;
        (pair.key_len, pair.val_len, pair.pinned) = self.got;
        Ok(got)
    }

    /// One reader slot, one call site of the record reader (a small frame
    /// above the deepest path): the base's records, a shard's up to the
    /// record sought, by turns. Its result packed in a `u64`
    /// ([`Stepped`]).
    /// (One copy per slot type: the modes are not type parameters.)
    #[inline(never)]
    fn step<P: Port>(
        &mut self,
        port: &mut P,
        key: &mut [u8; KEY_MAX_BYTES],
        val: &mut [u8],
        mode: Pass,
    ) -> Stepped {
        loop {
            let Some(r) = self.reader.as_mut() else {
                if mode == Pass::BaseKeys && self.phase > 0 {
                    return Stepped::END;
                }
                let ready = self.prepare(port);
                if ready.0 != Stepped::READY.0 {
                    return ready;
                }
                continue;
            };
            if !self.seeking {
                self.rec_off = self.base_off.saturating_add(r.offset());
            }
            let got = match r.rec(port, key, val) {
                Ok(got) => got,
                Err(e) => return Stepped::err(e),
            };
            let rec = match got {
                Some((rec, kl, vl, pinned)) => {
                    self.got = (kl, vl, pinned);
                    Some(rec)
                }
                None => None,
            };
            let skipped = r.skipped;
            if self.seeking {
                if self.phase >= SCAN {
                    // A check: the end, or a record of the key checked
                    // (its length in `seek_j`, its hash in `last_fnv`),
                    // ends it, and the pair's file takes the slot back.
                    let kl = self.got.0;
                    let outcome = match rec {
                        None => KEEP,
                        Some(_)
                            if kl == self.seek_j
                                && fnv(key.get(..usize::from(kl)).unwrap_or(&[]))
                                    == self.last_fnv =>
                        {
                            DROP
                        }
                        Some(_) => continue,
                    };
                    self.phase = (self.phase & 3) | outcome;
                    self.end_seek(port);
                    continue;
                }
                match rec {
                    Some(Rec::Header(_)) => {}
                    Some(rec) if self.seek_k == self.seek_j => {
                        self.end_seek(port);
                        if matches!(rec, Rec::Pair(_)) {
                            return Stepped::PAIR;
                        }
                    }
                    Some(_) => self.seek_k = self.seek_k.saturating_add(1),
                    None => self.end_seek(port),
                }
                continue;
            }
            if self.phase & 3 == 2 {
                // A shard the index could not hold: its pairs in order,
                // each checked first ([`OVERFLOW`]).
                match rec {
                    None => self.close(port),
                    Some(Rec::Pair(_)) => {
                        let began = self.begin_check(port, key);
                        if began.0 != Stepped::READY.0 {
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
                    self.phase = 1;
                }
                Some(Rec::Pair(_)) => {
                    // (A pair read again after a check is counted once.)
                    if self.phase == 0 {
                        self.base_pairs = self.base_pairs.saturating_add(1);
                    }
                    self.from_base = true;
                    let kl = usize::from(self.got.0);
                    let Some(j) = self.entry(key.get(..kl).unwrap_or(&[])) else {
                        // (A shard not indexed: a check, or its end.)
                        if self.overflowed() {
                            let began = self.begin_check(port, key);
                            if began.0 != Stepped::READY.0 {
                                return began;
                            }
                            continue;
                        }
                        return Stepped::PAIR;
                    };
                    self.rematch = has(self.matched, j);
                    self.matched |= bit64(j);
                    if !has(self.dels, j) {
                        if mode != Pass::Resolve {
                            return Stepped::pending(j);
                        }
                        if let Err(e) = self.begin_override(port, val, j) {
                            return Stepped::err(e);
                        }
                    }
                }
                Some(_) => {}
            }
        }
    }

    /// The pair just read (its key in `key`), when it may be checked
    /// ([`SCAN`]): read again after a check, [`Stepped::PAIR`] (returned as
    /// it is) or [`Stepped::READY`] (left out); else a check begins when it
    /// is a pair of the base whose key's shard the index could not hold
    /// (its key's hash in [`Store::last_fnv`]), or a pair of such a shard
    /// ([`Stepped::READY`]), or not ([`Stepped::PAIR`]).
    #[inline(never)]
    fn begin_check<P: Port>(&mut self, port: &mut P, key: &mut [u8; KEY_MAX_BYTES]) -> Stepped {
        let part = self.phase & 3;
        let after = self.phase & !3;
        self.phase = part;
        if after != 0 {
            return if after == DROP {
                Stepped::READY
            } else {
                Stepped::PAIR
            };
        }
        let s = if part == 0 {
            place(self.last_fnv).0
        } else {
            self.last_fnv = fnv(key.get(..usize::from(self.got.0)).unwrap_or(&[]));
            usize::from(self.ld_file.wrapping_sub(1))
        };
        if !has(self.dels, OVERFLOW + s) {
            return Stepped::PAIR;
        }
        self.seek_j = self.got.0;
        self.base_off = self.rec_off;
        self.phase = part | SCAN;
        // (Seeking once parked: a close ends it.)
        let parked = self.park(port, key, s);
        self.seeking = true;
        match parked {
            Ok(()) => Stepped::READY,
            Err(e) => Stepped::err(e),
        }
    }

    /// A check's files: the pair's file reopened at the pair's start and
    /// parked (`scratch` clobbered: the pair is read again); the reader
    /// reads the shard `s` on, from its start for a pair of the base.
    /// (The parked reader's `skipped` is not kept: only the scan reads
    /// it, which checks nothing.)
    #[inline(always)]
    fn park<P: Port>(&mut self, port: &mut P, scratch: &mut [u8], s: usize) -> Result<(), Errno> {
        let shard = SHARD_PATHS[s % SHARDS];
        let mut here = shard;
        if self.phase == SCAN {
            self.close(port);
            put_reader(&mut self.reader, port.open(shard, Mode::Read)?);
            here = MEMORY_PATH;
        }
        let fd = port.open(here, Mode::Read)?;
        self.parked = fd;
        skip(port, fd, self.base_off, scratch)
    }

    /// Closes the files being read (after an error, or to stop early).
    pub fn close<P: Port>(&mut self, port: &mut P) {
        if let Some(r) = self.reader.take() {
            let _ = port.close(r.fd());
        }
        let fd = core::mem::replace(&mut self.parked, NO_FD);
        if fd != NO_FD {
            let _ = port.close(fd);
        }
        self.seeking = false;
    }
}

/// [`Store::step`]'s result in a `u64`, which comes back in two registers:
/// a `Result` of its size comes back through memory, a slot on the frame
/// of every pass (which the record reader is under). The high word: 0 an
/// error (the low word its number), 1 the end, 2 a pair, 3 a pair whose
/// override is pending (the low word its entry).
#[derive(Clone, Copy)]
#[repr(transparent)]
struct Stepped(u64);

impl Stepped {
    const END: Stepped = Stepped(1 << 32);
    const PAIR: Stepped = Stepped(2 << 32);
    /// [`Store::prepare`]: a file is open (never returned by a step).
    const READY: Stepped = Stepped(4 << 32);

    fn err(e: Errno) -> Self {
        Stepped(u64::from(e.0 as u32))
    }

    fn pending(j: usize) -> Self {
        Stepped(3 << 32 | u64::from(j as u32))
    }

    #[inline(always)]
    fn get(self) -> Result<Option<Option<usize>>, Errno> {
        let (tag, low) = ((self.0 >> 32) as u32, self.0 as u32);
        if tag == 0 {
            return Err(Errno(low as i32));
        }
        Ok((tag > 1).then(|| (tag > 2).then_some(low as usize)))
    }
}

/// How [`Store::step`] reads.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Pass {
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
#[inline(always)]
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

impl Default for Store {
    fn default() -> Self {
        Self::new()
    }
}

/// Calls `f` for each pair of the merged store (base duplicates included).
/// One frame holds the reader and the pair, out of the caller's (never
/// inlined). Generic, not `dyn`: a closure called through a pointer is an
/// indirect call, which a stack bound charges with the deepest function
/// whose address is taken.
#[inline(never)]
pub fn for_each<P: Port, F: FnMut(&Pair) + ?Sized>(port: &mut P, f: &mut F) -> Result<(), Errno> {
    let mut store = Store::new();
    let mut pair = Pair::new();
    store.load_with(port, &mut pair)?;
    let res = loop {
        match store.next(port, &mut pair) {
            Ok(Some(())) => f(&pair),
            Ok(None) => break Ok(()),
            Err(e) => break Err(e),
        }
    };
    store.close(port);
    res
}

/// Copies the value of `key` into `out`; returns its length. `out` is
/// written only with the value returned.
#[inline(always)]
pub fn get<P: Port>(port: &mut P, key: &[u8], out: &mut [u8]) -> Result<usize, MemError> {
    validate(key, b"")?;
    let Some(at) = find(port, key)? else {
        return Err(MemError::NotFound);
    };
    copy_at(port, at, out)
}

/// [`get`]'s pass: where the key's last line is (the last line wins). Its
/// lines are read without their values (no value buffer on the stack of
/// the pass): the value is read there afterwards.
#[inline(never)]
fn find<P: Port>(port: &mut P, key: &[u8]) -> Result<Option<Loc>, Errno> {
    let mut store = Store::new();
    let mut k = KeyRec::new();
    store.load_with(port, &mut k)?;
    let mut at = None;
    let res = loop {
        match store.next_key(port, &mut k) {
            Ok(Some(pending)) => {
                if k.key() == key {
                    at = Some(match pending {
                        Some(j) => store.entry_at(j),
                        None => store.last_at(),
                    });
                }
            }
            Ok(None) => break Ok(at),
            Err(e) => break Err(e),
        }
    };
    store.close(port);
    res
}

/// The value of the pair at `at` into `out`.
#[inline(never)]
fn copy_at<P: Port>(port: &mut P, at: Loc, out: &mut [u8]) -> Result<usize, MemError> {
    let mut pair = Pair::new();
    if !read_at(port, at, &mut pair)? {
        return Err(MemError::NotFound);
    }
    let dst = out
        .get_mut(..pair.value().len())
        .ok_or(MemError::TooSmall)?;
    crate::text::copy_prefix(dst, pair.value());
    Ok(pair.value().len())
}

/// Calls `f` with the `index`-th pair of the merged store (store order, as
/// [`for_each`] gives them); false past its end.
pub fn at<P: Port>(port: &mut P, index: usize, f: impl FnOnce(&Pair)) -> Result<bool, Errno> {
    let Some(at) = nth(port, index)? else {
        return Ok(false);
    };
    with_at(port, at, f)
}

/// Calls `f` with the pair at `at` (its buffer out of the pass's frame).
#[inline(never)]
fn with_at<P: Port>(port: &mut P, at: Loc, f: impl FnOnce(&Pair)) -> Result<bool, Errno> {
    let mut pair = Pair::new();
    if !read_at(port, at, &mut pair)? {
        return Ok(false);
    }
    f(&pair);
    Ok(true)
}

/// Where the `index`-th pair is (the whole store read, as [`for_each`]
/// reads it: a failure anywhere is one).
#[inline(never)]
fn nth<P: Port>(port: &mut P, index: usize) -> Result<Option<Loc>, Errno> {
    let mut store = Store::new();
    let mut k = KeyRec::new();
    store.load_with(port, &mut k)?;
    let mut i = 0usize;
    let mut at = None;
    let res = loop {
        match store.next_key(port, &mut k) {
            Ok(Some(pending)) => {
                if i == index {
                    at = Some(match pending {
                        Some(j) => store.entry_at(j),
                        None => store.last_at(),
                    });
                }
                i += 1;
            }
            Ok(None) => break Ok(at),
            Err(e) => break Err(e),
        }
    };
    store.close(port);
    res
}

fn hash(key: &[u8]) -> u16 {
    hash16(fnv(key))
}

/// FNV-1a folded to 16 bits: a pre-check only; equal hashes are confirmed
/// byte by byte.
fn hash16(h: u32) -> u16 {
    (h ^ (h >> 16)) as u16
}

/// Key hashes of the first [`HASHED`] pairs of the base.
struct KeyHashes {
    hashes: [u16; HASHED],
    len: usize,
    /// The store has more pairs than were hashed: a later duplicate of any
    /// key may be among them.
    truncated: bool,
}

impl KeyHashes {
    /// Whether the pair at `index` may share its key with another pair.
    fn maybe_duplicate(&self, index: usize, key: &[u8]) -> bool {
        let h = hash(key);
        let seen = self.hashes.get(..self.len).unwrap_or(&[]);
        index >= self.len || self.truncated || seen.iter().filter(|&&x| x == h).count() > 1
    }
}

/// A change to one key of the store.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Edit<'a> {
    /// Store this value (an existing key keeps its pin).
    Set(&'a [u8]),
    /// Delete the key.
    Forget,
    /// Pin or unpin the key (pinned keys always reach the context first).
    #[cfg(feature = "recall")]
    Pin(bool),
}

/// Stores `value` under `key`; see the module docs for the commit rule.
#[inline(always)]
pub fn set<P: Port>(port: &mut P, key: &[u8], value: &[u8]) -> Result<(), MemError> {
    validate(key, value)?;
    edit(port, key, Edit::Set(value))
}

/// Deletes `key`; `NotFound` when it is not stored.
#[inline(always)]
pub fn forget<P: Port>(port: &mut P, key: &[u8]) -> Result<(), MemError> {
    validate(key, b"")?;
    edit(port, key, Edit::Forget)
}

/// Pins or unpins `key`; `NotFound` when it is not stored.
#[cfg(feature = "recall")]
#[inline(always)]
pub fn pin<P: Port>(port: &mut P, key: &[u8], on: bool) -> Result<(), MemError> {
    validate(key, b"")?;
    edit(port, key, Edit::Pin(on))
}

/// [`set`], [`forget`] or [`pin`] (by `e`), out of line: one copy of the
/// edit for the exports that call it (each inlining its own copy cost
/// about 250 B of code apiece; the frame it adds is small).
#[inline(never)]
pub fn apply<P: Port>(port: &mut P, key: &[u8], e: Edit<'_>) -> Result<(), MemError> {
    let value = match e {
        Edit::Set(v) => v,
        _ => b"",
    };
    validate(key, value)?;
    edit(port, key, e)
}

/// What the first pass over the store found.
struct Scan {
    maybe_dup: bool,
    skipped: bool,
    /// A shard the index could not hold: its keys are not counted (see
    /// [`OVERFLOW`]); the edit folds, and the fold knows them.
    overflow: bool,
    pairs: usize,
    /// Where the key's last line is (its value is read there: the scan
    /// keeps no value buffer).
    at: Option<Loc>,
    /// Another key has the key's shard and fingerprint.
    collides: bool,
    /// The base's generation.
    generation: u32,
    /// The key holds a place of the base.
    in_base: bool,
    /// The largest `"n"` of the shards.
    max_n: u8,
}

/// Where a line of the store is.
#[derive(Clone, Copy)]
enum Loc {
    /// The first pair of the base from this offset on.
    Base(u32),
    /// The first pair of shard `.0` from offset `.1` on (a shard the index
    /// could not hold).
    Line(u8, u32),
    /// Shard record `j`, the shard's first being `first`.
    Entry { shard: u8, first: u8, j: u8 },
}

// The passes of an edit stay out of line: each has its own pair buffer, and
// inlined into one frame they would add up on a 1 KiB stack budget.
#[inline(never)]
fn scan<P: Port>(port: &mut P, key: &[u8], s: &mut Scan) -> Result<(), Errno> {
    let mut store = Store::new();
    let mut k = KeyRec::new();
    let mut t = Tally {
        key,
        mine: small_place(fnv(key)),
        hashes: [0; HASHED],
        pairs: 0,
        collides: false,
        target: None,
        shard: (0, false, None),
    };
    store.load_into(port, &mut k.key, Some(&mut t))?;
    s.generation = store.generation;
    s.max_n = store.max_n;
    s.overflow = store.overflowed();
    // The base's lines; the keys new since the base were tallied from the
    // load (no shard read again).
    let res = loop {
        match store.next_base(port, &mut k) {
            Ok(Some(pending)) => {
                let is_key = k.key() == key;
                // An entry's key was tallied once, with the load.
                if pending.is_none() || store.rematch {
                    // (The store hashed the key to find its entry.)
                    t.add(store.last_fnv, is_key);
                }
                if is_key {
                    s.in_base = true;
                    s.at = Some(match pending {
                        Some(j) => store.entry_at(j),
                        None => store.last_at(),
                    });
                }
            }
            Ok(None) => break Ok(()),
            Err(e) => break Err(e),
        }
    };
    s.skipped = store.skipped;
    store.close(port);
    res?;
    // The key's entry, when no line of the base holds it: it is among the
    // new keys, after every line of the base.
    if let Some(j) = t.target.map(usize::from) {
        if store.matched & bit64(j) == 0 {
            s.in_base = false;
            s.at = Some(store.entry_at(j));
        }
    }
    s.pairs = t.pairs;
    s.collides = t.collides;
    s.maybe_dup = t.pairs > HASHED || repeats(t.hashes.get(..t.pairs.min(HASHED)).unwrap_or(&[]));
    Ok(())
}

/// Whether a key hash repeats among `seen`: maybe a duplicate (the
/// rewrite pass decides). Out of line: its bitmap is not on the scan's
/// frame.
#[inline(never)]
fn repeats(seen: &[u16]) -> bool {
    // (A hash's low byte first: the lines before it are looked through
    // only when one of them has that byte.)
    let mut low = [0u32; 8];
    seen.iter().enumerate().any(|(i, &h)| {
        let b = usize::from(h as u8);
        let (w, m) = (b / 32, 1u32 << (b % 32));
        let maybe = low.get(w).is_some_and(|&x| x & m != 0);
        if let Some(x) = low.get_mut(w) {
            *x |= m;
        }
        maybe && seen.get(..i).is_some_and(|before| before.contains(&h))
    })
}

/// What the scan counts of the store's lines (in any order: each is
/// counted once, the entries of a shard when the shard counts).
struct Tally<'a> {
    /// The key edited, and its shard and fingerprint.
    key: &'a [u8],
    mine: (u8, u16),
    /// Key hashes of the first HASHED lines counted.
    hashes: [u16; HASHED],
    pairs: usize,
    /// Another key has the key's shard and fingerprint.
    collides: bool,
    /// The entry holding the key (not a forgotten one).
    target: Option<u8>,
    /// The shard being loaded: its lines (at most [`SHARD_RECORDS`]),
    /// whether one collides, its entry holding the key.
    shard: (u8, bool, Option<u8>),
}

impl Tally<'_> {
    /// A line counted at `pairs` (its hash kept among the first HASHED).
    fn hash_at(&mut self, at: usize, f: u32) -> bool {
        if let Some(slot) = self.hashes.get_mut(at) {
            *slot = hash16(f);
        }
        small_place(f) == self.mine
    }

    /// A line of the base.
    fn add(&mut self, f: u32, is_key: bool) {
        let collides = self.hash_at(self.pairs, f);
        self.pairs += 1;
        self.collides |= collides && !is_key;
    }
}

impl Tally<'_> {
    /// Entry `j` of the shard being loaded: its key, and whether it is a
    /// forgotten one.
    fn entry(&mut self, j: usize, key: &[u8], del: bool) {
        if del {
            return;
        }
        let is_key = key == self.key;
        let collides = self.hash_at(self.pairs + usize::from(self.shard.0), fnv(key));
        self.shard.0 += 1;
        self.shard.1 |= collides && !is_key;
        if is_key {
            self.shard.2 = Some(j as u8);
        }
    }

    /// The shard's entries count (or not: it is stale or not one of ours).
    fn shard_done(&mut self, counts: bool) {
        if counts {
            self.pairs += usize::from(self.shard.0);
            self.collides |= self.shard.1;
            if self.shard.2.is_some() {
                self.target = self.shard.2;
            }
        }
        self.shard = (0, false, None);
    }
}

/// The key's last line, where the scan found it: (its value equals
/// `value`, pinned); `None` without one. A forget needs only to know
/// there is one.
fn found<P: Port>(
    port: &mut P,
    e: Edit<'_>,
    s: &Scan,
    value: &[u8],
) -> Result<Option<(bool, bool)>, Errno> {
    match (s.at, e) {
        (None, _) => Ok(None),
        (Some(_), Edit::Forget) => Ok(Some((false, false))),
        (Some(at), _) => check_at(port, at, value),
    }
}

/// [`found`]'s read (its pair buffer out of the scan's frame).
#[inline(never)]
fn check_at<P: Port>(port: &mut P, at: Loc, value: &[u8]) -> Result<Option<(bool, bool)>, Errno> {
    let mut pair = Pair::new();
    Ok(read_at(port, at, &mut pair)?.then(|| (pair.value() == value, pair.pinned)))
}

/// Applies `e` to `key`: in its shard when it fits there, else by a fold
/// (see the module docs). A change that changes nothing writes nothing;
/// a failure leaves the store as it was.
// A small frame: the scan's findings live in `prepare`'s, which returns
// before the fold (the deepest path) runs from here.
#[inline(always)]
pub fn edit<P: Port>(port: &mut P, key: &[u8], e: Edit<'_>) -> Result<(), MemError> {
    // The base's pairs a fold leaves out (a store that may hold a key twice).
    let mut gone = Gone([0; 4]);
    let res = match prepare(port, key, e, &mut gone).get() {
        Ok(false) => return Ok(()),
        Ok(true) => fold(port, key, e, &gone).get(),
        Err(failed) => Err(failed),
    };
    let (err, check) = match res {
        Ok(_) => return Ok(()),
        Err((err, Check::No)) => return Err(err),
        Err(failed) => failed,
    };
    // A commit that landed but reported an error (littlefs reads it back):
    // the store must then hold the edit.
    if landed(port, key, e) {
        return Ok(());
    }
    if let Check::LandedElseRemove = check {
        let _ = port.remove(MEMORY_TMP_PATH);
    }
    Err(err)
}

impl Scan {
    const fn new() -> Scan {
        Scan {
            maybe_dup: false,
            skipped: false,
            overflow: false,
            pairs: 0,
            at: None,
            collides: false,
            generation: 0,
            in_base: false,
            max_n: 0,
        }
    }
}

/// [`edit`] up to the fold: the passes before the write and the shard
/// write. Whether the store must fold (with the pairs it leaves out in
/// `gone`).
#[inline(never)]
fn prepare<P: Port>(port: &mut P, key: &[u8], e: Edit<'_>, gone: &mut Gone) -> Outcome {
    Outcome::of(prepare_in(port, key, e, gone))
}

/// [`prepare`]'s body.
#[inline(always)]
fn prepare_in<P: Port>(
    port: &mut P,
    key: &[u8],
    e: Edit<'_>,
    gone: &mut Gone,
) -> Result<bool, (MemError, Check)> {
    // Filled in place: a returned `Scan` would sit in both frames.
    let mut s = Scan::new();
    let pinned = match begin(port, key, e, &mut s, gone) {
        Ok(Some(pinned)) => pinned,
        Ok(None) => return Ok(false),
        Err(err) => return Err((err, Check::No)),
    };
    commit(port, key, e, &s, pinned).get()
}

/// [`edit`]'s passes before it writes: the scan, the key's line read where
/// the scan found it, and (for a store that may hold a key twice) the pairs
/// a fold leaves out, into `gone`. `None` when the edit is done without
/// a write (or is refused: `Err`); else whether the key is pinned.
#[inline(always)]
fn begin<P: Port>(
    port: &mut P,
    key: &[u8],
    e: Edit<'_>,
    s: &mut Scan,
    gone: &mut Gone,
) -> Result<Option<bool>, MemError> {
    let new_value = match e {
        Edit::Set(v) => v,
        _ => b"",
    };
    scan(port, key, s)?;
    let found = found(port, e, s, new_value)?;
    let clean = !s.maybe_dup && !s.skipped && !s.overflow;
    match (e, found) {
        (Edit::Set(_), Some((true, _))) if clean => return Ok(None),
        // Full, and known without writing a byte (with possible duplicates
        // only the rewrite can count distinct keys; with a shard the index
        // could not hold, only the fold sees every key).
        (Edit::Set(_), None) if !s.maybe_dup && !s.overflow && s.pairs >= MAX_ENTRIES => {
            return Err(MemError::Full);
        }
        (Edit::Forget, None) if !s.overflow => return Err(MemError::NotFound),
        #[cfg(feature = "recall")]
        (Edit::Pin(_), None) if !s.overflow => return Err(MemError::NotFound),
        #[cfg(feature = "recall")]
        (Edit::Pin(on), Some((_, pinned))) if clean && on == pinned => return Ok(None),
        _ => {}
    }
    // A store that is not clean folds (`commit` writes no shard for it):
    // the passes that find its superseded lines run here, before the
    // commit, as they did right before the fold, and not under its store.
    if !clean {
        superseded(port, gone)?;
    }
    Ok(Some(found.is_some_and(|(_, p)| p)))
}

/// Whether a failed commit may have landed (then [`edit`] reads the store
/// again, from its own frame: not under the commit's buffers).
#[derive(Clone, Copy)]
enum Check {
    No,
    /// A shard write failed.
    Landed,
    /// A fold's rename failed and its temporary file is gone (when it did
    /// not land, the temporary file is removed once more, as it was).
    LandedElseRemove,
}

/// A step of [`edit`]'s result, `Result<bool, (MemError, Check)>` packed in
/// a `u64` that comes back in registers (no result slot on its frame): the
/// error's kind and the check in the high word, an `Errno` in the low.
struct Outcome(u64);

impl Outcome {
    #[inline(always)]
    fn of(r: Result<bool, (MemError, Check)>) -> Self {
        let (err, check) = match r {
            Ok(b) => return Outcome(u64::from(b)),
            Err(failed) => failed,
        };
        let (kind, errno) = match err {
            MemError::Invalid => (1, 0),
            MemError::Full => (2, 0),
            MemError::NotFound => (3, 0),
            MemError::TooSmall => (4, 0),
            MemError::Io(e) => (5, e.0 as u32),
        };
        let check: u64 = match check {
            Check::No => 0,
            Check::Landed => 1,
            Check::LandedElseRemove => 2,
        };
        Outcome((kind << 32) | (check << 40) | u64::from(errno))
    }

    #[inline(always)]
    fn get(self) -> Result<bool, (MemError, Check)> {
        let errno = Errno(self.0 as u32 as i32);
        let err = match (self.0 >> 32) as u8 {
            0 => return Ok(self.0 != 0),
            1 => MemError::Invalid,
            2 => MemError::Full,
            3 => MemError::NotFound,
            4 => MemError::TooSmall,
            _ => MemError::Io(errno),
        };
        let check = match (self.0 >> 40) as u8 {
            0 => Check::No,
            1 => Check::Landed,
            _ => Check::LandedElseRemove,
        };
        Err((err, check))
    }
}

/// The edit written in the key's shard when it fits there (packed:
/// `Ok(false)`); `Ok(true)` when the store must fold instead.
#[inline(never)]
fn commit<P: Port>(port: &mut P, key: &[u8], e: Edit<'_>, s: &Scan, pinned: bool) -> Outcome {
    // Shards count only beside a base of ours (generation >= 1): the first
    // change to a seed-form store, or to none, writes the base.
    let clean = !s.maybe_dup && !s.skipped && !s.overflow;
    if s.generation == 0 {
        // No shard applies: every one there is stale (a wipe that could
        // not remove them, or the fold past generation 4294967295 that
        // wrote generation 0) and goes before the base that numbers them.
        for path in SHARD_PATHS.iter() {
            let _ = port.remove(path);
        }
    }
    if clean && !s.collides && s.generation > 0 {
        // Its place among the new keys (kept when it is one already).
        let n = if s.in_base {
            Some(0)
        } else {
            s.max_n.checked_add(1)
        };
        if let Some(n) = n {
            match shard_edit(port, key, e, n, s, pinned) {
                Ok(true) => return Outcome::of(Ok(false)),
                Ok(false) => {}
                Err(err) => return Outcome::of(Err((err, Check::Landed))),
            }
        }
    }
    Outcome::of(Ok(true))
}

/// A pin written to the key's shard: its value read again where the scan
/// found it (a pin is rare), after the shard's records were read (not
/// under it). Inlined into `commit`: its pair is then on the stack of
/// every edit's commit, but a frame less sits above the shard's write.
#[cfg(feature = "recall")]
#[inline(always)]
fn shard_pin<P: Port>(port: &mut P, at: &Shard<'_>, on: bool, s: &Scan) -> Result<bool, MemError> {
    let mut pair = Pair::new();
    match s.at {
        Some(loc) if read_at(port, loc, &mut pair)? => {}
        _ => return Ok(false),
    }
    shard_write(port, at, Change::Pair(pair.value(), on, at.place))
}

/// Reads the pair at `at` into `pair`; false when it is not there.
#[inline(never)]
fn read_at<P: Port>(port: &mut P, at: Loc, pair: &mut Pair) -> Result<bool, Errno> {
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

/// The record a shard gets for its key.
#[derive(Clone, Copy)]
enum Change<'a> {
    /// The key's value, pin and place among the new keys (0: none).
    Pair(&'a [u8], bool, u8),
    /// The key is forgotten.
    Del,
}

/// Rewrites the key's shard with the edit `e` (`n`: the key's place
/// among the new keys when it is not one yet); false (nothing written)
/// when the shard would pass [`SHARD_MAX`] or holds another key with the
/// same fingerprint: then the caller folds.
#[inline(always)]
fn shard_edit<P: Port>(
    port: &mut P,
    key: &[u8],
    e: Edit<'_>,
    n: u8,
    s: &Scan,
    pinned: bool,
) -> Result<bool, MemError> {
    let path = SHARD_PATHS
        .get(shard_of(key))
        .copied()
        .unwrap_or(MEMORY_TMP_PATH);
    let mut at = Shard {
        path,
        key,
        generation: s.generation,
        keep: [(0, 0); SHARD_RECORDS],
        kept: 0,
        place: n,
    };
    if !shard_keep(port, &mut at)? {
        return Ok(false);
    }
    let change = match e {
        Edit::Set(v) => Change::Pair(v, pinned, at.place),
        Edit::Forget => Change::Del,
        #[cfg(feature = "recall")]
        Edit::Pin(on) => return shard_pin(port, &at, on, s),
    };
    shard_write(port, &at, change)
}

/// The key's shard, as an edit rewrites it.
struct Shard<'a> {
    path: &'static CStr,
    key: &'a [u8],
    /// The base's generation (a shard of another is stale).
    generation: u32,
    /// Its records of other keys, as byte ranges (none when it is stale).
    keep: [(u8, u8); SHARD_RECORDS],
    kept: usize,
    /// The key's place among the new keys: its old one, else the one a
    /// new key gets.
    place: u8,
}

impl Shard<'_> {
    fn kept(&self) -> &[(u8, u8)] {
        self.keep.get(..self.kept).unwrap_or(&[])
    }
}

/// Reads the records of the shard that an edit keeps into `at`; false when
/// the store must fold instead (another key with the key's fingerprint, or
/// no room for the key's record). Read from the file, not from the bytes
/// [`shard_write`] copies: those are not held on the stack of the record
/// reader.
#[inline(never)]
fn shard_keep<P: Port>(port: &mut P, at: &mut Shard<'_>) -> Result<bool, Errno> {
    let Some(fd) = open_opt(port, at.path)? else {
        return Ok(true);
    };
    let mut slot = None;
    let res = shard_records(port, put_reader(&mut slot, fd), at);
    let _ = port.close(fd);
    res
}

/// [`shard_keep`]'s parse, up to the end of the shard or past
/// [`SHARD_MAX`] (then the shard is not rewritten: no need to read on).
#[inline(always)]
fn shard_records<P: Port>(
    port: &mut P,
    r: &mut PairReader,
    at: &mut Shard<'_>,
) -> Result<bool, Errno> {
    let mine = sig(at.key);
    let mut other = [0u8; KEY_MAX_BYTES];
    let mut header = false;
    let mut from = 0u32;
    while let Some((rec, kl, _, _)) = r.rec(port, &mut other, &mut [])? {
        let to = r.offset();
        if to as usize > SHARD_MAX {
            return Ok(false);
        }
        match rec {
            Rec::Header(g) if from == 0 => header = g == at.generation,
            _ if !header => break,
            Rec::Header(_) => {}
            Rec::Pair(_) | Rec::Del => {
                let k = other.get(..usize::from(kl)).unwrap_or(&[]);
                if k == at.key {
                    if let Rec::Pair(old @ 1..) = rec {
                        at.place = old;
                    }
                } else {
                    if sig(k) == mine {
                        return Ok(false);
                    }
                    match at.keep.get_mut(at.kept) {
                        Some(slot) => *slot = (from as u8, to as u8),
                        None => return Ok(false),
                    }
                    at.kept += 1;
                }
            }
        }
        from = to;
    }
    // No room for the key's record: fold.
    Ok(at.kept < SHARD_RECORDS)
}

/// Writes the shard `at`: its header, the ranges of its bytes it keeps as
/// they are, and `change` for its key; false (nothing written) when the
/// shard is or would be over [`SHARD_MAX`].
#[inline(never)]
fn shard_write<P: Port>(
    port: &mut P,
    at: &Shard<'_>,
    change: Change<'_>,
) -> Result<bool, MemError> {
    let path = at.path;
    // The shard's bytes: one of ours is at most SHARD_MAX.
    let mut old = [0u8; SHARD_MAX + 1];
    let len = match open_opt(port, path)? {
        Some(fd) => {
            let r = read_all(port, fd, &mut old);
            let _ = port.close(fd);
            r?
        }
        None => 0,
    };
    if len > SHARD_MAX {
        return Ok(false);
    }
    let old = old.get(..len).unwrap_or(&[]);
    let size = write_shard(port, NO_FD, old, at, &change).map(|n| n as usize);
    if size.map_or(true, |n| n > SHARD_MAX) {
        return Ok(false);
    }
    // Where "wb" is not atomic (FAT, a Python file system) through a
    // temporary file and a rename, so that a failure keeps the old shard.
    let atomic = port.atomic_write(path);
    let target = if atomic { path } else { MEMORY_TMP_PATH };
    let fd = port.open(target, Mode::Write)?;
    let written = write_shard(port, fd, old, at, &change);
    let closed = port.close(fd);
    let result = written.and(closed).and_then(|()| {
        if atomic {
            Ok(())
        } else {
            port.rename(MEMORY_TMP_PATH, path)
        }
    });
    if result.is_err() && !atomic {
        let _ = port.remove(MEMORY_TMP_PATH);
    }
    result?;
    Ok(true)
}

fn read_all<P: Port>(port: &mut P, fd: Fd, buf: &mut [u8]) -> Result<usize, Errno> {
    let mut len = 0usize;
    loop {
        let Some(room) = buf.get_mut(len..).filter(|r| !r.is_empty()) else {
            return Ok(len);
        };
        match port.read(fd, room)? {
            0 => return Ok(len),
            n => len += n.min(room.len()),
        }
    }
}

fn write_shard<P: Port>(
    port: &mut P,
    fd: Fd,
    old: &[u8],
    at: &Shard<'_>,
    change: &Change<'_>,
) -> Result<u32, Errno> {
    let mut w = LineWriter::new(fd);
    write_header(port, &mut w, at.generation)?;
    for &(a, b) in at.kept() {
        let line = old.get(usize::from(a)..usize::from(b)).unwrap_or(&[]);
        w.raw(port, line)?;
        if line.last() != Some(&b'\n') {
            w.raw(port, b"\n")?;
        }
    }
    match *change {
        Change::Pair(v, pinned, n) => write_pair(port, &mut w, at.key, v, pinned, n)?,
        Change::Del => write_del(port, &mut w, at.key)?,
    }
    w.flush(port).map(|()| w.written())
}

/// The fold: the merged store with the edit made, under the next
/// generation, through the temporary file and a rename.
#[inline(never)]
fn fold<P: Port>(port: &mut P, key: &[u8], e: Edit<'_>, gone: &Gone) -> Outcome {
    Outcome::of(fold_in(port, key, e, gone).map(|()| false))
}

/// [`fold`]'s body.
#[inline(always)]
fn fold_in<P: Port>(
    port: &mut P,
    key: &[u8],
    e: Edit<'_>,
    gone: &Gone,
) -> Result<(), (MemError, Check)> {
    let no = |e: Errno| (MemError::Io(e), Check::No);
    let tmp = port.open(MEMORY_TMP_PATH, Mode::Write).map_err(no)?;
    let mut w = LineWriter::new(tmp);
    let result =
        copy_pairs(port, &mut w, key, e, gone).and_then(|()| w.flush(port).map_err(MemError::Io));
    let closed = port.close(tmp);
    let result = result.and(closed.map_err(MemError::Io));
    let result = match result {
        Ok(()) => match port.rename(MEMORY_TMP_PATH, MEMORY_PATH) {
            Ok(()) => return Ok(()),
            // littlefs reads a commit back to check it, so a read error can
            // fail a rename that has landed. The temporary file tells the two
            // apart (gone only when the rename happened), and the store must
            // then hold the edit — `false` must mean "as before".
            Err(err) => match port.remove(MEMORY_TMP_PATH) {
                Err(Errno::ENOENT) => {
                    return Err((MemError::Io(err), Check::LandedElseRemove));
                }
                _ => Err(MemError::Io(err)),
            },
        },
        Err(e) => Err(e),
    };
    let _ = port.remove(MEMORY_TMP_PATH);
    result.map_err(|e| (e, Check::No))
}

/// Whether the store holds `e` applied to `key` (the last line counts):
/// the first pass again. Out of line: its locals are not on [`edit`]'s
/// frame, which the fold's is under.
#[inline(never)]
fn landed<P: Port>(port: &mut P, key: &[u8], e: Edit<'_>) -> bool {
    let value = match e {
        Edit::Set(v) => v,
        _ => b"",
    };
    let s = &mut Scan::new();
    if scan(port, key, s).is_err() {
        return false;
    }
    let Ok(found) = found(port, e, s, value) else {
        return false;
    };
    match (e, found) {
        (Edit::Set(_), Some((same, _))) => same,
        (Edit::Forget, None) => true,
        #[cfg(feature = "recall")]
        (Edit::Pin(on), Some((_, pinned))) => pinned == on,
        _ => false,
    }
}

/// Writes the header of the next generation (after the newest the load
/// finds: the header is buffered, no write before the load's reads) and
/// copies the merged store, keeping only the last line of a key the base
/// holds twice and applying `e` to `key` in place (a new key set last;
/// `Full` when there are [`MAX_ENTRIES`] others, else `NotFound` for a
/// key not there to forget or pin).
#[inline(always)]
fn copy_pairs<P: Port>(
    port: &mut P,
    w: &mut LineWriter,
    key: &[u8],
    e: Edit<'_>,
    gone: &Gone,
) -> Result<(), MemError> {
    let mut store = Store::new();
    let mut pair = Pair::new();
    store.load_with(port, &mut pair)?;
    // Past 4294967295: generation 0, beside which no shard applies (the
    // next change removes them, then writes generation 1).
    if let Err(e) = write_header(port, w, store.newest.wrapping_add(1)) {
        store.close(port);
        return Err(MemError::Io(e));
    }
    let mut copied = 0usize;
    let mut existed = false;
    let res = loop {
        match store.next(port, &mut pair) {
            Ok(Some(())) => {
                if store.from_base && is_gone(gone, store.base_pairs) {
                    continue;
                }
                // The edit made in the pair: one write call, through
                // `put` (no arguments on this frame's stack).
                if pair.key() == key {
                    existed = true;
                    match e {
                        Edit::Set(v) => {
                            if !set_value(&mut pair, v) {
                                break Err(MemError::Invalid);
                            }
                        }
                        Edit::Forget => continue,
                        #[cfg(feature = "recall")]
                        Edit::Pin(on) => pair.pinned = on,
                    }
                } else {
                    copied += 1;
                }
                if let Err(e) = put(port, w, &pair) {
                    break Err(MemError::Io(e));
                }
            }
            Ok(None) => break Ok(()),
            Err(e) => break Err(MemError::Io(e)),
        }
    };
    store.close(port);
    res?;
    match e {
        _ if existed => Ok(()),
        Edit::Set(_) if copied >= MAX_ENTRIES => Err(MemError::Full),
        // A new key, unpinned, after the others.
        Edit::Set(v) => {
            pair.pinned = false;
            if !(set_value(&mut pair, v) && key.len() <= KEY_MAX_BYTES) {
                return Err(MemError::Invalid);
            }
            crate::text::copy_prefix(&mut pair.key, key);
            pair.key_len = key.len() as u8;
            put(port, w, &pair).map_err(MemError::Io)
        }
        _ => Err(MemError::NotFound),
    }
}

/// `pair`'s value set to `v`; false when it does not fit (an edit's value
/// is validated: it does).
fn set_value(pair: &mut Pair, v: &[u8]) -> bool {
    if v.len() > VAL_MAX_BYTES {
        return false;
    }
    crate::text::copy_prefix(&mut pair.val, v);
    pair.val_len = v.len() as u8;
    true
}

/// Writes `pair` as a line of the base. Out of line: the fold's frame
/// holds no arguments of a call with eight.
#[inline(never)]
fn put<P: Port>(port: &mut P, w: &mut LineWriter, pair: &Pair) -> Result<(), Errno> {
    write_pair(port, w, pair.key(), pair.value(), pair.pinned, 0)
}

/// Whether `gone` holds base pair `n - 1` (out of line: the fold's loop
/// keeps a pointer, not the four words).
#[inline(never)]
fn is_gone(gone: &Gone, n: u16) -> bool {
    let i = usize::from(n).saturating_sub(1);
    gone.0.get(i / 32).is_some_and(|w| w >> (i % 32) & 1 != 0)
}

/// The base's pairs a fold leaves out (a later line has their key): bit
/// `i % 32` of word `i / 32` for pair `i` (words: no 8-byte alignment on
/// the frames that hold it).
struct Gone([u32; 4]);

/// Bit `i` for pair index `i`, 0 past [`DEDUP_PAIRS`].
fn bit(i: usize) -> u128 {
    if i < DEDUP_PAIRS { 1 << i } else { 0 }
}

/// Pairs of the base a later line with the same key supersedes, into
/// `out` (left as it is when there is no base): bit `i` for its pair `i`. Passes of their own, before the copy, so that the
/// look-ahead reads are not nested under the copy's pair buffer (1 KiB
/// stack budget). Covers the first [`DEDUP_PAIRS`] pairs; a hand-made store
/// longer than that keeps later duplicates (reads still take the last line).
#[inline(never)]
fn superseded<P: Port>(port: &mut P, out: &mut Gone) -> Result<(), Errno> {
    let mut hashes = KeyHashes {
        hashes: [0; HASHED],
        len: 0,
        truncated: false,
    };
    let mut key = [0u8; KEY_MAX_BYTES];
    for pass in 0..2 {
        let Some(fd) = open_opt(port, MEMORY_PATH)? else {
            return Ok(());
        };
        let mut slot = None;
        let reader = put_reader(&mut slot, fd);
        let mut index = 0usize;
        let mut gone = 0u128;
        let res = loop {
            match reader.next_key(port, &mut key) {
                Ok(Some(len)) if pass == 0 => {
                    match hashes.hashes.get_mut(index) {
                        Some(h) => *h = hash(key.get(..len).unwrap_or(&[])),
                        None => hashes.truncated = true,
                    }
                    index += 1;
                    hashes.len = index.min(HASHED);
                }
                Ok(Some(len)) if index < DEDUP_PAIRS => {
                    let k = key.get(..len).unwrap_or(&[]);
                    if hashes.maybe_duplicate(index, k) {
                        match appears_after(port, k, index + 1) {
                            Ok(true) => gone |= bit(index),
                            Ok(false) => {}
                            Err(e) => break Err(e),
                        }
                    }
                    index += 1;
                }
                Ok(_) => break Ok(gone),
                Err(e) => break Err(e),
            }
        };
        let _ = port.close(fd);
        let gone = res?;
        if pass == 1 {
            *out = Gone([
                gone as u32,
                (gone >> 32) as u32,
                (gone >> 64) as u32,
                (gone >> 96) as u32,
            ]);
            return Ok(());
        }
    }
    Ok(())
}

/// Whether `key` is the key of a pair of the base after its first `index`.
#[inline(never)]
fn appears_after<P: Port>(port: &mut P, key: &[u8], index: usize) -> Result<bool, Errno> {
    let Some(fd) = open_opt(port, MEMORY_PATH)? else {
        return Ok(false);
    };
    let mut slot = None;
    let reader = put_reader(&mut slot, fd);
    let mut other = [0u8; KEY_MAX_BYTES];
    let mut i = 0usize;
    let res = loop {
        match reader.next_key(port, &mut other) {
            Ok(Some(len)) => {
                i += 1;
                if i > index && other.get(..len) == Some(key) {
                    break Ok(true);
                }
            }
            Ok(None) => break Ok(false),
            Err(e) => break Err(e),
        }
    };
    let _ = port.close(fd);
    res
}

#[cfg(test)]
mod reference;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{MemPort, Op};

    /// The hash that places keys in shard files is FNV-1a, 32 bits (the
    /// published test vectors; and a byte at a time, for odd and even
    /// lengths).
    #[test]
    fn fnv_is_fnv_1a() {
        assert_eq!(fnv(b""), 0x811c_9dc5);
        assert_eq!(fnv(b"a"), 0xe40c_292c);
        assert_eq!(fnv(b"foobar"), 0xbf9c_f968);
        let key = b"memory_key_00_abcdefghijklmnop";
        for n in 0..=key.len() {
            let one = key[..n].iter().fold(0x811c_9dc5u32, |h, &b| {
                (h ^ u32::from(b)).wrapping_mul(0x0100_0193)
            });
            assert_eq!(fnv(&key[..n]), one, "{n}");
        }
    }

    fn recall(port: &mut MemPort, key: &str) -> Option<String> {
        let mut out = [0u8; 128];
        get(port, key.as_bytes(), &mut out)
            .ok()
            .map(|n| String::from_utf8(out[..n].to_vec()).unwrap())
    }

    fn pairs(port: &mut MemPort) -> Vec<(String, String, bool)> {
        let mut v = Vec::new();
        for_each(port, &mut |p| {
            v.push((
                String::from_utf8(p.key().to_vec()).unwrap(),
                String::from_utf8(p.value().to_vec()).unwrap(),
                p.pinned(),
            ))
        })
        .unwrap();
        v
    }

    fn file(port: &MemPort, path: &CStr) -> String {
        String::from_utf8(port.get(path).unwrap_or_default()).unwrap()
    }

    fn shard(port: &MemPort, key: &str) -> String {
        file(port, SHARD_PATHS[shard_of(key.as_bytes())])
    }

    #[test]
    fn set_get_replace_thai() {
        let mut port = MemPort::new();
        assert_eq!(recall(&mut port, "name"), None);
        set(&mut port, b"name", "สมชาย".as_bytes()).unwrap();
        set(&mut port, b"city", b"Chiang \"Mai\"\n").unwrap();
        set(&mut port, b"name", b"Somchai").unwrap();
        assert_eq!(recall(&mut port, "name").as_deref(), Some("Somchai"));
        assert_eq!(
            recall(&mut port, "city").as_deref(),
            Some("Chiang \"Mai\"\n")
        );
        assert_eq!(pairs(&mut port).len(), 2);
        assert!(port.get(MEMORY_TMP_PATH).is_none());
    }

    #[test]
    fn a_set_writes_one_shard_in_one_write() {
        let mut port = MemPort::new();
        set(&mut port, b"city", b"Chiang Mai").unwrap();
        assert_eq!(
            file(&port, MEMORY_PATH),
            "{\"seq\":1}\n{\"key\":\"city\",\"value\":\"Chiang Mai\"}\n",
            "the first set writes the base"
        );
        set(&mut port, b"name", b"Somchai").unwrap();
        assert_eq!(
            shard(&port, "name"),
            "{\"seq\":1}\n{\"key\":\"name\",\"value\":\"Somchai\",\"n\":1}\n"
        );
        let renames = port.count(Op::Rename);
        let base = port.get(MEMORY_PATH);
        set(&mut port, b"name", b"Som").unwrap();
        assert_eq!(port.count(Op::Rename), renames, "no rename");
        assert_eq!(port.get(MEMORY_PATH), base, "no fold");
        assert_eq!(
            shard(&port, "name"),
            "{\"seq\":1}\n{\"key\":\"name\",\"value\":\"Som\",\"n\":1}\n",
            "the key's old line is replaced, its place kept"
        );
        // Where "wb" is not atomic: the shard through the temporary file.
        port.atomic = false;
        set(&mut port, b"name", b"S").unwrap();
        assert_eq!(port.count(Op::Rename), renames + 1);
        assert_eq!(recall(&mut port, "name").as_deref(), Some("S"));
        port.fail(Op::Write, 0, Errno::EIO);
        assert!(set(&mut port, b"name", b"T").is_err());
        assert_eq!(
            recall(&mut port, "name").as_deref(),
            Some("S"),
            "the old shard stays"
        );
    }

    #[test]
    fn reads_the_seed_plain_form_and_shards_override_it() {
        let mut port = MemPort::new();
        let seed =
            "{\"key\":\"name\",\"value\":\"สมชาย\"}\n{\"key\":\"city\",\"value\":\"Chiang Mai\"}\n";
        port.put(MEMORY_PATH, seed.as_bytes());
        // Shards of a generation 0 (not ours) do not apply to it.
        port.put(
            SHARD_PATHS[shard_of(b"city")],
            b"{\"seq\":0}\n{\"key\":\"city\",\"del\":true}\n",
        );
        assert_eq!(recall(&mut port, "city").as_deref(), Some("Chiang Mai"));
        set(&mut port, b"name", b"Somchai").unwrap();
        assert!(
            file(&port, MEMORY_PATH).starts_with("{\"seq\":1}\n"),
            "converted by the first set"
        );
        set(&mut port, b"pet", b"cat").unwrap();
        forget(&mut port, b"city").unwrap();
        let got = pairs(&mut port);
        let keys: Vec<&str> = got.iter().map(|p| p.0.as_str()).collect();
        assert_eq!(keys.len(), 2);
        assert!(keys.contains(&"name") && keys.contains(&"pet"));
        assert_eq!(recall(&mut port, "name").as_deref(), Some("Somchai"));
        assert_eq!(recall(&mut port, "city"), None);
    }

    #[test]
    #[cfg_attr(miri, ignore)] // long; no unsafe code under test
    fn a_full_shard_folds_into_the_base_and_retires_the_shards() {
        let mut port = MemPort::new();
        let v = "v".repeat(90);
        let mut folds = 0;
        for i in 0..40 {
            let key = format!("k{}", i % 12);
            let renames = port.count(Op::Rename);
            set(&mut port, key.as_bytes(), format!("{v}{i}").as_bytes()).unwrap();
            folds += port.count(Op::Rename) - renames;
            for s in SHARD_PATHS {
                assert!(file(&port, s).len() <= SHARD_MAX);
            }
            assert_eq!(recall(&mut port, &key), Some(format!("{v}{i}")));
        }
        assert!(folds > 0, "shards filled");
        assert_eq!(pairs(&mut port).len(), 12);
        let base = file(&port, MEMORY_PATH);
        assert!(
            base.starts_with(&format!("{{\"seq\":{folds}}}\n")),
            "{base}"
        );
        for i in 0..12 {
            assert!(recall(&mut port, &format!("k{i}")).is_some());
        }
    }

    #[test]
    fn keys_keep_their_places() {
        let mut port = MemPort::new();
        port.put(
            MEMORY_PATH,
            b"{\"key\":\"a\",\"value\":\"1\"}\n{\"key\":\"b\",\"value\":\"2\"}\n",
        );
        for k in ["c", "d", "e", "f", "g", "h", "i", "j"] {
            set(&mut port, k.as_bytes(), b"new").unwrap();
        }
        set(&mut port, b"a", b"changed").unwrap();
        set(&mut port, b"d", b"changed").unwrap();
        forget(&mut port, b"e").unwrap();
        set(&mut port, b"e", b"again").unwrap();
        let order: Vec<String> = pairs(&mut port).into_iter().map(|p| p.0).collect();
        assert_eq!(order, ["a", "b", "c", "d", "f", "g", "h", "i", "j", "e"]);
        // A fold keeps the order.
        set(&mut port, b"b", "\"".repeat(127).as_bytes()).unwrap();
        assert!(file(&port, MEMORY_PATH).starts_with("{\"seq\":2}"));
        let after: Vec<String> = pairs(&mut port).into_iter().map(|p| p.0).collect();
        assert_eq!(after, order);
    }

    #[test]
    fn a_base_reset_by_hand_does_not_bring_stale_shards_back() {
        let mut port = MemPort::new();
        set(&mut port, b"a", b"1").unwrap();
        set(&mut port, b"b", b"2").unwrap(); // a shard of generation 1
        port.put(MEMORY_PATH, b""); // emptied by hand
        assert!(pairs(&mut port).is_empty());
        // Folds, after removing the shards (none applies beside a base
        // without a header): generation 1 again, and nothing stale left.
        set(&mut port, b"c", b"3").unwrap();
        let got: Vec<String> = pairs(&mut port).into_iter().map(|p| p.0).collect();
        assert_eq!(got, ["c"]);
        assert!(file(&port, MEMORY_PATH).starts_with("{\"seq\":1}"));
        assert!(SHARD_PATHS.iter().all(|p| port.get(p).is_none()));
        // When a shard cannot be removed, the fold goes past it.
        set(&mut port, b"d", b"4").unwrap(); // a shard of generation 1
        port.put(MEMORY_PATH, b"");
        port.fail_all(Op::Remove, Errno::EIO);
        set(&mut port, b"e", b"5").unwrap();
        port.heal();
        let got: Vec<String> = pairs(&mut port).into_iter().map(|p| p.0).collect();
        assert_eq!(got, ["e"]);
        assert!(file(&port, MEMORY_PATH).starts_with("{\"seq\":2}"));
    }

    #[test]
    fn stale_and_foreign_shards_are_ignored() {
        let mut port = MemPort::new();
        port.put(
            MEMORY_PATH,
            b"{\"seq\":4}\n{\"key\":\"a\",\"value\":\"base\"}\n",
        );
        let s = SHARD_PATHS[shard_of(b"a")];
        port.put(s, b"{\"seq\":3}\n{\"key\":\"a\",\"value\":\"stale\"}\n");
        assert_eq!(recall(&mut port, "a").as_deref(), Some("base"));
        port.put(s, b"{\"key\":\"a\",\"value\":\"no header\"}\n");
        assert_eq!(recall(&mut port, "a").as_deref(), Some("base"));
        port.put(s, b"{\"seq\":4}\n{\"key\":\"a\",\"value\":\"new\"}\n");
        assert_eq!(recall(&mut port, "a").as_deref(), Some("new"));
        // A torn shard line is skipped; the rest of it stands.
        port.put(s, b"{\"seq\":4}\n{\"key\":\"a\",\"value\":\"ne");
        assert_eq!(recall(&mut port, "a").as_deref(), Some("base"));
    }

    /// The keys the merged store shows, each once (a shard the index could
    /// not hold included: its records are checked, not read twice), as the
    /// reference store reads them, and `get` agreeing key by key.
    fn visible(port: &mut MemPort) -> std::collections::BTreeMap<String, String> {
        let mut map = std::collections::BTreeMap::new();
        let got = pairs(port);
        assert_eq!(got, ref_pairs(port), "as the reference reads it");
        for (k, v, _) in got {
            assert!(map.insert(k.clone(), v).is_none(), "{k} read twice");
        }
        for (k, v) in &map {
            assert_eq!(recall(port, k).as_ref(), Some(v), "get {k}");
        }
        map
    }

    /// `n` keys that the hash puts in shard `s`, named `{prefix}{i}`.
    fn keys_of_shard(s: usize, prefix: &str, n: usize) -> Vec<String> {
        (0..)
            .map(|i| format!("{prefix}{i}"))
            .filter(|k| shard_of(k.as_bytes()) == s)
            .take(n)
            .collect()
    }

    /// A base of ours with `n` pairs `k0..`, generation `g`.
    fn put_base(port: &mut MemPort, g: &str, n: usize) {
        let mut base = format!("{{\"seq\":{g}}}\n");
        for i in 0..n {
            base += &format!("{{\"key\":\"k{i}\",\"value\":\"v{i}\"}}\n");
        }
        port.put(MEMORY_PATH, base.as_bytes());
    }

    /// Edits on a store over the cap: new keys refused, every key kept,
    /// replacing and forgetting working, until it is under the cap again.
    fn edits_over_the_cap(
        port: &mut MemPort,
        mut want: std::collections::BTreeMap<String, String>,
        tag: &str,
    ) {
        assert!(want.len() > MAX_ENTRIES, "{tag}");
        assert_eq!(set(port, b"brand-new", b"x"), Err(MemError::Full), "{tag}");
        assert_eq!(
            visible(port),
            want,
            "{tag}: the refused set changed nothing"
        );
        let keys: Vec<String> = want.keys().cloned().collect();
        for (i, k) in keys.iter().enumerate() {
            if want.len() >= MAX_ENTRIES && i % 3 != 2 {
                assert_eq!(forget(port, k.as_bytes()), Ok(()), "{tag}: forget {k}");
                want.remove(k);
            } else {
                assert_eq!(
                    set(port, k.as_bytes(), b"replaced"),
                    Ok(()),
                    "{tag}: set {k}"
                );
                want.insert(k.clone(), "replaced".to_string());
            }
            assert_eq!(visible(port), want, "{tag}: after {k}");
            if want.len() >= MAX_ENTRIES {
                assert_eq!(set(port, b"brand-new", b"x"), Err(MemError::Full), "{tag}");
            }
        }
        assert_eq!(
            set(port, b"brand-new", b"x"),
            Ok(()),
            "{tag}: under the cap"
        );
        want.insert("brand-new".into(), "x".into());
        assert_eq!(visible(port), want, "{tag}");
    }

    #[test]
    fn no_key_is_hidden_by_hand_edited_shards() {
        // Issue 23: a base of 30 pairs, two keys set through the API, then
        // shards edited by hand: one shard with 10 records (an override of
        // a base pair, a forgotten base key, eight new keys): 45 keys.
        let mut port = MemPort::new();
        put_base(&mut port, "1", 30);
        let mut want: std::collections::BTreeMap<String, String> = (0..30)
            .map(|i| (format!("k{i}"), format!("v{i}")))
            .collect();
        let api = keys_of_shard(0, "api", 2);
        for k in &api {
            set(&mut port, k.as_bytes(), b"through the API").unwrap();
            want.insert(k.clone(), "through the API".into());
        }
        let base0: Vec<String> = (0..30)
            .map(|i| format!("k{i}"))
            .filter(|k| shard_of(k.as_bytes()) == 0)
            .collect();
        let mut shard = file(&port, SHARD_PATHS[0]);
        shard += &format!("{{\"key\":\"{}\",\"value\":\"over\"}}\n", base0[0]);
        want.insert(base0[0].clone(), "over".into());
        shard += &format!("{{\"key\":\"{}\",\"del\":true}}\n", base0[1]);
        want.remove(&base0[1]);
        for (i, k) in keys_of_shard(0, "hand", 8).iter().enumerate() {
            shard += &format!("{{\"key\":\"{k}\",\"value\":\"h{i}\",\"n\":{}}}\n", 3 + i);
            want.insert(k.clone(), format!("h{i}"));
        }
        port.put(SHARD_PATHS[0], shard.as_bytes());
        // And a few more in another shard.
        let mut other = String::from("{\"seq\":1}\n");
        for (i, k) in keys_of_shard(5, "more", 6).iter().enumerate() {
            other += &format!("{{\"key\":\"{k}\",\"value\":\"m{i}\",\"n\":{}}}\n", 20 + i);
            want.insert(k.clone(), format!("m{i}"));
        }
        port.put(SHARD_PATHS[5], other.as_bytes());
        assert_eq!(want.len(), 45);
        assert_eq!(visible(&mut port), want, "every key on flash is visible");
        edits_over_the_cap(&mut port, want, "hand-edited shards");
    }

    #[test]
    fn shards_past_what_the_index_holds_are_read_in_file_order() {
        // 64 records in the shards of the base's generation (the index
        // holds 48): the shards that do not fit are streamed.
        let mut port = MemPort::new();
        put_base(&mut port, "7", 4);
        let mut want: std::collections::BTreeMap<String, String> =
            (0..4).map(|i| (format!("k{i}"), format!("v{i}"))).collect();
        let mut n = 0;
        for (s, path) in SHARD_PATHS.iter().enumerate() {
            let mut shard = String::from("{\"seq\":7}\n");
            for (i, k) in keys_of_shard(s, &format!("s{s}_"), 8).iter().enumerate() {
                n += 1;
                shard += &format!("{{\"key\":\"{k}\",\"value\":\"{s}.{i}\",\"n\":{n}}}\n");
                want.insert(k.clone(), format!("{s}.{i}"));
            }
            for i in 0..4 {
                let k = format!("k{i}");
                if shard_of(k.as_bytes()) == s {
                    shard += &format!("{{\"key\":\"{k}\",\"value\":\"later\"}}\n");
                    want.insert(k, "later".into());
                }
            }
            port.put(path, shard.as_bytes());
        }
        assert_eq!(want.len(), 68);
        assert_eq!(visible(&mut port), want, "every key on flash is visible");
        edits_over_the_cap(&mut port, want, "shards past the index");
    }

    #[test]
    fn a_seed_form_base_of_40_pairs_keeps_every_key() {
        let mut port = MemPort::new();
        let mut base = String::new();
        for i in 0..40 {
            base += &format!("{{\"key\":\"k{i}\",\"value\":\"v{i}\"}}\n");
        }
        port.put(MEMORY_PATH, base.as_bytes());
        let want: std::collections::BTreeMap<String, String> = (0..40)
            .map(|i| (format!("k{i}"), format!("v{i}")))
            .collect();
        assert_eq!(visible(&mut port), want);
        edits_over_the_cap(&mut port, want, "seed base of 40");
    }

    #[test]
    fn a_generation_at_the_top_of_u32_loses_nothing() {
        for g in ["4294967294", "4294967295", "100000000000000000000"] {
            let mut port = MemPort::new();
            put_base(&mut port, g, 3);
            // A shard of that generation (past u32: read as 4294967295).
            let gen_read = if g == "4294967294" { g } else { "4294967295" };
            let k0 = keys_of_shard(shard_of(b"k0"), "x", 1).remove(0);
            port.put(
                SHARD_PATHS[shard_of(b"k0")],
                format!(
                    "{{\"seq\":{gen_read}}}\n{{\"key\":\"k0\",\"value\":\"shard\"}}\n\
                     {{\"key\":\"{k0}\",\"value\":\"new\",\"n\":1}}\n"
                )
                .as_bytes(),
            );
            let mut want: std::collections::BTreeMap<String, String> =
                (0..3).map(|i| (format!("k{i}"), format!("v{i}"))).collect();
            want.insert("k0".into(), "shard".into());
            want.insert(k0.clone(), "new".into());
            assert_eq!(visible(&mut port), want, "{g}");
            // Each edit folds (a value too big for a shard) or writes a
            // shard; the stale shards never come back.
            for (i, k) in ["k1", "k0", "k2", "k1", "k0"].iter().enumerate() {
                let v = if i % 2 == 0 {
                    "\"".repeat(120)
                } else {
                    format!("e{i}")
                };
                assert_eq!(
                    set(&mut port, k.as_bytes(), v.as_bytes()),
                    Ok(()),
                    "{g} {i}"
                );
                want.insert(k.to_string(), v);
                assert_eq!(visible(&mut port), want, "{g}: edit {i}");
            }
            // Numbered from 0 again past the top.
            let base = file(&port, MEMORY_PATH);
            let number: u32 = base[7..base.find('}').unwrap()].parse().unwrap();
            assert!(number < 10, "{g}: {base}");
        }
    }

    /// A shard of generation `g` that the index cannot hold: `records`
    /// (lines) placed among 49 pairs of new keys of shard `s` (`fill{i}`,
    /// values `f{i}`; the index holds 48), after the first `at` of them.
    /// Returns the filler's keys and values.
    fn oversized(
        port: &mut MemPort,
        g: &str,
        s: usize,
        at: usize,
        records: &[String],
    ) -> Vec<(String, String)> {
        let fill: Vec<(String, String)> = keys_of_shard(s, "fill", 49)
            .into_iter()
            .enumerate()
            .map(|(i, k)| (k, format!("f{i}")))
            .collect();
        let mut lines: Vec<String> = fill
            .iter()
            .enumerate()
            .map(|(i, (k, v))| format!("{{\"key\":\"{k}\",\"value\":\"{v}\",\"n\":{}}}\n", i + 1))
            .collect();
        lines.splice(at..at, records.iter().cloned());
        let text = format!("{{\"seq\":{g}}}\n{}", lines.concat());
        port.put(SHARD_PATHS[s], text.as_bytes());
        fill
    }

    fn del_line(k: &str) -> String {
        format!("{{\"key\":\"{k}\",\"del\":true}}\n")
    }

    fn pair_line(k: &str, v: &str) -> String {
        format!("{{\"key\":\"{k}\",\"value\":\"{v}\"}}\n")
    }

    /// Every reader agrees with `want`: `for_each` (each key once), `get`,
    /// `at`, and the reference store.
    fn reads_as(port: &mut MemPort, want: &std::collections::BTreeMap<String, String>, tag: &str) {
        let got = pairs(port);
        let mut seen = std::collections::BTreeSet::new();
        for (k, _, _) in &got {
            assert!(seen.insert(k.clone()), "{tag}: {k} read twice");
        }
        assert_eq!(got, ref_pairs(port), "{tag}: as the reference reads it");
        let map: std::collections::BTreeMap<String, String> =
            got.iter().map(|(k, v, _)| (k.clone(), v.clone())).collect();
        assert_eq!(&map, want, "{tag}");
        for (i, p) in got.iter().enumerate() {
            let mut one = None;
            assert!(
                at(port, i, |q| one =
                    Some((q.key().to_vec(), q.value().to_vec())))
                .unwrap()
            );
            assert_eq!(
                one,
                Some((p.0.clone().into_bytes(), p.1.clone().into_bytes())),
                "{tag}: at {i}"
            );
        }
        assert!(!at(port, got.len(), |_| {}).unwrap(), "{tag}: past the end");
        for k in want
            .keys()
            .chain(["k0", "k1", "gone", "twice"].map(String::from).iter())
        {
            assert_eq!(recall(port, k).as_ref(), want.get(k), "{tag}: get {k}");
        }
    }

    #[test]
    fn a_forget_in_a_shard_the_index_cannot_hold_wins() {
        // The audit's case: a base pair forgotten in a shard too big for
        // the index came back (read, and written back by the next edit).
        for at in [0, 20, 48] {
            let tag = format!("the del after {at} pairs");
            let mut port = MemPort::new();
            put_base(&mut port, "1", 10);
            let s = shard_of(b"k0");
            let fill = oversized(&mut port, "1", s, at, &[del_line("k0")]);
            assert!(Store::open(&mut port).unwrap().overflowed(), "{tag}");
            let mut want: std::collections::BTreeMap<String, String> = (1..10)
                .map(|i| (format!("k{i}"), format!("v{i}")))
                .collect();
            want.extend(fill);
            reads_as(&mut port, &want, &tag);
            assert_eq!(forget(&mut port, b"k0"), Err(MemError::NotFound), "{tag}");
            assert_eq!(
                set(&mut port, b"k0", b"back"),
                Err(MemError::Full),
                "{tag}: a new key"
            );
            reads_as(&mut port, &want, &format!("{tag}, after the refused edits"));
            // The next edits fold: k0 stays forgotten, on flash too.
            assert_eq!(set(&mut port, b"k1", b"changed"), Ok(()), "{tag}");
            want.insert("k1".into(), "changed".into());
            assert!(
                !file(&port, MEMORY_PATH).contains("\"k0\""),
                "{tag}: folded without k0"
            );
            reads_as(&mut port, &want, &format!("{tag}, after a fold"));
            assert_eq!(forget(&mut port, b"k2"), Ok(()), "{tag}");
            want.remove("k2");
            reads_as(&mut port, &want, &format!("{tag}, after a forget"));
        }
    }

    #[test]
    fn an_override_in_a_shard_the_index_cannot_hold_wins() {
        let mut port = MemPort::new();
        put_base(&mut port, "3", 10);
        let s = shard_of(b"k0");
        // An override of k0, a new key set twice, a new key set and
        // forgotten, and an override of k0 forgotten again for a second
        // base key of the shard when there is one.
        let other = (1..10)
            .map(|i| format!("k{i}"))
            .find(|k| shard_of(k.as_bytes()) == s);
        let gone = keys_of_shard(s, "gone", 1).remove(0);
        let twice = keys_of_shard(s, "twice", 1).remove(0);
        let mut records = vec![
            pair_line("k0", "first"),
            pair_line(&twice, "one"),
            pair_line(&gone, "soon gone"),
        ];
        if let Some(o) = &other {
            records.push(pair_line(o, "over"));
            records.push(del_line(o));
        }
        records.push(pair_line("k0", "later"));
        records.push(del_line(&gone));
        records.push(pair_line(&twice, "two"));
        let fill = oversized(&mut port, "3", s, 10, &records);
        assert!(Store::open(&mut port).unwrap().overflowed());
        let mut want: std::collections::BTreeMap<String, String> = (1..10)
            .map(|i| (format!("k{i}"), format!("v{i}")))
            .collect();
        if let Some(o) = &other {
            want.remove(o);
        }
        want.extend(fill);
        want.insert("k0".into(), "later".into());
        want.insert(twice.clone(), "two".into());
        reads_as(&mut port, &want, "overrides");
        // The pairs that give way are read where the shard has them: the
        // base's others first, in their order.
        let got = pairs(&mut port);
        assert!(
            got.iter()
                .take(8)
                .all(|p| p.0.starts_with('k') && p.0 != "k0")
        );
        // Edits fold the store as it reads.
        assert_eq!(set(&mut port, b"k0", b"edited"), Ok(()));
        want.insert("k0".into(), "edited".into());
        reads_as(&mut port, &want, "after an edit");
        assert!(!file(&port, MEMORY_PATH).contains("soon gone"));
        assert!(!file(&port, MEMORY_PATH).contains("first"));
    }

    #[test]
    fn keys_sharing_a_fingerprint_fold_instead() {
        // Two keys of one shard with the same 16-bit fingerprint.
        let mut found = None;
        'outer: for i in 0..200_000u32 {
            let a = format!("a{i}");
            for j in 0..64u32 {
                let b = format!("b{j}");
                if a != b
                    && shard_of(a.as_bytes()) == shard_of(b.as_bytes())
                    && sig(a.as_bytes()) == sig(b.as_bytes())
                {
                    found = Some((a, b));
                    break 'outer;
                }
            }
        }
        let (a, b) = found.expect("a fingerprint collision");
        let mut port = MemPort::new();
        set(&mut port, a.as_bytes(), b"1").unwrap();
        set(&mut port, b.as_bytes(), b"2").unwrap();
        assert!(port.get(MEMORY_PATH).is_some(), "folded");
        assert_eq!(recall(&mut port, &a).as_deref(), Some("1"));
        assert_eq!(recall(&mut port, &b).as_deref(), Some("2"));
        set(&mut port, a.as_bytes(), b"3").unwrap();
        assert_eq!(recall(&mut port, &b).as_deref(), Some("2"));
        assert_eq!(recall(&mut port, &a).as_deref(), Some("3"));
    }

    #[test]
    fn limits() {
        let mut port = MemPort::new();
        let k31 = "k".repeat(31);
        let v127 = "v".repeat(127);
        assert!(set(&mut port, k31.as_bytes(), v127.as_bytes()).is_ok());
        assert_eq!(recall(&mut port, &k31), Some(v127.clone()));
        assert_eq!(
            set(&mut port, "k".repeat(32).as_bytes(), b"v"),
            Err(MemError::Invalid)
        );
        assert_eq!(
            set(&mut port, b"k", "v".repeat(128).as_bytes()),
            Err(MemError::Invalid)
        );
        assert_eq!(set(&mut port, b"", b"v"), Err(MemError::Invalid));
        assert_eq!(set(&mut port, &[0xFF], b"v"), Err(MemError::Invalid));
        let mut small = [0u8; 10];
        assert_eq!(
            get(&mut port, k31.as_bytes(), &mut small),
            Err(MemError::TooSmall)
        );
        assert_eq!(set(&mut port, b"empty", b""), Ok(()));
        assert_eq!(recall(&mut port, "empty").as_deref(), Some(""));
    }

    #[test]
    fn full_store_refuses_new_keys_only() {
        let mut port = MemPort::new();
        for i in 0..MAX_ENTRIES {
            set(&mut port, format!("k{i}").as_bytes(), b"v").unwrap();
        }
        let writes = port.writes;
        assert_eq!(set(&mut port, b"new", b"v"), Err(MemError::Full));
        assert_eq!(
            port.writes, writes,
            "a full store is refused without writing"
        );
        assert!(port.get(MEMORY_TMP_PATH).is_none());
        assert_eq!(set(&mut port, b"k3", b"changed"), Ok(()));
        assert_eq!(recall(&mut port, "k3").as_deref(), Some("changed"));
        forget(&mut port, b"k4").unwrap();
        assert_eq!(set(&mut port, b"new", b"v"), Ok(()), "room again");
        assert_eq!(set(&mut port, b"new2", b"v"), Err(MemError::Full));
    }

    #[test]
    fn failures_leave_the_old_store() {
        // A shard write, then a fold (a value too big for a shard).
        for big in [false, true] {
            for op in [Op::Open, Op::Write, Op::Close, Op::Rename] {
                if op == Op::Rename && !big {
                    continue;
                }
                let mut port = MemPort::new();
                set(&mut port, b"a", b"1").unwrap();
                set(&mut port, b"b", b"2").unwrap();
                let before = pairs(&mut port);
                let value = if big { "\"".repeat(127) } else { "3".into() };
                // Count the opens for reading first.
                let mut probe = MemPort::new();
                set(&mut probe, b"a", b"1").unwrap();
                set(&mut probe, b"b", b"2").unwrap();
                let opens = probe.count(Op::Open);
                set(&mut probe, b"b", value.as_bytes()).unwrap();
                let n = if op == Op::Open {
                    probe.count(Op::Open) - opens - 1
                } else {
                    0
                };
                port.fail(op, n, Errno::ENOSPC);
                assert_eq!(
                    set(&mut port, b"b", value.as_bytes()),
                    Err(MemError::Io(Errno::ENOSPC)),
                    "{op:?} big {big}"
                );
                assert_eq!(pairs(&mut port), before, "{op:?} big {big}");
                assert!(port.get(MEMORY_TMP_PATH).is_none(), "{op:?}");
            }
        }
    }

    #[test]
    fn duplicates_and_garbage_are_repaired_by_the_next_set() {
        let mut port = MemPort::new();
        port.put(
            MEMORY_PATH,
            b"{\"key\":\"a\",\"value\":\"old\"}\ngarbage\n{\"key\":\"b\",\"value\":\"x\"}\n\
              {\"key\":\"a\",\"value\":\"new\"}\n{\"key\":\"c\",\"val",
        );
        assert_eq!(recall(&mut port, "a").as_deref(), Some("new"));
        set(&mut port, b"d", b"4").unwrap();
        let file = String::from_utf8(port.get(MEMORY_PATH).unwrap()).unwrap();
        assert_eq!(
            file,
            "{\"seq\":1}\n{\"key\":\"b\",\"value\":\"x\"}\n{\"key\":\"a\",\"value\":\"new\"}\n{\"key\":\"d\",\"value\":\"4\"}\n"
        );
        assert!(port.max_open <= crate::port::MAX_OPEN_FILES);
    }

    #[cfg(feature = "recall")]
    #[test]
    fn forget_and_pin() {
        let mut port = MemPort::new();
        set(&mut port, b"a", b"1").unwrap();
        set(&mut port, b"b", b"2").unwrap();
        set(&mut port, b"c", b"3").unwrap();
        assert_eq!(forget(&mut port, b"zz"), Err(MemError::NotFound));
        assert_eq!(pin(&mut port, b"zz", true), Err(MemError::NotFound));
        pin(&mut port, b"b", true).unwrap();
        let w = port.writes;
        pin(&mut port, b"b", true).unwrap();
        assert_eq!(port.writes, w, "pinning a pinned key writes nothing");
        set(&mut port, b"b", b"two").unwrap();
        forget(&mut port, b"a").unwrap();
        assert_eq!(recall(&mut port, "a"), None);
        let mut got = pairs(&mut port);
        got.sort();
        assert_eq!(
            got,
            [
                ("b".to_string(), "two".to_string(), true),
                ("c".to_string(), "3".to_string(), false)
            ],
            "a set keeps the key's pin"
        );
        pin(&mut port, b"b", false).unwrap();
        assert!(pairs(&mut port).iter().all(|p| !p.2));
    }

    #[test]
    fn a_rename_that_landed_but_reported_an_error_is_a_success() {
        let mut port = MemPort::new();
        // Quotes escape to two bytes: too big for a shard, so folds.
        let big = "\"".repeat(120);
        set(&mut port, b"a", big.as_bytes()).unwrap();
        // The rename happens, then its read-back fails.
        port.fail_after(Op::Rename, 0, Errno::EIO);
        assert_eq!(set(&mut port, b"a", format!("{big}2").as_bytes()), Ok(()));
        assert_eq!(recall(&mut port, "a"), Some(format!("{big}2")));
        // A rename that did not happen stays a failure, store as before.
        port.fail(Op::Rename, 0, Errno::EIO);
        assert_eq!(
            set(&mut port, b"a", format!("{big}3").as_bytes()),
            Err(MemError::Io(Errno::EIO))
        );
        assert_eq!(recall(&mut port, "a"), Some(format!("{big}2")));
        assert!(port.get(MEMORY_TMP_PATH).is_none());
    }

    #[test]
    fn same_value_writes_nothing() {
        let mut port = MemPort::new();
        set(&mut port, b"a", b"1").unwrap();
        let w = port.writes;
        set(&mut port, b"a", b"1").unwrap();
        assert_eq!(port.writes, w);
    }

    fn ref_pairs(port: &mut MemPort) -> Vec<(String, String, bool)> {
        let mut v = Vec::new();
        reference::for_each(port, &mut |p| {
            v.push((
                String::from_utf8(p.key().to_vec()).unwrap(),
                String::from_utf8(p.value().to_vec()).unwrap(),
                p.pinned(),
            ))
        })
        .unwrap();
        v
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig {
            cases: 64,
            ..crate::testing::regressions("tests/proptest-regressions/memory.txt")
        })]
        /// The merged store (base, shards overriding base pairs, new keys)
        /// reads as it did with a second reader per override, by every
        /// reader: `for_each` (the base reopened past an override), `get`
        /// (overrides read after the pass); and the edits on it (their
        /// duplicate and fingerprint checks read it with `get`'s pass) give
        /// the same results as a plain ordered map, keys keeping their
        /// places (a key of the base forgotten and set again takes its
        /// place back).
        #[test]
        fn reads_as_it_did_with_two_readers(
            ops in proptest::collection::vec((0usize..14, 0usize..128, 0u8..9), 1..60),
        ) {
            let mut port = MemPort::new();
            let mut model: Vec<(String, String, bool)> = Vec::new();
            for (k, len, op) in ops {
                let key = format!("k{k}");
                let value: String = (0..len).map(|i| if (i + k) % 7 == 0 { '"' } else { 'v' }).collect();
                let at = model.iter().position(|p| p.0 == key);
                match op {
                    0 => {
                        let r = forget(&mut port, key.as_bytes());
                        match at {
                            Some(i) => {
                                proptest::prop_assert_eq!(r, Ok(()));
                                model.remove(i);
                            }
                            None => proptest::prop_assert_eq!(r, Err(MemError::NotFound)),
                        }
                    }
                    #[cfg(feature = "recall")]
                    1 => {
                        let on = len % 2 == 0;
                        let r = pin(&mut port, key.as_bytes(), on);
                        match at {
                            Some(i) => {
                                proptest::prop_assert_eq!(r, Ok(()));
                                model[i].2 = on;
                            }
                            None => proptest::prop_assert_eq!(r, Err(MemError::NotFound)),
                        }
                    }
                    8 => {
                        // A hand edit: a line that is not a record, and a
                        // duplicate of the first pair, after the header.
                        if let Some(base) = port.get(MEMORY_PATH) {
                            let base = String::from_utf8(base).unwrap();
                            let mut lines: Vec<&str> = base.lines().collect();
                            let at = 1.min(lines.len());
                            lines.insert(at, "garbage");
                            if let Some(dup) = lines.get(at + 1).copied() {
                                lines.push(dup);
                            }
                            port.put(MEMORY_PATH, (lines.join("\n") + "\n").as_bytes());
                        }
                    }
                    _ => {
                        proptest::prop_assert_eq!(set(&mut port, key.as_bytes(), value.as_bytes()), Ok(()));
                        match at {
                            Some(i) => model[i].1 = value,
                            None => model.push((key, value, false)),
                        }
                    }
                }
                let got = pairs(&mut port);
                proptest::prop_assert_eq!(&got, &ref_pairs(&mut port));
                let mut sorted = got.clone();
                sorted.sort();
                sorted.dedup_by(|a, b| a.0 == b.0);
                let mut want = model.clone();
                want.sort();
                proptest::prop_assert_eq!(sorted.len(), want.len());
                for (k, v, _) in &want {
                    let mut a = [0u8; 128];
                    let mut b = [0u8; 128];
                    let n = get(&mut port, k.as_bytes(), &mut a);
                    let m = reference::get(&mut port, k.as_bytes(), &mut b);
                    proptest::prop_assert_eq!(n, m);
                    proptest::prop_assert_eq!(&a[..n.unwrap()], v.as_bytes());
                    let mut small = [0u8; 3];
                    proptest::prop_assert_eq!(
                        get(&mut port, k.as_bytes(), &mut small),
                        reference::get(&mut port, k.as_bytes(), &mut small)
                    );
                }
                proptest::prop_assert!(port.max_open <= crate::port::MAX_OPEN_FILES);
            }
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig {
            cases: 64,
            ..crate::testing::regressions("tests/proptest-regressions/memory.txt")
        })]
        /// Stores with a shard the index cannot hold (a hand edit: 48 pairs
        /// of new keys and records among them: pairs and `"del"`s of keys
        /// of the base, new keys, keys of other shards, lines that are not
        /// records), beside an indexed shard: every reader (`for_each`,
        /// `get`, `at`) reads them as the reference store does (a key's
        /// last record in the shard wins over the base, a streamed pair
        /// shows when it is its key's last record there), and edits on
        /// them do what they say to what they read, a forgotten key never
        /// coming back.
        #[test]
        fn shards_the_index_cannot_hold_read_as_the_reference(
            base in proptest::collection::vec(0usize..10, 0..12),
            recs in proptest::collection::vec((0usize..16, 0u8..4, 0usize..3), 0..14),
            other in proptest::collection::vec((0usize..16, 0u8..2), 0..4),
            place_at in 0usize..49,
            shard in 0usize..SHARDS,
            edits in proptest::collection::vec((0usize..16, 0u8..3), 0..4),
        ) {
            // Keys 0..10 of the shard, 10..13 new keys of another shard,
            // 13..16 keys of the other shard in this one.
            let t = (shard + 3) % SHARDS;
            let mine = keys_of_shard(shard, "k", 13);
            let theirs = keys_of_shard(t, "t", 3);
            let key = |i: usize| if i < 13 { mine[i].clone() } else { theirs[i - 13].clone() };
            let mut port = MemPort::new();
            let mut text = String::from("{\"seq\":5}\n");
            for &i in &base {
                text += &pair_line(&key(i), &format!("b{i}"));
            }
            port.put(MEMORY_PATH, text.as_bytes());
            let lines: Vec<String> = recs
                .iter()
                .map(|&(i, kind, v)| match kind {
                    0 => del_line(&key(i)),
                    3 => String::from("garbage\n"),
                    _ => pair_line(&key(i), &format!("s{v}")),
                })
                .collect();
            oversized(&mut port, "5", shard, place_at, &lines);
            let mut text = String::from("{\"seq\":5}\n");
            for &(i, kind) in &other {
                let k = theirs[i % 3].clone();
                text += &if kind == 0 { del_line(&k) } else { pair_line(&k, &format!("o{i}")) };
            }
            port.put(SHARD_PATHS[t], text.as_bytes());
            proptest::prop_assert!(Store::open(&mut port).unwrap().overflowed());
            let mut model: std::collections::BTreeMap<String, String> = Default::default();
            for (k, v, _) in ref_pairs(&mut port) {
                model.insert(k, v);
            }
            for (e, &(i, op)) in edits.iter().enumerate() {
                let got = pairs(&mut port);
                proptest::prop_assert_eq!(&got, &ref_pairs(&mut port));
                let mut n = 0;
                while at(&mut port, n, |p| {
                    assert_eq!((p.key(), p.value()), (got[n].0.as_bytes(), got[n].1.as_bytes()))
                })
                .unwrap()
                {
                    n += 1;
                }
                proptest::prop_assert_eq!(n, got.len());
                for j in 0..16 {
                    let k = key(j);
                    let mut a = [0u8; 128];
                    let mut b = [0u8; 128];
                    let r = get(&mut port, k.as_bytes(), &mut a);
                    proptest::prop_assert_eq!(r, reference::get(&mut port, k.as_bytes(), &mut b));
                    proptest::prop_assert_eq!(r.ok().map(|n| a[..n].to_vec()), model.get(&k).map(|v| v.clone().into_bytes()));
                }
                let k = key(i);
                let value = format!("e{e}");
                if op == 0 {
                    let r = forget(&mut port, k.as_bytes());
                    proptest::prop_assert_eq!(r, if model.remove(&k).is_some() { Ok(()) } else { Err(MemError::NotFound) });
                } else {
                    let r = set(&mut port, k.as_bytes(), value.as_bytes());
                    let full = !model.contains_key(&k) && model.len() >= MAX_ENTRIES;
                    proptest::prop_assert_eq!(r, if full { Err(MemError::Full) } else { Ok(()) });
                    if !full {
                        model.insert(k, value);
                    }
                }
                let mut now: std::collections::BTreeMap<String, String> = Default::default();
                for (k, v, _) in pairs(&mut port) {
                    now.insert(k, v);
                }
                proptest::prop_assert_eq!(&now, &model);
                proptest::prop_assert!(port.max_open <= crate::port::MAX_OPEN_FILES);
            }
        }
    }

    /// Every file of the store.
    fn files(port: &MemPort) -> Vec<Option<Vec<u8>>> {
        let mut v = vec![port.get(MEMORY_PATH), port.get(MEMORY_TMP_PATH)];
        v.extend(SHARD_PATHS.iter().map(|p| port.get(p)));
        v
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig {
            cases: 96,
            ..crate::testing::regressions("tests/proptest-regressions/memory.txt")
        })]
        /// The same operations on the store as it was (`reference`: a
        /// second reader per override, scans reading values and the shards
        /// again) and as it is give the same results and byte-identical
        /// files: hand edits (lines that are not records, a key twice),
        /// keys that collide in their key hash or fingerprint, full stores,
        /// write failures included.
        #[test]
        fn edits_write_what_they_did(
            ops in proptest::collection::vec((0usize..64, 0usize..128, 0u8..12), 1..60),
        ) {
            // Two keys of one shard with one fingerprint, and two with one
            // 16-bit key hash (found once).
            static KEYS: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();
            let keys = KEYS.get_or_init(|| {
                let mut keys: Vec<String> = (0..34).map(|i| format!("k{i}")).collect();
                'sig: for i in 0..200_000u32 {
                    let a = format!("a{i}");
                    for j in 0..64u32 {
                        let b = format!("b{j}");
                        if shard_of(a.as_bytes()) == shard_of(b.as_bytes()) && sig(a.as_bytes()) == sig(b.as_bytes()) {
                            keys.extend([a, b]);
                            break 'sig;
                        }
                    }
                }
                'hash: for i in 0..200_000u32 {
                    let a = format!("c{i}");
                    for j in 0..64u32 {
                        let b = format!("d{j}");
                        if hash(a.as_bytes()) == hash(b.as_bytes()) {
                            keys.extend([a, b]);
                            break 'hash;
                        }
                    }
                }
                keys
            });
            let mut new = MemPort::new();
            let mut old = MemPort::new();
            for (k, len, op) in ops {
                // Often the colliding keys (the last four), sometimes up to
                // a full store.
                let key = keys[if k < 24 { keys.len() - 8 + k % 8 } else { (k - 24) % keys.len() }].as_bytes();
                let value: Vec<u8> = (0..len).map(|i| if (i + k) % 7 == 0 { b'"' } else { b'v' }).collect();
                match op {
                    0 => proptest::prop_assert_eq!(forget(&mut new, key), reference::forget(&mut old, key)),
                    #[cfg(feature = "recall")]
                    1 | 2 => proptest::prop_assert_eq!(
                        pin(&mut new, key, op == 1),
                        reference::pin(&mut old, key, op == 1)
                    ),
                    3 => {
                        // A hand edit of the base.
                        if let Some(base) = new.get(MEMORY_PATH) {
                            let base = String::from_utf8(base).unwrap();
                            let mut lines: Vec<&str> = base.lines().collect();
                            let at = (len % 3).min(lines.len());
                            lines.insert(at, "garbage");
                            if len % 2 == 0 {
                                if let Some(dup) = lines.get(at + 1).copied() {
                                    lines.push(dup);
                                }
                            }
                            let text = lines.join("\n") + "\n";
                            new.put(MEMORY_PATH, text.as_bytes());
                            old.put(MEMORY_PATH, text.as_bytes());
                        }
                    }
                    4 => {
                        // A write that fails part way.
                        new.fail(Op::Write, (len % 3) as u32, Errno::ENOSPC);
                        old.fail(Op::Write, (len % 3) as u32, Errno::ENOSPC);
                        proptest::prop_assert_eq!(set(&mut new, key, &value), reference::set(&mut old, key, &value));
                        new.heal();
                        old.heal();
                    }
                    5 => {
                        // Where "wb" is not atomic.
                        new.atomic = len % 2 == 0;
                        old.atomic = len % 2 == 0;
                        proptest::prop_assert_eq!(set(&mut new, key, &value), reference::set(&mut old, key, &value));
                    }
                    _ => proptest::prop_assert_eq!(set(&mut new, key, &value), reference::set(&mut old, key, &value)),
                }
                proptest::prop_assert_eq!(files(&new), files(&old));
                proptest::prop_assert_eq!(new.count(Op::Rename), old.count(Op::Rename));
                proptest::prop_assert_eq!(new.writes, old.writes);
                let mut a = [0u8; 128];
                let mut b = [0u8; 128];
                proptest::prop_assert_eq!(get(&mut new, key, &mut a), reference::get(&mut old, key, &mut b));
                proptest::prop_assert_eq!(a, b);
                let mut i = 0;
                loop {
                    let mut na = None;
                    let got = at(&mut new, i, |p| na = Some((p.key().to_vec(), p.value().to_vec(), p.pinned()))).unwrap();
                    let mut nb = None;
                    let mut n = 0;
                    reference::for_each(&mut old, &mut |p| {
                        if n == i {
                            nb = Some((p.key().to_vec(), p.value().to_vec(), p.pinned()));
                        }
                        n += 1;
                    }).unwrap();
                    proptest::prop_assert_eq!(got, nb.is_some());
                    proptest::prop_assert_eq!(&na, &nb);
                    if !got {
                        break;
                    }
                    i += 1;
                }
            }
        }
    }

    #[test]
    fn a_line_skipped_before_an_override_still_folds_the_next_set() {
        let mut port = MemPort::new();
        for k in ["a", "b", "c"] {
            set(&mut port, k.as_bytes(), "\"".repeat(100).as_bytes()).unwrap();
        }
        set(&mut port, b"d", b"x").unwrap();
        assert!(file(&port, MEMORY_PATH).contains("\"c\""), "folded");
        // Shards override a, b and c of the base.
        for k in ["a", "b", "c"] {
            set(&mut port, k.as_bytes(), b"short").unwrap();
        }
        let base = file(&port, MEMORY_PATH);
        assert!(!base.contains("short"));
        let before = pairs(&mut port);
        let (head, rest) = base.split_once('\n').unwrap();
        port.put(MEMORY_PATH, format!("{head}\ngarbage\n{rest}").as_bytes());
        assert_eq!(pairs(&mut port), before);
        let renames = port.count(Op::Rename);
        set(&mut port, b"d", b"y").unwrap();
        assert_eq!(
            port.count(Op::Rename),
            renames + 1,
            "the skipped line folds"
        );
        assert!(!file(&port, MEMORY_PATH).contains("garbage"));
        assert_eq!(recall(&mut port, "a").as_deref(), Some("short"));
    }

    #[test]
    fn wipe_retires_base_and_shards() {
        let mut port = MemPort::new();
        wipe(&mut port).unwrap();
        assert_eq!(port.writes, 0, "nothing to wipe");
        set(&mut port, b"a", b"1").unwrap();
        set(&mut port, b"b", "\"".repeat(127).as_bytes()).unwrap();
        set(&mut port, b"c", b"3").unwrap();
        port.fail_all(Op::Remove, Errno::EIO);
        wipe(&mut port).unwrap();
        assert!(
            pairs(&mut port).is_empty(),
            "the new generation retires the shards"
        );
        port.heal();
        set(&mut port, b"d", b"4").unwrap();
        wipe(&mut port).unwrap();
        assert!(pairs(&mut port).is_empty());
        assert!(port.get(MEMORY_PATH).is_none(), "no files left");
        assert!(SHARD_PATHS.iter().all(|s| port.get(s).is_none()));
    }
}
