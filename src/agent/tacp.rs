//! TACP, the line protocol of the USB host (docs/TACP.md).
//!
//! One request line in (with or without its CRLF/LF), one answer line out
//! (no terminator), always valid UTF-8:
//!
//! ```text
//! STATUS                    {"state":"idle","connected":true,...}
//! SAFETY                    {"circuit_breaker":"closed","cooldown_ms":0,...}
//! REMEMBER <key> <value>    ok | full | err <reason>
//! RECALL <key>              "<value as a JSON string>" | err not found
//! TOOL <name> [arg]         "<result as a JSON string>" | err <reason>
//! CLEAR                     ok
//! ```
//!
//! Commands are case-insensitive; an argument with spaces is quoted
//! (`"a b"`, with `\"` and `\\` inside). A line that is not a valid request
//! (too long, not UTF-8, a control character, bad quoting, unknown command,
//! wrong argument count) is answered `err <reason>` and changes nothing.
//! `TOOL` runs through the one gated tool call at USB trust — the person at
//! the USB port may run every risk — but never above the trust of the chain
//! it is called from (from inside a backend's tool request: HTTPS).

use serde::Serialize;

use super::{Account, Arg, Host, Mode, Origin, Status, Value, call_tool, core, wire};
use crate::core::Core;
use crate::text::floor_char_boundary;

/// Longest request line, without its terminator.
pub const LINE_MAX: usize = 512;
/// A TOOL result is its text cut to this many bytes, then JSON-encoded.
pub const RESULT_MAX: usize = 400;
/// An `err <reason>` reason is cut to this many bytes.
const REASON_MAX: usize = 160;
/// Longest answer: a result of control characters, each escaped to six
/// bytes, and its quotes.
pub const ANSWER_MAX: usize = 6 * RESULT_MAX + 2;
/// The work buffer a TACP call needs: the answer, the tool's result text,
/// the decoded arguments.
pub const WORK_SIZE: usize = ANSWER_MAX + RESULT_MAX + LINE_MAX;

/// A bounded answer being written.
struct Answer<'a> {
    out: wire::Buf<'a>,
}

impl Answer<'_> {
    fn text(&mut self, s: &[u8]) -> usize {
        let _ = wire::Sink::put(&mut self.out, s);
        self.out.len
    }

    /// `err <reason>`: control characters as spaces, anything that is not
    /// UTF-8 as `?`, cut to [`REASON_MAX`] on a character boundary.
    fn err(&mut self, reason: &[u8]) -> usize {
        let mut clean = [0u8; REASON_MAX];
        let n = crate::text::sanitize_into(reason, &mut clean, true);
        let _ = wire::Sink::put(&mut self.out, b"err ");
        let _ = wire::Sink::put(&mut self.out, clean.get(..n).unwrap_or(&[]));
        self.out.len
    }

    fn json<T: Serialize>(&mut self, v: &T) -> usize {
        let start = self.out.len;
        match self
            .out
            .buf
            .get_mut(start..)
            .and_then(|rest| wire::write(v, rest))
        {
            Some(n) => {
                self.out.len += n;
                self.out.len
            }
            None => self.err(b"answer too long"),
        }
    }
}

struct Token {
    start: usize,
    len: usize,
}

/// Splits `line` into at most three tokens, decoded into `dec`.
fn split(line: &[u8], dec: &mut [u8], tok: &mut [Token; 3]) -> Result<usize, &'static [u8]> {
    let mut i = 0usize;
    let mut d = 0usize;
    let mut n = 0usize;
    let mut push = |d: &mut usize, c: u8| {
        if let Some(slot) = dec.get_mut(*d) {
            *slot = c;
        }
        *d += 1;
    };
    loop {
        while line.get(i) == Some(&b' ') {
            i += 1;
        }
        if i >= line.len() {
            return Ok(n);
        }
        let Some(t) = tok.get_mut(n) else {
            return Err(b"too many arguments");
        };
        t.start = d;
        if line.get(i) == Some(&b'"') {
            i += 1;
            loop {
                let Some(&c) = line.get(i) else {
                    return Err(b"unterminated quote");
                };
                i += 1;
                if c == b'"' {
                    break;
                }
                let c = if c == b'\\' {
                    match line.get(i) {
                        Some(&e @ (b'"' | b'\\')) => {
                            i += 1;
                            e
                        }
                        _ => return Err(b"bad escape (only \\\" and \\\\)"),
                    }
                } else {
                    c
                };
                push(&mut d, c);
            }
            if line.get(i).is_some_and(|&c| c != b' ') {
                return Err(b"bad quoting");
            }
        } else {
            while let Some(&c) = line.get(i) {
                if c == b' ' {
                    break;
                }
                if c == b'"' {
                    return Err(b"bad quoting");
                }
                push(&mut d, c);
                i += 1;
            }
        }
        t.len = d - t.start;
        n += 1;
    }
}

