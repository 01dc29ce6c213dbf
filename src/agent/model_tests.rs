//! A property-test model of the agent loop (issue 10).
//!
//! Random programs — sequences of top-level calls (`ask()`, `tool()` from
//! the REPL, the USB host or a backend, `tacp()`, `connect()`,
//! `disconnect()`), clock jumps, trust changes, `config()` and soft resets —
//! run against a [`Host`] over [`State`] + [`MemPort`] whose backend answers
//! from a script (text, `tool_call`s, failures, garbage, invalid UTF-8, NUL,
//! over-long replies) and whose Python tools act from a script (return,
//! raise, abort, and first call back into the agent: nested `ask()`,
//! `tool()`, `tacp()`, `connect()`, `disconnect()`, a clock jump), nesting
//! past [`CALL_DEPTH_MAX`].
//!
//! The host keeps a model of the call chain (a frame per call, with its
//! depth and the trust its tools may run at) and checks, at every callback
//! and after every call:
//!
//! * **one failed `ask()` is exactly one breaker failure**: the breaker after
//!   an `ask()` is the breaker as its last request found it with exactly the
//!   `ask()`'s one report applied (a failure for `RequestFailed` and
//!   `RoundLimit`, or for an answer after a tool raised; a success
//!   otherwise); `tool()` likewise; and every call counts at most one error
//!   of its own (its `errors` delta minus those of the calls nested in it),
//!   exactly one when it failed;
//! * **a half-open trial is always reported**: after an `ask()` that was
//!   admitted and did not abort, the breaker is never half-open with a trial
//!   pending;
//! * **trust never rises inside a chain**: the chain's trust while a tool
//!   runs is the model's (the lower of each enclosing call's own: REPL the
//!   current level, USB for TACP, HTTPS∧current for a backend's request),
//!   never above the outermost call's, every tool that ran was allowed at
//!   it, and every refusal for trust was one;
//! * **bounded work**: at most [`CALL_REQUESTS_MAX`] posts per top-level
//!   call (and `RequestLimit` only once they are used), a call nested deeper
//!   than [`CALL_DEPTH_MAX`] is refused with `NestingLimit` and no other is;
//!   at most 1 + [`TOOL_ROUNDS_MAX`] requests per `ask()`;
//! * **the seed's wire contract**: every request body parses (with the
//!   independent `json` crate) as `{"prompt","context"}` with the `ask()`'s
//!   prompt, plus a `tool_result` on exactly the follow-ups, naming the
//!   requested tool and what it did — `tools` and summary requests only when
//!   `config()` opted in.
//!
//! Also: every TACP request gets exactly one answer, UTF-8 and within the
//! payload maximum (an EXEC's the tool's text or the vendor's failure JSON,
//! a refusal the vendor's error text), no file stays open, every
//! UI text and every ring message is UTF-8 without NUL.

use std::cell::RefCell;
use std::collections::VecDeque;

use proptest::prelude::*;
use proptest::test_runner::{Config as PtConfig, TestCaseError, TestRunner};

use super::registry::{How, Registry};
use super::{
    Account, Arg, CALL_DEPTH_MAX, CALL_REQUESTS_MAX, Host, NAME_ECHO_MAX, NoReply, Origin,
    REPLY_MAX, Status, TOOL_RESULT_MAX, TOOL_ROUNDS_MAX, ToolOutcome, Ui, ask, ask_check, config,
    connect, disconnect, tacp, tool,
};
use crate::message::Role;
use crate::safety::breaker::{CircuitBreaker, State as Cb};
use crate::safety::trust::Level;
use crate::state::State;
use crate::testing::MemPort;

/// Python tools of the registry: (name, risk, calls per minute).
const PY_TOOLS: [(&str, u8, u16); 4] = [
    ("py0", 0, 1000),
    ("py1", 1, 1000),
    ("py2", 2, 1000),
    ("pyslow", 0, 2),
];

/// Bytes of the `out` buffer a host-made `tool()` call passes (short: the
/// result is cut).
const TOOL_OUT: usize = 40;

// ---------------------------------------------------------------------------
// Programs

#[derive(Clone, Debug)]
enum Reply {
    /// Answer text.
    Text(String),
    /// `{"tool_call":{"name":…,"arg":…}}` (arg absent when `None`).
    ToolCall(String, Option<String>),
    /// JSON that is not exactly a tool request: answer text.
    NearMiss(String),
    /// The post fails.
    Fail,
    /// Any bytes (invalid UTF-8, NUL, …).
    Bytes(Vec<u8>),
    /// This many bytes of text (over `REPLY_MAX`, or over the buffer).
    Long(usize),
}

#[derive(Clone, Debug)]
enum Argv {
    None,
    Text(Vec<u8>),
    Bool(bool),
    Int(i32),
    Other,
}

#[derive(Clone, Debug)]
enum TacpLine {
    /// EXEC "<name>" or "<name> <arg>".
    Tool(String, Option<String>),
    /// Any sub-command with any payload.
    Raw(u8, Vec<u8>),
}

#[derive(Clone, Debug)]
enum Call {
    Ask(Vec<u8>),
    Tool(String, Origin, Argv),
    Tacp(TacpLine),
    /// `connect()`; the transport connects when true.
    Connect(bool),
    Disconnect,
    /// Not a call: the clock moves on (inside a tool).
    Sleep(u32),
}

#[derive(Clone, Debug)]
enum End {
    Return(String),
    Raise(String),
    Abort,
}

/// What a Python tool does when it runs: these calls (their errors
/// caught), a clock jump, then how it ends.
#[derive(Clone, Debug)]
struct Act {
    calls: Vec<Call>,
    advance_ms: u32,
    end: End,
}

#[derive(Clone, Debug)]
enum Top {
    /// A call with the backend's replies and the tools' acts for it.
    Call(Call, Vec<Reply>, Vec<Act>),
    Advance(u32),
    Trust(u8),
    /// `config(key=value)`.
    Config(usize, i32),
    /// A soft reset: a fresh state over the same files.
    Reboot,
}

/// The request: its sub-command and payload.
fn render_tacp(l: &TacpLine) -> (u8, Vec<u8>) {
    match l {
        TacpLine::Raw(sub, b) => (*sub, b.clone()),
        TacpLine::Tool(name, arg) => {
            let mut s = name.clone();
            if let Some(a) = arg {
                s.push(' ');
                s.push_str(a);
            }
            (tacp::EXEC, s.into_bytes())
        }
    }
}

/// The tool an EXEC names: its payload up to the first space.
fn tacp_tool(l: &TacpLine) -> Option<Vec<u8>> {
    let (sub, payload) = render_tacp(l);
    if sub != tacp::EXEC {
        return None;
    }
    Some(payload.split(|&c| c == b' ').next().unwrap_or(&[]).to_vec())
}

