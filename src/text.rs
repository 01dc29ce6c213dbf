//! UTF-8 helpers: every cut the core makes lands on a character boundary.

use crate::kernel::swar::plain_run;

/// The longest prefix of `s` that is at most `max` bytes and ends on a
/// character boundary. `s` must be valid UTF-8.
pub fn floor_char_boundary(s: &[u8], max: usize) -> usize {
    if s.len() <= max {
        return s.len();
    }
    let mut end = max;
    // A continuation byte is 0b10xx_xxxx: step back over at most three.
    while end > 0 && s.get(end).is_some_and(|b| b & 0xC0 == 0x80) {
        end -= 1;
    }
    end
}

/// Copies `src` into the start of `dst`, as much as fits. Unlike
/// `copy_from_slice` it has no length check that could panic.
pub fn copy_prefix(dst: &mut [u8], src: &[u8]) {
    let n = dst.len().min(src.len());
    if let (Some(d), Some(s)) = (dst.get_mut(..n), src.get(..n)) {
        // Both exactly `n` long: the length check cannot fail.
        d.copy_from_slice(s);
    }
}

/// Whether `s` is UTF-8 (the same rules as `core::str::from_utf8`).
pub fn is_utf8(s: &[u8]) -> bool {
    let mut v = Utf8::new();
    // (ASCII outside a character without the call.)
    s.iter().all(|&b| b < 0x80 && v.complete() || v.feed(b)) && v.complete()
}

/// UTF-8 checked a byte at a time (so that a field can be checked without
/// keeping it): no overlong forms, surrogates or code points past U+10FFFF.
/// Also what [`is_utf8`] uses, instead of `core::str::from_utf8` (its
/// fast paths cost flash).
// One word (the code point so far in bits 0..21, the bytes still needed in
// bits 24..26, the sequence's continuation bytes in bits 28..30, which give
// the smallest code point it may encode): it sits on the JSON reader's
// frame, on the deepest path of every load.
#[derive(Clone, Copy)]
pub struct Utf8(u32);

impl Utf8 {
    /// Nothing seen yet.
    pub const fn new() -> Self {
        Self(0)
    }

    /// Takes the next byte; false when the text cannot be UTF-8.
    // (One copy of the check: [`Utf8::fed`]; after a false the state is
    // [`Utf8::INVALID`].)
    // stack: see docs/STACK.md
    #[inline(always)]
    pub fn feed(&mut self, b: u8) -> bool {
        *self = self.fed(b);
        self.valid().is_some()
    }

    /// [`Utf8::feed`] inlined (a loop over a run keeps the state in
    /// registers: no frame under the JSON reader's string decode).
    // stack: see docs/STACK.md
    #[inline(always)]
    pub fn feed_inline(&mut self, b: u8) -> bool {
        if self.complete() {
            let (need, bits) = match b {
                0x00..=0x7F => return true,
                0xC2..=0xDF => (1, b & 0x1F),
                0xE0..=0xEF => (2, b & 0x0F),
                0xF0..=0xF4 => (3, b & 0x07),
                _ => return false,
            };
            self.0 = u32::from(bits) | need << 24 | need << 28;
            return true;
        }
        if b & 0xC0 != 0x80 {
            return false;
        }
        // One byte less needed (at least one is: not complete), the code
        // point shifted in (few temporaries: a leaf with a small frame).
        let cp = ((self.0 & 0x1F_FFFF) << 6) | u32::from(b & 0x3F);
        let rest = self.0.wrapping_sub(1 << 24) & !0x1F_FFFF;
        self.0 = rest | cp;
        if rest & (3 << 24) != 0 {
            return true;
        }
        // The smallest code point of its length: 0x80, 0x800, 0x1_0000.
        let len = rest >> 28 & 3;
        let min = 0x80u32.wrapping_shl(4 * len.wrapping_sub(1) + (len >> 1 & len & 1));
        cp >= min && cp <= 0x10_FFFF && !(0xD800..=0xDFFF).contains(&cp)
    }

    /// What [`Utf8::fed`] gives for text that cannot be UTF-8 (a state no
    /// text reaches).
    pub const INVALID: Utf8 = Utf8(u32::MAX);

    /// [`Utf8::feed`] by value (the state comes back in a register): the
    /// next state, or [`Utf8::INVALID`].
    // stack: see docs/STACK.md
    #[inline(never)]
    pub fn fed(mut self, b: u8) -> Self {
        if self.feed_inline(b) {
            self
        } else {
            Self::INVALID
        }
    }

