//! The persistent key/value store.
//!
//! # `/.bentoclaw_memory` — JSON Lines, one pair a line
//!
//! ```text
//! {"key":"name","value":"สมชาย"}
//! {"key":"city","value":"Chiang Mai"}
//! ```
//!
//! * A key is 1..=31 bytes of UTF-8, a value 0..=127 bytes (the C buffers are
//!   `CLAW_MEM_KEY_MAX` = 32 and `CLAW_MEM_VAL_MAX` = 128 with the NUL).
//! * The store holds at most [`MAX_ENTRIES`] keys; a new key beyond that is
//!   refused ("full"). Replacing a key is always possible.
//! * The store is not kept in RAM (that would cost 5 KB of a 4 KB budget):
//!   `get` streams the file, `set` streams the old file into
//!   `/.bentoclaw_memory.tmp` with the pair replaced or added, closes it and
//!   renames it over the store. The rename is the commit: a power cut or a
//!   failed write at any point leaves the old store exactly as it was.
//! * A reader skips lines that are not pairs (torn, garbage, invalid UTF-8,
//!   over-long). When a key appears twice (a hand-edited file), the last line
//!   wins, and the next `set` writes each key once; every valid pair is kept,
//!   even beyond the capacity.
//! * Setting a key to the value it already has writes nothing.

use crate::format::lines::{
    ByteReader, Line, LineWriter, Scalar, ScalarField, StrField, read_record,
};
use crate::port::{Errno, Fd, MEMORY_PATH, MEMORY_TMP_PATH, Mode, Port};

/// Keys the store holds (`CLAW_MEM_MAX_ENTRIES`).
pub(crate) const MAX_ENTRIES: usize = 32;
/// Longest key in bytes.
pub(crate) const KEY_MAX_BYTES: usize = 31;
/// Longest value in bytes.
pub(crate) const VAL_MAX_BYTES: usize = 127;
/// Key hashes `set` remembers for its duplicate pre-check (a file with more
/// pairs, only possible by hand, gets the exact check for the rest).
const HASHED: usize = MAX_ENTRIES;
/// Pairs among which duplicated keys are merged by a rewrite.
const DEDUP_PAIRS: usize = 128;

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

