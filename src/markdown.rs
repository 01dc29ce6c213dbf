//! MEMORY.md: the memory store as a markdown list (`export_memory()`,
//! `import_memory()`; feature `agent`). The format is specified in
//! docs/SESSIONS.md:
//!
//! ```text
//! # Memory
//!
//! - **name**: Somchai
//! - **wifi\_pw** (pinned): hunter2
//! ```
//!
//! Keys and values are escaped so that export → import gives back the exact
//! bytes and a markdown viewer shows the text as it is:
//! `\\ \n \r \t` (backslash, newline, CR, tab); `\xHH` for other ASCII
//! control characters and a space at either end (a reader would trim it);
//! `\* \` \[ \] \< \> \~` (markdown punctuation); `\_` for an underscore not
//! between two word characters. The reader takes `\` + any ASCII punctuation
//! as that character (CommonMark) and a backslash before anything else as a
//! backslash.
//!
//! # Export: exactly what `recall()` says, in time linear in the store
//!
//! A store file may hold a key twice (a hand edit, an older writer, a torn
//! compaction); `recall()` gives the last valid line's value. Export lists
//! each key once with that value, in the order of those last lines: one
//! pass lists every valid line's key with its line number in a work buffer,
//! one sort (by key, then line) marks each line that a later line of the
//! same key supersedes, and one more pass writes the rest. Three reads of
//! the file and an O(n log n) sort of n 36-byte records — no re-scan per key.

use crate::memory::{self, KEY_MAX_BYTES, MAX_ENTRIES, VAL_MAX_BYTES};
use crate::port::{Errno, Port};

const HEADER: &[u8] = b"# Memory\n\n";
const PIN_MARK: &[u8] = b"(pinned)";
/// Bytes of one sort record: the key (NUL-padded) and the line number.
const REC: usize = KEY_MAX_BYTES + 1 + 4;

/// Why an export could not be made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExportError {
    /// The work buffer is smaller than [`export_work_size`] says.
    TooSmall,
    /// The store could not be read.
    Io(Errno),
}

/// Bytes of work buffer [`export`] needs for the store as it is now (every
/// line's exact size: superseded lines make the text shorter, never
/// longer).
pub fn export_work_size<P: Port>(p: &mut P) -> Result<usize, Errno> {
    let mut n = 0usize;
    let mut o = Out {
        buf: &mut [],
        len: 0,
        full: false,
        count: true,
    };
    memory::for_each(p, &mut |pair| {
        n += 1;
        write_line(&mut o, pair);
    })?;
    Ok(n * REC + n.div_ceil(8) + HEADER.len() + o.len)
}

fn write_line(o: &mut Out<'_>, pair: &memory::Pair) {
    o.put(b"- **");
    escape(o, pair.key());
    o.put(b"**");
    if pair.pinned() {
        o.put(b" (pinned)");
    }
    o.put(b":");
    if !pair.value().is_empty() {
        o.put(b" ");
        escape(o, pair.value());
    }
    o.put(b"\n");
}

fn word(c: u8) -> bool {
    c >= 0x80 || c.is_ascii_alphanumeric()
}

/// Appends `s` escaped.
fn escape(out: &mut Out<'_>, s: &[u8]) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    for (i, &c) in s.iter().enumerate() {
        match c {
            b'\\' => out.put(b"\\\\"),
            b'\n' => out.put(b"\\n"),
            b'\r' => out.put(b"\\r"),
            b'\t' => out.put(b"\\t"),
            b'*' | b'`' | b'[' | b']' | b'<' | b'>' | b'~' => out.put(&[b'\\', c]),
            b'_' => {
                let inside = i > 0
                    && s.get(i - 1).copied().is_some_and(word)
                    && s.get(i + 1).copied().is_some_and(word);
                if inside {
                    out.put(b"_");
                } else {
                    out.put(b"\\_");
                }
            }
            _ if c < 0x20 || c == 0x7F || (c == b' ' && (i == 0 || i + 1 == s.len())) => {
                let hi = HEX.get(usize::from(c >> 4)).copied().unwrap_or(b'0');
                let lo = HEX.get(usize::from(c & 15)).copied().unwrap_or(b'0');
                out.put(&[b'\\', b'x', hi, lo]);
            }
            _ => out.put(&[c]),
        }
    }
}

