//! The JSON-line parser: one flat record a line, from a [`ByteReader`].

use super::fields::{ARRAY_MAX, Scalar, ScalarField, ScalarSet, StrField, padded};
use super::reader::{ByteReader, skip_line};
use crate::kernel::copy::copy_run;
use crate::kernel::packed::{Bad, Packed, Tagged, out_of_line};
use crate::kernel::swar::{W, plain_len, plain_len_in, quick_name};
use crate::port::{Errno, Port};

/// Longest field name that is matched; longer names are skipped as unknown
/// (after the same checks). At least the longest name a caller asks for:
/// `"content"`, 7 bytes; kept small, it sits on every parse's deepest frame.
const NAME_MAX: usize = 8;

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

/// Reads the next line as a flat object, filling `strs` and `scalars`.
/// Fields not listed are skipped when they are strings or scalars. A record
/// must contain every field of `strs`.
// Inlined: the one body is [`read_fields`].
#[inline(always)] // stack: see docs/STACK.md
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
#[inline(always)] // stack: see docs/STACK.md
pub fn read_fields<P: Port + ?Sized>(
    port: &mut P,
    r: &mut ByteReader<'_>,
    strs: &mut [StrField<'_>],
    scalars: &mut [ScalarField],
    set: Option<&mut ScalarSet<'_>>,
) -> Result<Line, Errno> {
    // One body, out of line, its result packed.
    out_of_line(
        (port, r),
        strs,
        scalars,
        set,
        |(port, r), strs, scalars, set| fields(port, r, strs, scalars, set),
    )
    .get()
}

impl Tagged for Line {
    fn tag(self) -> (u32, u32) {
        (self as u32 + 1, 0)
    }

    fn untag(tag: u32, _: u32) -> Self {
        match tag {
            1 => Line::Record,
            2 => Line::RecordAtEof,
            3 => Line::Skipped,
            _ => Line::Eof,
        }
    }
}

#[inline(always)] // instructions: see docs/STACK.md
fn fields<P: Port + ?Sized>(
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

/// Skips whitespace; when the byte there is `want`, consumes it and the
/// whitespace after it. The byte then peeked (`None`: the end of the file)
/// and whether `want` was consumed: a separator and what follows it in one
/// call (a field is `"name"`, `:`, its value, then `,` or `}`).
#[inline(always)] // stack: see docs/STACK.md
fn sep<P: Port + ?Sized>(port: &mut P, r: &mut ByteReader<'_>, want: u32) -> Result<Peeked, Bad> {
    sep_word(port, r, want).get()
}

/// [`sep`] where only the port's error can come (`Bad` as it is).
#[inline(always)] // stack: see docs/STACK.md
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

impl Tagged for Peeked {
    fn tag(self) -> (u32, u32) {
        (1, self.0)
    }

    fn untag(_: u32, low: u32) -> Self {
        Peeked(low)
    }
}

impl Peeked {
    /// The byte peeked, `None` at the end of the file.
    fn byte(self) -> Option<u8> {
        (self.0 & SOME != 0).then_some(self.0 as u8)
    }

    /// Whether the separator was consumed.
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
/// result packed.
fn sep_word<P: Port + ?Sized>(
    port: &mut P,
    r: &mut ByteReader<'_>,
    mut want: u32,
) -> Packed<Result<Peeked, Bad>> {
    loop {
        let b = match r.peek(port) {
            Ok(b) => b,
            Err(e) => return Packed::new(Err(e.into())),
        };
        match b {
            Some(b' ' | b'\t' | b'\r') => {}
            Some(b) if u32::from(b) == want => want = MATCHED,
            _ => {
                let low = b.map_or(0, |b| u32::from(b) | SOME) | (want & MATCHED);
                return Packed::new(Ok(Peeked(low)));
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
                        u.set(padded(name), Packed::new(Ok(v)));
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
#[inline(always)] // stack: see docs/STACK.md
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
#[inline(never)] // stack: see docs/STACK.md
pub(super) fn utf8_run(mut u: crate::text::Utf8, bytes: &[u8]) -> crate::text::Utf8 {
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
#[inline(always)] // stack: see docs/STACK.md
fn parse_number<P: Port + ?Sized>(port: &mut P, r: &mut ByteReader<'_>) -> Result<Scalar, Bad> {
    out_of_line(port, r, (), (), |port, r, (), ()| number_in(port, r)).get()
}

#[inline(always)] // stack: see docs/STACK.md
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

#[inline(always)] // stack: see docs/STACK.md
fn literal<P: Port + ?Sized>(
    port: &mut P,
    r: &mut ByteReader<'_>,
    rest: &[u8; 4],
) -> Result<(), Bad> {
    let rest = u32::from_le_bytes(*rest);
    out_of_line(port, r, rest, (), |port, r, rest, ()| {
        literal_in(port, r, rest)
    })
    .get()
}

#[inline(always)] // stack: see docs/STACK.md
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