/// Forgets the whole store (the `wipe_memory` tool). A store that is not
/// there is already wiped.
pub fn wipe<P: Port>(port: &mut P) -> Result<(), Errno> {
    let _ = port.remove(MEMORY_TMP_PATH);
    match port.remove(MEMORY_PATH) {
        Ok(()) | Err(Errno::ENOENT) => Ok(()),
        Err(e) => Err(e),
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

/// One pair read from the file.
pub struct Pair {
    key: [u8; KEY_MAX_BYTES],
    key_len: u8,
    val: [u8; VAL_MAX_BYTES],
    val_len: u8,
    pinned: bool,
}

impl Pair {
    /// An empty pair to read into.
    pub fn new() -> Self {
        Self {
            key: [0; KEY_MAX_BYTES],
            key_len: 0,
            val: [0; VAL_MAX_BYTES],
            val_len: 0,
            pinned: false,
        }
    }

    /// Whether the pair is pinned (`"pin":true`).
    pub fn pinned(&self) -> bool {
        self.pinned
    }

    /// The key.
    pub fn key(&self) -> &[u8] {
        self.key.get(..usize::from(self.key_len)).unwrap_or(&[])
    }

    /// The value.
    pub fn value(&self) -> &[u8] {
        self.val.get(..usize::from(self.val_len)).unwrap_or(&[])
    }
}

impl Default for Pair {
    fn default() -> Self {
        Self::new()
    }
}

/// Reads the pairs of an open store file, one at a time.
pub struct PairReader {
    r: ByteReader,
    /// Whether a line was skipped (the file needs a rewrite).
    pub skipped: bool,
}

impl PairReader {
    /// Wraps an open descriptor.
    pub fn new(fd: Fd) -> Self {
        Self {
            r: ByteReader::new(fd),
            skipped: false,
        }
    }

    /// The key of the next valid pair (its value checked, not kept), or
    /// `None` at the end of the file.
    #[inline(never)]
    pub fn next_key<P: Port>(
        &mut self,
        port: &mut P,
        key: &mut [u8; KEY_MAX_BYTES],
    ) -> Result<Option<usize>, Errno> {
        loop {
            let mut strs = [
                StrField::new(b"key", key),
                StrField::counted(b"value", VAL_MAX_BYTES),
            ];
            let line = read_record(port, &mut self.r, &mut strs, &mut [])?;
            match line {
                Line::Eof => return Ok(None),
                Line::Record | Line::RecordAtEof if strs[0].len > 0 => {
                    return Ok(Some(strs[0].len));
                }
                _ => {}
            }
        }
    }

    /// The next valid pair, or `None` at the end of the file.
    pub fn next<P: Port>(&mut self, port: &mut P, pair: &mut Pair) -> Result<Option<()>, Errno> {
        loop {
            let mut strs = [
                StrField::new(b"key", &mut pair.key),
                StrField::new(b"value", &mut pair.val),
            ];
            // Pins exist for relevant recall only: a build without it reads
            // every pair as unpinned (and a rewrite drops the flag).
            #[cfg(feature = "recall")]
            let mut pin = [ScalarField {
                name: b"pin",
                value: Scalar::Absent,
            }];
            #[cfg(not(feature = "recall"))]
            let mut pin: [ScalarField; 0] = [];
            let line = read_record(port, &mut self.r, &mut strs, &mut pin)?;
            let (kl, vl) = (strs[0].len, strs[1].len);
            pair.pinned = pin.first().is_some_and(|p| p.value == Scalar::True);
            match line {
                Line::Eof => return Ok(None),
                Line::Record | Line::RecordAtEof if kl > 0 => {
                    if line == Line::RecordAtEof {
                        self.skipped = true;
                    }
                    // At most 31 and 127: the fields' limits.
                    pair.key_len = kl as u8;
                    pair.val_len = vl as u8;
                    return Ok(Some(()));
                }
                _ => self.skipped = true,
            }
        }
    }
}

/// Opens the store for reading; `None` when there is no store yet.
pub fn open_store<P: Port>(port: &mut P) -> Result<Option<Fd>, Errno> {
    match port.open(MEMORY_PATH, Mode::Read) {
        Ok(fd) => Ok(Some(fd)),
        Err(Errno::ENOENT) => Ok(None),
        Err(e) => Err(e),
    }
}

/// Calls `f` for each pair of the store in file order (duplicates included).
pub fn for_each<P: Port>(port: &mut P, mut f: impl FnMut(&Pair)) -> Result<(), Errno> {
    let Some(fd) = open_store(port)? else {
        return Ok(());
    };
    let mut reader = PairReader::new(fd);
    let mut pair = Pair::new();
    let res = loop {
        match reader.next(port, &mut pair) {
            Ok(Some(())) => f(&pair),
            Ok(None) => break Ok(()),
            Err(e) => break Err(e),
        }
    };
    let _ = port.close(fd);
    res
}

/// Copies the value of `key` into `out`; returns its length.
pub fn get<P: Port>(port: &mut P, key: &[u8], out: &mut [u8]) -> Result<usize, MemError> {
    validate(key, b"")?;
    let mut found: Option<usize> = None;
    let mut too_small = false;
    for_each(port, |p| {
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
    // FNV-1a folded to 16 bits: a pre-check only; equal hashes are
    // confirmed byte by byte.
    let mut h: u32 = 0x811c_9dc5;
    for &b in key {
        h = (h ^ u32::from(b)).wrapping_mul(0x0100_0193);
    }
    (h ^ (h >> 16)) as u16
}

/// Key hashes of the first [`HASHED`] pairs of the store.
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
    /// Store this value (a new key is added at the end; an existing key
    /// keeps its place and its pin).
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
}

// The passes of an edit stay out of line: each has its own pair buffer, and
// inlined into one frame they would add up on a 1 KiB stack budget.
#[inline(never)]
fn scan<P: Port>(port: &mut P, key: &[u8], value: &[u8], s: &mut Scan) -> Result<(), Errno> {
    let Some(fd) = open_store(port)? else {
        return Ok(());
    };
    let mut reader = PairReader::new(fd);
    let mut pair = Pair::new();
    let res = loop {
        match reader.next(port, &mut pair) {
            Ok(Some(())) => {
                // Maybe a duplicate: the rewrite pass decides.
                let h = hash(pair.key());
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
                }
            }
            Ok(None) => break Ok(()),
            Err(e) => break Err(e),
        }
    };
    s.skipped = reader.skipped;
    let _ = port.close(fd);
    res
}

/// Applies `e` to `key`: the old store is streamed into the temporary file
/// with the change made, which is then renamed over the store. A change
/// that changes nothing writes nothing.
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
    let gone = if s.maybe_dup {
        superseded(port, &s.hashes)?
    } else {
        0
    };
    let tmp = port.open(MEMORY_TMP_PATH, Mode::Write)?;
    let mut w = LineWriter::new(tmp);
    let copied = copy_pairs(port, &mut w, key, e, gone);
    let result = match copied {
        Ok((n, false)) if n >= MAX_ENTRIES => Err(MemError::Full),
        Ok((_, true)) => w.flush(port).map_err(MemError::Io),
        Ok((_, false)) => match e {
            Edit::Set(v) => write_pair(port, &mut w, key, v, false)
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
                Err(Errno::ENOENT) if landed(port, key, e, &mut s) => return Ok(()),
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

/// Copies the store, keeping only the last line of a duplicated key and
/// applying `e` to `key` in place. Returns how many other pairs were copied
/// and whether `key` existed.
#[inline(never)]
fn copy_pairs<P: Port>(
    port: &mut P,
    w: &mut LineWriter,
    key: &[u8],
    e: Edit<'_>,
    gone: u128,
) -> Result<(usize, bool), MemError> {
    let Some(fd) = open_store(port)? else {
        return Ok((0, false));
    };
    let mut reader = PairReader::new(fd);
    let mut pair = Pair::new();
    let mut index = 0usize;
    let mut copied = 0usize;
    let mut existed = false;
    let res = loop {
        match reader.next(port, &mut pair) {
            Ok(Some(())) => {
                index += 1;
                if gone & bit(index - 1) != 0 {
                    continue;
                }
                let written = if pair.key() == key {
                    existed = true;
                    match e {
                        Edit::Set(v) => write_pair(port, w, key, v, pair.pinned),
                        Edit::Forget => Ok(()),
                        #[cfg(feature = "recall")]
                        Edit::Pin(on) => write_pair(port, w, key, pair.value(), on),
                    }
                } else {
                    copied += 1;
                    write_pair(port, w, pair.key(), pair.value(), pair.pinned)
                };
                if let Err(e) = written {
                    break Err(MemError::Io(e));
                }
            }
            Ok(None) => break Ok((copied, existed)),
            Err(e) => break Err(MemError::Io(e)),
        }
    };
    let _ = port.close(fd);
    res
}

/// Whether `key` is the key of a pair after the first `index` pairs.
/// Bit `i` for pair index `i`, 0 past [`DEDUP_PAIRS`].
fn bit(i: usize) -> u128 {
    if i < DEDUP_PAIRS { 1 << i } else { 0 }
}

/// Pairs a later line with the same key supersedes: bit `i` for pair `i`.
/// A pass of its own, before the copy, so that its look-ahead reads are
/// not nested under the copy's pair buffer (1 KiB stack budget). Covers
/// the first [`DEDUP_PAIRS`] pairs; a hand-made store longer than that
/// keeps later duplicates (reads still take the last line).
#[inline(never)]
fn superseded<P: Port>(port: &mut P, hashes: &KeyHashes) -> Result<u128, Errno> {
    let Some(fd) = open_store(port)? else {
        return Ok(0);
    };
    let mut reader = PairReader::new(fd);
    let mut key = [0u8; KEY_MAX_BYTES];
    let mut index = 0usize;
    let mut gone = 0u128;
    let res = loop {
        match reader.next_key(port, &mut key) {
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
    res
}

#[inline(never)]
fn appears_after<P: Port>(port: &mut P, key: &[u8], index: usize) -> Result<bool, Errno> {
    let Some(fd) = open_store(port)? else {
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

fn write_pair<P: Port>(
    port: &mut P,
    w: &mut LineWriter,
    key: &[u8],
    value: &[u8],
    pinned: bool,
) -> Result<(), Errno> {
    w.raw(port, b"{\"key\":")?;
    w.string(port, key)?;
    w.raw(port, b",\"value\":")?;
    w.string(port, value)?;
    w.raw(port, if pinned { b",\"pin\":true}\n" } else { b"}\n" })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{MemPort, Op};

    fn recall(port: &mut MemPort, key: &str) -> Option<String> {
        let mut out = [0u8; 128];
        get(port, key.as_bytes(), &mut out)
            .ok()
            .map(|n| String::from_utf8(out[..n].to_vec()).unwrap())
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
        let file = String::from_utf8(port.get(MEMORY_PATH).unwrap()).unwrap();
        assert_eq!(file.lines().count(), 2);
        assert!(port.get(MEMORY_TMP_PATH).is_none());
    }

    #[test]
    fn limits() {
        let mut port = MemPort::new();
        let k31 = "k".repeat(31);
        let v127 = "v".repeat(127);
        assert!(set(&mut port, k31.as_bytes(), v127.as_bytes()).is_ok());
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
        let before = port.get(MEMORY_PATH);
        let writes = port.writes;
        assert_eq!(set(&mut port, b"new", b"v"), Err(MemError::Full));
        assert_eq!(port.get(MEMORY_PATH), before);
        assert_eq!(
            port.writes, writes,
            "a full store is refused without writing"
        );
        assert!(port.get(MEMORY_TMP_PATH).is_none());
        assert_eq!(set(&mut port, b"k3", b"changed"), Ok(()));
        assert_eq!(recall(&mut port, "k3").as_deref(), Some("changed"));
    }

    #[test]
    fn failures_leave_the_old_store() {
        for op in [Op::Open, Op::Write, Op::Close, Op::Rename] {
            let mut port = MemPort::new();
            set(&mut port, b"a", b"1").unwrap();
            let before = port.get(MEMORY_PATH);
            let n = if op == Op::Open { 1 } else { 0 }; // open #0 is the read
            port.fail(op, n, Errno::ENOSPC);
            assert_eq!(
                set(&mut port, b"b", b"2"),
                Err(MemError::Io(Errno::ENOSPC)),
                "{op:?}"
            );
            assert_eq!(port.get(MEMORY_PATH), before, "{op:?}");
            assert!(port.get(MEMORY_TMP_PATH).is_none(), "{op:?}");
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
            "{\"key\":\"b\",\"value\":\"x\"}\n{\"key\":\"a\",\"value\":\"new\"}\n{\"key\":\"d\",\"value\":\"4\"}\n"
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
        let file = String::from_utf8(port.get(MEMORY_PATH).unwrap()).unwrap();
        assert_eq!(
            file,
            "{\"key\":\"b\",\"value\":\"two\",\"pin\":true}\n{\"key\":\"c\",\"value\":\"3\"}\n",
            "a set keeps the key's place and pin"
        );
        pin(&mut port, b"b", false).unwrap();
        let mut pinned = Vec::new();
        for_each(&mut port, |p| pinned.push(p.pinned())).unwrap();
        assert_eq!(pinned, [false, false]);
    }

    #[test]
    fn a_rename_that_landed_but_reported_an_error_is_a_success() {
        let mut port = MemPort::new();
        set(&mut port, b"a", b"1").unwrap();
        // The rename happens, then its read-back fails.
        port.fail_after(Op::Rename, 0, Errno::EIO);
        assert_eq!(set(&mut port, b"a", b"2"), Ok(()));
        assert_eq!(recall(&mut port, "a").as_deref(), Some("2"));
        // A rename that did not happen stays a failure, store as before.
        port.fail(Op::Rename, 0, Errno::EIO);
        assert_eq!(set(&mut port, b"a", b"3"), Err(MemError::Io(Errno::EIO)));
        assert_eq!(recall(&mut port, "a").as_deref(), Some("2"));
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
}