/// The reply bytes for a buffer of `cap` bytes; `None`: the post fails.
fn render_reply(r: &Reply, cap: usize) -> Option<Vec<u8>> {
    let b = match r {
        Reply::Text(t) | Reply::NearMiss(t) => t.clone().into_bytes(),
        Reply::ToolCall(name, arg) => {
            let arg = match arg {
                Some(a) => format!(",\"arg\":{}", json::stringify(a.as_str())),
                None => String::new(),
            };
            format!(
                "{{\"tool_call\":{{\"name\":{}{arg}}}}}",
                json::stringify(name.as_str())
            )
            .into_bytes()
        }
        Reply::Fail => return None,
        Reply::Bytes(b) => b.clone(),
        Reply::Long(n) => "y".repeat(*n).into_bytes(),
    };
    // The port contract: a body longer than the buffer is a failure.
    (b.len() <= cap).then_some(b)
}

fn usable(b: &[u8]) -> bool {
    b.len() <= REPLY_MAX && !b.contains(&0) && std::str::from_utf8(b).is_ok()
}

// ---------------------------------------------------------------------------
// The model of the call chain

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Ask,
    Tool,
    Tacp,
    Other,
}

/// A tool request of the backend, as the follow-up must report it.
struct Pending {
    name: Vec<u8>,
    arg: Option<Vec<u8>>,
    /// The trust the request runs at (model).
    cap: Level,
    /// The Python tool ran: (returned, the text it wrote).
    ran: Option<(bool, Vec<u8>)>,
}

/// The last request of an `ask()`.
struct LastPost {
    /// The breaker when it was posted.
    before: CircuitBreaker,
    summary: bool,
    first_main: bool,
    usable: bool,
    /// Its answer was longer than `REPLY_MAX` (issue 23: the ask() says
    /// so, `ReplyTooLong`).
    too_long: bool,
    /// A failure was reported before it (a summary request failed).
    failed_before: bool,
}

struct Frame {
    kind: Kind,
    /// The chain's depth when the call was made.
    base: u8,
    /// The trust the call's tools run at (model).
    cap: Level,
    prompt: Vec<u8>,
    command: bool,
    /// Tool and TACP `TOOL` calls: the tool's name.
    tool: Vec<u8>,
    errors0: u32,
    child_errors: u32,
    late0: u32,
    main_posts: u32,
    pending: Option<Pending>,
    last_post: Option<LastPost>,
    last_reply: Vec<u8>,
    /// The last reply was a tool request past the round limit.
    round_limit: bool,
    summary_failed: bool,
    tool_failed: bool,
    /// Tool and TACP frames: the Python tool ran (returned, its text, the
    /// breaker when it ended).
    ran: Option<(bool, Vec<u8>, CircuitBreaker)>,
}

impl Frame {
    fn new(kind: Kind, base: u8, cap: Level, errors0: u32, late0: u32) -> Self {
        Frame {
            kind,
            base,
            cap,
            prompt: Vec::new(),
            command: false,
            tool: Vec::new(),
            errors0,
            child_errors: 0,
            late0,
            main_posts: 0,
            pending: None,
            last_post: None,
            last_reply: Vec::new(),
            round_limit: false,
            summary_failed: false,
            tool_failed: false,
            ran: None,
        }
    }
}

/// What the generator reached, over all cases (so that a generator that
/// stops reaching the interesting cases fails the test).
#[derive(Default, Debug)]
struct Reached {
    cases: u32,
    top_calls: u32,
    posts: u32,
    max_posts_top: u32,
    max_depth: u8,
    nesting_refused: u32,
    request_limit: u32,
    round_limit: u32,
    failed_asks: u32,
    trust_refused: u32,
    tool_runs: u32,
    half_open_asks: u32,
    summary_posts: u32,
    aborts: u32,
}

thread_local! {
    static REACHED: RefCell<Reached> = RefCell::new(Reached::default());
}

fn reached(f: impl FnOnce(&mut Reached)) {
    REACHED.with(|r| f(&mut r.borrow_mut()));
}

struct ModelHost {
    state: State<Registry, super::Agent>,
    port: MemPort,
    connected: bool,
    connect_ok: bool,
    replies: VecDeque<Reply>,
    acts: VecDeque<Act>,
    /// A KeyboardInterrupt is pending (a tool aborted).
    aborting: bool,
    /// The model's current trust level.
    trust: Level,
    backend_summary: bool,
    send_tools: bool,
    frames: Vec<Frame>,
    /// Posts since the top-level call began.
    top_posts: u32,
    /// The outermost call's trust.
    top_bound: Level,
    /// Tool calls that gate 1 admitted and gate 2 or 3 refused: each may
    /// have taken a half-open trial that is never reported (SPEC §5: it
    /// lapses after 30 s).
    late_refusals: u32,
    /// TACP answers not yet taken by their call.
    tacp_out: Vec<(u8, Vec<u8>)>,
}

fn cut(s: &[u8], max: usize) -> &[u8] {
    &s[..crate::text::floor_char_boundary(s, max)]
}

fn fingerprint(b: &CircuitBreaker, now: u32) -> String {
    let mut b = *b;
    let _ = b.state(now);
    format!("{b:?}")
}

impl ModelHost {
    fn new() -> Self {
        let mut m = ModelHost {
            state: State::new(Registry::new(), super::Agent::new()),
            port: MemPort::new(),
            connected: false,
            connect_ok: true,
            replies: VecDeque::new(),
            acts: VecDeque::new(),
            aborting: false,
            trust: Level::Usb,
            backend_summary: false,
            send_tools: false,
            frames: Vec::new(),
            top_posts: 0,
            top_bound: Level::Usb,
            late_refusals: 0,
            tacp_out: Vec::new(),
        };
        m.port.now = 1_000;
        m.soft_reset();
        m
    }

    /// What the binding does at a soft reset: the seed's inits, the agent's,
    /// the Python tools registered again.
    fn soft_reset(&mut self) {
        self.state = State::new(Registry::new(), super::Agent::new());
        self.state.agent.reset();
        let now = self.port.now;
        let State { registry, rate, .. } = &mut self.state;
        registry.reset(rate, now);
        for (name, risk, rate) in PY_TOOLS {
            let spec = super::registry::Spec {
                how: How::Python,
                risk,
                confirm: false,
                per_min: rate,
            };
            super::register_tool(&mut self.state, &mut self.port, name.as_bytes(), spec).unwrap();
        }
        self.trust = Level::Usb;
    }

    fn now(&self) -> u32 {
        self.port.now
    }

    fn errors(&self) -> u32 {
        self.state.agent.errors()
    }

    fn registered(&self, name: &[u8]) -> Option<(u8, bool)> {
        let t = self.state.registry.find(&self.state.rate, name)?;
        Some((t.risk, t.how == How::Builtin))
    }