fn is_cmd(t: &[u8], cmd: &[u8]) -> bool {
    t.eq_ignore_ascii_case(cmd)
}

/// Answers one request line; the answer is `work[..n]`. Only an abort (a
/// KeyboardInterrupt/SystemExit in a tool) or a refused nesting is an
/// error; everything else is an answer line.
pub fn tacp<H: Host>(h: &mut H, line: &[u8], work: &mut [u8]) -> Result<usize, Status> {
    super::ready(h);
    match tacp_ready(h, line, work)? {
        Ready::Answer(n) => Ok(n),
        Ready::Remember { key, value } => remember(h, work, key, value),
    }
}

/// What [`tacp_ready`] answered, or the store edit of a REMEMBER it leaves
/// to [`tacp`]: the key and the value as (start, length) in the decoded
/// tokens (`work` past the answer and the result).
enum Ready {
    Answer(usize),
    Remember { key: (u16, u16), value: (u16, u16) },
}

/// REMEMBER's store edit, in a frame of its own under [`tacp`]'s (the
/// dispatcher's is not above the store's deepest path, the fold).
#[inline(never)]
fn remember<H: Host>(
    h: &mut H,
    work: &mut [u8],
    key: (u16, u16),
    value: (u16, u16),
) -> Result<usize, Status> {
    // (`tacp_ready` checked the work buffer's size.)
    let (answer, rest) = work
        .split_at_mut_checked(ANSWER_MAX)
        .unwrap_or((&mut [], &mut []));
    let dec = rest.get(RESULT_MAX..).unwrap_or(&[]);
    let t = |(start, len): (u16, u16)| -> &[u8] {
        let start = usize::from(start);
        dec.get(start..start + usize::from(len)).unwrap_or(&[])
    };
    let (a1, a2) = (t(key), t(value));
    let ok = core(h, |_, p| crate::memory::set(p, a1, a2).is_ok())?;
    let mut a = Answer {
        out: wire::Buf::new(answer),
    };
    Ok(a.text(if ok { b"ok" } else { b"full" }))
}

/// [`tacp`] after [`super::ready`] (the files load under the caller's
/// frame, not this one's).
#[inline(never)]
fn tacp_ready<H: Host>(h: &mut H, line: &[u8], work: &mut [u8]) -> Result<Ready, Status> {
    tacp_answer(h, line, work).map(|r| match r {
        Ok(n) => Ready::Answer(n),
        Err(remember) => remember,
    })
}

