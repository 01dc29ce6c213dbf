//! Code-size benchmark: parse one JSON Lines record
//! `{"role":"user","content":"…"}` (escaped strings) into fixed buffers.
//!
//! Exactly one of the features `sjc-heapless`, `sjc-escstr`, `hand` selects the
//! parser; `write` adds the matching writer. `measure.sh` links the staticlib
//! into a minimal Cortex-M55 image and reports what it costs.
#![no_std]

#[cfg(any(
    all(feature = "hand", feature = "sjc-heapless"),
    all(feature = "hand", feature = "sjc-escstr"),
    all(feature = "sjc-escstr", feature = "sjc-heapless"),
    not(any(feature = "hand", feature = "sjc-heapless", feature = "sjc-escstr"))
))]
compile_error!("enable exactly one of: hand, sjc-heapless, sjc-escstr");

/// The record as the C side sees it.
#[repr(C)]
pub struct Rec {
    pub role: u8,
    pub len: u16,
    pub content: [u8; 256],
}

#[cfg(feature = "hand")]
const ROLES: [&str; 4] = ["user", "assistant", "system", "tool"];

#[cfg(any(feature = "sjc-heapless", feature = "sjc-escstr"))]
mod sjc {
    use serde::{Deserialize, Serialize};

    #[derive(Deserialize, Serialize, Clone, Copy)]
    #[serde(rename_all = "lowercase")]
    pub enum Role {
        User,
        Assistant,
        System,
        Tool,
    }

    #[cfg(feature = "write")]
    impl Role {
        pub fn from_u8(r: u8) -> Option<Self> {
            Some(match r {
                0 => Role::User,
                1 => Role::Assistant,
                2 => Role::System,
                3 => Role::Tool,
                _ => return None,
            })
        }
    }

    #[cfg(feature = "sjc-heapless")]
    #[derive(Deserialize)]
    struct Line {
        role: Role,
        content: serde_json_core::heapless::String<255>,
    }

    #[cfg(feature = "sjc-heapless")]
    pub fn parse(line: &[u8], out: &mut super::Rec) -> Option<()> {
        let mut scratch = [0u8; 255];
        let (l, _) = serde_json_core::from_slice_escaped::<Line>(line, &mut scratch).ok()?;
        let b = l.content.as_bytes();
        out.content.get_mut(..b.len())?.copy_from_slice(b);
        out.len = b.len() as u16;
        out.role = l.role as u8;
        Some(())
    }

    #[cfg(feature = "sjc-escstr")]
    #[derive(Deserialize)]
    struct Line<'a> {
        role: Role,
        #[serde(borrow)]
        content: serde_json_core::str::EscapedStr<'a>,
    }

    #[cfg(feature = "sjc-escstr")]
    pub fn parse(line: &[u8], out: &mut super::Rec) -> Option<()> {
        use serde_json_core::str::EscapedStringFragment as F;
        let (l, _) = serde_json_core::from_slice::<Line>(line).ok()?;
        let mut n = 0usize;
        for f in l.content.fragments() {
            let mut tmp = [0u8; 4];
            let b = match f.ok()? {
                F::NotEscaped(s) => s.as_bytes(),
                F::Escaped(c) => c.encode_utf8(&mut tmp).as_bytes(),
            };
            let end = n.checked_add(b.len())?;
            // Keep room for the C side's NUL.
            if end > 255 {
                return None;
            }
            out.content.get_mut(n..end)?.copy_from_slice(b);
            n = end;
        }
        out.len = n as u16;
        out.role = l.role as u8;
        Some(())
    }

    #[cfg(feature = "write")]
    #[derive(Serialize)]
    struct OutLine<'a> {
        role: Role,
        content: &'a str,
    }

    #[cfg(feature = "write")]
    pub fn write(rec: &super::Rec, out: &mut [u8]) -> Option<usize> {
        let content = core::str::from_utf8(rec.content.get(..rec.len as usize)?).ok()?;
        let l = OutLine {
            role: Role::from_u8(rec.role)?,
            content,
        };
        let n = serde_json_core::to_slice(&l, out).ok()?;
        *out.get_mut(n)? = b'\n';
        Some(n + 1)
    }
}

#[cfg(feature = "hand")]
mod hand {
    //! A flat-object JSON reader: one object of string (or skipped scalar)
    //! values, keys in any order, unknown keys skipped, escapes including
    //! \uXXXX surrogate pairs decoded to UTF-8.