    /// The state, `None` when [`Utf8::INVALID`].
    // stack: see docs/STACK.md
    #[inline(always)]
    pub fn valid(self) -> Option<Self> {
        (self.0 != u32::MAX).then_some(self)
    }

    /// True when no character is left open.
    pub fn complete(&self) -> bool {
        self.0 & (3 << 24) == 0
    }
}

impl Default for Utf8 {
    fn default() -> Self {
        Self::new()
    }
}

/// Validates `s` and returns how many of its bytes to keep so that the kept
/// part is at most `max` bytes of whole characters; `None` when `s` is not
/// UTF-8.
pub fn utf8_prefix(s: &[u8], max: usize) -> Option<usize> {
    if !is_utf8(s) {
        return None;
    }
    Some(floor_char_boundary(s, max))
}

/// The character at the start of `s`: (its length when it is a whole valid
/// UTF-8 sequence, else 0; the bytes the decoder took before it stopped,
/// which is `s.len()` for a sequence cut by the end of `s`).
fn leading_char(s: &[u8]) -> (usize, usize) {
    let mut v = Utf8::new();
    let mut k = 0usize;
    for &c in s {
        if !v.feed(c) {
            break;
        }
        k += 1;
        if v.complete() {
            return (k, k);
        }
    }
    (0, k)
}

/// Copies `src` into `dst` as valid UTF-8 without NUL, as much as fits on
/// a character boundary: a byte that is not part of a valid sequence, and a
/// NUL, become `?`; with `spaces`, other control characters become spaces
/// (for one-line texts). For text that comes from outside the core and must
/// be shown or stored whole (a tool's result, an exception's text).
pub fn sanitize_into(src: &[u8], dst: &mut [u8], spaces: bool) -> usize {
    let mut i = 0usize;
    let mut n = 0usize;
    while let Some(&b) = src.get(i) {
        // The length of the valid sequence starting here, or 0.
        let seq = match b {
            0x00..=0x7F => 1,
            _ => leading_char(src.get(i..).unwrap_or(&[])).0,
        };
        let (piece, take): (&[u8], usize) = match seq {
            0 => (b"?", 1),
            1 if b == 0 => (b"?", 1),
            1 if spaces && (b < 0x20 || b == 0x7F) => (b" ", 1),
            _ => (src.get(i..i + seq).unwrap_or(b"?"), seq),
        };
        let Some(d) = dst.get_mut(n..n + piece.len()) else {
            break;
        };
        copy_prefix(d, piece);
        n += piece.len();
        i += take;
    }
    n
}

/// [`sanitize_into`] in place for the first `len` bytes of `buf` (no
/// control characters changed), where nothing grows: returns the new
/// length (a sequence cut at the end is dropped).
pub fn sanitize_in_place(buf: &mut [u8], len: usize) -> usize {
    let len = len.min(buf.len());
    let mut i = 0usize;
    while i < len {
        let b = buf.get(i).copied().unwrap_or(0);
        let seq = if b < 0x80 {
            usize::from(b != 0)
        } else {
            let (ok, k) = leading_char(buf.get(i..len).unwrap_or(&[]));
            if ok == 0 && i + k >= len {
                // A character cut by the end of the text: drop it.
                return i;
            }
            ok
        };
        if seq == 0 {
            if let Some(d) = buf.get_mut(i) {
                *d = b'?';
            }
            i += 1;
        } else {
            i += seq;
        }
    }
    len
}

/// A character at the start of `s` (not empty) as [`escape`] writes it: its
/// bytes in `s`, and its escape in `out` (0: the character as it is).
fn escape_of(s: &[u8], out: &mut [u8; 6]) -> (usize, usize) {
    let b0 = s.first().copied().unwrap_or(0);
    let b1 = s.get(1).copied().unwrap_or(0);
    let b2 = s.get(2).copied().unwrap_or(0);
    let (take, code) = match b0 {
        0x00..=0x1F | 0x7F => (1, b0),
        // U+0080..U+009F.
        0xC2 if (0x80..=0x9F).contains(&b1) => (2, b1),
        // U+2028, U+2029.
        0xE2 if b1 == 0x80 && b2 | 1 == 0xA9 => {
            copy_prefix(out, b"\\u202");
            out[5] = b'8' + (b2 & 1);
            return (3, 6);
        }
        // Any other character, whole (a byte of a broken one alone).
        0xC0..=0xDF => return (2, 0),
        0xE0..=0xEF => return (3, 0),
        0xF0..=0xF7 => return (4, 0),
        _ => return (1, 0),
    };
    let short = match code {
        b'\n' => b'n',
        b'\r' => b'r',
        b'\t' => b't',
        _ => 0,
    };
    out[0] = b'\\';
    if short != 0 {
        out[1] = short;
        return (take, 2);
    }
    let hex = |v: u8| if v < 10 { b'0' + v } else { b'a' - 10 + v };
    out[1] = b'x';
    out[2] = hex(code >> 4);
    out[3] = hex(code & 15);
    (take, 4)
}

