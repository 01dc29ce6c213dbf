//! The context builder as it was before it read the store once (issue 12):
//! the reference of the equivalence test. Its escapes (issue 23) are made
//! a character at a time, from the rule as `crate::text::escape` states it.

use crate::memory;
use crate::message::Message;
use crate::port::Port;
use crate::session::Session;
use crate::session::ring::SessionRing;

const MEMORY_HEADER: &[u8] = b"Memory:\n";
const CONVERSATION_HEADER: &[u8] = b"Conversation:\n";
/// Memory lines considered (the store holds 32; a hand-made store may hold
/// more, and lines past this are never chosen). At most 64: the chosen
/// lines are a `u64` bitmap.
const MEMORY_LINES_MAX: usize = 40;

/// A bounded output buffer; `push` refuses what does not fit.
struct Out<'a> {
    buf: &'a mut [u8],
    len: usize,
}

impl Out<'_> {
    fn push(&mut self, bytes: &[u8]) {
        if let Some(dst) = self.buf.get_mut(self.len..self.len + bytes.len()) {
            crate::text::copy_prefix(dst, bytes);
            self.len += bytes.len();
        }
    }
}

/// Longest memory line once escaped.
const LINE_MAX: usize = 255;

/// Each character of `text` as the context writes it.
fn units(text: &[u8]) -> Vec<Vec<u8>> {
    let text = core::str::from_utf8(text).expect("the ring and the store hold UTF-8");
    text.chars()
        .map(|c| match c {
            '\n' => b"\\n".to_vec(),
            '\r' => b"\\r".to_vec(),
            '\t' => b"\\t".to_vec(),
            '\u{0}'..='\u{1f}' | '\u{7f}'..='\u{9f}' => format!("\\x{:02x}", c as u32).into_bytes(),
            '\u{2028}' | '\u{2029}' => format!("\\u{:04x}", c as u32).into_bytes(),
            c => c.to_string().into_bytes(),
        })
        .collect()
}

/// The escaped text, as many whole characters as fit in `room` bytes:
/// (bytes of the text taken, the rendering).
fn escaped(text: &[u8], room: usize) -> (usize, Vec<u8>) {
    let mut taken = 0;
    let mut out = Vec::new();
    for (u, c) in units(text)
        .into_iter()
        .zip(core::str::from_utf8(text).unwrap().chars())
    {
        if out.len() + u.len() > room {
            break;
        }
        out.extend(u);
        taken += c.len_utf8();
    }
    (taken, out)
}

fn turn_len(m: &Message) -> usize {
    m.role.name().len() + 2 + escaped(&m.text, usize::MAX).1.len() + 1
}

/// The memory line: `- key: value\n`, its value cut to keep it within
/// [`LINE_MAX`].
fn memory_line(key: &[u8], value: &[u8]) -> Vec<u8> {
    let mut line = b"- ".to_vec();
    line.extend(escaped(key, usize::MAX).1);
    line.extend(b": ");
    let room = LINE_MAX - line.len() - 1;
    line.extend(escaped(value, room).1);
    line.push(b'\n');
    line
}

fn memory_line_len(key: &[u8], value: &[u8]) -> usize {
    memory_line(key, value).len()
}

/// Store order: each memory line that fits. Returns the bitmap of chosen
/// lines and adds their bytes to `used`.
#[cfg(not(feature = "recall"))]
fn choose_memory<P: Port>(port: &mut P, _ring: &SessionRing, cap: usize, used: &mut usize) -> u64 {
    let mut chosen: u64 = 0;
    let mut index = 0usize;
    let _ = memory::for_each(port, &mut |p| {
        if index < MEMORY_LINES_MAX {
            let header = if chosen == 0 { MEMORY_HEADER.len() } else { 0 };
            let need = header + memory_line_len(p.key(), p.value());
            if *used + need <= cap {
                *used += need;
                chosen |= 1 << index;
            }
        }
        index += 1;
    });
    chosen
}

/// Turns whose words steer which memories are relevant.
#[cfg(feature = "recall")]
const QUERY_TURNS: usize = 3;