struct Out<'a> {
    buf: &'a mut [u8],
    len: usize,
    full: bool,
    /// Only count the bytes.
    count: bool,
}

impl Out<'_> {
    fn put(&mut self, b: &[u8]) {
        if self.count {
            self.len += b.len();
            return;
        }
        match self.buf.get_mut(self.len..self.len + b.len()) {
            Some(d) => {
                crate::text::copy_prefix(d, b);
                self.len += b.len();
            }
            None => self.full = true,
        }
    }
}

fn key_of(rec: &[u8]) -> &[u8] {
    let k = rec.get(..KEY_MAX_BYTES).unwrap_or(&[]);
    let n = usize::from(rec.get(KEY_MAX_BYTES).copied().unwrap_or(0));
    k.get(..n).unwrap_or(k)
}

fn line_of(rec: &[u8]) -> u32 {
    let b = rec.get(KEY_MAX_BYTES + 1..REC).unwrap_or(&[0; 4]);
    u32::from_le_bytes([
        b.first().copied().unwrap_or(0),
        b.get(1).copied().unwrap_or(0),
        b.get(2).copied().unwrap_or(0),
        b.get(3).copied().unwrap_or(0),
    ])
}

fn less(recs: &[u8], a: usize, b: usize) -> bool {
    let ra = recs.get(a * REC..(a + 1) * REC).unwrap_or(&[]);
    let rb = recs.get(b * REC..(b + 1) * REC).unwrap_or(&[]);
    (key_of(ra), line_of(ra)) < (key_of(rb), line_of(rb))
}

fn swap(recs: &mut [u8], a: usize, b: usize) {
    for k in 0..REC {
        let (x, y) = (a * REC + k, b * REC + k);
        let (vx, vy) = (recs.get(x).copied(), recs.get(y).copied());
        if let (Some(vx), Some(vy)) = (vx, vy) {
            if let Some(d) = recs.get_mut(x) {
                *d = vy;
            }
            if let Some(d) = recs.get_mut(y) {
                *d = vx;
            }
        }
    }
}

/// Heapsort of `n` records: no recursion, no allocation, O(n log n).
fn sort(recs: &mut [u8], n: usize) {
    let sift = |recs: &mut [u8], mut root: usize, end: usize| loop {
        let mut child = 2 * root + 1;
        if child >= end {
            break;
        }
        if child + 1 < end && less(recs, child, child + 1) {
            child += 1;
        }
        if !less(recs, root, child) {
            break;
        }
        swap(recs, root, child);
        root = child;
    };
    for start in (0..n / 2).rev() {
        sift(recs, start, n);
    }
    for end in (1..n).rev() {
        swap(recs, 0, end);
        sift(recs, 0, end);
    }
}

