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
//!   refused ("full") before anything is written. Replacing a key is always possible. A store with
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
//!   whole with `"wb"` where the port says the file system commits a file
//!   at close (`claw_port_atomic_write`: littlefs), through a temp file and a
//!   rename elsewhere (FAT, a Python file system): a power cut leaves the
//!   old shard or the new one (a single 256-byte page for a shard of up to
//!   220 bytes). A shard whose header names another generation is stale
//!   and ignored.
//! * **When a shard would pass 220 bytes or 6 records ("fold")**, the merged
//!   store is written to `/.bentoclaw_memory.tmp` under `{"seq":G+1}` (the
//!   generation past the newest any file names) and renamed over the base:
//!   one rename commits it, and every shard is stale from then on.
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
//!   of any number never comes back; a change to a store of generation 0
//!   (that one, a seed-form base, no base) first removes every shard (all
//!   stale), then folds to the generation after the newest a file still
//!   names (1 once they are gone).
//! * A reader skips lines that are not records (torn, garbage, invalid UTF-8,
//!   over-long). When a key appears twice in the base (a hand-edited file),
//!   the last line wins, and the next `set` folds, writing each key once.
//! * Setting a key to the value it already has writes nothing.
//! * A commit that landed but reported an error (littlefs reads a commit
//!   back) is told apart by reading the store: when it holds the edit, the
//!   call succeeds, so `false` always means "as before".

use core::ffi::CStr;

use crate::format::lines::NO_FD;
pub use crate::format::memory::Pair;
use crate::format::memory::{KeyRec, PairReader};
use crate::port::{Errno, Fd, MEMORY_TMP_PATH, Port};

mod edit;
mod fold;
mod hash;
mod load;
mod plan;
mod reader;
mod shard;

pub use edit::edit;
use fold::{newest, retire};
pub use hash::shard_of;
use reader::{Loc, Pass, ValueAt, read_at};

/// Keys the store holds (`CLAW_MEM_MAX_ENTRIES`).
pub(crate) const MAX_ENTRIES: usize = 32;
pub(crate) use crate::format::memory::{KEY_MAX_BYTES, VAL_MAX_BYTES};
/// Key hashes `set` remembers for its duplicate pre-check (a file with more
/// pairs, only possible by hand, gets the exact check for the rest).
const HASHED: usize = MAX_ENTRIES;
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
/// Records the shards of one generation hold at most (8 shards).
const ENTRIES: usize = SHARDS * SHARD_RECORDS;
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
/// [`Store::phase`]: the part being read in bits 0-1 ([`PART`]), and a
/// check above them ([`OVERFLOW`]). A check of the pair just read parks
/// its file reopened at the pair's start (the start in
/// [`Store::base_off`]: [`Store::begin_override`]'s way), and the reader
/// reads the shard (from its start for a pair of the base, on from the
/// pair for a pair of the shard) up to a record of the pair's key
/// (`DROP`) or the shard's end (`KEEP`); then the parked file takes the
/// reader slot back and reads the pair again: left out, or returned as it
/// is. A check knows the key by its length ([`Store::seek`]) and its
/// 32-bit FNV-1a hash ([`Store::last_fnv`]): no second key buffer on the
/// stack of every pass (the index knows a shard's keys by 16 bits).
const SCAN: u8 = 3 << 2;
const KEEP: u8 = 1 << 2;
const DROP: u8 = 2 << 2;
/// [`Store::phase`]'s bits that name the part being read: the base's pairs
/// (`PART_BASE`), the keys new since the base (`PART_NEW`), the shards the
/// index could not hold (`PART_UNINDEXED`, see [`OVERFLOW`]), the end
/// (`PART_END`).
const PART: u8 = 3;
const PART_BASE: u8 = 0;
const PART_NEW: u8 = 1;
const PART_UNINDEXED: u8 = 2;
const PART_END: u8 = 3;

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
pub fn wipe<P: Port>(port: &mut P) -> Result<(), Errno> {
    let _ = port.remove(MEMORY_TMP_PATH);
    match newest(port)? {
        Some(generation) => retire(port, generation),
        None => Ok(()),
    }
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
    /// Where the reader is in a shard it seeks an entry in.
    seek: Seek,
    /// Where a load is.
    ld: LoadAt,
}

