//! The fold (the merged store with an edit made, written as the base of
//! the next generation, which retires every shard) and its passes that
//! find the base's superseded pairs; and the wipe's load and writes.

use core::ffi::CStr;

use super::hash::hash;
use super::plan::{Check, Outcome};
use super::reader::{open_opt, put_reader};
use super::{Edit, HASHED, MAX_ENTRIES, MemError, SHARD_PATHS, Store};
use crate::format::lines::LineWriter;
use crate::format::memory::{
    KEY_MAX_BYTES, Pair, PairReader, Rec, VAL_MAX_BYTES, write_header, write_pair,
};
use crate::kernel::packed::out_of_line;
use crate::port::{Errno, MEMORY_PATH, MEMORY_TMP_PATH, Mode, Port};

/// Pairs among which duplicated keys are merged by a rewrite.
const DEDUP_PAIRS: usize = 128;

/// [`wipe`](super::wipe)'s load: the newest generation the files name (the largest of
/// the base's and the shards' headers, as a load finds it), `None` when
/// there is neither a base nor a shard. Only each file's first record is
/// read: no store state, no pair buffer.
pub(super) fn newest<P: Port>(port: &mut P) -> Result<Option<u32>, Errno> {
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

/// [`wipe`](super::wipe)'s writes: an empty base past `generation`, then the files
/// removed.
pub(super) fn retire<P: Port>(port: &mut P, generation: u32) -> Result<(), Errno> {
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

/// The fold: the merged store with the edit made, under the next
/// generation, through the temporary file and a rename; out of line.
pub(super) fn fold<P: Port>(port: &mut P, key: &[u8], e: Edit<'_>, gone: &Gone) -> Outcome {
    out_of_line(port, key, &e, gone, |port, key, e, gone| {
        fold_in(port, key, *e, gone).map(|()| false)
    })
}

/// [`fold`]'s body.
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

/// Writes the header of the next generation (after the newest the load
/// finds: the header is buffered, no write before the load's reads) and
/// copies the merged store, keeping only the last line of a key the base
/// holds twice and applying `e` to `key` in place (a new key set last;
/// `Full` when there are [`MAX_ENTRIES`] others, else `NotFound` for a
/// key not there to forget or pin).
#[inline(always)] // size: see docs/STACK.md
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
fn put<P: Port>(port: &mut P, w: &mut LineWriter, pair: &Pair) -> Result<(), Errno> {
    write_pair(port, w, pair.key(), pair.value(), pair.pinned, 0)
}

/// Whether `gone` holds base pair `n - 1` (out of line: the fold's loop
/// keeps a pointer, not the four words).
#[inline(never)] // stack: see docs/STACK.md
fn is_gone(gone: &Gone, n: u16) -> bool {
    let i = usize::from(n).saturating_sub(1);
    gone.0.get(i / 32).is_some_and(|w| w >> (i % 32) & 1 != 0)
}

/// The base's pairs a fold leaves out (a later line has their key): bit
/// `i % 32` of word `i / 32` for pair `i` (words: no 8-byte alignment on
/// the frames that hold it).
pub(super) struct Gone(pub(super) [u32; 4]);

/// Bit `i` for pair index `i`, 0 past [`DEDUP_PAIRS`].
fn bit(i: usize) -> u128 {
    if i < DEDUP_PAIRS { 1 << i } else { 0 }
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

/// Pairs of the base a later line with the same key supersedes, into
/// `out` (left as it is when there is no base): bit `i` for its pair `i`. Passes of their own, before the copy, so that the
/// look-ahead reads are not nested under the copy's pair buffer (1 KiB
/// stack budget). Covers the first [`DEDUP_PAIRS`] pairs; a hand-made store
/// longer than that keeps later duplicates (reads still take the last line).
#[inline(never)] // stack: see docs/STACK.md
pub(super) fn superseded<P: Port>(port: &mut P, out: &mut Gone) -> Result<(), Errno> {
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
