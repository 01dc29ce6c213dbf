//! The agent: `ask()`, tool calls and TACP, in the core (feature `agent`).
//!
//! Everything the agent does that is not a file operation goes through the
//! [`Host`]: the transport (connect, post), running a registered Python tool,
//! UI events, the wall clock. On the device the FFI layer implements it over
//! `include/claw_port.h`, whose C side (`mpy/`) catches every MicroPython
//! exception and returns a code; the tests implement it in memory, with tools
//! that call back into the agent.
//!
//! # Rules kept here, however calls nest
//!
//! * **Gate order** (SPEC §3): breaker → trust → rate check → rate record,
//!   [`admit`]; a refusal counts one error and uses no quota.
//! * **Trust follows the call chain.** A call's own trust is that of its
//!   origin: `tool()` the current level, a backend's tool request HTTPS,
//!   `tacp()` USB. A call made while a tool runs (the chain's depth > 0)
//!   runs at the lower of its own and the chain's: authority never rises
//!   ([`Chain`]). No global is borrowed and restored.
//! * **Bounded work.** One top-level call makes at most
//!   [`CALL_REQUESTS_MAX`] backend requests and nests at most
//!   [`CALL_DEPTH_MAX`] calls deep; past either, a refusal naming the bound.
//!   One `ask()` runs at most [`TOOL_ROUNDS_MAX`] tool rounds.
//! * **One `ask()` is at most one breaker failure and one error** ([`Account`]).
//! * **The seed's wire contract by default**: one request `{"prompt","context"}`
//!   per `ask()`, one follow-up per tool round; summary requests and the
//!   `tools` member only when configured.
//! * No borrow of the [`Core`] is held across a host callback: the state is
//!   reached through [`Host::with_core`] for the length of one closure, so a
//!   tool that calls back into the agent finds it consistent.

pub mod builtin;
pub mod config;
#[cfg(test)]
mod model_tests;
pub mod policy;
pub mod tacp;
pub mod wire;

use crate::core::Core;
use crate::port::Port;
use crate::safety::trust::Level;
use crate::session::ring::{MSG_MAX_BYTES, Role};
use crate::text::floor_char_boundary;

/// Longest prompt `ask()` takes, in bytes (`PROMPT_MAX`, at least
/// `CONTEXT_MAX`).
pub const PROMPT_MAX: usize = 4096;
/// Most context bytes a request carries (`CONTEXT_MAX`).
pub const CONTEXT_MAX: usize = 4096;
/// Longest reply accepted; a longer one is a failed request (`REPLY_MAX`).
pub const REPLY_MAX: usize = 4096;
/// Tool rounds one `ask()` runs at most (`TOOL_ROUNDS_MAX`).
pub const TOOL_ROUNDS_MAX: u8 = 3;
/// Bytes of a tool's result sent back to the backend (`TOOL_RESULT_MAX`).
pub const TOOL_RESULT_MAX: usize = 1024;
/// Backend requests one top-level call may make, whatever its tools call.
pub const CALL_REQUESTS_MAX: u8 = 16;
/// Calls that may be nested through tools (a tool calling `ask()`, `tool()`,
/// `tacp()`, ...), the top-level call included.
pub const CALL_DEPTH_MAX: u8 = 8;
/// A tool name as a tool request gave it, echoed back at most this long.
const NAME_ECHO_MAX: usize = 256;
/// `status()["last_result"]` at most.
pub const LAST_RESULT_MAX: usize = 47;

/// How a call ended, when it did not end well. The texts are exact and
/// belong here (one owner); the binding raises `kind()` with `text()`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Status {
    /// Done.
    Ok = 0,
    /// Gate 1 refused (RuntimeError).
    BreakerOpen = 1,
    /// Gate 2 refused (RuntimeError).
    TrustRefused = 2,
    /// Gate 3 refused (RuntimeError).
    RateLimited = 3,
    /// The backend did not answer, or not with a usable reply (RuntimeError).
    RequestFailed = 4,
    /// `ask()` before `connect()` (RuntimeError).
    NotConnected = 5,
    /// The model kept asking for tools (RuntimeError).
    RoundLimit = 6,
    /// The call chain used its backend requests (RuntimeError).
    RequestLimit = 7,
    /// Calls nested too deep through tools (RuntimeError).
    NestingLimit = 8,
    /// No tool of that name (ValueError; the binding adds the name).
    UnknownTool = 9,
    /// The tool raised; its exception is the host's to re-raise.
    ToolRaised = 10,
    /// A KeyboardInterrupt/SystemExit is pending in the host: everything
    /// stopped cleanly, the host raises it.
    Aborted = 11,
    /// Called from inside a file operation of the core (RuntimeError).
    Busy = 12,
    /// A prompt of 0 or more than `PROMPT_MAX` bytes (ValueError).
    PromptLength = 13,
    /// Text that is not UTF-8 (ValueError).
    NotUtf8 = 14,
    /// Text with a NUL byte (ValueError).
    HasNul = 15,
    /// A built-in tool's argument of the wrong type (TypeError).
    EchoArg = 16,
    /// (TypeError)
    LedArg = 17,
    /// (TypeError)
    NoArg = 18,
    /// The work buffer is smaller than `claw_ask_work_size()` (ValueError).
    WorkTooSmall = 19,
    /// `/new` could not write the archive (OSError).
    ArchiveFailed = 20,
    /// `/compact` could not write the archive (OSError).
    CompactFailed = 21,
    /// Re-registering a built-in (ValueError).
    BuiltinTool = 22,
    /// The registry is full (RuntimeError).
    RegistryFull = 23,
    /// A tool name of 0 or more than 31 bytes (ValueError).
    ToolName = 24,
    /// A risk outside 0..=2 (ValueError).
    Risk = 25,
    /// A host that is not 1..63 bytes of printable ASCII (ValueError).
    Host = 26,
    /// An API key that is not 1..127 bytes of printable ASCII (ValueError).
    ApiKey = 27,
    /// A key of 0 or more than 31 bytes (ValueError).
    KeyLength = 28,
    /// A value of more than 127 bytes (ValueError).
    ValueLength = 29,
    /// `import_memory()`: a bad line in strict mode (ValueError; the
    /// binding says which line and why).
    ImportLine = 30,
    /// `import_memory()`: the store and the text hold too many keys
    /// (ValueError).
    ImportFull = 31,
    /// `import_memory()`: a write failed part way (OSError; the binding
    /// says where).
    ImportWrite = 32,
    /// The memory store could not be read (OSError).
    StoreUnreadable = 33,
}

