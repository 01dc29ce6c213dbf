//! Rendering memory and recent turns into the prompt context.
//!
//! ```text
//! Memory:
//! - name: สมชาย
//! - city: Chiang Mai
//! Conversation:
//! system: Connected to TESAIoT backend
//! user: what is my name?
//! ```
//!
//! The text is not JSON-escaped (the binding escapes it). When everything
//! does not fit, space is given in this order: the newest turn (cut on a
//! character boundary if it alone is too long), then memory lines (whole
//! lines, in store order, each that fits), then older turns newest first
//! (whole). The chosen parts are printed in the order above: memory, then
//! the turns oldest first.

use crate::memory;
use crate::port::Port;
use crate::session::Session;
use crate::session::ring::Message;
use crate::text::floor_char_boundary;

const MEMORY_HEADER: &[u8] = b"Memory:\n";
const CONVERSATION_HEADER: &[u8] = b"Conversation:\n";
/// Memory lines considered (the bitmap of chosen lines is a `u64`).
const MEMORY_LINES_MAX: usize = 64;

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

fn turn_len(m: &Message) -> usize {
    m.role.name().len() + 2 + m.text.len() + 1
}

fn memory_line_len(key: &[u8], value: &[u8]) -> usize {
    2 + key.len() + 2 + value.len() + 1
}

/// Renders into `out` and NUL-terminates; returns the bytes written without
/// the NUL. `out` may be empty (then nothing is written and 0 returned).
pub fn build<P: Port>(port: &mut P, session: &mut Session, out: &mut [u8]) -> usize {
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
            newest_text = floor_char_boundary(&m.text, room);
            used = fixed + newest_text;
            turns = 1;
        }
    }

    // 2. Memory lines, each that fits.
    let mut chosen: u64 = 0;
    let mut index = 0usize;
    let _ = memory::for_each(port, |p| {
        if index < MEMORY_LINES_MAX {
            let header = if chosen == 0 { MEMORY_HEADER.len() } else { 0 };
            let need = header + memory_line_len(p.key(), p.value());
            if used + need <= cap {
                used += need;
                chosen |= 1 << index;
            }
        }
        index += 1;
    });

    // 3. Older turns, newest first, while they fit whole.
    let ring = session.ring(port);
    while turns >= 1 && turns < n {
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
        o.push(MEMORY_HEADER);
        let mut index = 0usize;
        let _ = memory::for_each(port, |p| {
            if index < MEMORY_LINES_MAX && chosen & (1 << index) != 0 {
                o.push(b"- ");
                o.push(p.key());
                o.push(b": ");
                o.push(p.value());
                o.push(b"\n");
            }
            index += 1;
        });
    }
    let ring = session.ring(port);
    if turns > 0 {
        o.push(CONVERSATION_HEADER);
        for (i, m) in ring.iter().enumerate().skip(n - turns) {
            let text = if i + 1 == n {
                m.text.get(..newest_text).unwrap_or(&[])
            } else {
                &m.text[..]
            };
            o.push(m.role.name());
            o.push(b": ");
            o.push(text);
            o.push(b"\n");
        }
    }
    let len = o.len;
    if let Some(nul) = out.get_mut(len) {
        *nul = 0;
    }
    len
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::ring::Role;
    use crate::testing::MemPort;

    fn render(port: &mut MemPort, s: &mut Session, size: usize) -> String {
        let mut buf = vec![0xAAu8; size + 8];
        let n = build(port, s, &mut buf[..size]);
        assert!(buf[size..].iter().all(|&b| b == 0xAA), "wrote past out_max");
        if size > 0 {
            assert_eq!(buf[n], 0);
        }
        String::from_utf8(buf[..n].to_vec()).unwrap()
    }

    #[test]
    fn renders_memory_then_turns() {
        let mut port = MemPort::new();
        let mut s = Session::new();
        memory::set(&mut port, b"name", "สมชาย".as_bytes()).unwrap();
        s.add(&mut port, Role::User, b"hello").unwrap();
        s.add(&mut port, Role::Assistant, b"hi").unwrap();
        assert_eq!(
            render(&mut port, &mut s, 3072),
            "Memory:\n- name: สมชาย\nConversation:\nuser: hello\nassistant: hi\n"
        );
    }

    #[test]
    fn newest_turns_win_and_nothing_overflows() {
        let mut port = MemPort::new();
        let mut s = Session::new();
        for i in 0..10 {
            s.add(&mut port, Role::User, format!("turn number {i}").as_bytes())
                .unwrap();
        }
        let full = render(&mut port, &mut s, 4096);
        for size in 0..full.len() + 2 {
            let r = render(&mut port, &mut s, size);
            assert!(r.len() < size.max(1));
            if r.len() > CONVERSATION_HEADER.len() + 20 {
                assert!(r.ends_with("turn number 9\n"), "{size}: {r}");
            }
        }
    }

    #[test]
    fn a_long_newest_turn_is_cut_on_a_character() {
        let mut port = MemPort::new();
        let mut s = Session::new();
        s.add(&mut port, Role::User, "ก".repeat(80).as_bytes())
            .unwrap();
        // 14 (header) + 4 ("user") + 3 (": ", "\n") + 1 (NUL) = 22
        for size in 22..60 {
            let r = render(&mut port, &mut s, size);
            assert!(r.starts_with("Conversation:\nuser: "));
        }
    }
}