    /// Runs one call made with the chain `base` deep, from inside a tool
    /// that runs at `parent` (None: a top-level call).
    fn call(&mut self, call: &Call, base: u8, parent: Option<Level>) -> Status {
        if let Call::Sleep(ms) = call {
            self.port.now = self.port.now.wrapping_add(*ms);
            return Status::Ok;
        }
        let within = |own: Level| parent.map_or(own, |p| own.min(p));
        let (kind, cap) = match call {
            Call::Ask(_) => (Kind::Ask, within(self.trust)),
            Call::Tool(_, origin, _) => {
                let own = match origin {
                    Origin::Repl => self.trust,
                    Origin::Usb => Level::Usb,
                    Origin::Backend => self.trust.min(Level::Https),
                };
                (Kind::Tool, within(own))
            }
            Call::Tacp(_) => (Kind::Tacp, within(Level::Usb)),
            Call::Connect(_) | Call::Disconnect | Call::Sleep(_) => {
                (Kind::Other, within(self.trust))
            }
        };
        if parent.is_none() {
            // The outermost call's trust: what no tool of its chain exceeds.
            self.top_bound = match call {
                Call::Ask(_) => self.trust.min(Level::Https),
                _ => cap,
            };
        }
        let mut f = Frame::new(kind, base, cap, self.errors(), self.late_refusals);
        match call {
            Call::Ask(p) => {
                f.prompt = p.clone();
                f.command = super::policy::command(p).is_some();
            }
            Call::Tool(n, ..) => f.tool = n.clone().into_bytes(),
            Call::Tacp(l) => f.tool = tacp_tool(l).unwrap_or_default(),
            _ => {}
        }
        self.frames.push(f);
        let mut nesting_call = true;
        let mut tacp_answer = None;
        let mut ask_reply = None;
        let st = match call {
            Call::Ask(p) => match ask_check(self, p) {
                Err(s) => Err(s),
                Ok(n) => {
                    let mut work = vec![0u8; n];
                    match ask(self, p, &mut work) {
                        Ok(r) => {
                            ask_reply = Some(work[r.offset..r.offset + r.len].to_vec());
                            Ok(())
                        }
                        Err(s) => Err(s),
                    }
                }
            },
            Call::Tool(name, origin, a) => {
                let arg = match a {
                    Argv::None => Arg::None,
                    Argv::Text(t) => Arg::Text(t),
                    Argv::Bool(b) => Arg::Bool(*b),
                    Argv::Int(i) => Arg::Int(*i),
                    Argv::Other => Arg::Other,
                };
                let mut out = [0u8; TOOL_OUT];
                let mut acct = Account::new();
                let r = tool(self, name.as_bytes(), *origin, arg, &mut out, &mut acct);
                if let Err(Status::ToolRaised) = r {
                    assert!(acct.raised <= TOOL_OUT);
                }
                r.map(|_| ())
            }
            Call::Tacp(line) => {
                nesting_call = tacp_tool(line).is_some();
                let (sub, payload) = render_tacp(line);
                let mut work = vec![0u8; tacp::work_size(self, sub, &payload)];
                let mark = self.tacp_out.len();
                let r = tacp::dispatch(self, sub, &payload, &mut work);
                let answers = self.tacp_out.split_off(mark);
                assert_eq!(answers.len(), 1, "one answer for {line:?}: {answers:?}");
                tacp_answer = answers.into_iter().next();
                r
            }
            Call::Connect(ok) => {
                self.connect_ok = *ok;
                connect(self, b"127.0.0.1", 8080, b"key").map(|_| ())
            }
            Call::Disconnect => disconnect(self),
            Call::Sleep(_) => Ok(()),
        };
        let st = st.err().unwrap_or(Status::Ok);
        let f = self.frames.pop().unwrap();
        self.check_call(call, &f, st, nesting_call, tacp_answer, ask_reply);
        let delta = self.errors() - f.errors0;
        if let Some(p) = self.frames.last_mut() {
            p.child_errors += delta;
        }
        st
    }

    fn check_call(
        &mut self,
        call: &Call,
        f: &Frame,
        st: Status,
        nesting_call: bool,
        tacp_answer: Option<(u8, Vec<u8>)>,
        ask_reply: Option<Vec<u8>>,
    ) {
        let what = format!("{call:?} at depth {} -> {st:?}", f.base);
        // Errors: at most one of its own, exactly one when it failed.
        let own = self.errors() - f.errors0 - f.child_errors;
        assert!(own <= 1, "{what}: counted {own} errors of its own");
        let exactly_one = matches!(
            st,
            Status::RequestFailed
                | Status::ReplyTooLong
                | Status::RoundLimit
                | Status::NotConnected
                | Status::RequestLimit
                | Status::BreakerOpen
                | Status::TrustRefused
                | Status::RateLimited
                | Status::ToolRaised
        );
        if exactly_one {
            assert_eq!(own, 1, "{what}: one error");
        }
        if f.kind != Kind::Ask && matches!(st, Status::TrustRefused | Status::RateLimited) {
            self.late_refusals += 1;
        }
        if matches!(st, Status::NestingLimit | Status::UnknownTool) {
            assert_eq!(own, 0, "{what}: no error");
        }
        // Nesting: refused exactly past the bound.
        if st == Status::NestingLimit {
            reached(|r| r.nesting_refused += 1);
            assert!(
                nesting_call && f.base >= CALL_DEPTH_MAX,
                "{what}: refused for nesting"
            );
        }
        if f.base >= CALL_DEPTH_MAX && nesting_call {
            let earlier = matches!(
                st,
                Status::PromptLength
                    | Status::HasNul
                    | Status::NotUtf8
                    | Status::NotConnected
                    | Status::RequestLimit
            );
            assert!(
                st == Status::NestingLimit || earlier || f.kind == Kind::Tacp,
                "{what}: past CALL_DEPTH_MAX"
            );
        }
        if st == Status::RequestLimit {
            reached(|r| r.request_limit += 1);
            assert_eq!(
                self.top_posts,
                u32::from(CALL_REQUESTS_MAX),
                "{what}: refused before the chain used its requests"
            );
        }
        if st == Status::Aborted {
            reached(|r| r.aborts += 1);
            assert!(self.aborting, "{what}: aborted without a pending abort");
        }
        // Trust follows the chain.
        match call {
            Call::Connect(ok) if st == Status::Ok => {
                self.trust = if *ok { Level::Https } else { Level::Usb };
                self.connected = *ok;
            }
            Call::Disconnect if st == Status::Ok => {
                self.trust = Level::Usb;
                self.connected = false;
            }
            _ => {}
        }
        assert_eq!(self.state.trust.get(), self.trust, "{what}: trust level");
        if f.kind != Kind::Ask {
            // (An ask()'s own level may be above: its tools run at HTTPS.)
            assert!(f.cap as u8 <= self.top_bound as u8, "{what}: trust rose");
        }
        match f.kind {
            Kind::Ask => self.check_ask(f, st, &what, ask_reply),
            Kind::Tool => {
                let risk = self.registered(&f.tool).map(|r| r.0);
                if st == Status::TrustRefused {
                    reached(|r| r.trust_refused += 1);
                    assert!(
                        !f.cap.allows(risk.unwrap()),
                        "{what}: refused at {:?}",
                        f.cap
                    );
                }
                if let (Status::Ok, Some(risk)) = (st, risk) {
                    assert!(f.cap.allows(risk), "{what}: ran at {:?}", f.cap);
                }
                self.check_tool_breaker(f, st == Status::Ok, st == Status::ToolRaised, &what);
            }
            Kind::Tacp => {
                let (sub, a) = tacp_answer.expect("every request is answered");
                let text = std::str::from_utf8(&a).expect("a TACP answer is UTF-8");
                assert!(a.len() <= tacp::frame::PAYLOAD_MAX);
                if st == Status::Aborted {
                    assert_eq!((sub, text), (tacp::ERROR, "interrupted"), "{what}");
                    return;
                }
                assert_eq!(st, Status::Ok, "{what}: only an abort is an error");
                if nesting_call {
                    self.check_tacp_tool(f, sub, text, &what);
                }
            }
            Kind::Other => {}
        }
    }

