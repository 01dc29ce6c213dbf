//! Any bytes as a TACP line (`agent::tacp`), driven through a host with
//! Python tools — one of which sends TACP lines of its own, nesting until
//! the chain refuses — at a trust level, connection and breaker state the
//! first byte picks (and the start of the line, so that a short run reaches
//! every command's arguments):
//!
//! * the answer is always one line of valid UTF-8: no CR, LF or NUL, at
//!   most `ANSWER_MAX` bytes;
//! * a line an independent tokenizer (docs/TACP.md's grammar) finds
//!   malformed is answered `err <reason>` and changes nothing: files,
//!   ring, breaker, trust, errors, the tool registry;
//! * a well-formed line's answer has its command's shape: STATUS and SAFETY
//!   JSON objects, REMEMBER stores what RECALL then returns, TOOL a JSON
//!   string or `err` — never a refusal for trust: the USB host's line runs
//!   at USB whatever the current level.
#![no_main]

use bento_mpy::agent::{self, Arg, Host, ToolOutcome, Ui, tacp};
use bento_mpy::core::Core;
use bento_mpy::memory;
use bento_mpy::port::Port;
use bento_mpy::safety::trust::Level;
use bento_mpy::session::ring::Role;
use bento_mpy::testing::MemPort;
use libfuzzer_sys::fuzz_target;

struct FuzzHost {
    core: Core,
    port: MemPort,
    connected: bool,
    runs: u32,
}

/// (name, risk): `say` returns awkward text, `bad` raises, `nest` sends
/// `TOOL nest` again.
const TOOLS: [(&str, u8); 4] = [("say", 0), ("bad", 1), ("nest", 0), ("high", 2)];
const SAY: &str = "q\"\\\n\t\u{1}ส\u{7f}";

impl Host for FuzzHost {
    type Files = MemPort;

    fn with_core<R>(&mut self, f: impl FnOnce(&mut Core, &mut MemPort) -> R) -> Option<R> {
        Some(f(&mut self.core, &mut self.port))
    }

    fn post(&mut self, _body: &[u8], _reply: &mut [u8]) -> Result<usize, agent::NoReply> {
        panic!("TACP never posts");
    }

    fn run_tool(&mut self, slot: u8, _arg: Arg<'_>, out: &mut [u8]) -> ToolOutcome {
        self.runs += 1;
        let name = TOOLS[usize::from(slot) - 4].0;
        let text: &[u8] = match name {
            "bad" => b"boom\r\nline two",
            "nest" => {
                let mut work = vec![0u8; tacp::WORK_SIZE];
                let n = tacp::tacp(self, b"TOOL nest", &mut work).expect("no abort");
                let a = std::str::from_utf8(&work[..n]).unwrap();
                assert!(!a.contains(['\r', '\n', '\0']));
                return copy(out, &work[..n], true);
            }
            _ => SAY.as_bytes(),
        };
        copy(out, text, name != "bad")
    }

    fn ui(&mut self, _ev: Ui, text: &[u8]) {
        assert!(std::str::from_utf8(text).is_ok() && !text.contains(&0));
    }
    fn ui_init(&mut self) {}
    fn connect(&mut self, _: &[u8], _: u16, _: &[u8]) -> bool {
        true
    }
    fn disconnect(&mut self) {
        self.connected = false;
    }
    fn connected(&mut self) -> bool {
        self.connected
    }
    fn tokens(&mut self) -> (u32, u32) {
        (0, 0)
    }
    fn time_s(&mut self) -> u32 {
        0
    }
}

fn copy(out: &mut [u8], text: &[u8], ok: bool) -> ToolOutcome {
    let n = text.len().min(out.len());
    let n = (0..=n)
        .rev()
        .find(|&i| std::str::from_utf8(&text[..i]).is_ok())
        .unwrap_or(0);
    out[..n].copy_from_slice(&text[..n]);
    if ok {
        ToolOutcome::Returned(n)
    } else {
        ToolOutcome::Raised(n)
    }
}

