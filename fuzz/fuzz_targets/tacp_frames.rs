//! Any bytes as the USB host's stream (`docs/TACP.md`): the framer
//! (`agent::tacp::frame::Rx`) cuts them into REPL bytes, control commands
//! and claw frames, fed in chunks the input's first byte sizes; every whole
//! frame goes to the dispatcher (`agent::tacp::dispatch`), over a host with
//! Python tools — one of which sends a frame of its own, nesting until the
//! chain refuses — at a trust level, connection and breaker state the
//! first byte picks. The rest of the input is also wrapped into valid
//! frames (sub-command from the next byte) so that a short run reaches
//! every sub-command's payloads:
//!
//! * the framer against an independent parser of the same bytes (written
//!   again here): the same frames, the same REPL bytes, in order; its state
//!   stays bounded;
//! * every frame gets exactly one answer, UTF-8, at most 3072 bytes, with
//!   the request's sub-command or 0xFF; only an abort is an error (none
//!   here);
//! * an EXEC never answers "trust level insufficient" at the top: the USB
//!   host's request runs at USB whatever the current level;
//! * no file stays open, the chain is back at depth 0, the trust level is
//!   unchanged but by CONNECT/DISCONNECT.
#![no_main]

use bentoclaw::agent::registry::{How, Registry, Spec};
use bentoclaw::agent::tacp::{self, frame};
use bentoclaw::agent::{self, Arg, Host, ToolOutcome, Ui};
use bentoclaw::memory;
use bentoclaw::message::Role;
use bentoclaw::safety::trust::Level;
use bentoclaw::state::State;
use bentoclaw::testing::MemPort;
use libfuzzer_sys::fuzz_target;

struct FuzzHost {
    state: State<Registry, agent::Agent>,
    port: MemPort,
    connected: bool,
    answers: Vec<(u8, Vec<u8>)>,
}

/// (name, risk): `say` returns awkward text, `bad` raises, `nest` sends an
/// EXEC of itself, `high` is risk 2.
const TOOLS: [(&str, u8); 4] = [("say", 0), ("bad", 1), ("nest", 0), ("high", 2)];
const SAY: &str = "q\"\\\n\t\u{1}ส\u{7f}";

fn dispatch(h: &mut FuzzHost, sub: u8, payload: &[u8]) -> Vec<(u8, Vec<u8>)> {
    let mark = h.answers.len();
    let mut work = vec![0u8; tacp::work_size(h, sub, payload)];
    match tacp::dispatch(h, sub, payload, &mut work) {
        Ok(()) => {}
        // An online ASK: the host runs ask() and hands its outcome back.
        Err(agent::Status::TacpAsk) => {
            let outcome = match agent::ask_check(h, payload) {
                Ok(n) => {
                    let mut w = vec![0u8; n];
                    agent::ask(h, payload, &mut w)
                        .map(|r| w[r.offset..r.offset + r.len].to_vec())
                }
                Err(s) => Err(s),
            };
            tacp::ask_done(h, outcome.as_deref().map_err(|s| *s)).expect("no abort");
        }
        Err(s) => panic!("only an online ASK hands back: {s:?}"),
    }
    h.answers.split_off(mark)
}

impl Host for FuzzHost {
    type Files = MemPort;

    fn with_state<R>(
        &mut self,
        f: impl FnOnce(&mut State<Registry, agent::Agent>, &mut MemPort) -> R,
    ) -> Option<R> {
        Some(f(&mut self.state, &mut self.port))
    }

    fn carve_scratch(area: &mut [u8]) -> Option<(&mut [u8], &mut bentoclaw::context::Scratch)> {
        bentoclaw::ffi::agent::carve_scratch(area)
    }

    fn post(&mut self, _body: &[u8], reply: &mut [u8]) -> Result<usize, agent::NoReply> {
        // An ASK while connected: the backend echoes.
        let r = b"pong";
        reply
            .get_mut(..r.len())
            .ok_or(agent::NoReply::TooLong)?
            .copy_from_slice(r);
        Ok(r.len())
    }