    fn check_ask(&mut self, f: &Frame, st: Status, what: &str, reply: Option<Vec<u8>>) {
        let now = self.now();
        if matches!(
            st,
            Status::RequestFailed | Status::ReplyTooLong | Status::RoundLimit
        ) {
            reached(|r| r.failed_asks += 1);
        }
        // The text names the limit exactly when the last answer passed it.
        if let Some(lp) = f.last_post.as_ref().filter(|lp| !lp.summary) {
            if matches!(st, Status::RequestFailed | Status::ReplyTooLong) {
                assert_eq!(
                    st == Status::ReplyTooLong,
                    lp.too_long,
                    "{what}: too long or failed"
                );
            }
        }
        if st == Status::RoundLimit {
            reached(|r| r.round_limit += 1);
            assert!(f.round_limit, "{what}: round limit without 4 tool requests");
        }
        if f.round_limit {
            assert_eq!(st, Status::RoundLimit, "{what}: a 4th tool request");
        }
        if let Some(reply) = reply {
            if !f.command {
                assert_eq!(reply, f.last_reply, "{what}: the answer is the last reply");
                let lp = f.last_post.as_ref().expect("an answer was posted for");
                assert!(lp.usable && !lp.summary);
                assert!(f.pending.is_none());
            }
        }
        // The ask()'s one breaker report, right after its last request.
        if let Some(lp) = &f.last_post {
            let mut b = lp.before;
            if lp.usable && (lp.first_main || lp.summary) && b.state(now) == Cb::HalfOpen {
                b.success();
            }
            let expect = if f.command {
                if !lp.usable {
                    b.failure(now);
                }
                matches!(st, Status::Ok | Status::CompactFailed).then_some(b)
            } else {
                match st {
                    Status::Ok => {
                        if f.tool_failed {
                            if !lp.failed_before {
                                b.failure(now);
                            }
                        } else if !lp.failed_before {
                            b.success();
                        }
                        Some(b)
                    }
                    Status::RequestFailed | Status::ReplyTooLong | Status::RoundLimit => {
                        if !lp.failed_before {
                            b.failure(now);
                        }
                        if lp.summary {
                            assert!(!b.allow(now), "{what}: went on after its summary failed");
                        }
                        Some(b)
                    }
                    _ => None,
                }
            };
            if let Some(b) = expect {
                assert_eq!(
                    fingerprint(&self.state.breaker, now),
                    fingerprint(&b, now),
                    "{what}: not exactly the ask()'s one report"
                );
            }
            // A half-open trial is always reported — but for one that a
            // call of the chain took and a later gate refused.
            if st != Status::Aborted && self.late_refusals == f.late0 {
                let mut b = self.state.breaker;
                assert!(
                    b.state(now) != Cb::HalfOpen || b.allow(now),
                    "{what}: left a half-open trial pending"
                );
            }
        }
    }

    /// A call of its own (`tool()`, TACP `TOOL`): success when the tool
    /// returned, one failure when it raised.
    fn check_tool_breaker(&self, f: &Frame, ok: bool, raised: bool, what: &str) {
        let now = self.now();
        if ok {
            assert_eq!(
                fingerprint(&self.state.breaker, now),
                fingerprint(&CircuitBreaker::new(), now),
                "{what}: a tool that returned is a success"
            );
        }
        if raised {
            let (_, _, mut b) = f.ran.clone().expect("a raised tool ran");
            b.failure(now);
            assert_eq!(
                fingerprint(&self.state.breaker, now),
                fingerprint(&b, now),
                "{what}: a tool that raised is one failure"
            );
        }
    }

    fn check_tacp_tool(&mut self, f: &Frame, sub: u8, answer: &str, what: &str) {
        let err = |t: &str| (tacp::ERROR, t.to_string());
        let got = (sub, answer.to_string());
        let nested = err(Status::NestingLimit.text());
        if f.base >= CALL_DEPTH_MAX {
            assert_eq!(got, nested, "{what}: past CALL_DEPTH_MAX");
            reached(|r| r.nesting_refused += 1);
            return;
        }
        assert_ne!(got, nested, "{what}");
        let Some((risk, _)) = self.registered(&f.tool) else {
            assert_eq!(got, err("unknown tool"), "{what}");
            return;
        };
        if got == err("trust level insufficient") || got == err("rate limited") {
            self.late_refusals += 1;
        }
        if got == err("trust level insufficient") {
            reached(|r| r.trust_refused += 1);
            assert!(!f.cap.allows(risk), "{what}: refused at {:?}", f.cap);
        }
        let failed = format!(
            "{{\"tool\":\"{}\",\"status\":\"error\",\"code\":-1}}",
            String::from_utf8_lossy(&f.tool)
        );
        let answered = sub == tacp::EXEC;
        if answered {
            assert!(f.cap.allows(risk), "{what}: ran at {:?}", f.cap);
        }
        match &f.ran {
            Some((true, text, _)) => {
                assert_eq!(sub, tacp::EXEC, "{what}");
                assert_eq!(
                    answer.as_bytes(),
                    cut(text, tacp::frame::PAYLOAD_MAX),
                    "{what}"
                );
            }
            Some((false, ..)) => assert_eq!(got, (tacp::EXEC, failed.clone()), "{what}"),
            None => {}
        }
        let ok = answered && answer != failed;
        let raised = answered && answer == failed;
        if answered {
            // The last result is the answer's first bytes.
            assert_eq!(self.state.agent.last_result(), cut(answer.as_bytes(), 47));
        }
        self.check_tool_breaker(f, ok, raised, what);
    }