/// Writes MEMORY.md of the store into `work`; returns where the text is
/// (offset, length).
pub fn export<P: Port>(p: &mut P, work: &mut [u8]) -> Result<(usize, usize), ExportError> {
    // Pass 1: every valid line's key and line number.
    let mut n = 0usize;
    let mut over = false;
    memory::for_each(p, &mut |pair| {
        let Some(rec) = work.get_mut(n * REC..(n + 1) * REC) else {
            over = true;
            return;
        };
        rec.fill(0);
        crate::text::copy_prefix(rec, pair.key());
        if let Some(l) = rec.get_mut(KEY_MAX_BYTES) {
            *l = pair.key().len() as u8;
        }
        crate::text::copy_prefix(
            rec.get_mut(KEY_MAX_BYTES + 1..).unwrap_or(&mut []),
            &(n as u32).to_le_bytes(),
        );
        n += 1;
    })
    .map_err(ExportError::Io)?;
    if over {
        return Err(ExportError::TooSmall);
    }
    let (recs, rest) = work
        .split_at_mut_checked(n * REC)
        .ok_or(ExportError::TooSmall)?;
    let (bits, out) = rest
        .split_at_mut_checked(n.div_ceil(8))
        .ok_or(ExportError::TooSmall)?;
    bits.fill(0);
    // One sort: within a key, lines in file order; all but the last are
    // superseded.
    sort(recs, n);
    for i in 0..n {
        let r = recs.get(i * REC..(i + 1) * REC).unwrap_or(&[]);
        let next = recs.get((i + 1) * REC..(i + 2) * REC);
        if next.is_some_and(|nx| key_of(nx) == key_of(r)) {
            let line = line_of(r) as usize;
            if let Some(b) = bits.get_mut(line / 8) {
                *b |= 1 << (line % 8);
            }
        }
    }
    // Pass 2: the lines that are not superseded, in file order.
    let mut o = Out {
        buf: out,
        len: 0,
        full: false,
        count: false,
    };
    o.put(HEADER);
    let mut line = 0usize;
    memory::for_each(p, &mut |pair| {
        let superseded = bits
            .get(line / 8)
            .is_some_and(|b| b & (1 << (line % 8)) != 0);
        line += 1;
        if superseded || line > n {
            return;
        }
        write_line(&mut o, pair);
    })
    .map_err(ExportError::Io)?;
    if o.full {
        return Err(ExportError::TooSmall);
    }
    Ok((n * REC + n.div_ceil(8), o.len))
}

/// One parsed line of a MEMORY.md text.
#[derive(Debug, PartialEq, Eq)]
pub enum Line {
    /// A pair.
    Pair,
    /// Blank, a heading, a rule, a comment: not counted.
    Ignore,
    /// Skipped and reported, with why.
    Bad(Why),
}

/// Why a line was skipped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Why {
    /// Not a list item.
    NotItem = 1,
    /// `**key` without its closing `**`.
    NoClose = 2,
    /// No `:` after the key.
    NoColon = 3,
    /// `\x00` or `\x80`..`\xff`.
    BadEscape = 4,
    /// The key is empty or longer than 31 bytes.
    KeyLength = 5,
    /// The value is longer than 127 bytes.
    ValueLength = 6,
    /// Not UTF-8 once unescaped.
    NotUtf8 = 7,
}

impl Why {
    /// The text `import_memory()` reports.
    pub fn c_text(self) -> &'static core::ffi::CStr {
        match self {
            Why::NotItem => c"not a list item",
            Why::NoClose => c"no closing ** after the key",
            Why::NoColon => c"no ':' after the key",
            Why::BadEscape => c"\\x00 and \\x80..\\xff are not allowed",
            Why::KeyLength => c"key must be 1..31 bytes (CLAW_MEM_KEY_MAX)",
            Why::ValueLength => c"value must be 0..127 bytes (CLAW_MEM_VAL_MAX)",
            Why::NotUtf8 => c"text must be valid UTF-8",
        }
    }
}

/// A pair read from a line.
pub struct ParsedPair {
    /// The key.
    pub key: heapless::Vec<u8, KEY_MAX_BYTES>,
    /// The value.
    pub value: heapless::Vec<u8, VAL_MAX_BYTES>,
    /// Marked "(pinned)".
    pub pinned: bool,
}

fn is_space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\r')
}

fn trim(s: &[u8]) -> &[u8] {
    let start = s.iter().position(|&c| !is_space(c)).unwrap_or(s.len());
    let end = s
        .iter()
        .rposition(|&c| !is_space(c))
        .map_or(start, |e| e + 1);
    s.get(start..end).unwrap_or(&[])
}

/// Where the first unescaped `stop` is in `s`.
fn find(s: &[u8], stop: &[u8]) -> Option<usize> {
    let mut i = 0usize;
    while i < s.len() {
        if s.get(i) == Some(&b'\\') {
            i += 2;
            continue;
        }
        if s.get(i..i + stop.len()) == Some(stop) {
            return Some(i);
        }
        i += 1;
    }
    None
}