/// Which Python exception a [`Status`] is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Kind {
    /// Not an error.
    None = 0,
    /// `RuntimeError`.
    Runtime = 1,
    /// `ValueError`.
    Value = 2,
    /// `TypeError`.
    Type = 3,
    /// `OSError`.
    Os = 4,
    /// The host re-raises its own pending exception.
    Pending = 5,
}

impl Status {
    /// The exact message.
    pub fn text(self) -> &'static str {
        core::str::from_utf8(self.c_text().to_bytes()).unwrap_or("")
    }

    /// The exact message, NUL-terminated (`claw_status_text`). Statuses
    /// that [`Status::named`] says so are prefixed with the argument's name
    /// by the binding ("key must not contain NUL").
    pub fn c_text(self) -> &'static core::ffi::CStr {
        match self {
            Status::Ok => c"",
            Status::BreakerOpen => c"circuit breaker open \xe2\x80\x94 cooldown active",
            Status::TrustRefused => c"tool risk exceeds transport trust level",
            Status::RateLimited => c"rate limit exceeded for this tool",
            Status::RequestFailed => c"HTTPS request failed",
            Status::NotConnected => c"not connected: call connect() first",
            Status::RoundLimit => c"tool round limit reached",
            Status::RequestLimit => {
                c"backend request limit reached (16 per top-level call, CALL_REQUESTS_MAX)"
            }
            Status::NestingLimit => c"calls nested too deep through tools (8, CALL_DEPTH_MAX)",
            Status::UnknownTool => c"unknown tool",
            Status::ToolRaised => c"tool error",
            Status::Aborted => c"aborted",
            Status::Busy => c"bentoclaw called from inside a file operation",
            Status::PromptLength => c"prompt must be 1..4096 bytes (PROMPT_MAX)",
            Status::NotUtf8 => c"must be valid UTF-8",
            Status::HasNul => c"must not contain NUL",
            Status::EchoArg => c"echo takes a str",
            Status::LedArg => c"led takes None, a bool or 'toggle'",
            Status::NoArg => c"this tool takes no argument",
            Status::WorkTooSmall => {
                c"work buffer too small (claw_ask_work_size, claw_memory_export_size)"
            }
            Status::ArchiveFailed => {
                c"archive write failed: session kept (session_clear() drops it)"
            }
            Status::CompactFailed => c"archive write failed: nothing compacted",
            Status::BuiltinTool => c"cannot replace a built-in tool",
            Status::RegistryFull => c"tool registry full (CLAW_RATE_MAX_TOOLS)",
            Status::ToolName => c"tool name must be 1..31 bytes (CLAW_RATE_NAME_MAX)",
            Status::Risk => c"risk must be 0..2",
            Status::Host => c"must be 1..63 bytes of printable ASCII",
            Status::ApiKey => c"must be 1..127 bytes of printable ASCII",
            Status::KeyLength => c"key must be 1..31 bytes (CLAW_MEM_KEY_MAX)",
            Status::ValueLength => c"value must be 0..127 bytes (CLAW_MEM_VAL_MAX)",
            Status::ImportLine => c"bad line",
            Status::ImportFull => {
                c"memory full: the store and the text hold more than 32 keys (CLAW_MEM_MAX_ENTRIES)"
            }
            Status::ImportWrite => c"memory write failed",
            Status::StoreUnreadable => c"memory store unreadable",
        }
    }

    /// Whether the binding prefixes the text with the argument's name.
    pub fn named(self) -> bool {
        matches!(
            self,
            Status::NotUtf8 | Status::HasNul | Status::Host | Status::ApiKey
        )
    }

    /// The exception type.
    pub fn kind(self) -> Kind {
        match self {
            Status::Ok => Kind::None,
            Status::ToolRaised | Status::Aborted => Kind::Pending,
            Status::UnknownTool
            | Status::PromptLength
            | Status::NotUtf8
            | Status::HasNul
            | Status::WorkTooSmall
            | Status::BuiltinTool
            | Status::ToolName
            | Status::Risk
            | Status::Host
            | Status::ApiKey
            | Status::KeyLength
            | Status::ValueLength
            | Status::ImportLine
            | Status::ImportFull => Kind::Value,
            Status::EchoArg | Status::LedArg | Status::NoArg => Kind::Type,
            Status::ArchiveFailed
            | Status::CompactFailed
            | Status::ImportWrite
            | Status::StoreUnreadable => Kind::Os,
            _ => Kind::Runtime,
        }
    }

    /// From the C value (unknown values read as `Busy`, never `Ok`).
    pub fn from_c(v: u8) -> Status {
        const ALL: [Status; 34] = [
            Status::Ok,
            Status::BreakerOpen,
            Status::TrustRefused,
            Status::RateLimited,
            Status::RequestFailed,
            Status::NotConnected,
            Status::RoundLimit,
            Status::RequestLimit,
            Status::NestingLimit,
            Status::UnknownTool,
            Status::ToolRaised,
            Status::Aborted,
            Status::Busy,
            Status::PromptLength,
            Status::NotUtf8,
            Status::HasNul,
            Status::EchoArg,
            Status::LedArg,
            Status::NoArg,
            Status::WorkTooSmall,
            Status::ArchiveFailed,
            Status::CompactFailed,
            Status::BuiltinTool,
            Status::RegistryFull,
            Status::ToolName,
            Status::Risk,
            Status::Host,
            Status::ApiKey,
            Status::KeyLength,
            Status::ValueLength,
            Status::ImportLine,
            Status::ImportFull,
            Status::ImportWrite,
            Status::StoreUnreadable,
        ];
        ALL.get(usize::from(v)).copied().unwrap_or(Status::Busy)
    }
}

/// What the agent is doing (`status()["state"]`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum State {
    /// Not connected.
    Offline = 0,
    /// In `connect()`.
    Connecting = 1,
    /// Connected, nothing running.
    Idle = 2,
    /// In an exchange.
    Busy = 3,
    /// The last exchange failed.
    Error = 4,
}