    /// Checks a request body against the seed's shape and the model.
    fn check_body(&mut self, body: &[u8]) -> bool {
        let text = std::str::from_utf8(body).expect("a request body is UTF-8");
        let v = json::parse(text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"));
        assert!(v.is_object(), "{text}");
        let f = self.frames.last_mut().unwrap();
        if v.has_key("summarize") {
            assert!(
                self.backend_summary,
                "a summary request not opted in: {text}"
            );
            assert_eq!(v.len(), 2, "{text}");
            assert!(v["summarize"].is_string());
            assert_eq!(v["max_bytes"].as_u32(), Some(255));
            reached(|r| r.summary_posts += 1);
            return true;
        }
        let mut keys = 2;
        assert_eq!(
            v["prompt"].as_str().map(str::as_bytes),
            Some(&f.prompt[..]),
            "{text}"
        );
        assert!(v["context"].is_string(), "{text}");
        if self.send_tools {
            keys += 1;
            assert!(v["tools"].is_array(), "{text}");
            for t in v["tools"].members() {
                assert_eq!(t.len(), 2);
                assert!(t["name"].is_string() && t["risk"].as_u8().is_some_and(|r| r <= 2));
            }
        } else {
            assert!(!v.has_key("tools"), "tools not opted in: {text}");
        }
        match f.pending.take() {
            None => {
                assert_eq!(f.main_posts, 0, "a follow-up without a tool_result: {text}");
                assert!(!v.has_key("tool_result"), "{text}");
            }
            Some(p) => {
                keys += 1;
                let tr = &v["tool_result"];
                assert!(tr.is_object() && tr.len() == 3, "{text}");
                let (name, status, result) = (
                    tr["name"].as_str().expect("name").as_bytes(),
                    tr["status"].as_str().expect("status"),
                    tr["result"].as_str().expect("result").as_bytes(),
                );
                // The name as requested, cut to NAME_ECHO_MAX.
                assert!(
                    p.name.starts_with(name) && name.len() >= p.name.len().min(NAME_ECHO_MAX - 3),
                    "tool_result name {name:?} for {:?}",
                    String::from_utf8_lossy(&p.name)
                );
                let base = f.base + 1;
                let regd = {
                    let c = &self.state;
                    c.registry
                        .find(&c.rate, &p.name)
                        .map(|t| (t.risk, t.how == How::Builtin))
                };
                let nested = Status::NestingLimit.text().as_bytes();
                if base >= CALL_DEPTH_MAX {
                    assert_eq!((status, result), ("error", nested), "{text}");
                    reached(|r| r.nesting_refused += 1);
                } else {
                    assert_ne!(result, nested, "{text}");
                    match (regd, &p.ran) {
                        (None, _) => {
                            assert_eq!((status, result), ("unknown", &b"unknown tool"[..]))
                        }
                        (Some(_), Some((true, out))) => {
                            assert_eq!((status, result), ("ok", &out[..]), "{text}")
                        }
                        (Some(_), Some((false, out))) => {
                            assert_eq!((status, result), ("error", &out[..]), "{text}")
                        }
                        (Some((risk, builtin)), None) => {
                            assert!(matches!(status, "ok" | "refused" | "error"), "{text}");
                            if status == "ok" {
                                assert!(builtin, "a Python tool reported ok but never ran");
                                assert!(p.cap.allows(risk), "ran at {:?}: {text}", p.cap);
                            }
                            if status == "refused" {
                                let gates = [
                                    Status::BreakerOpen,
                                    Status::TrustRefused,
                                    Status::RateLimited,
                                ];
                                assert!(
                                    gates.iter().any(|s| s.text().as_bytes() == result),
                                    "{text}"
                                );
                            }
                            if result == Status::TrustRefused.text().as_bytes() {
                                reached(|r| r.trust_refused += 1);
                                assert!(!p.cap.allows(risk), "refused at {:?}: {text}", p.cap);
                            }
                        }
                    }
                }
            }
        }
        assert_eq!(v.len(), keys, "members: {text}");
        false
    }
}

impl Host for ModelHost {
    type Files = MemPort;

    fn with_state<R>(
        &mut self,
        f: impl FnOnce(&mut State<Registry, super::Agent>, &mut MemPort) -> R,
    ) -> Option<R> {
        Some(f(&mut self.state, &mut self.port))
    }

    fn carve_scratch(area: &mut [u8]) -> Option<(&mut [u8], &mut crate::context::Scratch)> {
        crate::ffi::agent::carve_scratch(area)
    }

    fn post(&mut self, body: &[u8], reply: &mut [u8]) -> Result<usize, NoReply> {
        reached(|r| r.posts += 1);
        self.top_posts += 1;
        assert!(
            self.top_posts <= u32::from(CALL_REQUESTS_MAX),
            "post {} of one top-level call",
            self.top_posts
        );
        reached(|r| r.max_posts_top = r.max_posts_top.max(self.top_posts));
        let f = self.frames.last().expect("a post inside a call");
        assert_eq!(f.kind, Kind::Ask, "only ask() posts");
        let breaker = self.state.breaker;
        let summary = self.check_body(body);
        // The transport: no answer once disconnected.
        let r = match self.connected {
            true => self.replies.pop_front().unwrap_or(Reply::Text("ok".into())),
            false => Reply::Fail,
        };
        let got = render_reply(&r, reply.len());
        let ok = got.as_deref().is_some_and(usable);
        // (The transport tells an answer larger than the buffer, as the
        // unix one does.)
        let too_long = matches!(&r, Reply::Long(n) if *n > REPLY_MAX);
        let trust = self.trust;
        let f = self.frames.last_mut().unwrap();
        let first_main = !summary && f.main_posts == 0;
        if !summary {
            f.main_posts += 1;
            assert!(
                f.main_posts <= 1 + u32::from(TOOL_ROUNDS_MAX),
                "{} requests for one ask()",
                f.main_posts
            );
        }
        if f.last_post.is_none() {
            let mut b = breaker;
            if b.state(self.port.now) == Cb::HalfOpen {
                reached(|r| r.half_open_asks += 1);
            }
        }
        f.last_post = Some(LastPost {
            before: breaker,
            summary,
            first_main,
            usable: ok,
            too_long,
            failed_before: f.summary_failed,
        });
        if summary && !ok {
            f.summary_failed = true;
        }
        if !summary && ok {
            f.last_reply = got.clone().unwrap();
            if let Reply::ToolCall(name, arg) = &r {
                if f.main_posts > u32::from(TOOL_ROUNDS_MAX) {
                    f.round_limit = true;
                } else {
                    f.pending = Some(Pending {
                        name: name.clone().into_bytes(),
                        arg: arg.clone().map(String::into_bytes),
                        cap: trust.min(Level::Https).min(f.cap),
                        ran: None,
                    });
                }
            }
        }
        let Some(b) = got else {
            return Err(if too_long {
                NoReply::TooLong
            } else {
                NoReply::Failed
            });
        };
        reply[..b.len()].copy_from_slice(&b);
        Ok(b.len())
    }