    struct Cur<'a> {
        b: &'a [u8],
        i: usize,
    }

    impl Cur<'_> {
        fn peek(&self) -> Option<u8> {
            self.b.get(self.i).copied()
        }
        fn next(&mut self) -> Option<u8> {
            let c = self.peek()?;
            self.i += 1;
            Some(c)
        }
        fn ws(&mut self) {
            while matches!(self.peek(), Some(b' ' | b'\t' | b'\r' | b'\n')) {
                self.i += 1;
            }
        }
        fn eat(&mut self, c: u8) -> bool {
            self.ws();
            if self.peek() == Some(c) {
                self.i += 1;
                true
            } else {
                false
            }
        }
        fn hex4(&mut self) -> Option<u32> {
            let mut v = 0u32;
            for _ in 0..4 {
                let d = (self.next()? as char).to_digit(16)?;
                v = v << 4 | d;
            }
            Some(v)
        }
        /// Reads a string; stores it (unescaped) in `out` when given.
        /// Returns its unescaped length.
        fn string(&mut self, mut out: Option<&mut [u8]>) -> Option<usize> {
            if !self.eat(b'"') {
                return None;
            }
            let mut n = 0usize;
            loop {
                let b = self.next()?;
                let cp = match b {
                    b'"' => break,
                    b'\\' => match self.next()? {
                        e @ (b'"' | b'\\' | b'/') => e as u32,
                        b'b' => 8,
                        b'f' => 12,
                        b'n' => 10,
                        b'r' => 13,
                        b't' => 9,
                        b'u' => {
                            let hi = self.hex4()?;
                            if (0xD800..0xDC00).contains(&hi) {
                                if self.next()? != b'\\' || self.next()? != b'u' {
                                    return None;
                                }
                                let lo = self.hex4()?;
                                if !(0xDC00..0xE000).contains(&lo) {
                                    return None;
                                }
                                0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00)
                            } else {
                                hi
                            }
                        }
                        _ => return None,
                    },
                    0..=0x1f => return None,
                    _ => {
                        if let Some(o) = out.as_deref_mut() {
                            *o.get_mut(n)? = b;
                        }
                        n += 1;
                        continue;
                    }
                };
                // Lone low surrogates are rejected here.
                let c = char::from_u32(cp)?;
                let mut tmp = [0u8; 4];
                let s = c.encode_utf8(&mut tmp).as_bytes();
                if let Some(o) = out.as_deref_mut() {
                    o.get_mut(n..n + s.len())?.copy_from_slice(s);
                }
                n += s.len();
            }
            if let Some(o) = out {
                core::str::from_utf8(o.get(..n)?).ok()?;
            }
            Some(n)
        }
        /// Skips a number / true / false / null.
        fn scalar(&mut self) -> Option<()> {
            self.ws();
            let start = self.i;
            while matches!(
                self.peek(),
                Some(b'-' | b'+' | b'.' | b'0'..=b'9' | b'a'..=b'z' | b'A'..=b'Z')
            ) {
                self.i += 1;
            }
            (self.i > start).then_some(())
        }
    }

    pub fn parse(line: &[u8], out: &mut super::Rec) -> Option<()> {
        let mut c = Cur { b: line, i: 0 };
        let mut role = None;
        let mut len = None;
        if !c.eat(b'{') {
            return None;
        }
        if !c.eat(b'}') {
            loop {
                let mut key = [0u8; 8];
                let kn = c.string(Some(&mut key));
                if !c.eat(b':') {
                    return None;
                }
                match kn.and_then(|n| key.get(..n)) {
                    Some(b"role") => {
                        let mut r = [0u8; 9];
                        let n = c.string(Some(&mut r))?;
                        let r = r.get(..n)?;
                        role = super::ROLES.iter().position(|x| x.as_bytes() == r);
                    }
                    Some(b"content") => {
                        len = Some(c.string(Some(out.content.get_mut(..255)?))?);
                    }
                    _ => {
                        c.ws();
                        if c.peek() == Some(b'"') {
                            c.string(None)?;
                        } else {
                            c.scalar()?;
                        }
                    }
                }
                if c.eat(b',') {
                    continue;
                }
                if c.eat(b'}') {
                    break;
                }
                return None;
            }
        }
        c.ws();
        if c.i != line.len() {
            return None;
        }
        out.role = role? as u8;
        out.len = len? as u16;
        Some(())
    }

    #[cfg(feature = "write")]
    pub fn write(rec: &super::Rec, out: &mut [u8]) -> Option<usize> {
        struct W<'a> {
            o: &'a mut [u8],
            n: usize,
        }
        impl W<'_> {
            fn put(&mut self, b: &[u8]) -> Option<()> {
                let end = self.n.checked_add(b.len())?;
                self.o.get_mut(self.n..end)?.copy_from_slice(b);
                self.n = end;
                Some(())
            }
        }
        const HEX: &[u8; 16] = b"0123456789abcdef";
        let role = super::ROLES.get(rec.role as usize)?;
        let content = rec.content.get(..rec.len as usize)?;
        let mut w = W { o: out, n: 0 };
        w.put(b"{\"role\":\"")?;
        w.put(role.as_bytes())?;
        w.put(b"\",\"content\":\"")?;
        for &b in content {
            match b {
                b'"' => w.put(b"\\\"")?,
                b'\\' => w.put(b"\\\\")?,
                b'\n' => w.put(b"\\n")?,
                b'\r' => w.put(b"\\r")?,
                b'\t' => w.put(b"\\t")?,
                0..=0x1f => w.put(&[
                    b'\\',
                    b'u',
                    b'0',
                    b'0',
                    HEX[(b >> 4) as usize],
                    HEX[(b & 15) as usize],
                ])?,
                _ => w.put(&[b])?,
            }
        }
        w.put(b"\"}\n")?;
        Some(w.n)
    }
}