impl State {
    /// `status()["state"]`.
    pub fn name(self) -> &'static str {
        match self {
            State::Offline => "offline",
            State::Connecting => "connecting",
            State::Idle => "idle",
            State::Busy => "busy",
            State::Error => "error",
        }
    }
}

/// UI events (the firmware maps them to its `CLAW_UI_*` IPC messages).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Ui {
    /// Status line ("Online (HTTPS)").
    Status = 0,
    /// An error ("Backend error").
    Error = 1,
    /// `last_result` changed.
    LastResult = 2,
    /// Clear the chat panel.
    Clear = 3,
    /// The user's prompt.
    ChatUser = 4,
    /// The model's answer.
    ChatAssistant = 5,
    /// A tool ran (its TOOL turn).
    Tool = 6,
    /// The LED tool's state.
    Led = 7,
}

/// A tool's argument as the caller gave it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arg<'a> {
    /// None.
    None,
    /// A str (UTF-8, no NUL).
    Text(&'a [u8]),
    /// A bool.
    Bool(bool),
    /// An int.
    Int(i32),
    /// Another object, which only the host can look at (a REPL `tool()`
    /// call's argument; the host passes it to a Python tool as it is).
    Other,
}

/// How a host-run tool ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ToolOutcome {
    /// It returned; `out` holds the first bytes of its text (UTF-8).
    Returned(usize),
    /// It raised an Exception; `out` holds the first bytes of its text.
    Raised(usize),
    /// A KeyboardInterrupt/SystemExit is pending: stop everything.
    Abort,
}

/// What a tool returned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Value {
    /// Text (in the caller's buffer, this many bytes).
    Text(usize),
    /// An int (`uptime`).
    Int(u32),
    /// A bool (`led`, `wipe_memory`).
    Bool(bool),
    /// The host's own object (a Python tool's result), which the host
    /// kept; this many bytes of its text are in the caller's buffer.
    Host(usize),
    /// The tool's own argument (`echo`): the caller may hand back the very
    /// object it passed; this many bytes of it are in the caller's buffer.
    Arg(usize),
}

/// Where a call comes from; its trust follows from that.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Origin {
    /// The REPL (or a script): the current trust level.
    Repl,
    /// The USB host's TACP lines: USB.
    Usb,
    /// A tool request of the backend's model: HTTPS (never above the
    /// current level).
    Backend,
}

/// Everything outside the core.
pub trait Host {
    /// Files and the tick clock.
    type Files: Port;
    /// Runs `f` with the state and the file port, or `None` when the state
    /// is in use (a call from inside a file operation of the core).
    fn with_core<R>(&mut self, f: impl FnOnce(&mut Core, &mut Self::Files) -> R) -> Option<R>;
    /// POSTs `body` to the backend; the reply body of a 200 answer is
    /// copied into `reply`. `None` for any failure (refused, timeout,
    /// non-200, larger than `reply`).
    fn post(&mut self, body: &[u8], reply: &mut [u8]) -> Option<usize>;
    /// Runs the Python tool in `slot` with `arg` (`Arg::Other`: the
    /// caller's own object). The text of its result or exception goes to
    /// `out`, cut to fit.
    fn run_tool(&mut self, slot: u8, arg: Arg<'_>, out: &mut [u8]) -> ToolOutcome;
    /// A UI event.
    fn ui(&mut self, ev: Ui, text: &[u8]);
    /// Brings the UI link up (idempotent).
    fn ui_init(&mut self);
    /// Connects the transport; true when the backend is reachable.
    fn connect(&mut self, host: &[u8], port: u16, api_key: &[u8]) -> bool;
    /// Drops the connection (idempotent).
    fn disconnect(&mut self);
    /// Whether `connect` succeeded and no `disconnect` followed.
    fn connected(&mut self) -> bool;
    /// Token counts the backend reported with the last reply (0: none).
    fn tokens(&mut self) -> (u32, u32);
    /// Seconds since 1970 from the wall clock, 0 when it is not set.
    fn time_s(&mut self) -> u32;
    /// Whether a KeyboardInterrupt/SystemExit raised in a file operation
    /// waits to be raised: the agent stops at its next step.
    fn aborted(&mut self) -> bool {
        false
    }
}

/// The call chain: how deep calls are nested through tools, the trust the
/// innermost tool runs at, and the backend requests made since the
/// top-level call began.
#[derive(Clone, Copy, Debug)]
pub struct Chain {
    depth: u8,
    requests: u8,
    /// The chain's trust (meaningful while `depth > 0`), as `Level as u8`.
    cap: u8,
}

/// What a nested call restores when it returns.
#[derive(Clone, Copy, Debug)]
pub struct Frame {
    cap: u8,
}

impl Chain {
    const fn new() -> Self {
        Self {
            depth: 0,
            requests: 0,
            cap: 0,
        }
    }

    /// Enters a call whose own trust is `own`: it runs at the lower of that
    /// and the chain's.
    fn enter(&mut self, own: Level) -> Result<Frame, Status> {
        if self.depth >= CALL_DEPTH_MAX {
            return Err(Status::NestingLimit);
        }
        let frame = Frame { cap: self.cap };
        let level = if self.depth == 0 {
            self.requests = 0;
            own
        } else {
            own.min(Level::from_c(self.cap))
        };
        self.cap = level as u8;
        self.depth += 1;
        Ok(frame)
    }

    fn leave(&mut self, frame: Frame) {
        self.depth = self.depth.saturating_sub(1);
        self.cap = frame.cap;
    }

    /// The trust the current call runs at.
    fn level(&self) -> Level {
        Level::from_c(self.cap)
    }

    /// Counts one backend request; false when the chain has used them all.
    fn take_request(&mut self) -> bool {
        if self.requests >= CALL_REQUESTS_MAX {
            return false;
        }
        self.requests += 1;
        true
    }

    fn requests_left(&self) -> bool {
        self.requests < CALL_REQUESTS_MAX
    }