/// [`tacp_ready`]'s body: `Err` is a REMEMBER's edit left to [`tacp`].
#[inline(always)]
fn tacp_answer<H: Host>(
    h: &mut H,
    line: &[u8],
    work: &mut [u8],
) -> Result<Result<usize, Ready>, Status> {
    if work.len() < WORK_SIZE {
        return Err(Status::WorkTooSmall);
    }
    let (answer, rest) = work.split_at_mut(ANSWER_MAX);
    let (result, dec) = rest.split_at_mut(RESULT_MAX);
    let mut a = Answer {
        out: wire::Buf::new(answer),
    };
    // One terminator may end the line: CRLF, LF or CR.
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    if line.len() > LINE_MAX {
        return Ok(Ok(a.err(b"line too long")));
    }
    if line.iter().any(|&c| c < 0x20 || c == 0x7F) {
        return Ok(Ok(a.err(b"control character")));
    }
    if !crate::text::is_utf8(line) {
        return Ok(Ok(a.err(b"invalid UTF-8")));
    }
    let mut tok = [
        Token { start: 0, len: 0 },
        Token { start: 0, len: 0 },
        Token { start: 0, len: 0 },
    ];
    let n = match split(line, dec, &mut tok) {
        Ok(0) => return Ok(Ok(a.err(b"empty line"))),
        Ok(n) => n,
        Err(why) => return Ok(Ok(a.err(why))),
    };
    let t = |i: usize| -> &[u8] {
        tok.get(i)
            .and_then(|t| dec.get(t.start..t.start + t.len))
            .unwrap_or(&[])
    };
    let cmd = t(0);
    let argc = n - 1;
    let usage = |a: &mut Answer<'_>, u: &[u8]| {
        let _ = a.text(b"err usage: ");
        a.text(u)
    };
    let (a1, a2) = (t(1), t(2));
    if is_cmd(cmd, b"STATUS") {
        if argc != 0 {
            return Ok(Ok(usage(&mut a, b"STATUS")));
        }
        return cmd_status(h, &mut a).map(Ok);
    }
    if is_cmd(cmd, b"SAFETY") {
        if argc != 0 {
            return Ok(Ok(usage(&mut a, b"SAFETY")));
        }
        return cmd_safety(h, &mut a).map(Ok);
    }
    if is_cmd(cmd, b"REMEMBER") {
        if argc != 2 {
            return Ok(Ok(usage(&mut a, b"REMEMBER <key> <value>")));
        }
        if a1.is_empty() || a1.len() > crate::memory::KEY_MAX_BYTES {
            return Ok(Ok(a.err(b"key must be 1..31 bytes")));
        }
        if a2.len() > crate::memory::VAL_MAX_BYTES {
            return Ok(Ok(a.err(b"value must be 0..127 bytes")));
        }
        let tok = |i: usize| tok.get(i).map(|t| (t.start, t.len));
        let place = |t: Option<(usize, usize)>| {
            let (start, len) = t?;
            Some((u16::try_from(start).ok()?, u16::try_from(len).ok()?))
        };
        // (Tokens are decoded from a line of at most LINE_MAX bytes.)
        return Ok(match (place(tok(1)), place(tok(2))) {
            (Some(key), Some(value)) => Err(Ready::Remember { key, value }),
            _ => Ok(a.err(b"line too long")),
        });
    }
    if is_cmd(cmd, b"RECALL") {
        if argc != 1 {
            return Ok(Ok(usage(&mut a, b"RECALL <key>")));
        }
        if a1.is_empty() || a1.len() > crate::memory::KEY_MAX_BYTES {
            return Ok(Ok(a.err(b"key must be 1..31 bytes")));
        }
        return cmd_recall(h, &mut a, a1, result).map(Ok);
    }
    if is_cmd(cmd, b"TOOL") {
        if argc < 1 {
            return Ok(Ok(usage(&mut a, b"TOOL <name> [arg]")));
        }
        let arg = if argc == 2 { Arg::Text(a2) } else { Arg::None };
        return cmd_tool(h, &mut a, a1, arg, result).map(Ok);
    }
    if is_cmd(cmd, b"CLEAR") {
        if argc != 0 {
            return Ok(Ok(usage(&mut a, b"CLEAR")));
        }
        super::session_clear(h)?;
        return Ok(Ok(a.text(b"ok")));
    }
    Ok(Ok(a.err(b"unknown command")))
}

// Each command with buffers of its own has a frame of its own: the
// dispatcher's frame stays small under the deep ones (a tool, a store
// edit).

#[inline(never)]
fn cmd_status<H: Host>(h: &mut H, a: &mut Answer<'_>) -> Result<usize, Status> {
    let connected = h.connected();
    // The ring was loaded by `tacp` ([`super::ready`]).
    core(h, |c, _| status_json(a, c, connected))
}

#[derive(Serialize)]
struct StatusJson<'a> {
    state: &'a str,
    connected: bool,
    session_msgs: u16,
    errors: u32,
    last_result: &'a str,
    dirty: bool,
}

#[inline(never)]
fn status_json(a: &mut Answer<'_>, c: &Core, connected: bool) -> usize {
    let mut bufs = super::report::StatusBufs::new();
    let d = super::report::status_doc(c, connected, &mut bufs);
    a.json(&StatusJson {
        state: d.state,
        connected: d.connected,
        session_msgs: d.session_msgs,
        errors: d.error_count,
        last_result: d.last_result,
        dirty: d.dirty,
    })
}

