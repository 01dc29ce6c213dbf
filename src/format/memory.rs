//! The memory store's records (see [`crate::format`] for the files): a pair
//! `{"key":…,"value":…}` (`"pin":true` when pinned; `"n":N` in a shard for a
//! key new since the base), a forgotten key `{"key":…,"del":true}`, and a
//! generation header `{"seq":G}`. [`PairReader`] reads them one at a time
//! from an open file; the `write_*` functions write them. Which file gets
//! which record, and when a store folds, is [`crate::memory`]'s business.

use crate::format::lines::{
    ByteReader, Line, LineWriter, Scalar, ScalarField, StrField, read_record,
};
use crate::kernel::packed::{Packed, Tagged, out_of_line};
use crate::port::{Errno, Fd, Port};

/// The string fields' names.
const KEY: &[u8] = b"key";
const VALUE: &[u8] = b"value";

/// Longest key in bytes.
pub(crate) const KEY_MAX_BYTES: usize = 31;
/// Longest value in bytes.
pub(crate) const VAL_MAX_BYTES: usize = 127;

/// One pair read from the file.
pub struct Pair {
    pub(crate) key: [u8; KEY_MAX_BYTES],
    pub(crate) key_len: u8,
    pub(crate) val: [u8; VAL_MAX_BYTES],
    pub(crate) val_len: u8,
    pub(crate) pinned: bool,
}

impl Pair {
    /// An empty pair to read into.
    pub const fn new() -> Self {
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

/// One record's key, its value checked and counted but not kept: a pass
/// that wants the value of one key reads it again where it found it,
/// rather than hold a value buffer for every line.
#[repr(align(4))]
pub struct KeyRec {
    pub(crate) key: [u8; KEY_MAX_BYTES],
    pub(crate) key_len: u8,
    pub(crate) val_len: u8,
    pub(crate) pinned: bool,
}

impl KeyRec {
    /// An empty record to read into.
    pub const fn new() -> Self {
        Self {
            key: [0; KEY_MAX_BYTES],
            key_len: 0,
            val_len: 0,
            pinned: false,
        }
    }

    /// The key.
    pub fn key(&self) -> &[u8] {
        self.key.get(..usize::from(self.key_len)).unwrap_or(&[])
    }
}

impl Default for KeyRec {
    fn default() -> Self {
        Self::new()
    }
}

/// What a line of a store file is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Rec {
    /// A pair (in the `Pair` read into), with its place among the keys
    /// new since the base (`"n"`, shards only; 0 when absent).
    Pair(u8),
    /// A forgotten key (its key in the `Pair`).
    Del,
    /// A generation header.
    Header(u32),
}

/// The scalar fields of a store record, built once (a copy a record); the
/// most frequent first (a scalar read is looked up in this order): a new
/// key's `"n"`, a header's `"seq"`.
// Pins exist for relevant recall only: a build without it reads every pair
// as unpinned (and a rewrite drops the flag).
const EXTRA: [ScalarField; 4] = [
    ScalarField::new(b"n"),
    ScalarField::new(b"seq"),
    ScalarField::new(b"del"),
    ScalarField::new(if cfg!(feature = "recall") {
        b"pin"
    } else {
        b""
    }),
];
/// Where each field is in [`EXTRA`].
const N: usize = 0;
const SEQ: usize = 1;
const DEL: usize = 2;
const PIN: usize = 3;

/// What [`PairReader::rec`] gives back: the record, the key's and the
/// value's length, whether pinned; `None` at the end of the file.
pub(crate) type Got = Option<(Rec, u8, u8, bool)>;

/// [`Got`] packed ([`Packed`]): the high word's low byte is what (1: the
/// end, 2: a pair, 3: a forgotten key, 4: a header; 0 is an error's), its
/// next bytes the key's and the value's length and whether pinned; the low
/// word the pair's `n` or the header's generation.
impl Tagged for Got {
    #[inline(always)] // stack: see docs/STACK.md
    fn tag(self) -> (u32, u32) {
        let (tag, low, kl, vl, pinned) = match self {
            None => (1, 0, 0, 0, false),
            Some((rec, kl, vl, pinned)) => {
                let (tag, low) = match rec {
                    Rec::Pair(n) => (2, u32::from(n)),
                    Rec::Del => (3, 0),
                    Rec::Header(g) => (4, g),
                };
                (tag, low, kl, vl, pinned)
            }
        };
        (u32::from_le_bytes([tag, kl, vl, u8::from(pinned)]), low)
    }