    fn run_tool(&mut self, slot: u8, arg: Arg<'_>, out: &mut [u8]) -> ToolOutcome {
        reached(|r| r.tool_runs += 1);
        let (name, risk) = {
            let t = self
                .state
                .registry
                .tool(&self.state.rate, usize::from(slot))
                .expect("a registered slot");
            (t.name.to_vec(), t.risk)
        };
        let f = self.frames.last().expect("a tool runs inside a call");
        // Where the model says this run is, and at which trust.
        let (depth, cap) = match f.kind {
            Kind::Ask => {
                let p = f.pending.as_ref().expect("a tool the backend asked for");
                assert_eq!(p.name, name, "the tool the backend asked for");
                match (&p.arg, arg) {
                    (None, Arg::None) => {}
                    (Some(a), Arg::Text(t)) => assert_eq!(&a[..], t),
                    (a, got) => panic!("argument {got:?} for {a:?}"),
                }
                assert_eq!(out.len(), TOOL_RESULT_MAX);
                (f.base + 2, p.cap)
            }
            Kind::Tool | Kind::Tacp => {
                assert_eq!(f.tool, name, "the tool called");
                (f.base + 1, f.cap)
            }
            Kind::Other => panic!("a tool ran inside connect/disconnect"),
        };
        reached(|r| r.max_depth = r.max_depth.max(depth));
        assert_eq!(self.state.agent.chain.depth(), depth, "chain depth");
        assert_eq!(self.state.agent.chain.level(), cap, "the chain's trust");
        assert!(depth <= CALL_DEPTH_MAX);
        assert!(cap.allows(risk), "{name:?} (risk {risk}) ran at {cap:?}");
        assert!(cap as u8 <= self.top_bound as u8, "trust rose in the chain");
        let act = self.acts.pop_front().unwrap_or(Act {
            calls: Vec::new(),
            advance_ms: 0,
            end: End::Return("done".into()),
        });
        let mut aborted = false;
        for c in &act.calls {
            if self.call(c, depth, Some(cap)) == Status::Aborted {
                aborted = true;
                break;
            }
        }
        self.port.now = self.port.now.wrapping_add(act.advance_ms);
        let (outcome, text) = match (&act.end, aborted || self.aborting) {
            (_, true) | (End::Abort, _) => {
                self.aborting = true;
                (ToolOutcome::Abort, Vec::new())
            }
            (End::Return(t), _) => {
                let t = cut(t.as_bytes(), out.len()).to_vec();
                (ToolOutcome::Returned(t.len()), t)
            }
            (End::Raise(t), _) => {
                let t = cut(t.as_bytes(), out.len()).to_vec();
                (ToolOutcome::Raised(t.len()), t)
            }
        };
        out[..text.len()].copy_from_slice(&text);
        let breaker = self.state.breaker;
        let f = self.frames.last_mut().unwrap();
        let ran = match outcome {
            ToolOutcome::Returned(_) => Some(true),
            ToolOutcome::Raised(_) => Some(false),
            ToolOutcome::Abort => None,
        };
        if let Some(returned) = ran {
            match f.kind {
                Kind::Ask => {
                    f.pending.as_mut().unwrap().ran = Some((returned, text));
                    f.tool_failed |= !returned;
                }
                _ => f.ran = Some((returned, text, breaker)),
            }
        }
        outcome
    }

    fn ui(&mut self, ev: Ui, text: &[u8]) {
        // A backend's request refused at gate 2 or 3 ("led: refused: …").
        let late = [Status::TrustRefused, Status::RateLimited];
        if ev == Ui::Tool && late.iter().any(|s| text.ends_with(s.text().as_bytes())) {
            self.late_refusals += 1;
        }
        assert!(
            std::str::from_utf8(text).is_ok() && !text.contains(&0),
            "UI text {text:?}"
        );
    }

    fn ui_init(&mut self) {}

    fn tacp_respond(&mut self, sub: u8, payload: &[u8]) {
        assert!(payload.len() <= tacp::frame::PAYLOAD_MAX);
        self.tacp_out.push((sub, payload.to_vec()));
    }

    fn connect(&mut self, _host: &[u8], _port: u16, _api_key: &[u8]) -> bool {
        self.connected = self.connect_ok;
        self.connect_ok
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

    fn aborted(&mut self) -> bool {
        self.aborting
    }
}

/// Where a program starts.
#[derive(Clone, Debug)]
struct Setup {
    backend_summary: bool,
    send_tools: bool,
    /// Exchanges already in the ring.
    history: u8,
    /// Breaker failures before the program (3: open), and whether its
    /// cooldown has passed (half-open).
    failures: u8,
    cooled: bool,
}

fn run_program(setup: &Setup, prog: &[Top]) -> ModelHost {
    reached(|r| r.cases += 1);
    let mut m = ModelHost::new();
    m.connect_ok = true;
    assert_eq!(
        connect(&mut m, b"127.0.0.1", 8080, b"key"),
        Ok(true),
        "setup"
    );
    m.connected = true;
    m.trust = Level::Https;
    let mut values = [0i32; config::KEYS.len()];
    values[7] = i32::from(setup.backend_summary);
    values[8] = i32::from(setup.send_tools);
    // Summary requests come with compaction before a drop (both opt-in).
    values[10] = i32::from(setup.backend_summary);
    let c = config::set(
        &mut m.state.agent.config,
        &mut m.port,
        &values,
        (3 << 7) | (1 << 10),
    )
    .unwrap();
    (m.backend_summary, m.send_tools) = (c.backend_summary, c.send_tools);
    for i in 0..setup.history {
        let text = format!("earlier exchange {i} ").repeat(8);
        for role in [Role::User, Role::Assistant] {
            m.state
                .session
                .add(&mut m.port, role, text.as_bytes())
                .unwrap();
        }
    }
    for _ in 0..setup.failures {
        m.state.breaker.failure(m.port.now);
    }
    if setup.cooled {
        m.port.now += 30_000;
    }
    for top in prog {
        match top {
            Top::Call(call, replies, acts) => {
                reached(|r| r.top_calls += 1);
                m.replies = replies.iter().cloned().collect();
                m.acts = acts.iter().cloned().collect();
                m.aborting = false;
                m.top_posts = 0;
                let _ = m.call(call, 0, None);
                assert!(m.frames.is_empty());
                assert_eq!(m.state.agent.chain.depth(), 0, "{call:?}: chain left");
                assert_eq!(m.port.open_count(), 0, "{call:?}: a file left open");
                let ring = m.state.session.ring(&mut m.port);
                for msg in ring.iter() {
                    assert!(
                        std::str::from_utf8(&msg.text).is_ok() && !msg.text.contains(&0),
                        "{call:?}: ring text {:?}",
                        msg.text
                    );
                }
            }
            Top::Advance(ms) => m.port.now = m.port.now.wrapping_add(*ms),
            Top::Trust(l) => {
                let l = Level::from_c(*l);
                m.state.trust.set(l);
                m.trust = l;
            }
            Top::Config(i, v) => {
                let mut values = [0i32; config::KEYS.len()];
                values[*i] = *v;
                let got = config::set(&mut m.state.agent.config, &mut m.port, &values, 1 << i);
                if let Ok(c) = got {
                    m.backend_summary = c.backend_summary;
                    m.send_tools = c.send_tools;
                }
            }
            Top::Reboot => m.soft_reset(),
        }
    }
    m
}

// ---------------------------------------------------------------------------
// Generators

fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => "[a-z ]{1,12}",
        2 => "[ก-ฮ]{1,20}",
        1 => "[a-z\"\\\\\n\t\u{1}ก]{0,30}",
        1 => Just("ข".repeat(700)),
    ]
}

fn tool_name() -> impl Strategy<Value = String> {
    prop_oneof![
        6 => prop::sample::select(vec!["py0", "py1", "py2", "pyslow"]).prop_map(String::from),
        4 => prop::sample::select(vec!["echo", "uptime", "led", "wipe_memory"]).prop_map(String::from),
        1 => Just("nope".to_string()),
        1 => Just("x".repeat(300)),
        1 => Just("ก".repeat(90)),
        1 => Just("a\u{0}b".to_string()),
        1 => Just("py0\n".to_string()),
    ]
}

fn tool_arg() -> impl Strategy<Value = Option<String>> {
    prop_oneof![
        3 => Just(None),
        2 => Just(Some("toggle".to_string())),
        2 => text().prop_map(Some),
        1 => Just(Some("a\u{0}b".to_string())),
    ]
}