/// Whether the last character of `s` is an unescaped `c`.
fn ends_plain(s: &[u8], c: u8) -> bool {
    let mut plain = false;
    let mut i = 0usize;
    while i < s.len() {
        if s.get(i) == Some(&b'\\') && i + 1 < s.len() {
            plain = false;
            i += 2;
        } else {
            plain = i + 1 == s.len() && s.get(i) == Some(&c);
            i += 1;
        }
    }
    plain
}

fn is_rule(s: &[u8]) -> bool {
    let Some(&m) = s.first() else {
        return false;
    };
    matches!(m, b'-' | b'*' | b'_')
        && s.iter().all(|&c| c == m || is_space(c))
        && s.iter().filter(|&&c| c == m).count() >= 3
}

fn contains(s: &[u8], needle: &[u8]) -> bool {
    s.windows(needle.len()).any(|w| w == needle)
}

/// Unescapes `s` into `out`.
fn unescape<const N: usize>(s: &[u8], out: &mut heapless::Vec<u8, N>) -> Result<(), Why> {
    let long = if N == KEY_MAX_BYTES {
        Why::KeyLength
    } else {
        Why::ValueLength
    };
    let mut i = 0usize;
    while let Some(&c) = s.get(i) {
        let mut v = c;
        if c == b'\\' && i + 1 < s.len() {
            let e = s.get(i + 1).copied().unwrap_or(0);
            let hex = |j: usize| s.get(j).and_then(|&h| char::from(h).to_digit(16));
            match e {
                b'n' | b'r' | b't' => {
                    v = match e {
                        b'n' => b'\n',
                        b'r' => b'\r',
                        _ => b'\t',
                    };
                    i += 1;
                }
                b'x' if hex(i + 2).is_some() && hex(i + 3).is_some() => {
                    let x = hex(i + 2).unwrap_or(0) * 16 + hex(i + 3).unwrap_or(0);
                    if x == 0 || x > 0x7F {
                        return Err(Why::BadEscape);
                    }
                    v = x as u8;
                    i += 3;
                }
                _ if e.is_ascii_punctuation() => {
                    v = e;
                    i += 1;
                }
                _ => {}
            }
        }
        out.push(v).map_err(|_| long)?;
        i += 1;
    }
    Ok(())
}

/// Parses one line (without its `\n`); `in_comment` carries an HTML
/// comment over lines.
pub fn parse_line(line: &[u8], in_comment: &mut bool, pair: &mut ParsedPair) -> Line {
    let s = trim(line);
    if *in_comment {
        if contains(s, b"-->") {
            *in_comment = false;
        }
        return Line::Ignore;
    }
    if s.is_empty() || s.first() == Some(&b'#') {
        return Line::Ignore;
    }
    if let Some(rest) = s.strip_prefix(b"<!--") {
        *in_comment = !contains(rest, b"-->");
        return Line::Ignore;
    }
    if is_rule(s) {
        return Line::Ignore;
    }
    let item =
        matches!(s.first(), Some(b'-' | b'*' | b'+')) && s.get(1).is_some_and(|&c| is_space(c));
    if !item {
        return Line::Bad(Why::NotItem);
    }
    let s = trim(s.get(2..).unwrap_or(&[]));
    let (key, val, pinned);
    if let Some(inner) = s.strip_prefix(b"**") {
        // - **key**: value   - **key** (pinned): value   - **key:** value
        let Some(end) = find(inner, b"**") else {
            return Line::Bad(Why::NoClose);
        };
        let k = inner.get(..end).unwrap_or(&[]);
        let mut rest = trim(inner.get(end + 2..).unwrap_or(&[]));
        let mut pin = false;
        if let Some(r) = rest.strip_prefix(PIN_MARK) {
            pin = true;
            rest = trim(r);
        }
        if let Some(v) = rest.strip_prefix(b":") {
            key = k;
            val = v;
        } else if ends_plain(k, b':') {
            key = k.get(..k.len() - 1).unwrap_or(&[]);
            val = rest;
        } else {
            return Line::Bad(Why::NoColon);
        }
        pinned = pin;
    } else {
        // - key: value   - key (pinned): value
        let Some(colon) = find(s, b":") else {
            return Line::Bad(Why::NoColon);
        };
        let mut k = trim(s.get(..colon).unwrap_or(&[]));
        let mut pin = false;
        if let Some(before) = k.strip_suffix(PIN_MARK) {
            if before.last().is_some_and(|&c| is_space(c)) {
                pin = true;
                k = before;
            }
        }
        key = k;
        val = s.get(colon + 1..).unwrap_or(&[]);
        pinned = pin;
    }
    pair.key.clear();
    pair.value.clear();
    pair.pinned = pinned;
    if let Err(w) = unescape(trim(key), &mut pair.key) {
        return Line::Bad(if w == Why::ValueLength {
            Why::KeyLength
        } else {
            w
        });
    }
    if pair.key.is_empty() {
        return Line::Bad(Why::KeyLength);
    }
    if let Err(w) = unescape(trim(val), &mut pair.value) {
        return Line::Bad(w);
    }
    if !crate::text::is_utf8(&pair.key) || !crate::text::is_utf8(&pair.value) {
        return Line::Bad(Why::NotUtf8);
    }
    Line::Pair
}