    /// Nesting depth (0: no call running).
    pub fn depth(&self) -> u8 {
        self.depth
    }
}

/// The agent's state in [`Core`].
pub struct Agent {
    errors: u32,
    state: u8,
    last_result: [u8; LAST_RESULT_MAX],
    last_len: u8,
    led: bool,
    pub(crate) chain: Chain,
    pub(crate) config: config::Config,
    /// The tick of the last answered exchange (idle timeout without RTC).
    last_ticks: u32,
    last_ticks_valid: bool,
    /// The last backend request failed: compactions use the local digest
    /// until one succeeds again.
    last_request_failed: bool,
}

impl Agent {
    /// At rest (all zeros).
    pub const fn new() -> Self {
        Self {
            errors: 0,
            state: State::Offline as u8,
            last_result: [0; LAST_RESULT_MAX],
            last_len: 0,
            led: false,
            chain: Chain::new(),
            config: config::Config::UNLOADED,
            last_ticks: 0,
            last_ticks_valid: false,
            last_request_failed: false,
        }
    }

    /// `status()["errors"]`.
    pub fn errors(&self) -> u32 {
        self.errors
    }

    /// `status()["state"]`.
    pub fn state(&self) -> State {
        match self.state {
            1 => State::Connecting,
            2 => State::Idle,
            3 => State::Busy,
            4 => State::Error,
            _ => State::Offline,
        }
    }

    /// `status()["last_result"]`.
    pub fn last_result(&self) -> &[u8] {
        self.last_result
            .get(..usize::from(self.last_len))
            .unwrap_or(&[])
    }

    /// The chain (for tests and the FFI layer).
    pub fn chain(&self) -> &Chain {
        &self.chain
    }

    fn set_state(&mut self, s: State) {
        self.state = s as u8;
    }

    fn set_last_result(&mut self, parts: &[&[u8]]) {
        let mut n = 0usize;
        for p in parts {
            let room = LAST_RESULT_MAX - n;
            let take = floor_char_boundary(p, room);
            if let Some(dst) = self.last_result.get_mut(n..n + take) {
                crate::text::copy_prefix(dst, p);
                n += take;
            }
        }
        self.last_len = n as u8;
    }

    /// A new VM (soft reset): what the previous one left is forgotten; the
    /// connection state is the transport's.
    pub fn reset(&mut self, connected: bool) {
        *self = Agent::new();
        self.set_state(if connected {
            State::Idle
        } else {
            State::Offline
        });
    }
}

impl Default for Agent {
    fn default() -> Self {
        Self::new()
    }
}

/// The error and breaker accounting of one top-level operation: at most one
/// error count and one breaker failure, whatever it sent or ran.
#[derive(Default)]
pub struct Account {
    errored: bool,
    failed: bool,
    /// A tool an `ask()` ran raised: the `ask()` ends as a failure.
    tool_failed: bool,
    /// After [`Status::ToolRaised`]: the length of the exception's text in
    /// the caller's `out`.
    pub raised: usize,
}

impl Account {
    /// A fresh account.
    pub fn new() -> Self {
        Self::default()
    }

    fn error(&mut self, c: &mut Core) {
        if !self.errored {
            c.agent.errors = c.agent.errors.saturating_add(1);
            self.errored = true;
        }
    }

    /// A request answered while the breaker is half-open ends its trial.
    fn end_trial<P: Port>(c: &mut Core, p: &mut P) {
        if c.breaker.state(p.ticks_ms()) == crate::safety::breaker::State::HalfOpen {
            c.breaker.success();
        }
    }

    fn failure<P: Port>(&mut self, c: &mut Core, p: &mut P) {
        self.error(c);
        if !self.failed {
            c.breaker.failure(p.ticks_ms());
            self.failed = true;
        }
    }
}

fn core<H: Host, R>(h: &mut H, f: impl FnOnce(&mut Core, &mut H::Files) -> R) -> Result<R, Status> {
    h.with_core(f).ok_or(Status::Busy)
}

/// Enters the chain with `own` trust for the length of `f`.
fn nested<H: Host, R>(
    h: &mut H,
    own: impl FnOnce(&Core) -> Level,
    f: impl FnOnce(&mut H) -> Result<R, Status>,
) -> Result<R, Status> {
    let frame = core(h, |c, _| {
        let own = own(c);
        c.agent.chain.enter(own)
    })??;
    let r = f(h);
    let _ = h.with_core(|c, _| c.agent.chain.leave(frame));
    r
}

/// Registers a host tool: `register_tool(name, handler, risk, rate_per_min)`.
pub fn register_tool<P: Port>(
    c: &mut Core,
    p: &mut P,
    name: &[u8],
    risk: u8,
    rate_per_min: u16,
) -> Result<usize, Status> {
    if name.is_empty() || name.len() > crate::safety::rate::NAME_MAX_BYTES {
        return Err(Status::ToolName);
    }
    check_text(name)?;
    if risk > crate::safety::trust::RISK_HIGH {
        return Err(Status::Risk);
    }
    if let Some(t) = c.rate.find_tool(name).and_then(|s| c.rate.tool(s)) {
        // A script must not swap a built-in (say the high-risk wipe) for
        // something registered with a lower risk.
        if builtin::is_builtin(t.kind) {
            return Err(Status::BuiltinTool);
        }
    }
    c.rate
        .register(name, builtin::PYTHON, risk, rate_per_min, p.ticks_ms())
        .ok_or(Status::RegistryFull)
}

/// Checks text the caller hands in: UTF-8, no NUL (one rule everywhere:
/// text the core stores or sends never holds a NUL).
pub fn check_text(s: &[u8]) -> Result<(), Status> {
    if s.contains(&0) {
        return Err(Status::HasNul);
    }
    if !crate::text::is_utf8(s) {
        return Err(Status::NotUtf8);
    }
    Ok(())
}

/// A key for the memory store.
pub fn check_key(s: &[u8]) -> Result<(), Status> {
    check_text(s)?;
    if s.is_empty() || s.len() > crate::memory::KEY_MAX_BYTES {
        return Err(Status::KeyLength);
    }
    Ok(())
}

/// A value for the memory store.
pub fn check_value(s: &[u8]) -> Result<(), Status> {
    check_text(s)?;
    if s.len() > crate::memory::VAL_MAX_BYTES {
        return Err(Status::ValueLength);
    }
    Ok(())
}

/// A tool name.
pub fn check_tool_name(s: &[u8]) -> Result<(), Status> {
    check_text(s)?;
    if s.is_empty() || s.len() > crate::safety::rate::NAME_MAX_BYTES {
        return Err(Status::ToolName);
    }
    Ok(())
}

/// A prompt for `ask()`.
pub fn check_prompt(s: &[u8]) -> Result<(), Status> {
    check_text(s)?;
    if s.is_empty() || s.len() > PROMPT_MAX {
        return Err(Status::PromptLength);
    }
    Ok(())
}

/// Printable ASCII only: these strings go into HTTP header lines, where a
/// CR or LF would let the caller inject headers.
fn check_header(s: &[u8], max: usize, err: Status) -> Result<(), Status> {
    check_text(s)?;
    let ok = !s.is_empty() && s.len() <= max && s.iter().all(|&c| c > 0x20 && c < 0x7F);
    if ok { Ok(()) } else { Err(err) }
}

/// A backend host for `connect()`.
pub fn check_host(s: &[u8]) -> Result<(), Status> {
    check_header(s, 63, Status::Host)
}

/// An API key for `connect()`.
pub fn check_api_key(s: &[u8]) -> Result<(), Status> {
    check_header(s, 127, Status::ApiKey)
}

/// The idle point: one flash write for what a call changed. A failed flush
/// leaves the ring dirty for the next one; nothing is lost from RAM.
fn flush_if_dirty<P: Port>(c: &mut Core, p: &mut P) {
    if c.session.is_dirty() {
        let _ = c.session.flush(p);
    }
}

/// Where a tool call stands: an idle point of its own (a REPL `tool()`, a
/// TACP line), or round `n` of an `ask()`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Flush when done.
    IdlePoint,
    /// Round of an `ask()`: its USER turn and this many TOOL turns must
    /// stay in the ring (a local compaction makes room); the `ask()`
    /// flushes.
    AskRound(u8),
}