/// Writes `s` into `dst` (`None`: only counts) as the context shows text:
/// one record a line. A line break or another control character would
/// let stored text (a memory value, a tool's result) start a line of its
/// own, so these are written as visible escapes, in the form Python's
/// `repr()` gives them:
///
/// | character | written as |
/// |---|---|
/// | LF, CR, TAB | `\n`, `\r`, `\t` |
/// | any other of U+0000..U+001F, U+007F..U+009F | `\xHH` (two lower-case hex digits) |
/// | U+2028, U+2029 (line and paragraph separators) | `\u2028`, `\u2029` |
///
/// Every other character is copied as it is, `\` and `"` included: this
/// is not JSON escaping (the binding escapes the whole context for the
/// request body), and a stored `\n` (a backslash, then `n`) reads the same
/// as an escaped line feed. At most `room` bytes are written: the output
/// stops before the first character whose rendering would pass it (never
/// half a character, never half an escape). Returns (bytes of `s` taken,
/// bytes written).
pub fn escape(mut dst: Option<&mut [u8]>, s: &[u8], room: usize) -> (usize, usize) {
    let (mut i, mut o) = (0usize, 0usize);
    let mut esc = [0u8; 6];
    loop {
        // A run copied as it is, cut to the room on a character (the byte
        // that ends a run starts one).
        let rest = s.get(i..).unwrap_or(&[]);
        let run = plain_run(rest);
        let fit = floor_char_boundary(rest, room.saturating_sub(o)).min(run);
        copy(&mut dst, o, rest.get(..fit).unwrap_or(&[]));
        i += fit;
        o += fit;
        if fit < run || i >= s.len() {
            return (i, o);
        }
        // The character that ended it.
        let (take, n) = escape_of(rest.get(fit..).unwrap_or(&[]), &mut esc);
        let take = take.min(s.len() - i);
        let piece = match n {
            0 => s.get(i..i + take).unwrap_or(&[]),
            n => esc.get(..n).unwrap_or(&[]),
        };
        if o + piece.len() > room {
            return (i, o);
        }
        copy(&mut dst, o, piece);
        i += take;
        o += piece.len();
    }
}

/// Copies `piece` to `dst` at `o`, when there is a `dst`.
fn copy(dst: &mut Option<&mut [u8]>, o: usize, piece: &[u8]) {
    if let Some(d) = dst.as_deref_mut() {
        copy_prefix(d.get_mut(o..).unwrap_or(&mut []), piece);
    }
}