fn reply() -> impl Strategy<Value = Reply> {
    prop_oneof![
        4 => text().prop_map(Reply::Text),
        6 => (tool_name(), tool_arg()).prop_map(|(n, a)| Reply::ToolCall(n, a)),
        2 => Just(Reply::Fail),
        1 => prop::sample::select(vec![
            r#"{"tool_call":{"name":"py0","x":1}}"#,
            r#"{"tool_call":{"name":"py0"}} trailing"#,
            r#"{"tool_call":{"name":"\ud800"}}"#,
            r#"{"tool_call":{"name":"py0","name":"py2"}}"#,
            r#"{"tool_call":["py0"]}"#,
            "{",
        ])
        .prop_map(|s| Reply::NearMiss(s.to_string())),
        1 => prop::collection::vec(any::<u8>(), 0..24).prop_map(Reply::Bytes),
        1 => prop::sample::select(vec![REPLY_MAX, REPLY_MAX + 1, 6000]).prop_map(Reply::Long),
    ]
}

fn prompt() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        8 => text().prop_map(String::into_bytes),
        1 => prop::sample::select(vec!["/new", " /compact\n", "/reset"]).prop_map(|s| s.as_bytes().to_vec()),
        1 => Just("ส".repeat(1365).into_bytes()),
        1 => prop::sample::select(vec![
            vec![b'x'; super::PROMPT_MAX + 1],
            Vec::new(),
            b"a\0b".to_vec(),
            vec![0xff, b'a'],
        ]),
    ]
}

fn tacp_line() -> impl Strategy<Value = TacpLine> {
    prop_oneof![
        4 => (tool_name(), tool_arg()).prop_map(|(n, a)| TacpLine::Tool(n, a)),
        2 => prop::sample::select(vec![
            (tacp::STATUS, &b""[..]),
            (tacp::SAFETY, b""),
            (tacp::REMEMBER, b"k=v w"),
            (tacp::REMEMBER, b"novalue"),
            (tacp::RECALL, b"k"),
            (tacp::CLEAR, b""),
            (tacp::TOOLS, b""),
            (tacp::HISTORY, b""),
            // (An ASK that posts is an ask(): the `Call::Ask` cases.)
            (tacp::ASK, b""),
            (tacp::EXEC, b""),
            (tacp::EXEC, b" py0"),
            (tacp::EXEC, b"py0\xff"),
            (tacp::EXEC, b"py0 a\x00b"),
            (tacp::READY, b""),
            (0x7E, b"bogus"),
            (tacp::ERROR, b""),
        ])
        .prop_map(|(sub, b)| TacpLine::Raw(sub, b.to_vec())),
    ]
}

fn origin() -> impl Strategy<Value = Origin> {
    prop::sample::select(vec![Origin::Repl, Origin::Usb, Origin::Backend])
}

fn argv() -> impl Strategy<Value = Argv> {
    prop_oneof![
        4 => Just(Argv::None),
        2 => text().prop_map(|t| Argv::Text(t.into_bytes())),
        1 => Just(Argv::Text(b"toggle".to_vec())),
        1 => any::<bool>().prop_map(Argv::Bool),
        1 => any::<i32>().prop_map(Argv::Int),
        1 => Just(Argv::Other),
        1 => Just(Argv::Text(vec![b'a', 0])),
    ]
}

fn call() -> impl Strategy<Value = Call> {
    prop_oneof![
        4 => prompt().prop_map(Call::Ask),
        3 => (tool_name(), origin(), argv()).prop_map(|(n, o, a)| Call::Tool(n, o, a)),
        2 => tacp_line().prop_map(Call::Tacp),
        1 => any::<bool>().prop_map(Call::Connect),
        1 => Just(Call::Disconnect),
    ]
}

/// A call a tool makes: [`call`], or the clock moving on.
fn inner_call() -> impl Strategy<Value = Call> {
    prop_oneof![
        8 => call(),
        1 => prop::sample::select(vec![1_000u32, 30_000]).prop_map(Call::Sleep),
    ]
}

/// The shapes of issue 10's trust leaks: a tool that raises its trust and
/// asks for a high-risk tool.
fn escalation() -> impl Strategy<Value = Vec<Call>> {
    let wipe = || Call::Tool("wipe_memory".into(), Origin::Repl, Argv::None);
    prop::sample::select(vec![
        vec![Call::Tacp(TacpLine::Tool("wipe_memory".into(), None))],
        vec![Call::Disconnect, wipe()],
        vec![Call::Connect(false), wipe()],
        vec![Call::Tool("py2".into(), Origin::Usb, Argv::None)],
        vec![
            Call::Disconnect,
            Call::Tacp(TacpLine::Tool("py2".into(), None)),
        ],
    ])
}

fn end() -> impl Strategy<Value = End> {
    prop_oneof![
        6 => text().prop_map(End::Return),
        2 => text().prop_map(End::Raise),
        1 => Just(End::Abort),
    ]
}

fn act() -> impl Strategy<Value = Act> {
    let calls = prop_oneof![
        4 => prop::collection::vec(inner_call(), 0..4),
        1 => escalation(),
    ];
    let advance = prop_oneof![8 => Just(0u32), 1 => Just(30_000u32), 1 => 0u32..70_000];
    (calls, advance, end()).prop_map(|(calls, advance_ms, end)| Act {
        calls,
        advance_ms,
        end,
    })
}

/// A chain that nests past the bound: each tool calls one more.
fn deep() -> impl Strategy<Value = Top> {
    let link = prop::sample::select(vec![
        Call::Ask(b"again".to_vec()),
        Call::Tool("py0".into(), Origin::Repl, Argv::None),
        Call::Tool("py1".into(), Origin::Backend, Argv::None),
        Call::Tacp(TacpLine::Tool("py0".into(), None)),
    ]);
    (
        link.clone(),
        prop::collection::vec(link, 8..12),
        prop::collection::vec(
            prop_oneof![4 => Just(Reply::ToolCall("py0".into(), None)), 1 => reply()],
            8..24,
        ),
        end(),
    )
        .prop_map(|(first, links, replies, end)| {
            let acts = links
                .into_iter()
                .map(|c| Act {
                    calls: vec![c.clone(), c],
                    advance_ms: 0,
                    end: end.clone(),
                })
                .collect();
            Top::Call(first, replies, acts)
        })
}

fn top() -> impl Strategy<Value = Top> {
    prop_oneof![
        10 => (
            call(),
            prop::collection::vec(reply(), 0..8),
            prop::collection::vec(act(), 0..6)
        )
            .prop_map(|(c, r, a)| Top::Call(c, r, a)),
        2 => deep(),
        1 => prop::sample::select(vec![1_000u32, 30_000, 61_000]).prop_map(Top::Advance),
        1 => (0u8..4).prop_map(Top::Trust),
        1 => prop::sample::select(vec![
            (7usize, 1i32),
            (7, 0),
            (8, 1),
            (8, 0),
            (3, 256),
            (2, 0),
            (6, 0),
        ])
        .prop_map(|(i, v)| Top::Config(i, v)),
        1 => Just(Top::Reboot),
    ]
}

/// Cases: enough to reach every check many times (`Reached`), few enough to
/// run in seconds in a debug build on two cores.
const CASES: u32 = 1024;