/// Why an import stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ImportError {
    /// Strict mode: line `.0` is bad for `.1`. Nothing was written.
    Bad(u32, Why),
    /// The store and the text hold more than 32 keys. Nothing was written.
    Full,
    /// Writing line `.0` failed; `.1` pairs were stored before it.
    Write(u32, u32),
    /// The store could not be read. Nothing was written.
    Io(Errno),
}

/// Bytes of work buffer [`import`] needs.
pub(crate) const IMPORT_WORK: usize = MAX_ENTRIES * (KEY_MAX_BYTES + 1);

fn next_line<'a>(text: &'a [u8], pos: &mut usize) -> Option<&'a [u8]> {
    let rest = text.get(*pos..).filter(|r| !r.is_empty())?;
    let end = rest.iter().position(|&c| c == b'\n').unwrap_or(rest.len());
    *pos += end + 1;
    rest.get(..end)
}

fn key_in(keys: &[u8], n: usize, key: &[u8]) -> bool {
    (0..n).any(|i| {
        let r = keys
            .get(i * (KEY_MAX_BYTES + 1)..(i + 1) * (KEY_MAX_BYTES + 1))
            .unwrap_or(&[]);
        let len = usize::from(r.first().copied().unwrap_or(0));
        r.get(1..1 + len) == Some(key)
    })
}

fn key_add(keys: &mut [u8], n: &mut usize, key: &[u8]) -> bool {
    let Some(r) = keys.get_mut(*n * (KEY_MAX_BYTES + 1)..(*n + 1) * (KEY_MAX_BYTES + 1)) else {
        return false;
    };
    if let Some(l) = r.first_mut() {
        *l = key.len() as u8;
    }
    crate::text::copy_prefix(r.get_mut(1..).unwrap_or(&mut []), key);
    *n += 1;
    true
}

/// `import_memory(text, strict)`: every line is checked and the keys
/// counted before a byte is written (strict mode and the capacity check
/// are all-or-nothing); then each pair is stored (a key listed twice: the
/// last line wins) with its pin as the line says. `bad(line, why)` hears of
/// each skipped line. Returns how many distinct keys the text held.
pub fn import<P: Port>(
    p: &mut P,
    text: &[u8],
    strict: bool,
    work: &mut [u8],
    bad: impl FnMut(u32, Why),
) -> Result<u32, ImportError> {
    let text_keys = check_keys(p, text, strict, work, bad)?;
    if text_keys == 0 {
        return Ok(0);
    }
    store_pairs(p, text, work)?;
    Ok(text_keys)
}