/// docs/TACP.md's grammar, written again: `Err(reason)` or the tokens.
fn tokens(line: &[u8]) -> Result<Vec<Vec<u8>>, &'static str> {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    if line.len() > tacp::LINE_MAX {
        return Err("line too long");
    }
    if line.iter().any(|&c| c < 0x20 || c == 0x7f) {
        return Err("control character");
    }
    if std::str::from_utf8(line).is_err() {
        return Err("invalid UTF-8");
    }
    let mut toks = Vec::new();
    let mut i = 0;
    loop {
        while line.get(i) == Some(&b' ') {
            i += 1;
        }
        if i == line.len() {
            break;
        }
        if toks.len() == 3 {
            return Err("too many arguments");
        }
        let mut t = Vec::new();
        if line[i] == b'"' {
            i += 1;
            loop {
                match line.get(i) {
                    None => return Err("unterminated quote"),
                    Some(b'"') => {
                        i += 1;
                        break;
                    }
                    Some(b'\\') => match line.get(i + 1) {
                        Some(&e @ (b'"' | b'\\')) => {
                            t.push(e);
                            i += 2;
                        }
                        _ => return Err("bad escape (only \\\" and \\\\)"),
                    },
                    Some(&c) => {
                        t.push(c);
                        i += 1;
                    }
                }
            }
            if line.get(i).is_some_and(|&c| c != b' ') {
                return Err("bad quoting");
            }
        } else {
            while let Some(&c) = line.get(i).filter(|&&c| c != b' ') {
                if c == b'"' {
                    return Err("bad quoting");
                }
                t.push(c);
                i += 1;
            }
        }
        toks.push(t);
    }
    if toks.is_empty() {
        return Err("empty line");
    }
    Ok(toks)
}

/// Everything a malformed line must leave as it was.
fn state(h: &mut FuzzHost) -> String {
    let now = h.port.ticks_ms();
    let ring: Vec<_> = h.core.session.ring(&mut h.port).iter().cloned().collect();
    let rate: Vec<_> = (0..16).map(|s| h.core.rate.tool(s)).collect();
    let cb = h.core.breaker.state(now) as u8;
    format!(
        "{:?} {ring:?} {:?} {:?} {} {} {} {rate:?} {}",
        h.port.snapshot(),
        h.core.breaker,
        h.core.trust.get(),
        h.core.agent.errors(),
        h.core.agent.state().name(),
        h.core.session.is_dirty(),
        cb,
    )
}