    #[inline(always)] // stack: see docs/STACK.md
    fn untag(high: u32, low: u32) -> Self {
        let [tag, kl, vl, pinned] = high.to_le_bytes();
        let rec = match tag {
            1 => return None,
            2 => Rec::Pair(low as u8),
            3 => Rec::Del,
            _ => Rec::Header(low),
        };
        Some((rec, kl, vl, pinned != 0))
    }
}

/// Reads the records of an open store file, one at a time.
pub struct PairReader<'a> {
    r: ByteReader<'a>,
    /// Whether a line was skipped (the file needs a rewrite).
    pub skipped: bool,
}

impl<'a> PairReader<'a> {
    /// Wraps an open descriptor.
    pub fn new(fd: Fd) -> Self {
        Self::of(ByteReader::new(fd))
    }

    /// Reads `data` in RAM.
    pub fn over(data: &'a [u8]) -> Self {
        Self::of(ByteReader::over(data))
    }

    fn of(r: ByteReader<'a>) -> Self {
        Self { r, skipped: false }
    }

    /// The open file.
    pub(crate) fn fd(&self) -> Fd {
        self.r.fd()
    }

    /// Bytes of the file consumed so far.
    pub(crate) fn offset(&self) -> u32 {
        self.r.offset()
    }

    /// The key of the next valid pair (its value checked, not kept), or
    /// `None` at the end of the file.
    pub fn next_key<P: Port>(
        &mut self,
        port: &mut P,
        key: &mut [u8; KEY_MAX_BYTES],
    ) -> Result<Option<usize>, Errno> {
        loop {
            let mut strs = [
                StrField::new(&KEY, key),
                StrField::counted(&VALUE, VAL_MAX_BYTES),
            ];
            let line = read_record(port, &mut self.r, &mut strs, &mut [])?;
            match line {
                Line::Eof => return Ok(None),
                Line::Record | Line::RecordAtEof if strs[0].len > 0 => {
                    return Ok(Some(usize::from(strs[0].len)));
                }
                _ => {}
            }
        }
    }

    /// The next record into `key` and `val` (an empty `val`: the value is
    /// checked, not kept): (what, key length, value length, pinned).
    // One copy for every reader of a record (code size); the store's
    // passes call it straight from their frame (`memory::Slot`), so it is
    // not a frame more on their stack paths.
    #[inline(always)] // stack: see docs/STACK.md
    pub(crate) fn rec<P: Port>(
        &mut self,
        port: &mut P,
        key: &mut [u8; KEY_MAX_BYTES],
        val: &mut [u8],
    ) -> Result<Got, Errno> {
        self.rec_word(port, key, val).get()
    }

    /// [`PairReader::rec`]'s one body, out of line, its result packed.
    pub(crate) fn rec_word<P: Port>(
        &mut self,
        port: &mut P,
        key: &mut [u8; KEY_MAX_BYTES],
        val: &mut [u8],
    ) -> Packed<Result<Got, Errno>> {
        out_of_line((self, port), key, val, (), |(me, port), key, val, ()| {
            me.rec_in(port, key, val)
        })
    }