/// The bytes [`escape`] writes for `s`, whole.
// stack: see docs/STACK.md
#[inline(always)]
pub fn escaped_len(s: &[u8]) -> usize {
    escape(None, s, usize::MAX).1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cuts_thai_on_character_boundaries() {
        let s = "สวัสดี".as_bytes(); // 6 characters of 3 bytes
        for max in 0..=s.len() {
            let n = floor_char_boundary(s, max);
            assert!(n <= max);
            assert_eq!(n, max / 3 * 3);
            assert!(core::str::from_utf8(&s[..n]).is_ok());
        }
    }

    #[test]
    fn the_checker_agrees_with_core() {
        let cases: [&[u8]; 12] = [
            b"",
            b"plain",
            "ไทย".as_bytes(),
            "😀".as_bytes(),
            &[0xC0, 0x80],
            &[0xED, 0xA0, 0x80],
            &[0xF4, 0x90, 0x80, 0x80],
            &[0xE0, 0xB8],
            &[0x80],
            &[0xFF],
            &[0xE2, 0x82, 0xAC],
            &[0xF0, 0x9F, 0x98],
        ];
        for c in cases {
            assert_eq!(is_utf8(c), core::str::from_utf8(c).is_ok(), "{c:?}");
        }
        for b in 0..=255u8 {
            for b2 in [0x80u8, 0xBF, 0x41] {
                let s = [b, b2];
                assert_eq!(is_utf8(&s), core::str::from_utf8(&s).is_ok(), "{s:?}");
            }
        }
    }

    #[test]
    fn sanitizes() {
        let mut out = [0u8; 16];
        let n = sanitize_into(b"a\xffb\x00c\n\xe0\xb8", &mut out, true);
        assert_eq!(&out[..n], b"a?b?c ??");
        let n = sanitize_into("กขค".as_bytes(), &mut out[..7], false);
        assert_eq!(&out[..n], "กข".as_bytes());
        let n = sanitize_into(b"x\ty", &mut out, false);
        assert_eq!(&out[..n], b"x\ty");
    }

    #[test]
    fn sanitizes_in_place() {
        let mut b = *b"a\xffb\x00c\xe0\xb8";
        let n = sanitize_in_place(&mut b, 7);
        assert_eq!(&b[..n], b"a?b?c");
        let mut t = "กข".as_bytes().to_vec();
        assert_eq!(sanitize_in_place(&mut t, 6), 6);
    }

    /// The escape rule against Python's `repr()` of the same characters
    /// (the form the docs name), every character of the three ranges, and
    /// every cut.
    #[test]
    #[cfg_attr(miri, ignore)] // long; no unsafe code under test
    fn escapes_what_could_break_a_line() {
        let esc = |s: &str| {
            let mut out = vec![0u8; 8 * s.len()];
            let (took, n) = escape(Some(&mut out), s.as_bytes(), usize::MAX);
            assert_eq!(took, s.len());
            assert_eq!(n, escaped_len(s.as_bytes()));
            String::from_utf8(out[..n].to_vec()).unwrap()
        };
        assert_eq!(esc("a\nb"), "a\\nb");
        assert_eq!(esc("\r\n\t"), "\\r\\n\\t");
        assert_eq!(esc("\u{0}\u{1b}[2J\u{7f}"), "\\x00\\x1b[2J\\x7f");
        assert_eq!(esc("x\u{85}y\u{9f}\u{a0}©"), "x\\x85y\\x9f\u{a0}©");
        assert_eq!(
            esc("\u{2028}\u{2029}\u{2027}—…"),
            "\\u2028\\u2029\u{2027}—…"
        );
        assert_eq!(esc("\\n \"quoted\" สวัสดี"), "\\n \"quoted\" สวัสดี");
        for c in (0u32..0x300)
            .chain(0x2000..0x2100)
            .filter_map(char::from_u32)
        {
            let s = c.to_string();
            let want = match c {
                '\n' => "\\n".to_string(),
                '\r' => "\\r".to_string(),
                '\t' => "\\t".to_string(),
                '\u{0}'..='\u{1f}' | '\u{7f}'..='\u{9f}' => format!("\\x{:02x}", c as u32),
                '\u{2028}' | '\u{2029}' => format!("\\u{:04x}", c as u32),
                _ => s.clone(),
            };
            assert_eq!(esc(&s), want, "U+{:04X}", c as u32);
            // Within a run of plain bytes on both sides, at every offset
            // of the eight-byte steps.
            for pad in 0..9 {
                let p = "ab".repeat(pad);
                assert_eq!(esc(&format!("{p}{s}{p}")), format!("{p}{want}{p}"));
            }
        }
        // Cut: never half a character, never half an escape.
        let s = "ก\n\u{2028}x\u{1}";
        let full = esc(s);
        for room in 0..=full.len() + 1 {
            let mut out = vec![0u8; 64];
            let (took, n) = escape(Some(&mut out), s.as_bytes(), room);
            assert!(n <= room);
            assert!(s.is_char_boundary(took), "{room}");
            assert_eq!(out[..n], full.as_bytes()[..n], "{room}");
            assert_eq!(esc(&s[..took]).len(), n, "{room}");
            let next = s[took..]
                .chars()
                .next()
                .map_or(0, |c| esc(&c.to_string()).len());
            assert!(took == s.len() || n + next > room, "{room}: stopped early");
        }
        // Bytes that are not UTF-8 (never in the ring or the store) are
        // copied, nothing read past the end.
        let mut out = [0u8; 16];
        assert_eq!(escape(Some(&mut out), &[0xE2, 0x80], usize::MAX), (2, 2));
        assert_eq!(escape(Some(&mut out), &[0xC2], usize::MAX), (1, 1));
        assert_eq!(escape(Some(&mut out), &[0xFF, 0x0A], usize::MAX), (2, 3));
    }

    #[test]
    fn rejects_invalid_utf8() {
        assert_eq!(utf8_prefix(b"ok", 10), Some(2));
        assert_eq!(utf8_prefix(&[0xE0, 0x80], 10), None);
        assert_eq!(utf8_prefix(&[0xFF], 10), None);
    }
}
