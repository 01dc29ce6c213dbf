//! A streaming JSON Lines reader and writer for flat records.
//!
//! Both files of the core are JSON Lines whose records are flat objects of
//! strings and scalars. Records are parsed straight from the file into the
//! caller's fixed buffers, one byte at a time: no line buffer, no recursion,
//! no heap. A line that is not such a record — garbage, a torn tail, invalid
//! UTF-8, nested arrays or objects, a string longer than its buffer, a 100 KB
//! line — is skipped up to its newline and reported as [`Line::Skipped`];
//! the records around it survive.
//!
//! Why not serde-json-core: it needs the whole line in a buffer (a session
//! line can be 1.5 KB once escaped) and its escaped-string support still
//! needs a second buffer to unescape into; see `docs/DESIGN.md` for the
//! measured code size of both approaches.

use crate::port::{Errno, Fd, Port};

/// Bytes read from the port per call.
const READ_CHUNK: usize = 64;
// [`ByteReader`] keeps its place in a chunk in a byte.
const _: () = assert!(READ_CHUNK <= u8::MAX as usize);
/// Bytes collected before a port write.
const WRITE_CHUNK: usize = 32;
/// Longest field name that is matched; longer names are skipped as unknown
/// (after the same checks). At least the longest name a caller asks for:
/// `"content"`, 7 bytes; kept small, it sits on every parse's deepest frame.
const NAME_MAX: usize = 8;
/// A machine word's bytes.
const W: usize = core::mem::size_of::<usize>();

/// A descriptor no port hands out (they are never negative): a
/// [`ByteReader`] over bytes in RAM ([`ByteReader::over`]), a [`LineWriter`]
/// that only counts ([`LineWriter::written`]: the size of what it would
/// write). So the reader and the writer are compiled once, for the one real
/// port, and call it directly.
pub const NO_FD: Fd = -1;

/// Reads a file through the port in small chunks, or bytes already in RAM.
pub struct ByteReader<'a> {
    src: Source<'a>,
    buf: [u8; READ_CHUNK],
    // One byte each (a chunk is 64 bytes): every frame that holds a reader
    // is on a load's deepest path.
    pos: u8,
    len: u8,
    eof: bool,
    /// The offset of the chunk's first byte (consuming a byte is one
    /// increment: `pos`).
    base: u32,
    /// The last byte of the previous chunk.
    last: u8,
}

/// Where a [`ByteReader`]'s bytes come from: the descriptor in the slice's
/// place (8 bytes, not 12).
enum Source<'a> {
    /// An open file ([`NO_FD`]: an empty one).
    Fd(Fd),
    /// Bytes in RAM: those not read yet.
    Ram(&'a [u8]),
}

impl<'a> ByteReader<'a> {
    /// Wraps an open descriptor ([`NO_FD`]: an empty file).
    pub fn new(fd: Fd) -> Self {
        Self::with(Source::Fd(fd))
    }

    /// Reads `data` (the port is not called).
    pub fn over(data: &'a [u8]) -> Self {
        Self::with(Source::Ram(data))
    }

    fn with(src: Source<'a>) -> Self {
        Self {
            src,
            buf: [0; READ_CHUNK],
            pos: 0,
            len: 0,
            eof: false,
            base: 0,
            last: 0,
        }
    }

    /// The descriptor, for closing ([`NO_FD`] over RAM).
    pub fn fd(&self) -> Fd {
        match self.src {
            Source::Fd(fd) => fd,
            Source::Ram(_) => NO_FD,
        }
    }

    /// Offset of the next byte.
    pub fn offset(&self) -> u32 {
        self.base.saturating_add(u32::from(self.pos))
    }

    /// The last byte consumed (0 before the first).
    fn last(&self) -> u8 {
        match usize::from(self.pos).checked_sub(1) {
            Some(i) => self.buf.get(i).copied().unwrap_or(0),
            None => self.last,
        }
    }

    #[inline(always)]
    fn peek<P: Port + ?Sized>(&mut self, port: &mut P) -> Result<Option<u8>, Errno> {
        if self.pos >= self.len {
            self.refill(port)?;
        }
        // Still nothing buffered: the end of the file.
        Ok(self
            .buf
            .get(usize::from(self.pos)..usize::from(self.len))
            .and_then(|b| b.first())
            .copied())
    }

    /// Reads the next chunk (the end of the file: none). The only caller of
    /// the port, kept out of line and small: it is the bottom of every
    /// parse's deepest call chain.
    #[inline(never)]
    fn refill<P: Port + ?Sized>(&mut self, port: &mut P) -> Result<(), Errno> {
        if self.eof {
            return Ok(());
        }
        // The chunk is consumed: what is kept of it.
        self.last = self.last();
        self.base = self.base.saturating_add(u32::from(self.pos));
        self.pos = 0;
        self.len = 0;
        let n = match &mut self.src {
            Source::Ram(ram) => {
                let (now, rest) = ram.split_at_checked(READ_CHUNK).unwrap_or((ram, &[]));
                copy_chunk(&mut self.buf, now);
                *ram = rest;
                now.len()
            }
            Source::Fd(NO_FD) => 0,
            Source::Fd(fd) => port.read_chunk(*fd, &mut self.buf)?,
        };
        if n == 0 || n > self.buf.len() {
            self.eof = true;
            return Ok(());
        }
        self.len = n as u8;
        Ok(())
    }

    // Out of line (as `consume`): inlined at its twenty-odd calls it costs
    // 600 bytes of flash.
    #[inline(never)]
    fn bump(&mut self) {
        if self.pos < self.len {
            self.pos += 1;
        }
    }

    #[inline(always)]
    fn next<P: Port + ?Sized>(&mut self, port: &mut P) -> Result<Option<u8>, Errno> {
        let b = self.peek(port)?;
        self.bump();
        Ok(b)
    }

    /// The bytes buffered and not consumed yet.
    #[inline(always)]
    fn chunk(&self) -> &[u8] {
        self.buf
            .get(usize::from(self.pos)..usize::from(self.len))
            .unwrap_or(&[])
    }

    /// The bytes buffered and not consumed yet, reading the next chunk
    /// first when there are none (none: the end of the file).
    #[inline(always)]
    fn fill<P: Port + ?Sized>(&mut self, port: &mut P) -> Result<&[u8], Errno> {
        if self.pos >= self.len {
            self.refill(port)?;
        }
        Ok(self.chunk())
    }

    /// Consumes the first `n` bytes of [`ByteReader::chunk`], `n` at most
    /// its length (inlined: one addition; `pass(1)` after a peek that
    /// found a byte is a [`ByteReader::bump`] without its call).
    #[inline(always)]
    fn pass(&mut self, n: usize) {
        self.pos = self.pos.wrapping_add(n as u8);
    }

    /// Consumes the first `n` bytes of [`ByteReader::chunk`].
    #[inline(never)]
    fn consume(&mut self, n: usize) {
        let n = n.min(usize::from(self.len.saturating_sub(self.pos)));
        self.pos += n as u8;
    }

    /// Consumes bytes up to offset `to` (or the end of the file).
    pub fn skip_to<P: Port + ?Sized>(&mut self, port: &mut P, to: u32) -> Result<(), Errno> {
        while self.offset() < to && self.peek(port)?.is_some() {
            let want = (to - self.offset()) as usize;
            self.consume(want.min(self.chunk().len()));
        }
        Ok(())
    }
}

/// Copies `src` (at most a chunk) to the start of `dst` (as much as fits)
/// a word at a time, then the last bytes: inline loads and stores without
/// a `memcpy` call, whose frames (64 to 88 bytes with its callers) would
/// sit at the bottom of every parse's deepest path.
#[inline(always)]
fn copy_chunk(dst: &mut [u8], src: &[u8]) {
    let n = dst.len().min(src.len());
    let mut i = 0usize;
    while let (Some(d), Some(s)) = (dst.get_mut(i..i + W), src.get(i..i + W)) {
        if let (Ok(d), Ok(s)) = (<&mut [u8; W]>::try_from(d), <&[u8; W]>::try_from(s)) {
            *d = *s;
        }
        i += W;
    }
    // The last bytes: the word that ends with them (again over bytes
    // already copied), when there is one.
    let end = n.wrapping_sub(W)..n;
    if let (Some(d), Some(s)) = (dst.get_mut(end.clone()), src.get(end)) {
        if let (Ok(d), Ok(s)) = (<&mut [u8; W]>::try_from(d), <&[u8; W]>::try_from(s)) {
            *d = *s;
        }
        return;
    }
    while i < n {
        if let (Some(d), Some(&s)) = (dst.get_mut(i), src.get(i)) {
            *d = s;
        }
        i += 1;
    }
}

/// [`copy_chunk`] out of line, for a string's bytes (a leaf under the
/// parse; one copy of it in flash) and the bytes the writer buffers.
#[inline(never)]
fn copy_run(dst: &mut [u8], src: &[u8]) {
    copy_chunk(dst, src);
}

