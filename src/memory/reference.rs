//! The memory store as it was before its passes were rebuilt for the
//! stack (one reader slot, keys-only scans, the scan's tally from the
//! load): the equivalence tests run the same operations on both and
//! compare the files and the results. A shard the index cannot hold (a
//! hand edit) is modelled plainly: its records kept in vectors, keys
//! compared byte for byte (the store checks them by reading the shard
//! again, [`super::OVERFLOW`]).

#![allow(dead_code, clippy::all)]

use core::ffi::CStr;

use crate::format::lines::{LineWriter, NO_FD};
pub use crate::format::memory::Pair;
use crate::format::memory::{PairReader, Rec, write_del, write_header, write_pair};
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
/// would hold more folds, as one that would pass [`SHARD_MAX`]). A shard
/// with more (a hand edit) is read all the same: its records are indexed
/// while the index has room ([`ENTRIES`] in all), else the shard is one
/// the index cannot hold ([`Store::over`]).
const SHARD_RECORDS: usize = 6;

pub use super::MemError;

/// Forgets the whole store (the `wipe_memory` tool): an empty base of a new
/// generation retires every shard, then the files are removed. A store that
/// is not there is already wiped.
pub fn wipe<P: Port>(port: &mut P) -> Result<(), Errno> {
    let _ = port.remove(MEMORY_TMP_PATH);
    let mut store = Store::new();
    let mut pair = Pair::new();
    if base_gen(port, &mut store.reader, &mut pair)?.is_none() && !any_shard(port)? {
        return Ok(());
    }
    store.load_with(port, &mut pair)?;
    let generation = store.newest;
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

fn any_shard<P: Port>(port: &mut P) -> Result<bool, Errno> {
    for path in SHARD_PATHS {
        match port.open(path, Mode::Read) {
            Ok(fd) => {
                let _ = port.close(fd);
                return Ok(true);
            }
            Err(Errno::ENOENT) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(false)
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
    let mut h: u32 = 0x811c_9dc5;
    for &b in key {
        h = (h ^ u32::from(b)).wrapping_mul(0x0100_0193);
    }
    h
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

fn open_opt<P: Port>(port: &mut P, path: &'static CStr) -> Result<Option<Fd>, Errno> {
    match port.open(path, Mode::Read) {
        Ok(fd) => Ok(Some(fd)),
        Err(Errno::ENOENT) => Ok(None),
        Err(e) => Err(e),
    }
}

/// The base's generation: `None` without a base, 0 for one in the seed's
/// plain form. Read with the caller's reader slot and pair buffer (left
/// `None` and clobbered): a load holds one of each, not one per level.
fn base_gen<P: Port>(
    port: &mut P,
    reader: &mut Option<PairReader<'static>>,
    pair: &mut Pair,
) -> Result<Option<u32>, Errno> {
    let Some(fd) = open_opt(port, MEMORY_PATH)? else {
        return Ok(None);
    };
    let first = reader.insert(PairReader::new(fd)).record(port, pair);
    *reader = None;
    let _ = port.close(fd);
    Ok(Some(match first? {
        Some(Rec::Header(g)) => g,
        _ => 0,
    }))
}

/// Records the shards of one generation hold at most (8 shards).
const ENTRIES: usize = SHARDS * SHARD_RECORDS;

/// The merged store, streamed: the base's pairs in their order, each with
/// its shard's record when one overrides it (a forgotten key is left out),
/// then the keys new since the base, in the order they were added. At
/// most two files open at a time.
pub struct Store {
    reader: Option<PairReader<'static>>,
    /// 0: the base; 1: the new keys; 2: done.
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
    /// Pairs of the base read so far (overridden ones included).
    base_pairs: usize,
    /// Whether the base had a line that is not a record.
    skipped: bool,
    /// Whether the last pair holds a place of the base.
    from_base: bool,
    /// The shards the index could not hold (a hand edit: more records in
    /// all than [`ENTRIES`]), each with its records in file order: key,
    /// and value and pin (`None`: a `"del"`). A pair of the base whose key
    /// has a record in such a shard (its key's shard) is left out; after
    /// the keys new since the base, each pair of such a shard that is its
    /// key's last record there follows, in file order.
    over: Vec<(usize, Vec<OverRec>)>,
    /// Where the streaming of `over` is: shard, record.
    over_at: (usize, usize),
}

/// A record of a shard the index could not hold: key, and value and pin
/// (`None`: a `"del"`).
type OverRec = (Vec<u8>, Option<(Vec<u8>, bool)>);

fn bit64(j: usize) -> u64 {
    if j < 64 { 1 << j } else { 0 }
}

impl Store {
    /// Reads the base's generation and the shards' keys.
    pub fn open<P: Port>(port: &mut P) -> Result<Store, Errno> {
        let mut s = Store::new();
        s.load_with(port, &mut Pair::new())?;
        Ok(s)
    }

    /// A store not read yet.
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
            over: Vec::new(),
            over_at: (0, 0),
        }
    }

    /// [`Store::open`] in place (no copy of the struct between frames).
    pub fn load<P: Port>(&mut self, port: &mut P) -> Result<(), Errno> {
        self.load_with(port, &mut Pair::new())
    }

    /// [`Store::load`] with the caller's pair buffer (clobbered). The files
    /// are read through the store's own reader slot, free until the first
    /// [`Store::next`]: the frames of a load hold no reader nor pair of
    /// their own.
    fn load_with<P: Port>(&mut self, port: &mut P, pair: &mut Pair) -> Result<(), Errno> {
        *self = Store::new();
        let generation = base_gen(port, &mut self.reader, pair)?.unwrap_or(0);
        self.generation = generation;
        self.newest = generation;
        let mut n = 0usize;
        for (i, path) in SHARD_PATHS.iter().enumerate() {
            if let Some(fd) = open_opt(port, path)? {
                let res = self.read_shard(port, fd, pair, n);
                self.reader = None;
                let _ = port.close(fd);
                match res? {
                    Some(Ok(end)) => n = end,
                    Some(Err(records)) => self.over.push((i, records)),
                    None => {}
                }
            }
            if let Some(st) = self.start.get_mut(i + 1) {
                *st = n as u8;
            }
        }
        Ok(())
    }

    /// The records of one shard (open as `fd`, read through the reader
    /// slot) from entry `from`; `None` when it is stale or not one of ours,
    /// `Err` with its records when the index cannot hold them.
    fn read_shard<P: Port>(
        &mut self,
        port: &mut P,
        fd: Fd,
        pair: &mut Pair,
        from: usize,
    ) -> Result<Option<Result<usize, Vec<OverRec>>>, Errno> {
        let r = self.reader.insert(PairReader::new(fd));
        let first = r.record(port, pair)?;
        if let Some(Rec::Header(g)) = first {
            self.newest = self.newest.max(g);
        }
        if first != Some(Rec::Header(self.generation)) || self.generation == 0 {
            return Ok(None);
        }
        let mut j = from;
        let mut max_n = self.max_n;
        let mut dels = self.dels;
        let mut records = Vec::new();
        while let Some(rec) = self
            .reader
            .as_mut()
            .map_or(Ok(None), |r| r.record(port, pair))?
        {
            let n = match rec {
                Rec::Header(_) => continue,
                Rec::Pair(n) => n,
                Rec::Del => {
                    dels |= bit64(j);
                    0
                }
            };
            records.push((
                pair.key().to_vec(),
                matches!(rec, Rec::Pair(_)).then(|| (pair.value().to_vec(), pair.pinned)),
            ));
            if let (Some(sg), Some(nn)) = (self.sigs.get_mut(j), self.ns.get_mut(j)) {
                *sg = sig(pair.key());
                *nn = n;
            }
            max_n = max_n.max(n);
            j += 1;
        }
        if j > ENTRIES {
            return Ok(Some(Err(records)));
        }
        self.max_n = max_n;
        self.dels = dels;
        Ok(Some(Ok(j)))
    }

    /// The records of the shard the index could not hold that `key`'s
    /// shard is, if it is one.
    fn over_of(&self, key: &[u8]) -> Option<&[OverRec]> {
        let s = shard_of(key);
        self.over
            .iter()
            .find(|(i, _)| *i == s)
            .map(|(_, r)| r.as_slice())
    }

    /// The entry of the shards that holds `key`.
    fn entry(&self, key: &[u8]) -> Option<usize> {
        let (s, k) = place(fnv(key));
        let a = usize::from(self.start.get(s).copied().unwrap_or(0));
        let b = usize::from(self.start.get(s + 1).copied().unwrap_or(0));
        (a..b).find(|&j| self.sigs.get(j) == Some(&k))
    }

    /// Reads entry `j`'s record into `pair`; false when it is not there.
    fn read_entry<P: Port>(&self, port: &mut P, j: usize, pair: &mut Pair) -> Result<bool, Errno> {
        let Some(s) = (0..SHARDS).find(|&s| {
            let a = usize::from(self.start.get(s).copied().unwrap_or(0));
            let b = usize::from(self.start.get(s + 1).copied().unwrap_or(0));
            (a..b).contains(&j)
        }) else {
            return Ok(false);
        };
        let first = usize::from(self.start.get(s).copied().unwrap_or(0));
        let path = SHARD_PATHS.get(s).copied().unwrap_or(MEMORY_PATH);
        let Some(fd) = open_opt(port, path)? else {
            return Ok(false);
        };
        let mut r = PairReader::new(fd);
        let mut k = first;
        let res = loop {
            match r.record(port, pair) {
                Ok(Some(Rec::Header(_))) => {}
                Ok(Some(rec)) if k == j => break Ok(matches!(rec, Rec::Pair(_))),
                Ok(Some(_)) => k += 1,
                Ok(None) => break Ok(false),
                Err(e) => break Err(e),
            }
        };
        let _ = port.close(fd);
        res
    }

    /// The next pair of the merged store, or `None` at its end.
    pub fn next<P: Port>(&mut self, port: &mut P, pair: &mut Pair) -> Result<Option<()>, Errno> {
        while self.phase == 0 {
            let Some(r) = self.reader.as_mut() else {
                match open_opt(port, MEMORY_PATH)? {
                    Some(fd) => self.reader = Some(PairReader::new(fd)),
                    None => self.phase = 1,
                }
                continue;
            };
            match r.record(port, pair)? {
                None => {
                    self.skipped = r.skipped;
                    self.close(port);
                    self.phase = 1;
                }
                Some(Rec::Pair(_)) => {
                    self.base_pairs += 1;
                    self.from_base = true;
                    if self
                        .over_of(pair.key())
                        .is_some_and(|r| r.iter().any(|(k, _)| k == pair.key()))
                    {
                        continue;
                    }
                    let Some(j) = self.entry(pair.key()) else {
                        return Ok(Some(()));
                    };
                    self.matched |= bit64(j);
                    if self.dels & bit64(j) == 0 && self.read_entry(port, j, pair)? {
                        return Ok(Some(()));
                    }
                }
                Some(_) => {}
            }
        }
        // The keys new since the base: by "n", then by place (at most
        // ENTRIES rounds: each takes one entry).
        let total = usize::from(self.start.get(SHARDS).copied().unwrap_or(0));
        while self.phase == 1 {
            let used = self.dels | self.matched | self.emitted;
            let next = (0..total)
                .filter(|&j| used & bit64(j) == 0)
                .min_by_key(|&j| (self.ns.get(j).copied().unwrap_or(0), j));
            let Some(j) = next else {
                self.phase = 2;
                break;
            };
            self.emitted |= bit64(j);
            self.from_base = false;
            if self.read_entry(port, j, pair)? {
                return Ok(Some(()));
            }
        }
        // Then the shards the index could not hold.
        self.from_base = false;
        while let Some((_, records)) = self.over.get(self.over_at.0) {
            let Some((key, rec)) = records.get(self.over_at.1) else {
                self.over_at = (self.over_at.0 + 1, 0);
                continue;
            };
            self.over_at.1 += 1;
            let later = records
                .get(self.over_at.1..)
                .is_some_and(|r| r.iter().any(|(k, _)| k == key));
            if let (Some((v, pinned)), false) = (rec, later) {
                crate::text::copy_prefix(&mut pair.key, key);
                pair.key_len = key.len() as u8;
                crate::text::copy_prefix(&mut pair.val, v);
                pair.val_len = v.len() as u8;
                pair.pinned = *pinned;
                return Ok(Some(()));
            }
        }
        self.phase = 3;
        Ok(None)
    }

    /// Closes the file being read (after an error, or to stop early).
    pub fn close<P: Port>(&mut self, port: &mut P) {
        if let Some(r) = self.reader.take() {
            let _ = port.close(r.fd());
        }
    }
}

impl Default for Store {
    fn default() -> Self {
        Self::new()
    }
}

/// Calls `f` for each pair of the merged store (base duplicates included).
/// One frame holds the reader and the pair, whoever calls (`dyn`: the
/// callers' closures do not each get a copy of it inlined).
pub fn for_each<P: Port>(port: &mut P, f: &mut dyn FnMut(&Pair)) -> Result<(), Errno> {
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

/// Copies the value of `key` into `out`; returns its length.
pub fn get<P: Port>(port: &mut P, key: &[u8], out: &mut [u8]) -> Result<usize, MemError> {
    validate(key, b"")?;
    let mut found: Option<usize> = None;
    let mut too_small = false;
    for_each(port, &mut |p| {
        if p.key() == key {
            // The last line wins: a later duplicate overwrites.
            match out.get_mut(..p.value().len()) {
                Some(dst) => {
                    crate::text::copy_prefix(dst, p.value());
                    found = Some(p.value().len());
                    too_small = false;
                }
                None => {
                    found = None;
                    too_small = true;
                }
            }
        }
    })?;
    match (found, too_small) {
        (Some(n), _) => Ok(n),
        (None, true) => Err(MemError::TooSmall),
        (None, false) => Err(MemError::NotFound),
    }
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
pub fn set<P: Port>(port: &mut P, key: &[u8], value: &[u8]) -> Result<(), MemError> {
    validate(key, value)?;
    edit(port, key, Edit::Set(value))
}

/// Deletes `key`; `NotFound` when it is not stored.
pub fn forget<P: Port>(port: &mut P, key: &[u8]) -> Result<(), MemError> {
    validate(key, b"")?;
    edit(port, key, Edit::Forget)
}

/// Pins or unpins `key`; `NotFound` when it is not stored.
#[cfg(feature = "recall")]
pub fn pin<P: Port>(port: &mut P, key: &[u8], on: bool) -> Result<(), MemError> {
    validate(key, b"")?;
    edit(port, key, Edit::Pin(on))
}

/// What the first pass over the store found.
struct Scan {
    hashes: KeyHashes,
    maybe_dup: bool,
    skipped: bool,
    pairs: usize,
    /// The key's last line: (value equals the new one, pinned).
    found: Option<(bool, bool)>,
    /// Another key has the key's shard and fingerprint.
    collides: bool,
    /// The base's generation.
    generation: u32,
    /// The newest generation any file names.
    newest: u32,
    /// The key holds a place of the base.
    in_base: bool,
    /// The largest `"n"` of the shards.
    max_n: u8,
    /// The key's value (for a pin written to its shard).
    #[cfg(feature = "recall")]
    value: [u8; VAL_MAX_BYTES],
    #[cfg(feature = "recall")]
    value_len: u8,
}

// The passes of an edit: each has its own pair buffer (a test reference:
// no stack budget here).
fn scan<P: Port>(port: &mut P, key: &[u8], value: &[u8], s: &mut Scan) -> Result<(), Errno> {
    let mut store = Store::new();
    let mut pair = Pair::new();
    store.load_with(port, &mut pair)?;
    s.generation = store.generation;
    s.newest = store.newest;
    s.max_n = store.max_n;
    let mine = place(fnv(key));
    let res = loop {
        match store.next(port, &mut pair) {
            Ok(Some(())) => {
                // Maybe a duplicate: the rewrite pass decides.
                let f = fnv(pair.key());
                let h = hash16(f);
                let seen = s.hashes.hashes.get(..s.hashes.len).unwrap_or(&[]);
                s.maybe_dup |= s.pairs >= HASHED || seen.contains(&h);
                if let Some(slot) = s.hashes.hashes.get_mut(s.pairs) {
                    *slot = h;
                    s.hashes.len = s.pairs + 1;
                }
                s.pairs += 1;
                s.hashes.truncated |= s.pairs > HASHED;
                if pair.key() == key {
                    s.found = Some((pair.value() == value, pair.pinned));
                    s.in_base = store.from_base;
                    #[cfg(feature = "recall")]
                    {
                        crate::text::copy_prefix(&mut s.value, pair.value());
                        s.value_len = pair.val_len;
                    }
                } else if place(f) == mine {
                    s.collides = true;
                }
            }
            Ok(None) => break Ok(()),
            Err(e) => break Err(e),
        }
    };
    s.skipped = store.skipped;
    store.close(port);
    res
}

/// Applies `e` to `key`: in its shard when it fits there, else by a fold
/// (see the module docs). A change that changes nothing writes nothing;
/// a failure leaves the store as it was.
pub fn edit<P: Port>(port: &mut P, key: &[u8], e: Edit<'_>) -> Result<(), MemError> {
    let new_value = match e {
        Edit::Set(v) => v,
        _ => b"",
    };
    // Filled in place: a returned `Scan` would sit in both frames.
    let mut s = Scan {
        hashes: KeyHashes {
            hashes: [0; HASHED],
            len: 0,
            truncated: false,
        },
        maybe_dup: false,
        skipped: false,
        pairs: 0,
        found: None,
        collides: false,
        generation: 0,
        newest: 0,
        in_base: false,
        max_n: 0,
        #[cfg(feature = "recall")]
        value: [0; VAL_MAX_BYTES],
        #[cfg(feature = "recall")]
        value_len: 0,
    };
    scan(port, key, new_value, &mut s)?;
    let clean = !s.maybe_dup && !s.skipped;
    match (e, s.found) {
        (Edit::Set(_), Some((true, _))) if clean => return Ok(()),
        // Full, and known without writing a byte (with possible duplicates
        // only the rewrite can count distinct keys).
        (Edit::Set(_), None) if !s.maybe_dup && s.pairs >= MAX_ENTRIES => {
            return Err(MemError::Full);
        }
        (Edit::Forget, None) => return Err(MemError::NotFound),
        #[cfg(feature = "recall")]
        (Edit::Pin(_), None) => return Err(MemError::NotFound),
        #[cfg(feature = "recall")]
        (Edit::Pin(on), Some((_, pinned))) if clean && on == pinned => return Ok(()),
        _ => {}
    }
    // Shards count only beside a base of ours (generation >= 1): the first
    // change to a seed-form store, or to none, writes the base.
    if clean && !s.collides && s.generation > 0 {
        let pinned = s.found.is_some_and(|(_, p)| p);
        #[cfg(feature = "recall")]
        let value = s.value.get(..usize::from(s.value_len)).unwrap_or(&[]);
        #[cfg(not(feature = "recall"))]
        let value: &[u8] = &[];
        let change = match e {
            Edit::Set(v) => Change::Pair(v, pinned, 0),
            Edit::Forget => Change::Del,
            #[cfg(feature = "recall")]
            Edit::Pin(on) => Change::Pair(value, on, 0),
        };
        let _ = value;
        // Its place among the new keys (kept when it is one already).
        let n = if s.in_base {
            Some(0)
        } else {
            s.max_n.checked_add(1)
        };
        if let Some(n) = n {
            match shard_edit(port, key, change, n, s.generation) {
                Ok(true) => return Ok(()),
                Ok(false) => {}
                // A commit that landed but reported an error (littlefs reads
                // it back): the store must then hold the edit.
                Err(MemError::Io(err)) => {
                    return if landed(port, key, e, &mut s) {
                        Ok(())
                    } else {
                        Err(MemError::Io(err))
                    };
                }
                Err(other) => return Err(other),
            }
        }
    }
    fold(port, key, e, &mut s)
}

/// The record a shard gets for its key.
#[derive(Clone, Copy)]
enum Change<'a> {
    /// The key's value, pin and place among the new keys (0: none).
    Pair(&'a [u8], bool, u8),
    /// The key is forgotten.
    Del,
}

/// Rewrites the key's shard with `change`; false (nothing written) when
/// the shard would pass [`SHARD_MAX`] or holds another key with the same
/// fingerprint: then the caller folds.
fn shard_edit<P: Port>(
    port: &mut P,
    key: &[u8],
    change: Change<'_>,
    n: u8,
    generation: u32,
) -> Result<bool, MemError> {
    let mut place = n;
    let path = SHARD_PATHS
        .get(shard_of(key))
        .copied()
        .unwrap_or(MEMORY_TMP_PATH);
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
    // Its records of other keys, as byte ranges (none when it is stale).
    let mut keep = [(0u8, 0u8); SHARD_RECORDS];
    let mut n = 0usize;
    {
        let mut r = PairReader::over(old.get(..len).unwrap_or(&[]));
        let mut other = [0u8; KEY_MAX_BYTES];
        let mut header = false;
        let mut from = 0u32;
        while let Some((rec, kl, _, _)) = r.rec(port, &mut other, &mut [])? {
            let to = r.offset();
            match rec {
                Rec::Header(g) if from == 0 => header = g == generation,
                _ if !header => break,
                Rec::Header(_) => {}
                Rec::Pair(_) | Rec::Del => {
                    let k = other.get(..usize::from(kl)).unwrap_or(&[]);
                    if let (true, Rec::Pair(old)) = (k == key, rec) {
                        if old != 0 {
                            place = old;
                        }
                    }
                    if k != key {
                        if sig(k) == sig(key) {
                            return Ok(false);
                        }
                        match keep.get_mut(n) {
                            Some(slot) => *slot = (from as u8, to as u8),
                            None => return Ok(false),
                        }
                        n += 1;
                    }
                }
            }
            from = to;
        }
    }
    if n >= SHARD_RECORDS {
        // No room for the key's record: fold.
        return Ok(false);
    }
    let kept = keep.get(..n).unwrap_or(&[]);
    let change = match change {
        Change::Pair(v, pinned, _) => Change::Pair(v, pinned, place),
        Change::Del => Change::Del,
    };
    let old = old.get(..len).unwrap_or(&[]);
    let size = write_shard(port, NO_FD, old, kept, generation, key, change).map(|n| n as usize);
    if size.map_or(true, |n| n > SHARD_MAX) {
        return Ok(false);
    }
    // Where "wb" is not atomic (FAT, a Python file system) through a
    // temporary file and a rename, so that a failure keeps the old shard.
    let atomic = port.atomic_write(path);
    let target = if atomic { path } else { MEMORY_TMP_PATH };
    let fd = port.open(target, Mode::Write)?;
    let written = write_shard(port, fd, old, kept, generation, key, change);
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
    kept: &[(u8, u8)],
    generation: u32,
    key: &[u8],
    change: Change<'_>,
) -> Result<u32, Errno> {
    let mut w = LineWriter::new(fd);
    write_header(port, &mut w, generation)?;
    for &(a, b) in kept {
        let line = old.get(usize::from(a)..usize::from(b)).unwrap_or(&[]);
        w.raw(port, line)?;
        if line.last() != Some(&b'\n') {
            w.raw(port, b"\n")?;
        }
    }
    match change {
        Change::Pair(v, pinned, n) => write_pair(port, &mut w, key, v, pinned, n)?,
        Change::Del => write_del(port, &mut w, key)?,
    }
    w.flush(port).map(|()| w.written())
}

/// The fold: the merged store with the edit made, under the next
/// generation, through the temporary file and a rename.
fn fold<P: Port>(port: &mut P, key: &[u8], e: Edit<'_>, s: &mut Scan) -> Result<(), MemError> {
    let gone = if s.maybe_dup || s.skipped {
        superseded(port)?
    } else {
        0
    };
    let tmp = port.open(MEMORY_TMP_PATH, Mode::Write)?;
    let mut w = LineWriter::new(tmp);
    let copied = write_header(port, &mut w, s.newest.saturating_add(1))
        .map_err(MemError::Io)
        .and_then(|()| copy_pairs(port, &mut w, key, e, gone));
    let result = match copied {
        Ok((n, false)) if n >= MAX_ENTRIES => Err(MemError::Full),
        Ok((_, true)) => w.flush(port).map_err(MemError::Io),
        Ok((_, false)) => match e {
            Edit::Set(v) => write_pair(port, &mut w, key, v, false, 0)
                .and_then(|()| w.flush(port))
                .map_err(MemError::Io),
            _ => Err(MemError::NotFound),
        },
        Err(e) => Err(e),
    };
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
                Err(Errno::ENOENT) if landed(port, key, e, s) => return Ok(()),
                _ => Err(MemError::Io(err)),
            },
        },
        Err(e) => Err(e),
    };
    let _ = port.remove(MEMORY_TMP_PATH);
    result
}

/// Whether the store holds `e` applied to `key` (the last line counts).
/// Reuses the first pass (and its `Scan`, no longer needed by then).
fn landed<P: Port>(port: &mut P, key: &[u8], e: Edit<'_>, s: &mut Scan) -> bool {
    let value = match e {
        Edit::Set(v) => v,
        _ => b"",
    };
    s.found = None;
    s.pairs = 0;
    s.hashes.len = 0;
    s.hashes.truncated = false;
    if scan(port, key, value, s).is_err() {
        return false;
    }
    match (e, s.found) {
        (Edit::Set(_), Some((same, _))) => same,
        (Edit::Forget, None) => true,
        #[cfg(feature = "recall")]
        (Edit::Pin(on), Some((_, pinned))) => pinned == on,
        _ => false,
    }
}

/// Copies the merged store, keeping only the last line of a key the base
/// holds twice and applying `e` to `key` in place. Returns how many other
/// pairs were copied and whether `key` existed.
fn copy_pairs<P: Port>(
    port: &mut P,
    w: &mut LineWriter,
    key: &[u8],
    e: Edit<'_>,
    gone: u128,
) -> Result<(usize, bool), MemError> {
    let mut store = Store::new();
    let mut pair = Pair::new();
    store.load_with(port, &mut pair)?;
    let mut copied = 0usize;
    let mut existed = false;
    let res = loop {
        match store.next(port, &mut pair) {
            Ok(Some(())) => {
                if store.from_base && gone & bit(store.base_pairs.saturating_sub(1)) != 0 {
                    continue;
                }
                let written = if pair.key() == key {
                    existed = true;
                    match e {
                        Edit::Set(v) => write_pair(port, w, key, v, pair.pinned, 0),
                        Edit::Forget => Ok(()),
                        #[cfg(feature = "recall")]
                        Edit::Pin(on) => write_pair(port, w, key, pair.value(), on, 0),
                    }
                } else {
                    copied += 1;
                    write_pair(port, w, pair.key(), pair.value(), pair.pinned, 0)
                };
                if let Err(e) = written {
                    break Err(MemError::Io(e));
                }
            }
            Ok(None) => break Ok((copied, existed)),
            Err(e) => break Err(MemError::Io(e)),
        }
    };
    store.close(port);
    res
}

/// Bit `i` for pair index `i`, 0 past [`DEDUP_PAIRS`].
fn bit(i: usize) -> u128 {
    if i < DEDUP_PAIRS { 1 << i } else { 0 }
}

/// Pairs of the base a later line with the same key supersedes: bit `i`
/// for its pair `i`. Passes of their own, before the copy, so that the
/// look-ahead reads are not nested under the copy's pair buffer (1 KiB
/// stack budget). Covers the first [`DEDUP_PAIRS`] pairs; a hand-made store
/// longer than that keeps later duplicates (reads still take the last line).
fn superseded<P: Port>(port: &mut P) -> Result<u128, Errno> {
    let mut hashes = KeyHashes {
        hashes: [0; HASHED],
        len: 0,
        truncated: false,
    };
    let mut key = [0u8; KEY_MAX_BYTES];
    for pass in 0..2 {
        let Some(fd) = open_opt(port, MEMORY_PATH)? else {
            return Ok(0);
        };
        let mut reader = PairReader::new(fd);
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
            return Ok(gone);
        }
    }
    Ok(0)
}

/// Whether `key` is the key of a pair of the base after its first `index`.
fn appears_after<P: Port>(port: &mut P, key: &[u8], index: usize) -> Result<bool, Errno> {
    let Some(fd) = open_opt(port, MEMORY_PATH)? else {
        return Ok(false);
    };
    let mut reader = PairReader::new(fd);
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