fuzz_target!(|data: &[u8]| {
    let Some((&flags, rest)) = data.split_first() else {
        return;
    };
    // Bits 4..6 of the first byte start the line with a command, so that a
    // short run reaches every command's arguments.
    let prefixes: [&[u8]; 8] = [
        b"",
        b"TOOL ",
        b"TOOL say ",
        b"REMEMBER ",
        b"RECALL ",
        b"TOOL nest",
        b"TOOL echo ",
        b"",
    ];
    let whole = [prefixes[usize::from(flags >> 4) & 7], rest].concat();
    let line = &whole[..];
    let mut h = FuzzHost {
        core: Core::new(),
        port: MemPort::new(),
        connected: flags & 4 != 0,
        runs: 0,
    };
    h.port.now = 5_000;
    h.core.agent.reset(h.connected);
    agent::builtin::register(&mut h.core, h.port.now);
    for (name, risk) in TOOLS {
        let slot = agent::register_tool(&mut h.core, &mut h.port, name.as_bytes(), risk, 1000);
        assert!(slot.is_ok());
    }
    h.core.trust.set(Level::from_c(flags & 3));
    if flags & 8 != 0 {
        for _ in 0..3 {
            h.core.breaker.failure(h.port.now);
        }
    }
    memory::set(&mut h.port, b"k", b"v\n\"1\"").unwrap();
    memory::set(&mut h.port, "ก".as_bytes(), "ค่า".as_bytes()).unwrap();
    h.core
        .session
        .add(&mut h.port, Role::User, b"hello")
        .unwrap();
    h.core.session.flush(&mut h.port).unwrap();

    let before = state(&mut h);
    let mut work = vec![0u8; tacp::WORK_SIZE];
    let n = tacp::tacp(&mut h, line, &mut work).expect("only an abort is an error");
    let answer = std::str::from_utf8(&work[..n]).expect("the answer is UTF-8");
    assert!(!answer.contains(['\r', '\n', '\0']), "{answer:?}");
    assert!(n <= tacp::ANSWER_MAX);
    assert_eq!(h.core.agent.chain().depth(), 0);
    assert_eq!(h.port.open_count(), 0);

    let toks = match tokens(line) {
        Err(why) => {
            assert_eq!(answer, format!("err {why}"), "{line:?}");
            assert_eq!(state(&mut h), before, "a malformed line changed something");
            return;
        }
        Ok(t) => t,
    };
    let cmd = String::from_utf8(toks[0].to_ascii_uppercase()).unwrap();
    let args = &toks[1..];
    let usage = |u: &str| format!("err usage: {u}");
    let unchanged = |h: &mut FuzzHost, answer: &str| {
        assert_eq!(state(h), before, "{answer:?} changed something");
    };
    match cmd.as_str() {
        "STATUS" | "SAFETY" if !args.is_empty() => {
            assert_eq!(answer, usage(&cmd));
            unchanged(&mut h, answer);
        }
        "STATUS" | "SAFETY" => {
            let v: serde_json::Value = serde_json::from_str(answer).expect("a JSON object");
            let keys = if cmd == "STATUS" { 13 } else { 4 };
            assert_eq!(v.as_object().map(|o| o.len()), Some(keys), "{answer}");
        }
        "REMEMBER" if args.len() != 2 => {
            assert_eq!(answer, usage("REMEMBER <key> <value>"));
            unchanged(&mut h, answer);
        }
        "REMEMBER" => {
            let (k, v) = (&args[0], &args[1]);
            if k.is_empty() || k.len() > 31 {
                assert_eq!(answer, "err key must be 1..31 bytes");
                unchanged(&mut h, answer);
            } else if v.len() > 127 {
                assert_eq!(answer, "err value must be 0..127 bytes");
                unchanged(&mut h, answer);
            } else {
                assert_eq!(answer, "ok");
                let mut out = [0u8; 127];
                let got = memory::get(&mut h.port, k, &mut out).expect("stored");
                assert_eq!(&out[..got], &v[..]);
            }
        }
        "RECALL" if args.len() != 1 => {
            assert_eq!(answer, usage("RECALL <key>"));
            unchanged(&mut h, answer);
        }
        "RECALL" => {
            let k = &args[0];
            if k.is_empty() || k.len() > 31 {
                assert_eq!(answer, "err key must be 1..31 bytes");
            } else {
                let want: &[u8] = match &k[..] {
                    b"k" => b"v\n\"1\"",
                    k if k == "ก".as_bytes() => "ค่า".as_bytes(),
                    _ => b"",
                };
                if want.is_empty() {
                    assert_eq!(answer, "err not found");
                } else {
                    let v: String = serde_json::from_str(answer).expect("a JSON string");
                    assert_eq!(v.as_bytes(), want);
                }
            }
            unchanged(&mut h, answer);
        }
        "CLEAR" if !args.is_empty() => {
            assert_eq!(answer, usage("CLEAR"));
            unchanged(&mut h, answer);
        }
        "CLEAR" => {
            assert_eq!(answer, "ok");
            assert_eq!(h.core.session.count(&mut h.port), 0);
        }
        "TOOL" if args.is_empty() => {
            assert_eq!(answer, usage("TOOL <name> [arg]"));
            unchanged(&mut h, answer);
        }
        "TOOL" => {
            let name = &args[0];
            let risk = match &name[..] {
                b"echo" | b"uptime" | b"say" | b"nest" => Some(0),
                b"led" | b"bad" => Some(1),
                b"wipe_memory" | b"high" => Some(2),
                _ => None,
            };
            let arg_error = match (&name[..], args.get(1)) {
                (_, None) | (b"echo", _) | (b"say" | b"bad" | b"nest" | b"high", _) => None,
                (b"led", Some(a)) if a == b"toggle" => None,
                (b"led", Some(_)) => Some("err led takes None, a bool or 'toggle'"),
                (b"uptime" | b"wipe_memory", Some(_)) => Some("err this tool takes no argument"),
                _ => None,
            };
            if let Some(e) = arg_error {
                assert_eq!(answer, e);
                unchanged(&mut h, answer);
                return;
            }
            match risk {
                None => {
                    assert_eq!(answer, "err unknown tool");
                    unchanged(&mut h, answer);
                }
                Some(_) if flags & 8 != 0 => {
                    assert_eq!(answer, "err circuit breaker open \u{2014} cooldown active");
                    assert_eq!(h.runs, 0);
                }
                Some(_) => {
                    // The USB host's line runs at USB trust, whatever the
                    // current level: no risk is refused.
                    assert_ne!(answer, "err tool risk exceeds transport trust level");
                    if answer.starts_with('"') {
                        let _: String = serde_json::from_str(answer).expect("a JSON string");
                    } else {
                        assert!(answer.starts_with("err "), "{answer:?}");
                    }
                }
            }
        }
        _ => {
            assert_eq!(answer, "err unknown command");
            unchanged(&mut h, answer);
        }
    }
});