/// Adds a TOOL turn "<name>: <parts…>" (cut to 255 bytes) and shows it.
fn log_tool<H: Host>(h: &mut H, mode: Mode, name: &[u8], parts: &[&[u8]]) {
    let mut line = [0u8; MSG_MAX_BYTES];
    let mut n = 0usize;
    for p in core::iter::once(name)
        .chain(core::iter::once(&b": "[..]))
        .chain(parts.iter().copied())
    {
        let take = floor_char_boundary(p, MSG_MAX_BYTES - n);
        if let Some(dst) = line.get_mut(n..n + take) {
            crate::text::copy_prefix(dst, p);
            n += take;
        }
    }
    // The NUL rule: a name the backend sent (an unknown tool's is echoed)
    // may hold a NUL ("a\u0000b") or a cut sequence; the turn and the UI
    // show `?` for it.
    let n = crate::text::sanitize_in_place(&mut line, n);
    let text = line.get(..n).unwrap_or(&[]);
    h.ui(Ui::Tool, text);
    let _ = h.with_core(|c, p| {
        if let Mode::AskRound(round) = mode {
            policy::before_tool_turn(c, p, round);
        }
        let _ = c.session.add(p, Role::Tool, text);
    });
}

/// Gates 1–3 for the tool in `slot` at `level`, then gate 4 (record). The
/// one admission of every tool call.
pub fn admit<P: Port>(c: &mut Core, p: &mut P, slot: usize, level: Level) -> Result<(), Status> {
    let now = p.ticks_ms();
    let risk = c.rate.tool(slot).map_or(u8::MAX, |t| t.risk);
    if !c.breaker.allow(now) {
        return Err(Status::BreakerOpen);
    }
    if !level.allows(risk) {
        return Err(Status::TrustRefused);
    }
    if !c.rate.check_slot(slot, now) {
        return Err(Status::RateLimited);
    }
    c.rate.record_slot(slot, now);
    Ok(())
}

/// Runs the registered tool `name` from `origin` with `arg`: the gates,
/// the tool, the breaker's report and its TOOL turn. `out` receives the
/// text of its result (or of its exception: [`Account::raised`]).
pub fn call_tool<H: Host>(
    h: &mut H,
    name: &[u8],
    origin: Origin,
    arg: Arg<'_>,
    out: &mut [u8],
    acct: &mut Account,
    mode: Mode,
) -> Result<Value, Status> {
    let own = move |c: &Core| match origin {
        Origin::Repl => c.trust.get(),
        Origin::Usb => Level::Usb,
        Origin::Backend => c.trust.get().min(Level::Https),
    };
    nested(h, own, |h| {
        let r = run_tool_gated(h, name, origin == Origin::Repl, arg, out, acct, mode);
        if mode == Mode::IdlePoint {
            let _ = h.with_core(flush_if_dirty);
        }
        r
    })
}

fn run_tool_gated<H: Host>(
    h: &mut H,
    name: &[u8],
    caller_arg: bool,
    arg: Arg<'_>,
    out: &mut [u8],
    acct: &mut Account,
    mode: Mode,
) -> Result<Value, Status> {
    let (slot, kind) = core(h, |c, _| {
        let slot = c.rate.find_tool(name)?;
        Some((slot, c.rate.tool(slot)?.kind))
    })?
    .ok_or(Status::UnknownTool)?;
    if let Arg::Text(t) = arg {
        check_text(t)?;
    }
    builtin::check_arg(kind, arg)?;
    if h.aborted() {
        return Err(Status::Aborted);
    }
    core(h, |c, p| {
        let level = c.agent.chain.level();
        admit(c, p, slot, level).inspect_err(|_| acct.error(c))
    })??;
    let outcome = if kind == builtin::PYTHON {
        // A REPL call's Python tool gets the caller's own object.
        let arg = if caller_arg { Arg::Other } else { arg };
        match h.run_tool(slot as u8, arg, out) {
            ToolOutcome::Returned(n) => (ToolOutcome::Returned(n), Value::Host(n)),
            other => (other, Value::Host(0)),
        }
    } else {
        builtin::run(h, kind, arg, out)
    };
    match outcome {
        (ToolOutcome::Returned(n), value) => {
            let text = out.get(..n).unwrap_or(&[]);
            core(h, |c, _| {
                // A round of an ask() is reported with the ask() (its outcome
                // is the ask()'s); a call of its own now.
                if mode == Mode::IdlePoint {
                    c.breaker.success();
                }
                c.agent.set_last_result(&[b"tool ok"]);
            })?;
            let shown = core(h, |c, _| {
                let mut buf = [0u8; LAST_RESULT_MAX];
                let n = c.agent.last_result().len();
                crate::text::copy_prefix(&mut buf, c.agent.last_result());
                (buf, n)
            })?;
            h.ui(Ui::LastResult, shown.0.get(..shown.1).unwrap_or(&[]));
            log_tool(h, mode, name, &[text]);
            Ok(value)
        }
        (ToolOutcome::Raised(n), _) => {
            core(h, |c, p| {
                if mode == Mode::IdlePoint {
                    acct.failure(c, p);
                } else {
                    acct.error(c);
                    acct.tool_failed = true;
                }
                c.agent.set_last_result(&[b"tool error"]);
            })?;
            h.ui(Ui::Error, b"Tool error");
            h.ui(Ui::LastResult, b"tool error");
            let text = out.get(..n).unwrap_or(&[]);
            log_tool(h, mode, name, &[b"error: ", text]);
            acct.raised = n;
            Err(Status::ToolRaised)
        }
        (ToolOutcome::Abort, _) => Err(Status::Aborted),
    }
}