/// [`Store::seek`]: whether the reader holds a shard, read up to entry `j`
/// (the next record being entry `k`). After a pair of the new keys, `j` is
/// the entry it was read from.
struct Seek {
    on: bool,
    k: u8,
    j: u8,
}

/// [`Store::ld`]: the file a load reads (0: the base, then the shards),
/// whether its first record is next, its first entry, its next entry and
/// its largest `"n"` so far.
struct LoadAt {
    file: u8,
    first: bool,
    from: u8,
    j: u8,
    max_n: u8,
}

impl Store {
    /// Reads the base's generation and the shards' keys.
    pub fn open<P: Port>(port: &mut P) -> Result<Store, Errno> {
        let mut s = Store::new();
        s.load_with(port, &mut Pair::new())?;
        Ok(s)
    }

    /// A store not read yet. (One copy of its set-up, written in place:
    /// code size.)
    #[inline(never)] // stack: see docs/STACK.md
    pub const fn new() -> Store {
        Store {
            reader: None,
            phase: PART_BASE,
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
            seek: Seek {
                on: false,
                k: 0,
                j: 0,
            },
            ld: LoadAt {
                file: 0,
                first: false,
                from: 0,
                j: 0,
                max_n: 0,
            },
        }
    }

    /// [`Store::open`] in place (no copy of the struct between frames).
    pub fn load<P: Port>(&mut self, port: &mut P) -> Result<(), Errno> {
        self.load_with(port, &mut Pair::new())
    }

    /// The next pair of the merged store, or `None` at its end.
    #[inline(always)] // stack: see docs/STACK.md
    pub fn next<P: Port>(&mut self, port: &mut P, pair: &mut Pair) -> Result<Option<()>, Errno> {
        let got = self
            .step(port, &mut pair.key, &mut pair.val, Pass::Resolve)
            .get()?;
        (pair.key_len, pair.val_len, pair.pinned) = self.got;
        Ok(got.at().map(|_| ()))
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
        self.seek.on = false;
    }
}

impl Default for Store {
    fn default() -> Self {
        Self::new()
    }
}

/// Calls `f` for each pair of the merged store (base duplicates included).
/// Generic, not `dyn`: a closure called through a pointer is an
/// indirect call, which a stack bound charges with the deepest function
/// whose address is taken.
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
#[inline(never)] // stack: see docs/STACK.md
fn find<P: Port>(port: &mut P, key: &[u8]) -> Result<Option<Loc>, Errno> {
    let mut store = Store::new();
    let mut k = KeyRec::new();
    store.load_with(port, &mut k)?;
    let mut at = None;
    let res = loop {
        match store.next_key(port, &mut k) {
            Ok(Some(value)) => {
                if k.key() == key {
                    at = Some(match value {
                        ValueAt::Entry(j) => store.entry_at(j),
                        ValueAt::Line => store.last_at(),
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

/// Calls `f` with the pair at `at`.
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
fn nth<P: Port>(port: &mut P, index: usize) -> Result<Option<Loc>, Errno> {
    let mut store = Store::new();
    let mut k = KeyRec::new();
    store.load_with(port, &mut k)?;
    let mut i = 0usize;
    let mut at = None;
    let res = loop {
        match store.next_key(port, &mut k) {
            Ok(Some(value)) => {
                if i == index {
                    at = Some(match value {
                        ValueAt::Entry(j) => store.entry_at(j),
                        ValueAt::Line => store.last_at(),
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

/// [`set`], [`forget`] or [`pin`] (by `e`): one entry for the exports that
/// edit.
pub fn apply<P: Port>(port: &mut P, key: &[u8], e: Edit<'_>) -> Result<(), MemError> {
    let value = match e {
        Edit::Set(v) => v,
        _ => b"",
    };
    validate(key, value)?;
    edit(port, key, e)
}

#[cfg(test)]
mod reference;

#[cfg(test)]
mod tests;