/// Pass 1 of [`import`] and the room check: the text's keys (their
/// count), and `Full` when they and the store's would pass
/// [`MAX_ENTRIES`]. Out of line: its state (and `bad`'s) is off the stack
/// when pass 2 edits the store.
#[inline(never)] // stack: see docs/STACK.md
fn check_keys<P: Port>(
    p: &mut P,
    text: &[u8],
    strict: bool,
    work: &mut [u8],
    mut bad: impl FnMut(u32, Why),
) -> Result<u32, ImportError> {
    let mut nkeys = text_keys(text, strict, work, &mut bad)?;
    let text_keys = nkeys as u32;
    if nkeys == 0 {
        return Ok(0);
    }
    // The keys after the import: the text's and the store's.
    let mut full = false;
    memory::for_each(p, &mut |pr| {
        if !key_in(work, nkeys, pr.key()) && !key_add(work, &mut nkeys, pr.key()) {
            full = true;
        }
    })
    .map_err(ImportError::Io)?;
    if full {
        return Err(ImportError::Full);
    }
    Ok(text_keys)
}

/// Pass 1 of [`import`]: checks every line and lists the text's keys in
/// `work`; returns how many (its own frame, not on the stack under the
/// store's).
// stack: see docs/STACK.md
#[inline(never)]
fn text_keys(
    text: &[u8],
    strict: bool,
    work: &mut [u8],
    bad: &mut impl FnMut(u32, Why),
) -> Result<usize, ImportError> {
    let mut pair = ParsedPair {
        key: heapless::Vec::new(),
        value: heapless::Vec::new(),
        pinned: false,
    };
    let mut nkeys = 0usize;
    let mut comment = false;
    let mut pos = 0usize;
    let mut line_no = 0u32;
    while let Some(line) = next_line(text, &mut pos) {
        line_no += 1;
        match parse_line(line, &mut comment, &mut pair) {
            Line::Bad(why) if strict => return Err(ImportError::Bad(line_no, why)),
            Line::Bad(why) => bad(line_no, why),
            Line::Pair
                if !key_in(work, nkeys, &pair.key) && !key_add(work, &mut nkeys, &pair.key) =>
            {
                return Err(ImportError::Full);
            }
            _ => {}
        }
    }
    Ok(nkeys)
}

/// Pass 2 of [`import`]: stores each pair. The key table in `work` is done
/// with: each pair is parsed into it, so that no parsed copy is on the
/// stack while the store is edited. Inlined: its few locals join the
/// export's frame rather than add a frame above the store's edit.
// stack: see docs/STACK.md
#[inline(always)]
fn store_pairs<P: Port>(p: &mut P, text: &[u8], work: &mut [u8]) -> Result<(), ImportError> {
    let mut comment = false;
    let mut pos = 0usize;
    let mut line_no = 0u32;
    let mut written = 0u32;
    while let Some(line) = next_line(text, &mut pos) {
        line_no += 1;
        let Some((klen, vlen, pinned)) = parse_into(line, &mut comment, work) else {
            continue;
        };
        let key = work.get(..klen).unwrap_or(&[]);
        let value = work.get(KEY_MAX_BYTES..KEY_MAX_BYTES + vlen).unwrap_or(&[]);
        // `set`, then `pin` (its key passed `set`'s check), through one
        // inlined edit (code size: an edit inlined once, not twice).
        let mut e = memory::Edit::Set(value);
        let ok = memory::validate(key, value).is_ok()
            && loop {
                if memory::edit(p, key, e).is_err() {
                    break false;
                }
                match e {
                    memory::Edit::Set(_) => e = memory::Edit::Pin(pinned),
                    _ => break true,
                }
            };
        if !ok {
            return Err(ImportError::Write(line_no, written));
        }
        written += 1;
    }
    Ok(())
}