#[derive(Serialize)]
struct SafetyJson {
    circuit_breaker: &'static str,
    cooldown_ms: u32,
    trust: &'static str,
    errors: u32,
}

#[inline(never)]
fn cmd_safety<H: Host>(h: &mut H, a: &mut Answer<'_>) -> Result<usize, Status> {
    let connected = h.connected();
    let d = core(h, |c, p| super::report::safety_doc(c, p, connected))?;
    Ok(a.json(&SafetyJson {
        circuit_breaker: d.circuit_breaker,
        cooldown_ms: d.cooldown_ms,
        trust: d.trust_level,
        errors: d.errors,
    }))
}

#[inline(never)]
fn cmd_recall<H: Host>(
    h: &mut H,
    a: &mut Answer<'_>,
    k: &[u8],
    result: &mut [u8],
) -> Result<usize, Status> {
    // The value in the work buffer's result area (not on the stack, above
    // the store's load).
    let value = result
        .get_mut(..crate::memory::VAL_MAX_BYTES)
        .unwrap_or(&mut []);
    let got = core(h, |_, p| crate::memory::get(p, k, value).ok())?;
    Ok(match got {
        Some(n) => a.json(&wire::as_str(value.get(..n).unwrap_or(&[]))),
        None => a.err(b"not found"),
    })
}

#[inline(never)]
fn cmd_tool<H: Host>(
    h: &mut H,
    a: &mut Answer<'_>,
    name: &[u8],
    arg: Arg<'_>,
    result: &mut [u8],
) -> Result<usize, Status> {
    let mut acct = Account::new();
    let res = call_tool(
        h,
        name,
        Origin::Usb,
        arg,
        result,
        &mut acct,
        Mode::IdlePoint,
    );
    match res {
        Ok(v) => Ok(tool_answer(a, v, result)),
        Err(Status::Aborted) => Err(Status::Aborted),
        Err(Status::ToolRaised) => Ok(a.err(result.get(..acct.raised).unwrap_or(&[]))),
        Err(Status::UnknownTool) => Ok(a.err(b"unknown tool")),
        Err(s) => Ok(a.err(s.text().as_bytes())),
    }
}

#[inline(never)]
fn tool_answer(a: &mut Answer<'_>, v: Value, result: &[u8]) -> usize {
    let mut num = [0u8; 10];
    let text: &[u8] = match v {
        Value::Text(n) | Value::Host(n) | Value::Arg(n) => result.get(..n).unwrap_or(&[]),
        Value::Int(i) => super::builtin::decimal(i, &mut num),
        Value::Bool(true) => b"True",
        Value::Bool(false) => b"False",
    };
    let cut = floor_char_boundary(text, RESULT_MAX);
    a.json(&wire::as_str(text.get(..cut).unwrap_or(&[])))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toks(line: &str) -> Result<Vec<String>, String> {
        let mut dec = [0u8; 64];
        let mut tok = [
            Token { start: 0, len: 0 },
            Token { start: 0, len: 0 },
            Token { start: 0, len: 0 },
        ];
        match split(line.as_bytes(), &mut dec, &mut tok) {
            Ok(n) => Ok((0..n)
                .map(|i| {
                    String::from_utf8(dec[tok[i].start..tok[i].start + tok[i].len].to_vec())
                        .unwrap()
                })
                .collect()),
            Err(e) => Err(String::from_utf8(e.to_vec()).unwrap()),
        }
    }

    #[test]
    fn tokens() {
        assert_eq!(
            toks("TOOL  echo \"a b\""),
            Ok(vec!["TOOL".into(), "echo".into(), "a b".into()])
        );
        assert_eq!(
            toks("x \"q\\\"\\\\\""),
            Ok(vec!["x".into(), "q\"\\".into()])
        );
        assert_eq!(toks("a b c d").unwrap_err(), "too many arguments");
        assert_eq!(toks("a \"b").unwrap_err(), "unterminated quote");
        assert_eq!(toks("a \"b\"c").unwrap_err(), "bad quoting");
        assert_eq!(toks("a b\"c").unwrap_err(), "bad quoting");
        assert_eq!(
            toks("a \"\\n\"").unwrap_err(),
            "bad escape (only \\\" and \\\\)"
        );
        assert_eq!(toks("   "), Ok(vec![]));
    }
}