#[cfg(feature = "hand")]
use hand as imp;
#[cfg(all(
    not(feature = "hand"),
    any(feature = "sjc-heapless", feature = "sjc-escstr")
))]
use sjc as imp;

/// # Safety
/// `line` points to `len` readable bytes; `out` to a writable `Rec`.
#[no_mangle]
pub unsafe extern "C" fn bench_parse(line: *const u8, len: usize, out: *mut Rec) -> bool {
    if line.is_null() || out.is_null() {
        return false;
    }
    // SAFETY: checked non-NULL above; the caller guarantees the sizes.
    let (line, out) = unsafe { (core::slice::from_raw_parts(line, len), &mut *out) };
    imp::parse(line, out).is_some()
}

/// # Safety
/// `rec` points to a valid `Rec`; `out` to `out_max` writable bytes.
#[cfg(feature = "write")]
#[no_mangle]
pub unsafe extern "C" fn bench_write(rec: *const Rec, out: *mut u8, out_max: usize) -> usize {
    if rec.is_null() || out.is_null() {
        return 0;
    }
    // SAFETY: checked non-NULL above; the caller guarantees the sizes.
    let (rec, out) = unsafe { (&*rec, core::slice::from_raw_parts_mut(out, out_max)) };
    imp::write(rec, out).unwrap_or(0)
}

#[cfg(not(test))]
#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    loop {}
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;

    fn parse(s: &str) -> Option<(u8, std::string::String)> {
        let mut r = Rec {
            role: 9,
            len: 0,
            content: [0; 256],
        };
        // SAFETY: valid pointers to live locals.
        let ok = unsafe { bench_parse(s.as_ptr(), s.len(), &mut r) };
        ok.then(|| {
            (
                r.role,
                std::string::String::from_utf8(r.content[..r.len as usize].to_vec()).unwrap(),
            )
        })
    }

    #[test]
    fn parses_escapes() {
        let p = parse(r#"{"role":"assistant","content":"a\"b\\c\nd \u0e01 ข\/"}"#);
        assert_eq!(p, Some((1, "a\"b\\c\nd \u{e01} \u{e02}/".into())));
        // serde-json-core 0.7 rejects UTF-16 surrogate pairs (\ud83d\ude00);
        // the hand-written reader decodes them.
        let pair = parse(r#"{"role":"user","content":"\ud83d\ude00"}"#);
        assert_eq!(pair.is_some(), cfg!(feature = "hand"));
        assert_eq!(
            parse(r#" { "content" : "x" , "role" : "tool" } "#),
            Some((3, "x".into()))
        );
        assert_eq!(parse(r#"{"role":"user"}"#), None);
        assert_eq!(parse(r#"{"role":"nobody","content":""}"#), None);
        assert_eq!(parse(r#"{"role":"user","content":"torn"#), None);
        let long = std::format!(r#"{{"role":"user","content":"{}"}}"#, "x".repeat(256));
        assert_eq!(parse(&long), None);
        let fits = std::format!(r#"{{"role":"user","content":"{}"}}"#, "x".repeat(255));
        assert_eq!(parse(&fits).map(|p| p.1.len()), Some(255));
    }

    #[cfg(feature = "write")]
    #[test]
    fn round_trip() {
        let mut r = Rec {
            role: 2,
            len: 0,
            content: [0; 256],
        };
        let c = "q\"\\\n\u{e01}";
        r.content[..c.len()].copy_from_slice(c.as_bytes());
        r.len = c.len() as u16;
        let mut out = [0u8; 600];
        // SAFETY: valid pointers to live locals.
        let n = unsafe { bench_write(&r, out.as_mut_ptr(), out.len()) };
        let line = core::str::from_utf8(&out[..n]).unwrap();
        assert!(line.ends_with('\n'));
        assert_eq!(parse(line.trim_end()), Some((2, c.into())));
    }
}