#[test]
fn agent_loop_model() {
    // PROPTEST_CASES=n runs longer.
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(CASES);
    let mut runner = TestRunner::new(PtConfig {
        cases,
        failure_persistence: None,
        ..PtConfig::default()
    });
    let setup = (
        prop::bool::weighted(0.4),
        prop::bool::weighted(0.2),
        prop_oneof![2 => Just(0u8), 1 => 1u8..5, 1 => Just(5u8)],
        prop_oneof![2 => Just(0u8), 2 => Just(3u8), 1 => 1u8..3],
        prop::bool::weighted(0.7),
    )
        .prop_map(
            |(backend_summary, send_tools, history, failures, cooled)| Setup {
                backend_summary,
                send_tools,
                history,
                failures,
                cooled,
            },
        );
    let r = runner.run(
        &(setup, prop::collection::vec(top(), 1..12)),
        |(setup, prog)| {
            let _ = run_program(&setup, &prog);
            Ok::<(), TestCaseError>(())
        },
    );
    if let Err(e) = r {
        panic!("{e}");
    }
    REACHED.with(|r| {
        let r = r.borrow();
        eprintln!("agent_loop_model reached: {r:?}");
        // The generator reaches what the properties are about.
        assert!(r.max_depth >= CALL_DEPTH_MAX, "{r:?}");
        assert_eq!(r.max_posts_top, u32::from(CALL_REQUESTS_MAX), "{r:?}");
        for (what, n) in [
            ("nesting refusals", r.nesting_refused),
            ("request limits", r.request_limit),
            ("round limits", r.round_limit),
            ("failed asks", r.failed_asks),
            ("trust refusals", r.trust_refused),
            ("half-open asks", r.half_open_asks),
            ("summary requests", r.summary_posts),
            ("aborts", r.aborts),
        ] {
            assert!(n >= 5, "only {n} {what}: {r:?}");
        }
    });
}

// ---------------------------------------------------------------------------
// Scenarios: the shapes issue 10 names, written out.

fn plain() -> Setup {
    Setup {
        backend_summary: false,
        send_tools: false,
        history: 0,
        failures: 0,
        cooled: false,
    }
}

fn acting(calls: Vec<Call>, end: End) -> Act {
    Act {
        calls,
        advance_ms: 0,
        end,
    }
}

fn ok() -> End {
    End::Return("done".into())
}

/// A half-open trial that a nested, refused `tool()` takes (the spec lets
/// such a trial lapse after 30 s) and an outer `ask()` that then ends on its
/// request limit, without a report of its own.
#[test]
fn a_trial_taken_inside_an_ask_that_hits_its_request_limit() {
    let ask = |s: &str| Call::Ask(s.as_bytes().to_vec());
    let mut calls: Vec<Call> = (0..12).map(|_| ask("fine")).collect();
    calls.extend((0..3).map(|_| ask("down")));
    calls.push(Call::Sleep(30_000));
    calls.push(Call::Tool("wipe_memory".into(), Origin::Repl, Argv::None));
    let mut replies = vec![Reply::ToolCall("py0".into(), None)];
    replies.extend((0..12).map(|_| Reply::Text("fine".into())));
    replies.extend((0..3).map(|_| Reply::Fail));
    let mut m = ModelHost::new();
    m.connected = true;
    m.trust = Level::Https;
    m.state.trust.set(Level::Https);
    m.replies = replies.into();
    m.acts = vec![acting(calls, ok())].into();
    assert_eq!(m.call(&ask("go"), 0, None), Status::RequestLimit);
    assert_eq!(m.late_refusals, 1);
    // The refused wipe_memory took the trial; nothing reports it ...
    let now = m.now();
    assert_eq!(m.state.breaker.state(now), Cb::HalfOpen);
    assert!(!m.state.breaker.allow(now));
    // ... and it lapses after another cooldown (SPEC §5).
    assert!(m.state.breaker.allow(now + 30_000));
}

/// Issue 10, first bullet: with history to compact and the backend down,
/// each failed `ask()` is one failure: two do not open the breaker.
#[test]
fn two_failed_asks_are_two_failures() {
    let setup = Setup {
        history: 5,
        ..plain()
    };
    let ask = |s: &str| Top::Call(Call::Ask(s.as_bytes().to_vec()), vec![Reply::Fail], vec![]);
    let mut m = run_program(&setup, &[ask("one"), ask("two")]);
    assert_eq!(m.state.agent.errors(), 2);
    let now = m.now();
    assert_eq!(m.state.breaker.state(now), Cb::Closed);
}

/// Issue 10, third bullet: a risk-0 tool the backend asked for cannot reach
/// `wipe_memory` through `tacp()`, nor through `disconnect()` + `tool()`.
#[test]
fn trust_does_not_leak_through_nested_calls() {
    let wipe = TacpLine::Tool("wipe_memory".into(), None);
    let calls = vec![
        Call::Tacp(wipe.clone()),
        Call::Disconnect,
        Call::Tool("wipe_memory".into(), Origin::Repl, Argv::None),
        Call::Tacp(wipe),
    ];
    let mut m = ModelHost::new();
    m.connected = true;
    m.trust = Level::Https;
    m.state.trust.set(Level::Https);
    crate::memory::set(&mut m.port, b"k", b"kept").unwrap();
    m.replies = vec![Reply::ToolCall("py0".into(), None)].into();
    m.acts = vec![acting(calls, ok())].into();
    assert_eq!(
        m.call(&Call::Ask(b"go".to_vec()), 0, None),
        Status::RequestFailed
    );
    let mut v = [0u8; 8];
    assert_eq!(crate::memory::get(&mut m.port, b"k", &mut v), Ok(4));
    // Three refusals for trust, none for anything else.
    assert_eq!(m.late_refusals, 3);
}

/// Issue 10, fourth bullet: a tool that asks again for itself, forever.
#[test]
fn nesting_is_bounded() {
    let again = Call::Ask(b"again".to_vec());
    let acts = (0..40)
        .map(|_| acting(vec![again.clone(), again.clone()], ok()))
        .collect();
    let replies = (0..40)
        .map(|_| Reply::ToolCall("py0".into(), None))
        .collect();
    let m = run_program(&plain(), &[Top::Call(again.clone(), replies, acts)]);
    assert_eq!(m.top_posts, u32::from(CALL_REQUESTS_MAX));
}

/// Opt-in backend summaries: the summary request fails, the exchange goes
/// on, a tool raises — still one failure and one error for the `ask()`.
#[test]
fn a_failed_summary_and_a_raised_tool_are_one_failure() {
    let setup = Setup {
        backend_summary: true,
        history: 5,
        ..plain()
    };
    let replies = vec![
        Reply::Fail,
        Reply::ToolCall("py0".into(), None),
        Reply::Text("answer".into()),
    ];
    let acts = vec![acting(vec![], End::Raise("boom".into()))];
    let m = run_program(
        &setup,
        &[Top::Call(Call::Ask(b"go".to_vec()), replies, acts)],
    );
    assert_eq!(m.state.agent.errors(), 1);
    let mut one = CircuitBreaker::new();
    one.failure(m.now());
    assert_eq!(
        fingerprint(&m.state.breaker, m.now()),
        fingerprint(&one, m.now())
    );
}