    fn run_tool(&mut self, slot: u8, _arg: Arg<'_>, out: &mut [u8]) -> ToolOutcome {
        let name = self
            .state
            .registry
            .tool(&self.state.rate, usize::from(slot))
            .map(|t| t.name.to_vec())
            .unwrap_or_default();
        let text: &[u8] = match &name[..] {
            b"bad" => b"boom\r\nline two",
            b"nest" => {
                let a = dispatch(self, tacp::EXEC, b"nest");
                assert_eq!(a.len(), 1, "one answer");
                let text = a[0].1.clone();
                return copy(out, &text, true);
            }
            _ => SAY.as_bytes(),
        };
        copy(out, text, name != b"bad")
    }

    fn ui(&mut self, _ev: Ui, text: &[u8]) {
        assert!(std::str::from_utf8(text).is_ok() && !text.contains(&0));
    }
    fn ui_init(&mut self) {}
    fn tacp_respond(&mut self, sub: u8, payload: &[u8]) {
        assert!(payload.len() <= frame::PAYLOAD_MAX);
        self.answers.push((sub, payload.to_vec()));
    }
    fn connect(&mut self, _: &[u8], _: u16, _: &[u8]) -> bool {
        self.connected = true;
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

#[derive(Debug, PartialEq, Eq)]
enum Seen {
    Repl(u8),
    Control(u8),
    Frame(u8, u8, Vec<u8>),
    Dropped,
}

fn crc(bytes: &[u8]) -> u16 {
    let mut c: u16 = 0xFFFF;
    for &b in bytes {
        c ^= u16::from(b) << 8;
        for _ in 0..8 {
            c = if c & 0x8000 != 0 { (c << 1) ^ 0x1021 } else { c << 1 };
        }
    }
    c
}

/// docs/TACP.md's framing, written again over the whole stream (no gaps):
/// what each part is.
fn parse(s: &[u8]) -> Vec<Seen> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < s.len() {
        if s[i] != 0xAA {
            out.push(Seen::Repl(s[i]));
            i += 1;
            continue;
        }
        match (s.get(i + 1), s.get(i + 2)) {
            (None, _) | (Some(0x55), None) => return out, // held at the end
            (Some(0x55), Some(&c)) if matches!(c, 1..=6) => {
                out.push(Seen::Control(c));
                i += 3;
            }
            (Some(0x55), Some(0x20)) => {
                let Some(&pl) = s.get(i + 3) else { return out };
                if pl > 127 {
                    out.push(Seen::Control(0x20));
                    i += 4;
                    continue;
                }
                let end = i + 4 + usize::from(pl) + 4;
                if end > s.len() {
                    return out;
                }
                out.push(Seen::Control(0x20));
                i = end;
            }
            (Some(0x55), Some(0x30)) => {
                if s.len() < i + 7 {
                    return out;
                }
                let len = usize::from(s[i + 5]) | usize::from(s[i + 6]) << 8;
                if len > frame::PAYLOAD_MAX {
                    out.push(Seen::Dropped);
                    i += 7;
                    continue;
                }
                let end = i + 7 + len;
                if end + 2 > s.len() {
                    return out;
                }
                let got = u16::from_le_bytes([s[end], s[end + 1]]);
                if got == crc(&s[i + 3..end]) {
                    out.push(Seen::Frame(s[i + 3], s[i + 4], s[i + 7..end].to_vec()));
                } else {
                    out.push(Seen::Dropped);
                }
                i = end + 2;
            }
            (Some(0x55), Some(&0xAA)) => {
                out.push(Seen::Repl(0xAA));
                out.push(Seen::Repl(0x55));
                i += 2;
            }
            (Some(0x55), Some(&c)) => {
                out.push(Seen::Repl(0xAA));
                out.push(Seen::Repl(0x55));
                out.push(Seen::Repl(c));
                i += 3;
            }
            (Some(&0xAA), _) => {
                out.push(Seen::Repl(0xAA));
                i += 1;
            }
            (Some(&c), _) => {
                out.push(Seen::Repl(0xAA));
                out.push(Seen::Repl(c));
                i += 2;
            }
        }
    }
    out
}

fn host(flags: u8) -> FuzzHost {
    let mut h = FuzzHost {
        state: State::new(Registry::new(), agent::Agent::new()),
        port: MemPort::new(),
        connected: flags & 4 != 0,
        answers: Vec::new(),
    };
    h.port.now = 5_000;
    h.state.agent.reset();
    let State { registry, rate, .. } = &mut h.state;
    registry.reset(rate, 5_000);
    for (name, risk) in TOOLS {
        let spec = Spec {
            how: How::Python,
            risk,
            confirm: false,
            per_min: 1000,
        };
        let slot = agent::register_tool(&mut h.state, &mut h.port, name.as_bytes(), spec);
        assert!(slot.is_ok());
    }
    h.state.trust.set(Level::from_c(flags & 3));
    if flags & 8 != 0 {
        for _ in 0..3 {
            h.state.breaker.failure(h.port.now);
        }
    }
    memory::set(&mut h.port, b"k", b"v\n\"1\"").unwrap();
    h.state
        .session
        .add(&mut h.port, Role::User, b"hello")
        .unwrap();
    h
}

fn check_answers(h: &mut FuzzHost, sub: u8, payload: &[u8], a: &[(u8, Vec<u8>)], trust0: Level) {
    assert_eq!(a.len(), 1, "one answer for {sub:#x} {payload:?}: {a:?}");
    let (asub, text) = &a[0];
    assert!(*asub == sub || *asub == tacp::ERROR, "{asub:#x} for {sub:#x}");
    let text = std::str::from_utf8(text).expect("an answer is UTF-8");
    if sub == tacp::EXEC {
        assert_ne!(text, "trust level insufficient", "EXEC runs at USB trust");
    }
    assert_eq!(h.state.agent.chain().depth(), 0);
    assert_eq!(h.port.open_count(), 0);
    if !matches!(sub, tacp::CONNECT | tacp::DISCONNECT) {
        assert_eq!(h.state.trust.get(), trust0, "the trust level");
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&flags, rest)) = data.split_first() else {
        return;
    };
    // The framer against the parser, in chunks of (flags >> 4) + 1 bytes.
    let mut h = host(flags);
    let mut rx = frame::Rx::new();
    let mut payload = vec![0u8; frame::PAYLOAD_MAX];
    let mut seen = Vec::new();
    let chunk = usize::from(flags >> 4) + 1;
    let mut frames = 0;
    for part in rest.chunks(chunk) {
        for &b in part {
            match rx.push(b, h.port.now, &mut payload) {
                frame::Event::Held => {}
                frame::Event::Pass(bytes, n) => {
                    seen.extend(bytes[..usize::from(n)].iter().map(|&c| Seen::Repl(c)))
                }
                frame::Event::Control(c) => seen.push(Seen::Control(c)),
                frame::Event::Dropped(_) => seen.push(Seen::Dropped),
                frame::Event::Frame { sub, seq, len } => {
                    let p = payload[..usize::from(len)].to_vec();
                    seen.push(Seen::Frame(sub, seq, p.clone()));
                    if frames < 8 {
                        frames += 1;
                        let trust0 = h.state.trust.get();
                        let a = dispatch(&mut h, sub, &p);
                        check_answers(&mut h, sub, &p, &a, trust0);
                    }
                }
            }
            assert!(usize::from(rx.got) <= frame::PAYLOAD_MAX);
        }
        h.port.now += 1;
    }
    assert_eq!(seen, parse(rest), "the framer against the parser");

    // The input as the payload of a valid frame of each kind.
    let Some((&sub, payload)) = rest.split_first() else {
        return;
    };
    let subs = [
        tacp::EXEC,
        tacp::ASK,
        tacp::STATUS,
        tacp::TOOLS,
        tacp::HISTORY,
        tacp::REMEMBER,
        tacp::CLEAR,
        tacp::CONNECT,
        tacp::DISCONNECT,
        tacp::SAFETY,
        tacp::RECALL,
        sub,
    ];
    let sub = subs[usize::from(sub) % subs.len()];
    let payload = &payload[..payload.len().min(frame::PAYLOAD_MAX)];
    let mut h = host(flags);
    let trust0 = h.state.trust.get();
    let a = dispatch(&mut h, sub, payload);
    check_answers(&mut h, sub, payload, &a, trust0);
});