/// [`parse_line`] for a pair, copied into `work`: the key at 0, the value
/// at [`KEY_MAX_BYTES`]. Returns (key length, value length, pinned).
// stack: see docs/STACK.md
#[inline(never)]
fn parse_into(line: &[u8], comment: &mut bool, work: &mut [u8]) -> Option<(usize, usize, bool)> {
    let mut pair = ParsedPair {
        key: heapless::Vec::new(),
        value: heapless::Vec::new(),
        pinned: false,
    };
    if parse_line(line, comment, &mut pair) != Line::Pair {
        return None;
    }
    let (k, v) = work.split_at_mut_checked(KEY_MAX_BYTES)?;
    let v = v.get_mut(..pair.value.len())?;
    crate::text::copy_prefix(k, &pair.key);
    crate::text::copy_prefix(v, &pair.value);
    Some((pair.key.len(), pair.value.len(), pair.pinned))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::port::MEMORY_PATH;
    use crate::testing::MemPort;

    fn export_text(p: &mut MemPort) -> String {
        let mut work = vec![0u8; export_work_size(p).unwrap()];
        let (off, len) = export(p, &mut work).unwrap();
        String::from_utf8(work[off..off + len].to_vec()).unwrap()
    }

    #[test]
    fn export_says_what_recall_says_key_by_key() {
        let mut p = MemPort::new();
        let long = "v".repeat(100);
        let store = format!(
            "{{\"key\":\"a\",\"value\":\"old\"}}\n{{\"key\":\"b\",\"value\":\"{long}\"}}\n\
             {{\"key\":\"a\",\"value\":\"new\"}}\ngarbage\n{{\"key\":\"c\",\"value\":\"x_y *z*\"}}\n"
        );
        p.put(MEMORY_PATH, store.as_bytes());
        let text = export_text(&mut p);
        assert_eq!(
            text,
            format!("# Memory\n\n- **b**: {long}\n- **a**: new\n- **c**: x_y \\*z\\*\n")
        );
        // Round trip into an empty store.
        let mut q = MemPort::new();
        let mut work = [0u8; IMPORT_WORK];
        let n = import(&mut q, text.as_bytes(), true, &mut work, |_, _| {}).unwrap();
        assert_eq!(n, 3);
        let mut v = [0u8; 127];
        let got = memory::get(&mut q, b"b", &mut v).unwrap();
        assert_eq!(&v[..got], long.as_bytes());
    }

    #[test]
    fn export_is_linear_on_a_big_hand_made_store() {
        let mut p = MemPort::new();
        let mut store = String::new();
        for i in 0..10_000 {
            store.push_str(&format!(
                "{{\"key\":\"k{}\",\"value\":\"v{i}\"}}\n",
                i % 5000
            ));
        }
        p.put(MEMORY_PATH, store.as_bytes());
        let text = export_text(&mut p);
        assert_eq!(text.lines().count(), 2 + 5000);
        assert!(text.contains("- **k42**: v5042\n"));
    }

    #[test]
    fn parse_lines() {
        let mut pair = ParsedPair {
            key: heapless::Vec::new(),
            value: heapless::Vec::new(),
            pinned: false,
        };
        let mut c = false;
        assert_eq!(
            parse_line(b"- **k** (pinned): v", &mut c, &mut pair),
            Line::Pair
        );
        assert!(pair.pinned);
        assert_eq!(
            parse_line(b"- key (pinned): v", &mut c, &mut pair),
            Line::Pair
        );
        assert_eq!(&pair.key[..], b"key");
        assert_eq!(parse_line(b"- **k:** v", &mut c, &mut pair), Line::Pair);
        assert_eq!(
            parse_line(b"plain", &mut c, &mut pair),
            Line::Bad(Why::NotItem)
        );
        assert_eq!(
            parse_line(b"- **k: v", &mut c, &mut pair),
            Line::Bad(Why::NoClose)
        );
        assert_eq!(
            parse_line(b"- k v", &mut c, &mut pair),
            Line::Bad(Why::NoColon)
        );
        assert_eq!(
            parse_line(b"- k: \\x00", &mut c, &mut pair),
            Line::Bad(Why::BadEscape)
        );
        assert_eq!(parse_line(b"<!-- a", &mut c, &mut pair), Line::Ignore);
        assert!(c);
        assert_eq!(parse_line(b"- k: v", &mut c, &mut pair), Line::Ignore);
        assert_eq!(parse_line(b"-->", &mut c, &mut pair), Line::Ignore);
        assert_eq!(parse_line(b"---", &mut c, &mut pair), Line::Ignore);
        let long = format!("- {}: v", "k".repeat(32));
        assert_eq!(
            parse_line(long.as_bytes(), &mut c, &mut pair),
            Line::Bad(Why::KeyLength)
        );
    }
}