/// The length of the run of plain string bytes (not `"`, `\\`, nor below
/// 0x20) at the start of `s`, and whether they are all ASCII: a machine
/// word a step while none is special.
fn plain_len(s: &[u8]) -> (usize, bool) {
    plain_len_in(s)
}

/// [`plain_len`] inlined: in a string's decode, once a chunk.
#[inline(always)]
fn plain_len_in(s: &[u8]) -> (usize, bool) {
    const LO: usize = usize::MAX / 0xFF;
    const HI: usize = LO << 7;
    let mut i = 0usize;
    let mut seen = 0usize;
    while let Some(w) = s.get(i..i + W).and_then(|w| <[u8; W]>::try_from(w).ok()) {
        let v = usize::from_le_bytes(w);
        let special = specials(v);
        if special != 0 {
            // The bytes below the first special one.
            let bits = special.trailing_zeros() & !7;
            let below = (1usize << bits).wrapping_sub(1);
            return (i + bits as usize / 8, (seen | (v & below)) & HI == 0);
        }
        seen |= v;
        i += W;
    }
    while let Some(&c) = s.get(i) {
        if c < 0x20 || c == b'"' || c == b'\\' {
            break;
        }
        seen |= usize::from(c);
        i += 1;
    }
    (i, seen & HI == 0)
}

/// The bytes of the word `v` that end a run of plain string bytes (below
/// 0x20, `"` or `\\`): their high bits (exact up to the first one: a
/// borrow only makes the bytes above it look special).
#[inline(always)]
fn specials(v: usize) -> usize {
    const LO: usize = usize::MAX / 0xFF;
    let (q, b) = (v ^ (0x22 * LO), v ^ (0x5C * LO));
    ((v.wrapping_sub(0x20 * LO) & !v) | (q.wrapping_sub(LO) & !q) | (b.wrapping_sub(LO) & !b))
        & (LO << 7)
}

/// A field name that is a run of plain ASCII bytes and its closing quote
/// within the first word of `s` (after the opening quote): its length and
/// that word (the name's bytes are its first ones, as [`decode_string`]
/// would give them: without a pass of its loop and a copy); `None` for any
/// other (it decodes them).
#[inline(always)]
fn quick_name(s: &[u8]) -> Option<(usize, [u8; W])> {
    let w = *s.first_chunk::<W>()?;
    let v = usize::from_le_bytes(w);
    // Its first byte that is special or not ASCII (exact: see `specials`).
    let stop = specials(v) | v & (usize::MAX / 0xFF) << 7;
    let bits = stop.trailing_zeros() & !7;
    if stop == 0 || (v >> bits) as u8 != b'"' {
        return None;
    }
    Some((bits as usize / 8, w))
}

/// A string field the caller wants decoded into its buffer (or only
/// checked, see [`StrField::counted`]).
pub struct StrField<'a> {
    /// The field name in the file (a reference to a `&'static [u8]`
    /// constant: a word, not a slice's two; 16 bytes a field).
    pub name: &'static &'static [u8],
    /// Where the decoded UTF-8 goes.
    pub buf: &'a mut [u8],
    /// Decoded length, valid when `seen`.
    pub len: u8,
    /// Longest decoded length accepted (a byte each, 20 bytes a field: a
    /// record's fields sit on the deepest frames of every load).
    pub max: u8,
    /// Whether the record had this field.
    pub seen: bool,
    /// Whether a record without this field is not a record.
    pub required: bool,
}

/// A [`StrField`]'s longest length (the longest field, a session
/// message, is 255 bytes).
fn clamp_max(n: usize) -> u8 {
    u8::try_from(n).unwrap_or(u8::MAX)
}

impl<'a> StrField<'a> {
    /// A field called `name` decoded into `buf`.
    pub fn new(name: &'static &'static [u8], buf: &'a mut [u8]) -> Self {
        let max = clamp_max(buf.len());
        Self {
            name,
            buf,
            max,
            len: 0,
            seen: false,
            required: true,
        }
    }

    /// Like [`StrField::new`], but a record may lack it.
    pub fn optional(name: &'static &'static [u8], buf: &'a mut [u8]) -> Self {
        Self {
            required: false,
            ..Self::new(name, buf)
        }
    }

    /// A field that is checked (escapes, UTF-8, at most `max` bytes
    /// decoded) but not kept: no buffer, so no stack for one.
    pub fn counted(name: &'static &'static [u8], max: usize) -> Self {
        Self {
            name,
            buf: &mut [],
            max: clamp_max(max),
            len: 0,
            seen: false,
            required: true,
        }
    }

    /// The decoded value.
    pub fn value(&self) -> &[u8] {
        self.buf.get(..usize::from(self.len)).unwrap_or(&[])
    }
}

/// Most numbers a flat array field holds (`"st"`, the session statistics).
pub const ARRAY_MAX: usize = 7;

/// A scalar value: `true` (`"end"`, `"pin"`, `"del"`), non-negative
/// integers (`"seq"`, `"keep"`), a flat array of them (`"st"`); anything
/// else that is a scalar is accepted and skipped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scalar {
    /// Field absent.
    Absent,
    /// `true`.
    True,
    /// `false`, `null` or a number that is not read.
    Other,
    /// A non-negative integer, saturating at `u32::MAX`.
    Uint(u32),
    /// A flat array of at most [`ARRAY_MAX`] non-negative integers (more,
    /// or anything else in it, makes the line invalid): how many; the
    /// values are in the [`ScalarSet`]'s array, if it has one (kept out of
    /// every field and every reader).
    Array(u8),
}

impl Scalar {
    /// The integer value, 0 when absent or not an integer.
    pub fn uint(self) -> u32 {
        match self {
            Scalar::Uint(v) => v,
            _ => 0,
        }
    }
}

/// Longest scalar field name: the names of both files are short (`"end"`,
/// `"tout"`), and a record with eleven of them sits on the deepest stack
/// path of the session load (4 bytes a name, not a slice's 8).
pub const SCALAR_NAME_MAX: usize = 4;

/// Longest [`ScalarField`] name (`"pin"`, `"del"`, `"seq"`, `"n"`).
pub const FIELD_NAME_MAX: usize = 3;

/// A scalar field the caller wants: 8 bytes (the fields of a store record
/// sit on the deepest frame of every store read).
pub struct ScalarField {
    /// The field name in the file, NUL-padded (a decoded name holds no NUL:
    /// `\u0000` is refused); 0xFF bytes (never in UTF-8) for a name longer
    /// than [`FIELD_NAME_MAX`], which matches nothing.
    name: [u8; FIELD_NAME_MAX],
    /// What the value is: [`Scalar`]'s variant, in its order.
    kind: u8,
    /// The integer, or an array's length.
    val: u32,
}

impl ScalarField {
    /// A field called `name` (at most [`FIELD_NAME_MAX`] bytes; a longer
    /// or empty one is never found), absent until read.
    pub const fn new(name: &'static [u8]) -> Self {
        // Written out: built at run time (for each record read) it must not
        // cost a call. (Calling `scalar_name`, even `#[inline(always)]`,
        // measured +5k instructions on a full `build_context` and on a
        // memory get.)
        let name = match *name {
            [] => [0; FIELD_NAME_MAX],
            [a] => [a, 0, 0],
            [a, b] => [a, b, 0],
            [a, b, c] => [a, b, c],
            _ => [0xFF; FIELD_NAME_MAX],
        };
        Self {
            name,
            kind: 0,
            val: 0,
        }
    }

    /// Whether the field is called `name` (not empty).
    fn is(&self, name: &[u8]) -> bool {
        let [a, b, c] = self.name;
        name_is(&[a, b, c, 0], name)
    }

    /// The value found.
    #[inline(always)]
    pub fn value(&self) -> Scalar {
        match self.kind {
            1 => Scalar::True,
            2 => Scalar::Other,
            3 => Scalar::Uint(self.val),
            4 => Scalar::Array(self.val as u8),
            _ => Scalar::Absent,
        }
    }

    fn set(&mut self, v: Scalar) {
        (self.kind, self.val) = match v {
            Scalar::Absent => (0, 0),
            Scalar::True => (1, 0),
            Scalar::Other => (2, 0),
            Scalar::Uint(x) => (3, x),
            Scalar::Array(n) => (4, u32::from(n)),
        };
    }
}

/// A field name as [`ScalarField`] keeps it (NUL-padded; 0xFF bytes, which
/// match nothing, when longer than [`SCALAR_NAME_MAX`]).
pub const fn scalar_name(name: &'static [u8]) -> [u8; SCALAR_NAME_MAX] {
    match *name {
        [] => [0; SCALAR_NAME_MAX],
        [a] => [a, 0, 0, 0],
        [a, b] => [a, b, 0, 0],
        [a, b, c] => [a, b, c, 0],
        [a, b, c, d] => [a, b, c, d],
        _ => [0xFF; SCALAR_NAME_MAX],
    }
}