/// `connect()`: trust goes to HTTPS before connecting and back to USB on
/// every way out of a failed connect (seed order).
pub fn connect<H: Host>(h: &mut H, host: &[u8], port: u16, api_key: &[u8]) -> Result<bool, Status> {
    check_host(host)?;
    check_api_key(api_key)?;
    nested(
        h,
        |c| c.trust.get(),
        |h| {
            h.ui_init();
            h.ui(Ui::Status, b"Connecting...");
            core(h, |c, _| {
                c.trust.set(Level::Https);
                c.agent.set_state(State::Connecting);
            })?;
            let ok = h.connect(host, port, api_key);
            if ok {
                h.ui(Ui::Status, b"Online (HTTPS)");
                core(h, |c, p| {
                    c.agent.set_state(State::Idle);
                    let _ = c
                        .session
                        .add(p, Role::System, b"Connected to TESAIoT backend");
                })?;
            } else {
                h.ui(Ui::Status, b"Connect failed");
                core(h, |c, _| {
                    c.agent.set_state(State::Offline);
                    c.agent.errors = c.agent.errors.saturating_add(1);
                    c.trust.set(Level::Usb);
                })?;
            }
            Ok(ok)
        },
    )
}

/// `disconnect()`.
pub fn disconnect<H: Host>(h: &mut H) -> Result<(), Status> {
    nested(
        h,
        |c| c.trust.get(),
        |h| {
            h.disconnect();
            h.ui(Ui::Status, b"Offline");
            core(h, |c, p| {
                c.trust.set(Level::Usb);
                c.agent.set_state(State::Offline);
                let _ = c.session.add(p, Role::System, b"Disconnected from backend");
            })
        },
    )
}

/// `session_clear()`: the ring and its file, and the chat panel.
pub fn session_clear<H: Host>(h: &mut H) -> Result<(), Status> {
    core(h, |c, p| c.session.clear(p))?;
    h.ui(Ui::Clear, b"");
    Ok(())
}

/// Where `ask()` keeps its buffers: one block the caller allocates for the
/// call (never static RAM), at least [`ask_work_size`] bytes.
struct Work<'a> {
    /// The backend's reply (and, before a request, the rendered context).
    reply: &'a mut [u8],
    /// A tool's result text.
    result: &'a mut [u8],
    /// The tool name a request gave.
    name: &'a mut [u8],
    /// The request body (and, during a tool round, the tool's argument).
    body: &'a mut [u8],
}

const BODY_FIXED: usize = 512;

/// Bytes of work buffer `ask(prompt)` needs: the reply, a tool result, the
/// longest body (the prompt escaped; the context with room for a quarter of
/// its bytes to be escaped — a context with more control characters than
/// that loses its oldest part; a tool result; the registry when listed).
pub fn ask_work_size(prompt: &[u8]) -> usize {
    REPLY_MAX
        + 1
        + TOOL_RESULT_MAX
        + NAME_ECHO_MAX
        + BODY_FIXED
        + wire::escaped_len(prompt)
        + CONTEXT_MAX
        + CONTEXT_MAX / 4
        + TOOL_RESULT_MAX
        + 2 * NAME_ECHO_MAX
        + TOOLS_MAX
}

/// Bytes the opt-in `"tools"` member takes at most: 16 entries of a name
/// (31 bytes, escaped at most twice over) and a risk.
const TOOLS_MAX: usize = 16 * (2 * 31 + 20);

fn split_work(work: &mut [u8]) -> Option<Work<'_>> {
    let (reply, rest) = work.split_at_mut_checked(REPLY_MAX + 1)?;
    let (result, rest) = rest.split_at_mut_checked(TOOL_RESULT_MAX)?;
    let (name, body) = rest.split_at_mut_checked(NAME_ECHO_MAX)?;
    Some(Work {
        reply,
        result,
        name,
        body,
    })
}

/// Where `ask()`'s answer is in the work buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Reply {
    /// Offset of the text.
    pub offset: usize,
    /// Its length.
    pub len: usize,
}

/// What `ask(prompt)` can tell before any buffer exists: the prompt's
/// checks, a command, no connection, the call's request budget. `Ok(n)`:
/// the call needs a work buffer of `n` bytes. Changes nothing (an offline
/// or refused call never makes its caller allocate).
pub fn ask_check<H: Host>(h: &mut H, prompt: &[u8]) -> Result<usize, Status> {
    check_prompt(prompt)?;
    if policy::command(prompt).is_none() {
        if !h.connected() {
            core(h, |c, _| Account::new().error(c))?;
            return Err(Status::NotConnected);
        }
        let left = core(h, |c, _| {
            c.agent.chain.requests_left() || c.agent.chain.depth() == 0
        })?;
        if !left {
            core(h, |c, _| Account::new().error(c))?;
            return Err(Status::RequestLimit);
        }
    }
    Ok(ask_work_size(prompt))
}