/// When every memory line fits, all of them; otherwise pinned lines first,
/// then by relevance to the newest turns (ties: the newer line), each that
/// fits. Returns the bitmap of chosen lines and adds their bytes to `used`.
#[cfg(feature = "recall")]
fn choose_memory<P: Port>(port: &mut P, ring: &SessionRing, cap: usize, used: &mut usize) -> u64 {
    let mut query = crate::recall::Query::new();
    for m in ring.iter().skip(ring.len().saturating_sub(QUERY_TURNS)) {
        query.add(&m.text);
    }
    // Bytes: a memory line is at most 2 + 31 + 2 + 127 + 1 = 163 bytes,
    // and a score is kept at a quarter of its 0..=1000 scale.
    let mut need = [0u8; MEMORY_LINES_MAX];
    let mut score = [0u8; MEMORY_LINES_MAX];
    let mut pinned: u64 = 0;
    let mut lines = 0usize;
    let mut total = 0usize;
    // The store is read here rather than through `memory::for_each`: one
    // frame with the pair buffer instead of two (the 1 KiB stack budget).
    if let Ok(mut store) = memory::Store::open(port) {
        let mut p = memory::Pair::new();
        while let Ok(Some(())) = store.next(port, &mut p) {
            let (Some(n), Some(s)) = (need.get_mut(lines), score.get_mut(lines)) else {
                break;
            };
            let len = memory_line_len(p.key(), p.value());
            *n = len.min(255) as u8;
            *s = (query.score(p.key(), p.value()) / 4).min(255) as u8;
            if p.pinned() {
                pinned |= 1 << lines;
            }
            total += len;
            lines += 1;
        }
        store.close(port);
    }
    if lines == 0 {
        return 0;
    }
    let all: u64 = if lines >= 64 {
        u64::MAX
    } else {
        (1u64 << lines) - 1
    };
    if *used + MEMORY_HEADER.len() + total <= cap {
        *used += MEMORY_HEADER.len() + total;
        return all;
    }
    let mut chosen: u64 = 0;
    let mut tried: u64 = 0;
    while tried != all {
        // The best line not tried yet: pinned before unpinned, then by
        // score, then the newer.
        let mut best: Option<usize> = None;
        for i in 0..lines {
            if tried & (1 << i) != 0 {
                continue;
            }
            let rank = |j: usize| {
                (
                    pinned & (1 << j) != 0,
                    score.get(j).copied().unwrap_or(0),
                    j,
                )
            };
            if best.is_none_or(|b| rank(i) > rank(b)) {
                best = Some(i);
            }
        }
        let Some(i) = best else {
            break;
        };
        tried |= 1 << i;
        let header = if chosen == 0 { MEMORY_HEADER.len() } else { 0 };
        let n = header + usize::from(need.get(i).copied().unwrap_or(u8::MAX));
        if *used + n <= cap {
            *used += n;
            chosen |= 1 << i;
        }
    }
    chosen
}

/// Prints the chosen memory lines (out of line: see `choose_memory`).
fn render_memory<P: Port>(port: &mut P, o: &mut Out<'_>, chosen: u64) {
    o.push(MEMORY_HEADER);
    let mut index = 0usize;
    let _ = memory::for_each(port, &mut |p| {
        if index < MEMORY_LINES_MAX && chosen & (1 << index) != 0 {
            o.push(&memory_line(p.key(), p.value()));
        }
        index += 1;
    });
}

/// Renders into `out` and NUL-terminates; returns the bytes written without
/// the NUL. `out` may be empty (then nothing is written and 0 returned).
pub(super) fn build<P: Port>(port: &mut P, session: &mut Session, out: &mut [u8]) -> usize {
    let Some(cap) = out.len().checked_sub(1) else {
        return 0;
    };
    let ring = session.ring(port);
    let n = ring.len();
    let mut used = 0usize;

    // 1. The newest turn, cut if it alone does not fit.
    let mut newest_text = 0usize;
    let mut turns = 0usize;
    if let Some(m) = n.checked_sub(1).and_then(|i| ring.get(i)) {
        let fixed = CONVERSATION_HEADER.len() + m.role.name().len() + 3;
        if let Some(room) = cap.checked_sub(fixed) {
            let (take, text) = escaped(&m.text, room);
            newest_text = take;
            used = fixed + text.len();
            turns = 1;
        }
    }

    // 1b. The compaction summary, whole: it carries the facts of every
    //     folded turn, so it outranks memory and older turns.
    let mut with_summary = false;
    if let Some(s) = ring.summary().filter(|_| turns == 1 && n > 1) {
        if used + turn_len(s) <= cap {
            used += turn_len(s);
            with_summary = true;
        }
    }

    // 2. Memory lines, each that fits (with `recall`: pinned keys first,
    //    then the most relevant to the recent turns).
    let ring = session.ring(port);
    let chosen = choose_memory(port, ring, cap, &mut used);

    // 3. Older turns, newest first, while they fit whole (the summary, when
    //    there is one, was placed in step 1b).
    let ring = session.ring(port);
    let oldest = usize::from(with_summary);
    while turns >= 1 && turns < n - oldest {
        let Some(m) = ring.get(n - 1 - turns) else {
            break;
        };
        if used + turn_len(m) > cap {
            break;
        }
        used += turn_len(m);
        turns += 1;
    }

    // Render.
    let mut o = Out {
        buf: out.get_mut(..cap).unwrap_or(&mut []),
        len: 0,
    };
    if chosen != 0 {
        render_memory(port, &mut o, chosen);
    }
    let ring = session.ring(port);
    if turns > 0 {
        o.push(CONVERSATION_HEADER);
        if let Some(s) = ring.summary().filter(|_| with_summary) {
            o.push(s.role.name());
            o.push(b": ");
            o.push(&escaped(&s.text, usize::MAX).1);
            o.push(b"\n");
        }
        for (i, m) in ring.iter().enumerate().skip(n - turns) {
            let text = if i + 1 == n {
                m.text.get(..newest_text).unwrap_or(&[])
            } else {
                &m.text[..]
            };
            o.push(m.role.name());
            o.push(b": ");
            o.push(&escaped(text, usize::MAX).1);
            o.push(b"\n");
        }
    }
    let len = o.len;
    if let Some(nul) = out.get_mut(len) {
        *nul = 0;
    }
    len
}