/// Whether the padded name `field` is `name` (not empty).
fn name_is(field: &[u8; SCALAR_NAME_MAX], name: &[u8]) -> bool {
    let key = padded(name);
    key != 0 && key == u32::from_le_bytes(*field)
}

/// `name` as [`ScalarField`] keeps it, as a word (compared without a
/// `memcmp` call under the parse); 0, which no field's is, when it cannot
/// be one: empty (a decoded name holds no NUL) or longer than
/// [`SCALAR_NAME_MAX`] bytes.
fn padded(name: &[u8]) -> u32 {
    u32::from_le_bytes(match *name {
        [a] => [a, 0, 0, 0],
        [a, b] => [a, b, 0, 0],
        [a, b, c] => [a, b, c, 0],
        [a, b, c, d] => [a, b, c, d],
        _ => return 0,
    })
}

/// Most fields of a [`ScalarSet`].
pub const SET_MAX: usize = 11;

/// Scalar fields kept packed: 4 bytes a field on the stack (the value) and
/// 4 bits (what kind of value), instead of a [`ScalarField`]'s 12; the
/// names stay in flash. What [`ScalarSet::get`] gives back is what a
/// [`ScalarField`] of that name would hold.
pub struct ScalarSet<'a> {
    names: &'static [[u8; SCALAR_NAME_MAX]],
    /// Where the values of an array field go (the caller's: the last array
    /// read, whichever its field).
    array: Option<&'a mut [u32; ARRAY_MAX]>,
    /// By the index of the name: the integer, or an array's length.
    values: [u32; SET_MAX],
    /// Bit `i`: the field was present.
    seen: u16,
    /// Bit `i`: its value was `true`.
    trues: u16,
    /// Bit `i`: its value was a non-negative integer.
    uints: u16,
    /// Bit `i`: its value was an array.
    arrays: u16,
}

impl<'a> ScalarSet<'a> {
    /// The fields called `names` (see [`scalar_name`]; the first
    /// [`SET_MAX`]), absent until read; array values go to `array`.
    pub const fn new(
        names: &'static [[u8; SCALAR_NAME_MAX]],
        array: Option<&'a mut [u32; ARRAY_MAX]>,
    ) -> Self {
        Self {
            names,
            array,
            values: [0; SET_MAX],
            seen: 0,
            trues: 0,
            uints: 0,
            arrays: 0,
        }
    }

    /// Where array values went.
    pub fn array_mut(&mut self) -> Option<&mut [u32; ARRAY_MAX]> {
        self.array.as_deref_mut()
    }

    /// The same, taken out (the set can be read while it is written).
    pub fn take_array(&mut self) -> Option<&'a mut [u32; ARRAY_MAX]> {
        self.array.take()
    }

    fn clear(&mut self) {
        self.values = [0; SET_MAX];
        self.seen = 0;
        self.trues = 0;
        self.uints = 0;
        self.arrays = 0;
    }

    /// Records `v` for the field called `name`, if it is one of them (the
    /// last occurrence wins, as with a [`ScalarField`]).
    // Out of line: a field not in the caller's slices is rare, and its
    // locals stay out of the parse's frame.
    // (The name as [`padded`] gives it and the value packed: all in
    // registers.)
    #[inline(never)]
    fn set(&mut self, key: u32, v: Word) {
        let v: Scalar = v.get().unwrap_or(Scalar::Absent);
        let Some(i) = self
            .names
            .iter()
            .position(|n| key != 0 && u32::from_le_bytes(*n) == key)
        else {
            return;
        };
        let Some(slot) = self.values.get_mut(i) else {
            return;
        };
        let bit = 1u16 << i;
        self.seen |= bit;
        self.trues &= !bit;
        self.uints &= !bit;
        self.arrays &= !bit;
        *slot = match v {
            Scalar::True => {
                self.trues |= bit;
                0
            }
            Scalar::Uint(x) => {
                self.uints |= bit;
                x
            }
            Scalar::Array(n) => {
                self.arrays |= bit;
                u32::from(n)
            }
            Scalar::Absent | Scalar::Other => 0,
        };
    }

    /// The value of the field `names[i]`.
    pub fn get(&self, i: usize) -> Scalar {
        if !self.present(i) {
            Scalar::Absent
        } else if self.is_true(i) {
            Scalar::True
        } else if let Some(n) = self.array_len(i) {
            Scalar::Array(n)
        } else if self.uints & self.bit(i) != 0 {
            Scalar::Uint(self.uint(i))
        } else {
            Scalar::Other
        }
    }

    fn bit(&self, i: usize) -> u16 {
        if i < SET_MAX { 1 << i } else { 0 }
    }

    /// Whether the field `names[i]` was present.
    pub fn present(&self, i: usize) -> bool {
        self.seen & self.bit(i) != 0
    }

    /// Whether its value is `true`.
    pub fn is_true(&self, i: usize) -> bool {
        self.trues & self.bit(i) != 0
    }

    /// Its value as [`Scalar::uint`] gives it (0 when absent or not an
    /// integer).
    pub fn uint(&self, i: usize) -> u32 {
        match self.values.get(i) {
            Some(&v) if self.uints & self.bit(i) != 0 => v,
            _ => 0,
        }
    }

    /// Its array's length when its value is an array.
    pub fn array_len(&self, i: usize) -> Option<u8> {
        match self.values.get(i) {
            Some(&v) if self.arrays & self.bit(i) != 0 => Some(v as u8),
            _ => None,
        }
    }
}

/// What one call of [`read_record`] found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Line {
    /// A valid record ending in a newline.
    Record,
    /// A valid record at the end of the file with no final newline.
    RecordAtEof,
    /// Not a record; the line was consumed.
    Skipped,
    /// End of the file.
    Eof,
}

/// Why a line is not a record (internal): the port's error (its errno,
/// positive), or [`Bad::Syntax`]. One word, so that the parse's results
/// (`Result<Scalar, Bad>`, `Result<Option<u8>, Bad>`) are two words and
/// come back in registers: a word each on the deepest frames of every load.
#[derive(Clone, Copy, PartialEq, Eq)]
struct Bad(i32);

#[allow(non_upper_case_globals)]
impl Bad {
    /// Not JSON, or not a flat record (an errno is never negative).
    const Syntax: Bad = Bad(i32::MIN);
}

impl From<Errno> for Bad {
    fn from(e: Errno) -> Self {
        Bad(e.0)
    }
}