/// `ask(prompt)`: see the module docs; the answer is left in `work`.
pub fn ask<H: Host>(h: &mut H, prompt: &[u8], work: &mut [u8]) -> Result<Reply, Status> {
    check_prompt(prompt)?;
    if work.len() < ask_work_size(prompt) {
        return Err(Status::WorkTooSmall);
    }
    let Some(mut w) = split_work(work) else {
        return Err(Status::WorkTooSmall);
    };
    nested(h, |c| c.trust.get(), |h| ask_chained(h, prompt, &mut w))
}

fn ask_chained<H: Host>(h: &mut H, prompt: &[u8], w: &mut Work<'_>) -> Result<Reply, Status> {
    if let Some(cmd) = policy::command(prompt) {
        let n = policy::run_command(h, cmd, w.reply, w.body)?;
        return Ok(Reply { offset: 0, len: n });
    }
    let mut acct = Account::new();
    if !h.connected() {
        core(h, |c, _| acct.error(c))?;
        return Err(Status::NotConnected);
    }
    // Refused before the breaker admits anything, so that no half-open
    // trial is left unreported.
    let refused = core(h, |c, p| {
        if !c.agent.chain.requests_left() {
            acct.error(c);
            return Some(Status::RequestLimit);
        }
        if !c.breaker.allow(p.ticks_ms()) {
            acct.error(c);
            return Some(Status::BreakerOpen);
        }
        c.agent.set_state(State::Busy);
        None
    })?;
    if let Some(s) = refused {
        return Err(s);
    }
    let r = exchange_rounds(h, prompt, w, &mut acct);
    let _ = h.with_core(|c, p| {
        if r.is_err() && c.agent.state() == State::Busy {
            c.agent.set_state(State::Idle);
        }
        flush_if_dirty(c, p);
    });
    r
}

/// A failed request of this `ask()` (at most one error and one breaker
/// failure for the whole call).
fn request_failed<H: Host>(
    h: &mut H,
    acct: &mut Account,
    ui: &[u8],
    last: &[u8],
) -> Result<(), Status> {
    core(h, |c, p| {
        c.agent.set_state(State::Error);
        c.agent.last_request_failed = true;
        if !acct.failed {
            acct.failure(c, p);
        }
        c.agent.set_last_result(&[last]);
    })?;
    h.ui(Ui::Error, ui);
    h.ui(Ui::LastResult, last);
    Ok(())
}