    /// [`PairReader::rec`] inlined (a reader of its own port type: the
    /// shard bytes an edit parses from a buffer).
    #[inline(always)] // stack: see docs/STACK.md
    pub(crate) fn rec_in<P: Port>(
        &mut self,
        port: &mut P,
        key: &mut [u8; KEY_MAX_BYTES],
        val: &mut [u8],
    ) -> Result<Got, Errno> {
        loop {
            let mut value = if val.is_empty() {
                StrField::counted(&VALUE, VAL_MAX_BYTES)
            } else {
                StrField::new(&VALUE, &mut *val)
            };
            value.required = false;
            let mut strs = [StrField::optional(&KEY, key), value];
            let mut extra = EXTRA;
            let line = read_record(port, &mut self.r, &mut strs, &mut extra)?;
            let [k, v] = &strs;
            let rec = match (
                k.seen,
                k.len > 0,
                v.seen,
                extra[DEL].value(),
                extra[SEQ].value(),
            ) {
                (true, true, true, _, _) => Some(Rec::Pair(extra[N].value().uint().min(255) as u8)),
                (true, true, false, Scalar::True, _) => Some(Rec::Del),
                (false, _, false, _, Scalar::Uint(g)) => Some(Rec::Header(g)),
                _ => None,
            };
            match (line, rec) {
                (Line::Eof, _) => return Ok(None),
                (Line::Record | Line::RecordAtEof, Some(rec)) => {
                    if line == Line::RecordAtEof {
                        self.skipped = true;
                    }
                    // At most 31 and 127: the fields' limits.
                    let pinned = extra[PIN].value() == Scalar::True;
                    return Ok(Some((rec, k.len, v.len, pinned)));
                }
                _ => self.skipped = true,
            }
        }
    }

    /// The next record, or `None` at the end of the file.
    pub(crate) fn record<P: Port>(
        &mut self,
        port: &mut P,
        pair: &mut Pair,
    ) -> Result<Option<Rec>, Errno> {
        let got = self.rec(port, &mut pair.key, &mut pair.val)?;
        Ok(got.map(|(rec, kl, vl, pinned)| {
            pair.key_len = kl;
            pair.val_len = vl;
            pair.pinned = pinned;
            rec
        }))
    }

    /// The next valid pair, or `None` at the end of the file.
    pub fn next<P: Port>(&mut self, port: &mut P, pair: &mut Pair) -> Result<Option<()>, Errno> {
        loop {
            match self.record(port, pair)? {
                None => return Ok(None),
                Some(Rec::Pair(_)) => return Ok(Some(())),
                Some(_) => {}
            }
        }
    }
}

/// A generation header, `{"seq":G}`.
pub(crate) fn write_header<P: Port>(
    port: &mut P,
    w: &mut LineWriter,
    generation: u32,
) -> Result<(), Errno> {
    w.raw(port, b"{\"seq\":")?;
    w.uint(port, generation)?;
    w.raw(port, b"}\n")
}

/// A pair line, `{"key":…,"value":…}`, with `"pin":true` when pinned and,
/// in a shard, `"n":N` (1..) for its place among the keys new since the base
/// (omitted when `n` is 0).
pub(crate) fn write_pair<P: Port>(
    port: &mut P,
    w: &mut LineWriter,
    key: &[u8],
    value: &[u8],
    pinned: bool,
    n: u8,
) -> Result<(), Errno> {
    w.raw(port, b"{\"key\":")?;
    w.string(port, key)?;
    w.raw(port, b",\"value\":")?;
    w.string(port, value)?;
    if pinned {
        w.raw(port, b",\"pin\":true")?;
    }
    if n != 0 {
        w.raw(port, b",\"n\":")?;
        w.uint(port, u32::from(n))?;
    }
    w.raw(port, b"}\n")
}

/// A forgotten key, `{"key":…,"del":true}`.
pub(crate) fn write_del<P: Port>(
    port: &mut P,
    w: &mut LineWriter,
    key: &[u8],
) -> Result<(), Errno> {
    w.raw(port, b"{\"key\":")?;
    w.string(port, key)?;
    w.raw(port, b",\"del\":true}\n")
}