/// Reads the next line as a flat object, filling `strs` and `scalars`.
/// Fields not listed are skipped when they are strings or scalars. A record
/// must contain every field of `strs`.
// Inlined: the one body is [`read_fields`].
#[inline(always)]
pub fn read_record<P: Port + ?Sized>(
    port: &mut P,
    r: &mut ByteReader<'_>,
    strs: &mut [StrField<'_>],
    scalars: &mut [ScalarField],
) -> Result<Line, Errno> {
    read_fields(port, r, strs, scalars, None)
}

/// [`read_record`], also filling `set` (with the fields that are in neither
/// `strs` nor `scalars`).
#[inline(always)]
pub fn read_fields<P: Port + ?Sized>(
    port: &mut P,
    r: &mut ByteReader<'_>,
    strs: &mut [StrField<'_>],
    scalars: &mut [ScalarField],
    set: Option<&mut ScalarSet<'_>>,
) -> Result<Line, Errno> {
    fields(port, r, strs, scalars, set).get()
}

/// A `Result<Line, Errno>` packed in a `u64` (the line's variant in the
/// high word, or the errno in the low one): it comes back in registers,
/// not in a slot of the caller's frame, which is on the deepest path of
/// every load.
#[derive(Clone, Copy)]
struct LineWord(u64);

impl LineWord {
    fn ok(line: Line) -> Self {
        LineWord((line as u64 + 1) << 32)
    }

    #[inline(always)]
    fn get(self) -> Result<Line, Errno> {
        Ok(match (self.0 >> 32) as u32 {
            0 => return Err(Errno(self.0 as u32 as i32)),
            1 => Line::Record,
            2 => Line::RecordAtEof,
            3 => Line::Skipped,
            _ => Line::Eof,
        })
    }
}

impl From<Result<Line, Errno>> for LineWord {
    #[inline(always)]
    fn from(got: Result<Line, Errno>) -> Self {
        match got {
            Ok(line) => LineWord::ok(line),
            Err(e) => LineWord(u64::from(e.0 as u32)),
        }
    }
}

/// [`read_fields`]' one body.
#[inline(never)]
fn fields<P: Port + ?Sized>(
    port: &mut P,
    r: &mut ByteReader<'_>,
    strs: &mut [StrField<'_>],
    scalars: &mut [ScalarField],
    set: Option<&mut ScalarSet<'_>>,
) -> LineWord {
    fields_in(port, r, strs, scalars, set).into()
}

#[inline(always)]
fn fields_in<P: Port + ?Sized>(
    port: &mut P,
    r: &mut ByteReader<'_>,
    strs: &mut [StrField<'_>],
    scalars: &mut [ScalarField],
    mut set: Option<&mut ScalarSet<'_>>,
) -> Result<Line, Errno> {
    for f in strs.iter_mut() {
        f.seen = false;
        f.len = 0;
    }
    for f in scalars.iter_mut() {
        f.kind = 0;
    }
    if let Some(u) = set.as_deref_mut() {
        u.clear();
    }
    // The object's brace and the whitespace around it (the byte after it
    // comes with it).
    let first = sep_io(port, r, u32::from(b'{'))?;
    if !first.matched() {
        // Blank lines are not records, but are not garbage either.
        match first.byte() {
            None => return Ok(Line::Eof),
            Some(b'\n') => {
                r.pass(1);
                return Ok(Line::Skipped);
            }
            Some(_) => {
                skip_line(port, r)?;
                return Ok(Line::Skipped);
            }
        }
    }
    match parse_object(port, r, strs, scalars, set, first) {
        Ok(()) => {}
        Err(Bad::Syntax) => {
            // A parse that stopped on the line's newline (a string torn at
            // the end of its line) must not skip the next line too (the
            // brace was consumed: the last byte is the line's).
            if r.last() != b'\n' {
                skip_line(port, r)?;
            }
            return Ok(Line::Skipped);
        }
        Err(Bad(e)) => return Err(Errno(e)),
    }
    // Only whitespace may follow the object on its line (skipped as
    // before a separator, [`MATCHED`]: none).
    let line = match sep_io(port, r, MATCHED)?.byte() {
        None => Line::RecordAtEof,
        Some(b'\n') => {
            r.pass(1);
            Line::Record
        }
        Some(_) => {
            skip_line(port, r)?;
            return Ok(Line::Skipped);
        }
    };
    Ok(if strs.iter().all(|f| f.seen || !f.required) {
        line
    } else {
        Line::Skipped
    })
}

fn skip_line<P: Port + ?Sized>(port: &mut P, r: &mut ByteReader<'_>) -> Result<(), Errno> {
    while r.peek(port)?.is_some() {
        match r.chunk().iter().position(|&b| b == b'\n') {
            Some(i) => {
                r.consume(i + 1);
                break;
            }
            None => r.consume(r.chunk().len()),
        }
    }
    Ok(())
}

/// A parse step's result packed in a `u64` (the high word 0 and the low
/// one the [`Bad`], or the high word what [`Packs`] makes of the value):
/// it comes back in registers, where a `Result` of two words would take a
/// slot of [`fields`]' frame, which is on the deepest path of every load.
#[derive(Clone, Copy)]
struct Word(u64);

/// A value [`Word`] holds: (a tag, not 0; a word).
trait Packs: Sized {
    fn pack(self) -> (u32, u32);
    fn unpack(tag: u32, low: u32) -> Self;
}

impl Packs for () {
    #[inline(always)]
    fn pack(self) -> (u32, u32) {
        (1, 0)
    }
    #[inline(always)]
    fn unpack(_: u32, _: u32) -> Self {}
}

impl Packs for Option<u8> {
    #[inline(always)]
    fn pack(self) -> (u32, u32) {
        match self {
            None => (1, 0),
            Some(b) => (2, u32::from(b)),
        }
    }
    #[inline(always)]
    fn unpack(tag: u32, low: u32) -> Self {
        (tag > 1).then_some(low as u8)
    }
}

impl Packs for Scalar {
    #[inline(always)]
    fn pack(self) -> (u32, u32) {
        match self {
            Scalar::Absent => (1, 0),
            Scalar::True => (2, 0),
            Scalar::Other => (3, 0),
            Scalar::Uint(x) => (4, x),
            Scalar::Array(n) => (5, u32::from(n)),
        }
    }
    #[inline(always)]
    fn unpack(tag: u32, low: u32) -> Self {
        match tag {
            2 => Scalar::True,
            3 => Scalar::Other,
            4 => Scalar::Uint(low),
            5 => Scalar::Array(low as u8),
            _ => Scalar::Absent,
        }
    }
}

impl Word {
    #[inline(always)]
    fn of<T: Packs>(got: Result<T, Bad>) -> Self {
        let (tag, low) = match got {
            Ok(v) => v.pack(),
            Err(b) => (0, b.0 as u32),
        };
        Word(u64::from(tag) << 32 | u64::from(low))
    }

    #[inline(always)]
    fn get<T: Packs>(self) -> Result<T, Bad> {
        let (tag, low) = ((self.0 >> 32) as u32, self.0 as u32);
        if tag == 0 {
            return Err(Bad(low as i32));
        }
        Ok(T::unpack(tag, low))
    }
}

/// Skips whitespace; when the byte there is `want`, consumes it and the
/// whitespace after it. The byte then peeked (`None`: the end of the file)
/// and whether `want` was consumed: a separator and what follows it in one
/// call (a field is `"name"`, `:`, its value, then `,` or `}`).
#[inline(always)]
fn sep<P: Port + ?Sized>(port: &mut P, r: &mut ByteReader<'_>, want: u32) -> Result<Peeked, Bad> {
    let w = sep_word(port, r, want).0;
    let low = w as u32;
    if w >> 32 == 0 {
        return Err(Bad(low as i32));
    }
    Ok(Peeked(low))
}

/// [`sep`] where only the port's error can come (`Bad` as it is).
#[inline(always)]
fn sep_io<P: Port + ?Sized>(
    port: &mut P,
    r: &mut ByteReader<'_>,
    want: u32,
) -> Result<Peeked, Errno> {
    sep(port, r, want).map_err(|Bad(e)| Errno(e))
}

/// What [`sep`] found: the byte peeked, [`SOME`] (a byte was: not the end
/// of the file), [`MATCHED`] (the separator was consumed). Tested as it
/// is: no `Option` to rebuild.
#[derive(Clone, Copy)]
struct Peeked(u32);

impl Peeked {
    /// The byte peeked, `None` at the end of the file.
    #[inline(always)]
    fn byte(self) -> Option<u8> {
        (self.0 & SOME != 0).then_some(self.0 as u8)
    }

    /// Whether the separator was consumed.
    #[inline(always)]
    fn matched(self) -> bool {
        self.0 & MATCHED != 0
    }
}

/// In [`sep_word`]'s low word: a byte was peeked (it is the low byte).
const SOME: u32 = 0x100;
/// In [`sep_word`]'s low word: `want` was consumed (also what `want`
/// becomes then: it matches no byte).
const MATCHED: u32 = 0x200;

/// [`sep`] out of line (the one frame between a parse and the port), its
/// result packed by hand: the high word 0 and the low one the [`Bad`], or
/// the high word 1 and the low one the byte, [`SOME`] and [`MATCHED`].
#[inline(never)]
fn sep_word<P: Port + ?Sized>(port: &mut P, r: &mut ByteReader<'_>, mut want: u32) -> Word {
    loop {
        let b = match r.peek(port) {
            Ok(b) => b,
            Err(e) => return Word(u64::from(e.0 as u32)),
        };
        match b {
            Some(b' ' | b'\t' | b'\r') => {}
            Some(b) if u32::from(b) == want => want = MATCHED,
            _ => {
                let low = b.map_or(0, |b| u32::from(b) | SOME) | (want & MATCHED);
                return Word(1 << 32 | u64::from(low));
            }
        }
        r.pass(1);
    }
}

fn parse_object<P: Port + ?Sized>(
    port: &mut P,
    r: &mut ByteReader<'_>,
    strs: &mut [StrField<'_>],
    scalars: &mut [ScalarField],
    mut set: Option<&mut ScalarSet<'_>>,
    first: Peeked,
) -> Result<(), Bad> {
    // The byte after each separator comes with it: no call of its own
    // (`first`: after the brace, consumed).
    let mut next = first.byte();
    if next == Some(b'}') {
        r.pass(1);
        return Ok(());
    }
    loop {
        if next != Some(b'"') {
            return Err(Bad::Syntax);
        }
        r.pass(1);
        let mut name = [0u8; NAME_MAX];
        // The field's name, then (when it is one of `strs`) its value: one
        // call of `decode_string`, inlined (one frame less on the deepest
        // path of every parse).
        let mut field: Option<usize> = None;
        loop {
            let quick = match field {
                None => quick_name(r.chunk()),
                Some(_) => None,
            };
            let got = if let Some((n, bytes)) = quick {
                // (Only its first `n` bytes are read.)
                if let Some(w) = name.first_chunk_mut::<W>() {
                    *w = bytes;
                }
                r.pass(n + 1);
                Ok(n)
            } else {
                let (buf, max): (&mut [u8], usize) = match field {
                    None => (&mut name, NAME_MAX),
                    Some(i) => match strs.get_mut(i) {
                        Some(f) => (&mut *f.buf, usize::from(f.max)),
                        None => return Err(Bad::Syntax),
                    },
                };
                decode_string(port, r, buf, max)
            };
            if let Some(f) = field.and_then(|i| strs.get_mut(i)) {
                // At most `max`, a byte.
                f.len = got.map_err(StrErr::into_bad)? as u8;
                f.seen = true;
                break;
            }
            let name_len = match got {
                Ok(n) => Some(n),
                Err(StrErr::TooLong) => None,
                Err(e) => return Err(e.into_bad()),
            };
            let value = sep(port, r, u32::from(b':'))?;
            if !value.matched() {
                return Err(Bad::Syntax);
            }
            let name = name_len.and_then(|n| name.get(..n)).unwrap_or(&[]);
            match value.byte() {
                Some(b'"') => {
                    r.pass(1);
                    match strs
                        .iter()
                        .position(|f| !name.is_empty() && *f.name == name)
                    {
                        Some(i) => {
                            field = Some(i);
                            continue;
                        }
                        None => skip_string(port, r)?,
                    }
                }
                Some(_) => {
                    let array = set.as_deref_mut().and_then(ScalarSet::array_mut);
                    let v = parse_scalar(port, r, array)?;
                    if let Some(f) = scalars.iter_mut().find(|f| f.is(name)) {
                        f.set(v);
                    } else if let Some(u) = set.as_deref_mut() {
                        u.set(padded(name), Word::of::<Scalar>(Ok(v)));
                    }
                }
                None => return Err(Bad::Syntax),
            }
            break;
        }
        let after = sep(port, r, u32::from(b','))?;
        next = after.byte();
        if !after.matched() {
            if next != Some(b'}') {
                return Err(Bad::Syntax);
            }
            r.pass(1);
            return Ok(());
        }
    }
}

/// Why a string was not decoded: [`StrErr::TooLong`], or a [`Bad`] (its
/// word; one word, as [`Bad`]).
#[derive(Clone, Copy, PartialEq, Eq)]
struct StrErr(i32);

#[allow(non_upper_case_globals)]
impl StrErr {
    /// Longer than the buffer (consumed up to its closing quote).
    const TooLong: StrErr = StrErr(i32::MIN + 1);
    /// [`Bad::Syntax`].
    const Syntax: StrErr = StrErr(Bad::Syntax.0);

    fn into_bad(self) -> Bad {
        match self {
            StrErr::TooLong => Bad::Syntax,
            StrErr(b) => Bad(b),
        }
    }
}

impl From<Errno> for StrErr {
    fn from(e: Errno) -> Self {
        StrErr(e.0)
    }
}

/// Decodes the rest of a string (after its opening quote) into `out`.
/// Rejects raw control characters, `\u0000` (C strings cannot hold it),
/// lone surrogates and invalid UTF-8; a string longer than `out` is
/// `TooLong` (consumed up to its closing quote, so an unknown long field
/// name can still be skipped).
#[inline(always)]
fn decode_string<P: Port + ?Sized>(
    port: &mut P,
    r: &mut ByteReader<'_>,
    out: &mut [u8],
    max: usize,
) -> Result<usize, StrErr> {
    let mut len = 0usize;
    let mut too_long = false;
    let mut utf8_check = crate::text::Utf8::new();
    loop {
        // A run of plain bytes, copied whole, then the byte that ended it:
        // a quote, an escape or a control character; none when the run
        // ends the chunk (it goes on in the next one).
        let chunk = r.fill(port)?;
        if chunk.is_empty() {
            return Err(StrErr::Syntax);
        }
        let (run, ascii) = plain_len_in(chunk);
        let bytes = chunk.get(..run).unwrap_or(&[]);
        if !(ascii && utf8_check.complete()) {
            utf8_check = utf8_run(utf8_check, bytes).valid().ok_or(StrErr::Syntax)?;
        }
        if !too_long && len + run <= max {
            if let Some(dst) = out.get_mut(len..len + run) {
                copy_run(dst, bytes);
            }
            len += run;
        } else {
            too_long = true;
        }
        let stop = chunk.get(run).copied();
        r.pass(run + usize::from(stop.is_some()));
        let mut utf8 = [0u8; 4];
        let piece: &[u8] = match stop {
            None => continue,
            Some(b'"') => break,
            Some(b'\\') => {
                let e = r.next(port)?.ok_or(StrErr::Syntax)?;
                let c = match e {
                    b'"' => '"',
                    b'\\' => '\\',
                    b'/' => '/',
                    b'b' => '\u{8}',
                    b'f' => '\u{c}',
                    b'n' => '\n',
                    b'r' => '\r',
                    b't' => '\t',
                    b'u' => decode_u_escape(port, r)?,
                    _ => return Err(StrErr::Syntax),
                };
                if c == '\0' {
                    return Err(StrErr::Syntax);
                }
                c.encode_utf8(&mut utf8).as_bytes()
            }
            Some(_) => return Err(StrErr::Syntax),
        };
        // An escape is a whole character: none may be open before it.
        if !utf8_check.complete() {
            return Err(StrErr::Syntax);
        }
        if too_long || len + piece.len() > max {
            too_long = true;
            continue;
        }
        // A counted field has no buffer: only the length is kept.
        if let Some(dst) = out.get_mut(len..len + piece.len()) {
            copy_run(dst, piece);
        }
        len += piece.len();
    }
    if too_long {
        return Err(StrErr::TooLong);
    }
    if utf8_check.complete() {
        Ok(len)
    } else {
        Err(StrErr::Syntax)
    }
}

/// Checks a run of string bytes as the continuation of `u` (a character
/// cut at the end of the run is left open in `u`; a run of ASCII that
/// leaves none open is not checked, see [`plain_len`]): whole characters
/// a step, the rest (a character left open by the previous
/// run, one cut at the end of this one, an invalid one) a byte at a time.
// Out of line: its locals stay out of `read_fields`' frame, which is on
// the deepest path of every parse (down to the port's read); and a leaf
// (no `core::str::from_utf8` call under it: its frames would make this the
// deepest branch).
#[inline(never)]
fn utf8_run(mut u: crate::text::Utf8, bytes: &[u8]) -> crate::text::Utf8 {
    let cont = |b: Option<&u8>| b.is_none_or(|&b| b & 0xC0 == 0x80);
    let mut i = 0usize;
    while let Some(&a) = bytes.get(i) {
        if u.complete() {
            if a < 0x80 {
                i += 1;
                continue;
            }
            // Its length and the range of its second byte (no overlong
            // form, surrogate, or code point past U+10FFFF).
            let n = match a {
                0xC2..=0xF4 => (!a).leading_zeros() as usize,
                _ => 0,
            };
            let lo = match a {
                0xE0 => 0xA0,
                0xF0 => 0x90,
                _ => 0x80,
            };
            let hi = match a {
                0xED => 0x9F,
                0xF4 => 0x8F,
                _ => 0xBF,
            };
            if let Some(seq) = bytes.get(i..i + n).filter(|_| n > 0)
                && seq.get(1).is_some_and(|&b| b >= lo && b <= hi)
                && cont(seq.get(2))
                && cont(seq.get(3))
            {
                i += n;
                continue;
            }
        }
        // (A call: rare, and a leaf under this one.)
        u = u.fed(a);
        if u.valid().is_none() {
            return u;
        }
        i += 1;
    }
    u
}

// Inlined: one frame less on the deepest path of a parse.
#[inline(always)]
fn hex4<P: Port + ?Sized>(port: &mut P, r: &mut ByteReader<'_>) -> Result<u32, StrErr> {
    let mut v = 0u32;
    for _ in 0..4 {
        let b = r.next(port)?.ok_or(StrErr::Syntax)?;
        let d = (b as char).to_digit(16).ok_or(StrErr::Syntax)?;
        v = (v << 4) | d;
    }
    Ok(v)
}

fn decode_u_escape<P: Port + ?Sized>(port: &mut P, r: &mut ByteReader<'_>) -> Result<char, StrErr> {
    let hi = hex4(port, r)?;
    let cp = if (0xD800..0xDC00).contains(&hi) {
        // A high surrogate must be followed by an escaped low surrogate.
        if r.next(port)? != Some(b'\\') || r.next(port)? != Some(b'u') {
            return Err(StrErr::Syntax);
        }
        let lo = hex4(port, r)?;
        if !(0xDC00..0xE000).contains(&lo) {
            return Err(StrErr::Syntax);
        }
        0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00)
    } else {
        hi
    };
    char::from_u32(cp).ok_or(StrErr::Syntax)
}

fn skip_string<P: Port + ?Sized>(port: &mut P, r: &mut ByteReader<'_>) -> Result<(), Bad> {
    loop {
        // As in `decode_string`, unchecked.
        let chunk = r.fill(port)?;
        if chunk.is_empty() {
            return Err(Bad::Syntax);
        }
        let (run, _) = plain_len(chunk);
        let stop = chunk.get(run).copied();
        r.pass(run + usize::from(stop.is_some()));
        match stop {
            None => {}
            Some(b'"') => return Ok(()),
            // Any byte may follow the backslash.
            Some(b'\\') => {
                r.next(port)?.ok_or(Bad::Syntax)?;
            }
            Some(_) => return Err(Bad::Syntax),
        }
    }
}

/// `true`, `false`, `null` or a number. Nested values are not accepted: they
/// make the line invalid rather than costing stack.
/// An array's values go to `array` when given.
fn parse_scalar<P: Port + ?Sized>(
    port: &mut P,
    r: &mut ByteReader<'_>,
    mut array: Option<&mut [u32; ARRAY_MAX]>,
) -> Result<Scalar, Bad> {
    let first = r.peek(port)?.ok_or(Bad::Syntax)?;
    match first {
        b'[' => {
            if let Some(a) = array.as_deref_mut() {
                *a = [0; ARRAY_MAX];
            }
            let mut n = 0usize;
            // The bracket (peeked), then as in an object: each separator
            // with the whitespace around it.
            if sep(port, r, u32::from(b'['))?.byte() == Some(b']') {
                r.pass(1);
                return Ok(Scalar::Array(0));
            }
            loop {
                let Scalar::Uint(x) = parse_number(port, r)? else {
                    return Err(Bad::Syntax);
                };
                if n >= ARRAY_MAX {
                    return Err(Bad::Syntax);
                }
                if let Some(v) = array.as_deref_mut().and_then(|a| a.get_mut(n)) {
                    *v = x;
                }
                n += 1;
                let next = sep(port, r, u32::from(b','))?;
                if !next.matched() {
                    if next.byte() != Some(b']') {
                        return Err(Bad::Syntax);
                    }
                    r.pass(1);
                    return Ok(Scalar::Array(n as u8));
                }
            }
        }
        // The word's letters after the first (peeked), NUL-padded: one
        // word, kept in a register.
        b't' => literal(port, r, b"rue\0").map(|()| Scalar::True),
        b'f' => literal(port, r, b"alse").map(|()| Scalar::Other),
        b'n' => literal(port, r, b"ull\0").map(|()| Scalar::Other),
        b'-' | b'0'..=b'9' => parse_number(port, r),
        _ => Err(Bad::Syntax),
    }
}

/// A JSON number: a plain non-negative integer is `Uint` (saturating),
/// any other number `Other`.
#[inline(always)]
fn parse_number<P: Port + ?Sized>(port: &mut P, r: &mut ByteReader<'_>) -> Result<Scalar, Bad> {
    number_word(port, r).get()
}

#[inline(never)]
fn number_word<P: Port + ?Sized>(port: &mut P, r: &mut ByteReader<'_>) -> Word {
    Word::of(number_in(port, r))
}

#[inline(always)]
fn number_in<P: Port + ?Sized>(port: &mut P, r: &mut ByteReader<'_>) -> Result<Scalar, Bad> {
    // A number longer than 64 characters is garbage. Its length, and
    // NOT_PLAIN: one word (the values kept across the read of a chunk are
    // four, with the port, the reader and the value: a small frame).
    const NOT_PLAIN: u32 = 0x100;
    let mut len = 0u32;
    let mut v = 0u32;
    while let Some(b @ (b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E')) = r.peek(port)? {
        match b {
            b'0'..=b'9' => v = v.saturating_mul(10).saturating_add(u32::from(b - b'0')),
            _ => len |= NOT_PLAIN,
        }
        r.bump();
        len += 1;
        if len & 0xFF > 64 {
            return Err(Bad::Syntax);
        }
    }
    if len & 0xFF == 0 {
        return Err(Bad::Syntax);
    }
    Ok(if len & NOT_PLAIN == 0 {
        Scalar::Uint(v)
    } else {
        Scalar::Other
    })
}

#[inline(always)]
fn literal<P: Port + ?Sized>(
    port: &mut P,
    r: &mut ByteReader<'_>,
    rest: &[u8; 4],
) -> Result<(), Bad> {
    literal_word(port, r, u32::from_le_bytes(*rest)).get()
}

#[inline(never)]
fn literal_word<P: Port + ?Sized>(port: &mut P, r: &mut ByteReader<'_>, rest: u32) -> Word {
    Word::of(literal_in(port, r, rest))
}

#[inline(always)]
fn literal_in<P: Port + ?Sized>(
    port: &mut P,
    r: &mut ByteReader<'_>,
    mut rest: u32,
) -> Result<(), Bad> {
    // The first letter, peeked.
    r.bump();
    while rest != 0 {
        if r.next(port)? != Some(rest as u8) {
            return Err(Bad::Syntax);
        }
        rest >>= 8;
    }
    Ok(())
}

/// Writes JSON Lines through the port in small chunks.
pub struct LineWriter {
    fd: Fd,
    buf: [u8; WRITE_CHUNK],
    len: usize,
    /// Bytes handed to the port so far plus those buffered.
    written: u32,
    /// The last byte written.
    last: u8,
}

impl LineWriter {
    /// Wraps a descriptor opened for writing ([`NO_FD`]: counts only).
    pub fn new(fd: Fd) -> Self {
        Self {
            fd,
            buf: [0; WRITE_CHUNK],
            len: 0,
            written: 0,
            last: 0,
        }
    }

    /// The descriptor, for closing.
    pub fn fd(&self) -> Fd {
        self.fd
    }

    /// The last byte written, if any.
    pub fn last(&self) -> Option<u8> {
        (self.written > 0).then_some(self.last)
    }

    /// Total bytes written (including those still buffered).
    pub fn written(&self) -> u32 {
        self.written
    }

    /// Appends raw bytes.
    pub fn raw<P: Port + ?Sized>(&mut self, port: &mut P, bytes: &[u8]) -> Result<(), Errno> {
        let mut rest = bytes;
        while !rest.is_empty() {
            if self.len >= self.buf.len() {
                self.flush_in(port)?;
            }
            let room = self.buf.len() - self.len;
            let (now, later) = rest.split_at_checked(room).unwrap_or((rest, &[]));
            if let Some(dst) = self.buf.get_mut(self.len..self.len + now.len()) {
                copy_run(dst, now);
            }
            self.len += now.len();
            self.written = self.written.saturating_add(now.len() as u32);
            if let Some(&b) = now.last() {
                self.last = b;
            }
            rest = later;
        }
        Ok(())
    }

    fn byte<P: Port + ?Sized>(&mut self, port: &mut P, b: u8) -> Result<(), Errno> {
        if self.len >= self.buf.len() {
            self.flush(port)?;
        }
        if let Some(slot) = self.buf.get_mut(self.len) {
            *slot = b;
            self.len += 1;
            self.written = self.written.saturating_add(1);
            self.last = b;
        }
        Ok(())
    }

    /// Appends `s` as a JSON string, quotes included. Control characters are
    /// escaped; other bytes (UTF-8) are written as they are.
    pub fn string<P: Port + ?Sized>(&mut self, port: &mut P, s: &[u8]) -> Result<(), Errno> {
        const HEX: &[u8; 16] = b"0123456789abcdef";
        self.byte(port, b'"')?;
        let mut rest = s;
        while !rest.is_empty() {
            // Plain bytes go in whole.
            let (run, _) = plain_len(rest);
            if run > 0 {
                let (plain, tail) = rest.split_at_checked(run).unwrap_or((rest, &[]));
                self.raw(port, plain)?;
                rest = tail;
                continue;
            }
            let Some((&b, tail)) = rest.split_first() else {
                break;
            };
            rest = tail;
            match b {
                b'"' => self.raw(port, b"\\\"")?,
                b'\\' => self.raw(port, b"\\\\")?,
                b'\n' => self.raw(port, b"\\n")?,
                b'\r' => self.raw(port, b"\\r")?,
                b'\t' => self.raw(port, b"\\t")?,
                0x00..=0x1F => {
                    self.raw(port, b"\\u00")?;
                    self.byte(port, HEX[usize::from(b >> 4)])?;
                    self.byte(port, HEX[usize::from(b & 0xF)])?;
                }
                _ => self.byte(port, b)?,
            }
        }
        self.byte(port, b'"')
    }

    /// Appends a decimal number.
    pub fn uint<P: Port + ?Sized>(&mut self, port: &mut P, v: u32) -> Result<(), Errno> {
        let mut digits = [0u8; 10];
        let mut n = 0usize;
        let mut v = v;
        loop {
            if let Some(d) = digits.get_mut(n) {
                *d = b'0' + (v % 10) as u8;
            }
            n += 1;
            v /= 10;
            if v == 0 || n >= digits.len() {
                break;
            }
        }
        for i in (0..n).rev() {
            self.byte(port, digits.get(i).copied().unwrap_or(b'0'))?;
        }
        Ok(())
    }

    /// Hands buffered bytes to the port.
    pub fn flush<P: Port + ?Sized>(&mut self, port: &mut P) -> Result<(), Errno> {
        self.flush_in(port)
    }

    /// [`Self::flush`], inlined where a full buffer is handed on (no frame
    /// under the copy's, at the bottom of every write path).
    #[inline(always)]
    fn flush_in<P: Port + ?Sized>(&mut self, port: &mut P) -> Result<(), Errno> {
        if self.len > 0 {
            let chunk = self.buf.get(..self.len).unwrap_or(&[]);
            self.len = 0;
            if self.fd != NO_FD {
                port.write(self.fd, chunk)?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::port::Mode;
    use crate::testing::MemPort;

    const A: &[u8] = b"a";
    const B: &[u8] = b"b";

    fn parse_all(text: &[u8]) -> Vec<(Line, String, String, Scalar)> {
        let mut port = MemPort::new();
        port.put(c"/f", text);
        let fd = port.open(c"/f", Mode::Read).unwrap();
        let mut r = ByteReader::new(fd);
        let mut out = Vec::new();
        loop {
            let mut a = [0u8; 20];
            let mut b = [0u8; 20];
            let mut strs = [StrField::new(&A, &mut a), StrField::new(&B, &mut b)];
            let mut sc = [ScalarField::new(b"end")];
            let line = read_record(&mut port, &mut r, &mut strs, &mut sc).unwrap();
            if line == Line::Eof {
                break;
            }
            let a = String::from_utf8(strs[0].value().to_vec()).unwrap();
            let b = String::from_utf8(strs[1].value().to_vec()).unwrap();
            out.push((line, a, b, sc[0].value()));
        }
        port.close(fd).unwrap();
        out
    }

    /// A field name longer than [`NAME_MAX`] is unknown, but checked like
    /// any other string.
    #[test]
    fn long_names_are_checked_and_skipped() {
        let got = parse_all(
            b"{\"a\":\"x\",\"b\":\"y\",\"longername\":5,\"longer_name12\":\"z\"}\n\
              {\"a\":\"x\",\"b\":\"y\",\"longname\\u0000\":5}\n\
              {\"a\":\"x\",\"b\":\"y\",\"longname\\ud800\":5}\n\
              {\"a\":\"x\",\"b\":\"y\",\"longname\xff\":5}\n\
              {\"a\":\"x\",\"b\":\"y\",\"longname\x01\":5}\n\
              {\"a\":\"x\",\"b\":\"y\",\"end_of_it\":true}\n",
        );
        let lines: Vec<Line> = got.iter().map(|g| g.0).collect();
        assert_eq!(
            lines,
            [
                Line::Record,
                Line::Skipped,
                Line::Skipped,
                Line::Skipped,
                Line::Skipped,
                Line::Record
            ]
        );
        assert_eq!(got[5].3, Scalar::Absent);
    }

    #[test]
    fn reads_records_and_skips_garbage() {
        let text = b"{\"a\":\"x\",\"b\":\"y\"}\n\
                     garbage\n\
                     {\"a\":\"1\",\"zz\":[[1]],\"b\":\"2\"}\n\
                     {\"b\":\"\\u0e01\\n\\\"\",\"unknown\":\"long string that is skipped\",\"a\":\"q\",\"end\":true}\r\n\
                     {\"a\":\"torn";
        let lines = parse_all(text);
        assert_eq!(lines.len(), 5);
        assert_eq!(lines[0].0, Line::Record);
        assert_eq!((lines[0].1.as_str(), lines[0].2.as_str()), ("x", "y"));
        assert_eq!(lines[1].0, Line::Skipped);
        assert_eq!(lines[2].0, Line::Skipped, "nested value");
        assert_eq!(lines[3].0, Line::Record);
        assert_eq!(lines[3].2, "ก\n\"");
        assert_eq!(lines[3].3, Scalar::True);
        assert_eq!(lines[4].0, Line::Skipped, "torn tail");
    }

    #[test]
    fn rejects_what_c_strings_and_utf8_cannot_hold() {
        for bad in [
            &b"{\"a\":\"\\u0000\",\"b\":\"\"}\n"[..],
            b"{\"a\":\"\xff\",\"b\":\"\"}\n",
            b"{\"a\":\"\\ud800\",\"b\":\"\"}\n",
            b"{\"a\":\"raw\ttab\",\"b\":\"\"}\n",
            b"{\"a\":\"0123456789abcdefghijX\",\"b\":\"\"}\n",
            b"{\"a\":\"x\"}\n",
            b"{\"a\":\"x\",\"b\":\"y\"} trailing\n",
        ] {
            let lines = parse_all(bad);
            assert_eq!(
                lines[0].0,
                Line::Skipped,
                "{:?}",
                String::from_utf8_lossy(bad)
            );
        }
    }

    /// `bad` then a valid line: `bad` is skipped, the next line read.
    fn skipped_then_next(bad: &[u8]) {
        let mut text = bad.to_vec();
        text.extend_from_slice(b"\n{\"a\":\"next\",\"b\":\"1\"}\n");
        let lines = parse_all(&text);
        let what = String::from_utf8_lossy(bad);
        assert_eq!(lines.len(), 2, "{what:?}");
        assert_eq!(lines[0].0, Line::Skipped, "{what:?}");
        assert_eq!((lines[1].0, lines[1].1.as_str()), (Line::Record, "next"));
    }

    #[test]
    fn a_line_torn_inside_a_string_does_not_swallow_the_next() {
        for torn in [
            &b"{\"a\":\"x\",\"b\":\"y"[..],
            b"{\"a\":\"x\",\"b\":\"y\\",
            b"{\"a\":\"x\",\"b\":\"\\u00",
            b"{\"a\":\"x\",\"zz\":tr",
            b"{\"a\":\"x\",\"zz\":\"skipped",
            b"{\"a\":\"x\",\"zz\":12",
        ] {
            skipped_then_next(torn);
        }
    }

    /// A field name read at any place in a chunk (whole in its first word
    /// or not, escaped, cut by the chunk's end) is the name decoded; a name
    /// that is not valid UTF-8, or holds a control character or a bad
    /// escape, is refused.
    #[test]
    fn names_anywhere_in_a_chunk() {
        for pad in 0..72 {
            let p = "p".repeat(pad);
            let ok = format!(
                "{{\"zz\":\"{p}\",\"\\u0061\":\"x\",\"b\":\"y\",\"a\":\"q\",\"\":1,\"\u{e9}\":2,\"e\\u006ed\":true,\"end1234\":3}}\n"
            );
            let got = parse_all(ok.as_bytes());
            assert_eq!(got.len(), 1, "{pad}");
            assert_eq!(got[0].0, Line::Record, "{pad}");
            assert_eq!((got[0].1.as_str(), got[0].2.as_str()), ("q", "y"));
            assert_eq!(got[0].3, Scalar::True, "{pad}");
            for bad in [&b"\xff"[..], b"a\x01", b"\xc3", b"a\\x"] {
                let mut line = format!("{{\"zz\":\"{p}\",\"a\":\"q\",\"b\":\"y\",\"").into_bytes();
                line.extend_from_slice(bad);
                line.extend_from_slice(b"\":1}\n");
                assert_eq!(parse_all(&line)[0].0, Line::Skipped, "{pad} {bad:?}");
            }
        }
    }

    /// Each line's kind and its `"a"` as [`parse_all`] reads them.
    fn kinds(text: &[u8]) -> Vec<(Line, String)> {
        parse_all(text).into_iter().map(|g| (g.0, g.1)).collect()
    }

    /// Blank lines (whitespace only) are skipped one at a time without
    /// taking the next line; whitespace may come before a record's brace;
    /// a line not starting with one is skipped whole; whitespace then the
    /// end of the file is the end. After a record's brace: whitespace then
    /// the newline (a record), anything else (the line skipped up to its
    /// newline, the next line read), whitespace then the end of the file
    /// (a record at the end).
    #[test]
    fn whitespace_around_records() {
        let (s, r) = (Line::Skipped, Line::Record);
        let blank = b"\n \t\r\n {\"a\":\"1\",\"b\":\"2\"}\n\t{ \"a\":\"3\",\"b\":\"4\"}\nx{\"a\":\"5\",\"b\":\"6\"}\n{\n\"a\":\"7\",\"b\":\"8\"}\n  ";
        let want = [
            (s, ""),
            (s, ""),
            (r, "1"),
            (r, "3"),
            (s, ""),
            (s, ""),
            (s, ""),
        ];
        assert_eq!(kinds(blank), want.map(|(l, a)| (l, a.to_string())));
        let after = b"{\"a\":\"1\",\"b\":\"2\"} \t\r\n{\"a\":\"3\",\"b\":\"4\"} x\"a\"\n{\"a\":\"5\",\"b\":\"6\"},\n{\"a\":\"7\",\"b\":\"8\"} \t";
        let want = [(r, "1"), (s, "3"), (s, "5"), (Line::RecordAtEof, "7")];
        assert_eq!(kinds(after), want.map(|(l, a)| (l, a.to_string())));
    }

    #[test]
    fn scalar_names_match_exactly() {
        let f = ScalarField::new(b"end");
        assert!(f.is(b"end"));
        for other in [&b""[..], b"en", b"ends", b"tout"] {
            assert!(!f.is(other), "{other:?}");
        }
        assert!(ScalarField::new(b"pin").is(b"pin"));
        assert!(!ScalarField::new(b"tout").is(b"tout"));
        assert!(!ScalarField::new(b"").is(b""));
        assert!(!ScalarField::new(b"toolong").is(b"toolong"));
        assert!(!ScalarField::new(b"toolong").is(b"tool"));
    }

    /// [`utf8_run`] over a text cut anywhere agrees with
    /// `core::str::from_utf8` on the whole.
    #[test]
    fn utf8_runs_check_as_from_utf8() {
        let bytes = [
            0x41, 0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0, 0xC1, 0xC2, 0xDF, 0xE0, 0xE1,
            0xED, 0xEF, 0xF0, 0xF1, 0xF4, 0xF5, 0xFF,
        ];
        let mut texts: Vec<Vec<u8>> = vec![Vec::new()];
        let mut level = texts.clone();
        // Every text of up to four of those bytes (two under Miri: slow).
        for _ in 0..if cfg!(miri) { 2 } else { 4 } {
            level = level
                .iter()
                .flat_map(|t| {
                    bytes.iter().map(move |&b| {
                        let mut t = t.clone();
                        t.push(b);
                        t
                    })
                })
                .collect();
            texts.extend(level.iter().cloned());
        }
        for t in &texts {
            let want = core::str::from_utf8(t).is_ok();
            for cut in 0..=t.len() {
                let u = crate::text::Utf8::new();
                let got = utf8_run(u, &t[..cut])
                    .valid()
                    .and_then(|u| utf8_run(u, &t[cut..]).valid())
                    .is_some_and(|u| u.complete());
                assert_eq!(got, want, "{t:x?} cut at {cut}");
            }
        }
    }

    /// Strings decode the same wherever the 64-byte chunks cut them:
    /// through a character, before an escape, at the closing quote; a
    /// character left open before an escape, or at the end, is refused.
    #[test]
    fn strings_decode_across_chunk_cuts() {
        for pad in 0..(READ_CHUNK + 8) {
            let x = "x".repeat(pad % 13);
            let mut text = format!("{{\"zz\":\"{}\",", "p".repeat(pad)).into_bytes();
            text.extend_from_slice(format!("\"a\":\"{x}ก\\n\\\"ไ\",\"b\":\"\"}}\n").as_bytes());
            for bad in [&b"\xe0\xb8\\n"[..], b"\xe0\\n\xb8\x81"] {
                text.extend_from_slice(format!("{{\"a\":\"{x}").as_bytes());
                text.extend_from_slice(bad);
                text.extend_from_slice(b"\",\"b\":\"\"}\n");
            }
            let lines = parse_all(&text);
            assert_eq!(lines.len(), 3, "pad {pad}");
            assert_eq!(lines[0].0, Line::Record, "pad {pad}");
            assert_eq!(lines[0].1, format!("{x}ก\n\"ไ"), "pad {pad}");
            assert_eq!((lines[1].0, lines[2].0), (Line::Skipped, Line::Skipped));
        }
    }

    /// Whitespace may sit around every separator of an object and an
    /// array; a separator missing, doubled or trailing is not a record.
    #[test]
    fn separators_with_and_without_whitespace() {
        let ok: [(&[u8], Scalar); 6] = [
            (b"{\"a\":\"x\",\"b\":\"y\",\"end\":[]}", Scalar::Array(0)),
            (b"{\"a\":\"x\",\"b\":\"y\",\"end\":[ \t]}", Scalar::Array(0)),
            (b"{\"a\":\"x\",\"b\":\"y\",\"end\":[1,2]}", Scalar::Array(2)),
            (
                b" \t{ \"a\" :\t\"x\" , \"b\": \"y\",\"end\" : [ 1 ,\r2 ,3\t] } \r",
                Scalar::Array(3),
            ),
            (
                b"{\"a\":\"x\",\"b\":\"y\",\"end\":[1,2,3,4,5,6,7]}",
                Scalar::Array(7),
            ),
            (b"{\"end\":true , \"b\":\"y\",\"a\":\"x\"}", Scalar::True),
        ];
        for (text, want) in ok {
            let mut line = text.to_vec();
            line.push(b'\n');
            let got = parse_all(&line);
            assert_eq!(got.len(), 1, "{:?}", String::from_utf8_lossy(text));
            assert_eq!(
                (got[0].0, got[0].3),
                (Line::Record, want),
                "{:?}",
                String::from_utf8_lossy(text)
            );
        }
        for bad in [
            &b"{\"a\":\"x\",\"b\":\"y\",\"end\":[1,]}"[..],
            b"{\"a\":\"x\",\"b\":\"y\",\"end\":[,1]}",
            b"{\"a\":\"x\",\"b\":\"y\",\"end\":[1 2]}",
            b"{\"a\":\"x\",\"b\":\"y\",\"end\":[1,2,3,4,5,6,7,8]}",
            b"{\"a\":\"x\",\"b\":\"y\",\"end\":[1",
            b"{\"a\":\"x\",\"b\":\"y\",}",
            b"{,\"a\":\"x\",\"b\":\"y\"}",
            b"{\"a\":\"x\",,\"b\":\"y\"}",
            b"{\"a\" \"x\",\"b\":\"y\"}",
            b"{\"a\"::\"x\",\"b\":\"y\"}",
            b"{\"a\":\"x\" \"b\":\"y\"}",
            b"[\"a\",\"x\"]",
            b"{\"a\":\"x\",\"b\":\"y\"",
        ] {
            skipped_then_next(bad);
        }
    }

    #[test]
    fn surrogate_pairs_decode() {
        let lines = parse_all(b"{\"a\":\"\\ud83d\\ude00\",\"b\":\"\"}");
        assert_eq!(lines[0].0, Line::RecordAtEof);
        assert_eq!(lines[0].1, "\u{1F600}");
    }

    #[test]
    fn a_reader_over_ram_and_a_counting_writer_never_call_the_port() {
        let text = b"{\"a\":\"x\",\"b\":\"y\"}\ngarbage\n{\"a\":\"\\u0e01\",\"b\":\"\"}";
        let mut port = MemPort::new();
        port.fail_all(crate::testing::Op::Read, Errno::EIO);
        let mut r = ByteReader::over(text);
        let mut got = Vec::new();
        loop {
            let mut a = [0u8; 20];
            let mut b = [0u8; 20];
            let mut strs = [StrField::new(&A, &mut a), StrField::new(&B, &mut b)];
            let line = read_record(&mut port, &mut r, &mut strs, &mut []).unwrap();
            if line == Line::Eof {
                break;
            }
            got.push((line, strs[0].value().to_vec()));
        }
        assert_eq!(
            got,
            [
                (Line::Record, b"x".to_vec()),
                (Line::Skipped, Vec::new()),
                (Line::RecordAtEof, "ก".as_bytes().to_vec()),
            ]
        );
        assert_eq!(r.offset() as usize, text.len());
        let mut w = LineWriter::new(NO_FD);
        w.string(&mut port, "q\"\u{1}ไทย".repeat(20).as_bytes())
            .unwrap();
        w.flush(&mut port).unwrap();
        assert_eq!(w.written(), 2 + 20 * (1 + 2 + 6 + 9));
        assert_eq!(port.writes, 0);
    }

    #[test]
    fn writer_escapes_and_reader_round_trips() {
        let mut port = MemPort::new();
        let fd = port.open(c"/f", Mode::Write).unwrap();
        let mut w = LineWriter::new(fd);
        let value = "q\"\\\n\r\t\u{1}ไทย/";
        w.raw(&mut port, b"{\"a\":").unwrap();
        w.string(&mut port, value.as_bytes()).unwrap();
        w.raw(&mut port, b",\"b\":\"\"}\n").unwrap();
        w.flush(&mut port).unwrap();
        port.close(fd).unwrap();
        let text = port.get(c"/f").unwrap();
        assert_eq!(w.written() as usize, text.len());
        let lines = parse_all(&text);
        assert_eq!(lines[0].1, value);
    }
}