fn exchange_rounds<H: Host>(
    h: &mut H,
    prompt: &[u8],
    w: &mut Work<'_>,
    acct: &mut Account,
) -> Result<Reply, Status> {
    // Lifecycle and compaction before the USER turn (maybe a summary
    // request, when configured).
    policy::prepare(h, w.reply, w.body, acct)?;
    if acct.failed {
        // The summary request failed: the breaker heard it. The exchange
        // goes ahead only if it still admits one (no second report).
        let allowed = core(h, |c, p| c.breaker.allow(p.ticks_ms()))?;
        if !allowed {
            return Err(Status::RequestFailed);
        }
    }
    h.ui(Ui::ChatUser, prompt);
    core(h, |c, p| {
        let _ = c.session.add(p, Role::User, prompt);
    })?;

    let mut pending: Option<(usize, &'static str, usize)> = None; // (name len, status, result len)
    let mut round = 0u8;
    let n = loop {
        let n = match post_request(h, prompt, w, pending) {
            Ok(n) => n,
            Err(Status::RequestLimit) => {
                core(h, |c, _| acct.error(c))?;
                return Err(Status::RequestLimit);
            }
            Err(Status::RequestFailed) => {
                request_failed(h, acct, b"Backend error", b"error")?;
                return Err(Status::RequestFailed);
            }
            Err(e) => return Err(e),
        };
        if round == 0 {
            // An answered first request ends a half-open trial, so that the
            // tools it asks for pass gate 1; the ask()'s outcome is reported
            // when it ends.
            core(h, Account::end_trial)?;
        }
        let Some(call) = wire::tool_call(w.reply.get(..n).unwrap_or(&[])) else {
            break n;
        };
        if round == TOOL_ROUNDS_MAX {
            request_failed(h, acct, b"Tool round limit", b"tool round limit")?;
            return Err(Status::RoundLimit);
        }
        round += 1;
        // Decode the request: the name into its own buffer, the argument
        // into the body buffer (free until the next request is built).
        let name_len = {
            // Longer than the buffer: echo what fits (it is no tool of ours),
            // cut on a character boundary.
            let mut b = wire::Capped::new(w.name);
            let _ = wire::unescape(call.name, &mut b);
            b.len
        };
        let arg_len = match call.arg {
            Some(a) => {
                let mut b = wire::Buf::new(w.body);
                wire::unescape(a, &mut b).map(Some).unwrap_or(None)
            }
            None => None,
        };
        let name = w.name.get(..name_len).unwrap_or(&[]);
        let arg = match arg_len {
            Some(len) => Arg::Text(w.body.get(..len).unwrap_or(&[])),
            None => Arg::None,
        };
        let (status, result_len) = backend_tool(h, round, name, arg, w.result, acct)?;
        pending = Some((name_len, status, result_len));
        core(h, |c, _| c.agent.set_state(State::Busy))?;
    };

    // The answer: UI, the ASSISTANT turn, flush at the idle point.
    let text = w.reply.get(..n).unwrap_or(&[]);
    let mut num = [0u8; 10];
    let digits = builtin::decimal(n as u32, &mut num);
    core(h, |c, p| {
        // The ask()'s one report: a failure when one of its tools raised
        // (or an earlier request of it failed), otherwise a success.
        if acct.tool_failed {
            acct.failure(c, p);
        } else if !acct.failed {
            c.breaker.success();
        }
        c.agent.set_state(State::Idle);
        c.agent.set_last_result(&[b"ok (", digits, b" bytes)"]);
        let _ = c.session.add(p, Role::Assistant, text);
        flush_if_dirty(c, p);
    })?;
    let shown = core(h, |c, _| {
        let mut buf = [0u8; LAST_RESULT_MAX];
        crate::text::copy_prefix(&mut buf, c.agent.last_result());
        (buf, c.agent.last_result().len())
    })?;
    h.ui(Ui::LastResult, shown.0.get(..shown.1).unwrap_or(&[]));
    h.ui(Ui::Status, b"Online (HTTPS)");
    h.ui(Ui::ChatAssistant, text);
    Ok(Reply { offset: 0, len: n })
}

/// A tool request of the backend: gated at HTTPS (never above the chain),
/// reported back as (status, result text in `result`). Only an abort
/// escapes as an error.
fn backend_tool<H: Host>(
    h: &mut H,
    round: u8,
    name: &[u8],
    arg: Arg<'_>,
    result: &mut [u8],
    acct: &mut Account,
) -> Result<(&'static str, usize), Status> {
    let mode = Mode::AskRound(round);
    match call_tool(h, name, Origin::Backend, arg, result, acct, mode) {
        Ok(Value::Text(n) | Value::Host(n) | Value::Arg(n)) => Ok(("ok", n)),
        Ok(v) => {
            let mut buf = [0u8; 10];
            let text: &[u8] = match v {
                Value::Int(i) => builtin::decimal(i, &mut buf),
                Value::Bool(true) => b"True",
                Value::Bool(false) => b"False",
                _ => b"",
            };
            let n = floor_char_boundary(text, result.len());
            crate::text::copy_prefix(result, text);
            Ok(("ok", n))
        }
        Err(Status::Aborted) => Err(Status::Aborted),
        Err(Status::ToolRaised) => Ok(("error", acct.raised)),
        Err(Status::UnknownTool) => {
            Ok(("unknown", note(h, mode, name, b"unknown tool", b"", result)))
        }
        Err(s @ (Status::BreakerOpen | Status::TrustRefused | Status::RateLimited)) => Ok((
            "refused",
            note(h, mode, name, b"refused: ", s.text().as_bytes(), result),
        )),
        Err(s @ (Status::HasNul | Status::NotUtf8)) => {
            // The argument's text: "arg must not contain NUL".
            let mut msg = [0u8; 32];
            let mut b = wire::Buf::new(&mut msg);
            for p in [&b"arg "[..], s.text().as_bytes()] {
                let _ = wire::Sink::put(&mut b, p);
            }
            let n = b.len;
            let text = msg.get(..n).unwrap_or(&[]);
            Ok(("error", note(h, mode, name, b"error: ", text, result)))
        }
        Err(s) => Ok((
            "error",
            note(h, mode, name, b"error: ", s.text().as_bytes(), result),
        )),
    }
}

/// A TOOL turn for a request that did not run, and its text as the result.
fn note<H: Host>(
    h: &mut H,
    mode: Mode,
    name: &[u8],
    what: &[u8],
    text: &[u8],
    result: &mut [u8],
) -> usize {
    log_tool(h, mode, name, &[what, text]);
    // The backend hears the reason alone (the status says what happened).
    let reason = if text.is_empty() { what } else { text };
    let n = floor_char_boundary(reason, result.len());
    crate::text::copy_prefix(result, reason);
    n
}

/// Builds one request (context rendered into the reply buffer, then the
/// body), counts it into the chain, POSTs it, accounts the exchange.
/// Returns the reply length. `RequestFailed` for any failure of the
/// request itself.
fn post_request<H: Host>(
    h: &mut H,
    prompt: &[u8],
    w: &mut Work<'_>,
    pending: Option<(usize, &'static str, usize)>,
) -> Result<usize, Status> {
    let built = core(h, |c, p| {
        if !c.agent.chain.take_request() {
            return Err(Status::RequestLimit);
        }
        let cfg = c.config(p);
        let budget = usize::from(cfg.context_budget).min(CONTEXT_MAX);
        let ctx_cap = (budget + 1).min(w.reply.len());
        let ctx_len = crate::context::build(
            p,
            &mut c.session,
            w.reply.get_mut(..ctx_cap).unwrap_or(&mut []),
        );
        let ctx_all = w.reply.get(..ctx_len).unwrap_or(&[]);
        let tool_result = pending.map(|(nl, status, rl)| wire::ToolResult {
            name: wire::as_str(w.name.get(..nl).unwrap_or(&[])),
            status,
            result: wire::as_str(w.result.get(..rl).unwrap_or(&[])),
        });
        let fixed = BODY_FIXED
            + wire::escaped_len(prompt)
            + pending.map_or(0, |(nl, _, rl)| {
                2 * nl + wire::escaped_len(w.result.get(..rl).unwrap_or(&[]))
            })
            + if cfg.send_tools { TOOLS_MAX } else { 0 };
        // Room for the context escaped: when control characters make it
        // too long, its oldest part is dropped.
        let room = w.body.len().saturating_sub(fixed);
        let mut start = 0usize;
        let mut esc = wire::escaped_len(ctx_all);
        while esc > room && start < ctx_all.len() {
            let b = ctx_all.get(start).copied().unwrap_or(0);
            esc -= wire::escaped_len(&[b]);
            start += 1;
            while ctx_all.get(start).is_some_and(|b| b & 0xC0 == 0x80) {
                esc -= 1;
                start += 1;
            }
        }
        let ctx = ctx_all.get(start..).unwrap_or(&[]);
        let req = wire::Request {
            prompt: wire::as_str(prompt),
            context: wire::as_str(ctx),
            tool_result,
            tools: cfg.send_tools.then_some(wire::Tools(&c.rate)),
        };
        let n = wire::write(&req, w.body).ok_or(Status::WorkTooSmall)?;
        Ok((n, ctx.len()))
    })??;
    let (body_len, ctx_len) = built;
    if h.aborted() {
        return Err(Status::Aborted);
    }
    let body = w.body.get(..body_len).unwrap_or(&[]);
    // The reply area holds REPLY_MAX + 1 bytes: a transport that ends the
    // text with a NUL has room for it.
    let got = h.post(body, w.reply);
    let usable = got.filter(|&n| {
        let r = w.reply.get(..n).unwrap_or(&[]);
        n <= REPLY_MAX && check_text(r).is_ok()
    });
    match usable {
        Some(n) => {
            let (tin, tout) = h.tokens();
            let now_s = h.time_s();
            core(h, |c, p| {
                policy::account(c, p, body_len, n, ctx_len, tin, tout, now_s);
            })?;
            Ok(n)
        }
        None => Err(Status::RequestFailed),
    }
}
