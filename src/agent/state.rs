//! The agent's state and vocabulary (feature `agent`): its limits, the
//! exact status texts, what a call and a tool may return, the call chain and
//! [`Agent`], the part of the library's state ([`crate::state::State`]) that
//! the agent keeps, and the methods of that state that only the agent has.

use super::config;
use super::registry::Registry;
use crate::safety::trust::Level;
use crate::text::floor_char_boundary;

/// Longest prompt `ask()` takes, in bytes (`PROMPT_MAX`, at least
/// `CONTEXT_MAX`).
pub const PROMPT_MAX: usize = 4096;
pub use super::config::CONTEXT_MAX;
/// Longest reply accepted; a longer one is a failed request (`REPLY_MAX`).
pub const REPLY_MAX: usize = 4096;
// (Named in the text of `Status::ReplyTooLong`.)
const _: () = assert!(REPLY_MAX == 4096);
/// Tool rounds one `ask()` runs at most (`TOOL_ROUNDS_MAX`).
pub const TOOL_ROUNDS_MAX: u8 = 3;
/// Most tokens one answered request may report in each direction: the
/// session's bound ([`crate::session::TOKENS_MAX`]).
pub const TOKENS_MAX: u32 = crate::session::TOKENS_MAX;
/// Bytes of a tool's result sent back to the backend (`TOOL_RESULT_MAX`).
pub const TOOL_RESULT_MAX: usize = 1024;
/// Backend requests one top-level call may make, whatever its tools call.
pub const CALL_REQUESTS_MAX: u8 = 16;
/// Calls that may be nested through tools (a tool calling `ask()`, `tool()`,
/// `tacp()`, ...), the top-level call included. 4, not the 8 of before: the
/// BENTO board runs MicroPython on an 8 KiB task stack with its limit at
/// 8 KiB - 512, each level takes the handler's interpreter frames, the
/// binding and the core, and a memory file rewritten at the bottom more:
/// `tests/qemu/test_stack_depth.py` measures the depth on the emulated M33
/// (docs/PERFORMANCE.md §2); 5 levels left less than the 512 bytes it
/// asks below the limit.
pub const CALL_DEPTH_MAX: u8 = 4;
/// A tool name as a tool request gave it, echoed back at most this long.
pub(crate) const NAME_ECHO_MAX: usize = 256;
/// `status()["last_result"]` at most.
pub const LAST_RESULT_MAX: usize = 47;
/// `status()["last_cmd"]` at most (the vendor's `s_last_cmd[48]`).
pub const LAST_CMD_MAX: usize = 47;

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
    /// A built-in that takes no argument got one (TypeError).
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
    /// `ask()` refused by gate 1 (RuntimeError; the vendor's short text).
    AskBreakerOpen = 34,
    /// `ui_notify` got something other than a str (TypeError).
    NotifyArg = 35,
    /// A C tool without a handler (ValueError).
    NoHandler = 36,
    /// A C tool's description over 127 bytes (ValueError).
    Description = 37,
    /// `confirm()` with no call held (RuntimeError).
    NothingToConfirm = 38,
    /// `confirm()` after the held call's wait was over (RuntimeError).
    ConfirmExpired = 39,
    /// TACP ASK while connected: the host runs `ask()` with the payload and
    /// hands its outcome to `tacp::ask_done` (never raised).
    TacpAsk = 40,
    /// The backend's answer was longer than `REPLY_MAX` (RuntimeError; a
    /// failed request like [`Status::RequestFailed`], whose text a
    /// transport that cannot tell gives instead).
    ReplyTooLong = 41,
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
            Status::NotConnected => c"not connected \xe2\x80\x94 call bentoclaw.connect() first",
            Status::RoundLimit => c"tool round limit reached",
            Status::RequestLimit => {
                c"backend request limit reached (16 per top-level call, CALL_REQUESTS_MAX)"
            }
            Status::NestingLimit => c"calls nested too deep through tools (4, CALL_DEPTH_MAX)",
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
            Status::AskBreakerOpen => c"circuit breaker open",
            Status::NotifyArg => c"ui_notify takes a str",
            Status::NoHandler => c"tool has no handler",
            Status::Description => c"description must be 0..127 bytes",
            Status::NothingToConfirm => c"no tool waits for confirmation",
            Status::ConfirmExpired => {
                c"confirmation too late: the tool was refused (60 s, CLAW_CONFIRM_TIMEOUT_MS)"
            }
            Status::TacpAsk => c"TACP ASK: the host runs ask()",
            Status::ReplyTooLong => c"reply too long (over REPLY_MAX = 4096 bytes)",
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
            | Status::ImportFull
            | Status::NoHandler
            | Status::Description => Kind::Value,
            Status::EchoArg | Status::LedArg | Status::NoArg | Status::NotifyArg => Kind::Type,
            Status::ArchiveFailed
            | Status::CompactFailed
            | Status::ImportWrite
            | Status::StoreUnreadable => Kind::Os,
            _ => Kind::Runtime,
        }
    }

    /// From the C value (unknown values read as `Busy`, never `Ok`).
    pub fn from_c(v: u8) -> Status {
        const ALL: [Status; 42] = [
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
            Status::AskBreakerOpen,
            Status::NotifyArg,
            Status::NoHandler,
            Status::Description,
            Status::NothingToConfirm,
            Status::ConfirmExpired,
            Status::TacpAsk,
            Status::ReplyTooLong,
        ];
        ALL.get(usize::from(v)).copied().unwrap_or(Status::Busy)
    }
}

/// What the agent is doing (`status()["state"]`): the vendor's
/// `CLAW_STATE_*` values (`ipc_bentoclaw_defs.h`). The vendor's binding
/// names them through a table shifted by one ("thinking" for executing,
/// "streaming" for error); these names are the right ones.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum State {
    /// Nothing running.
    Idle = 0,
    /// A tool runs.
    Executing = 1,
    /// An `ask()` waits for the backend.
    Thinking = 2,
    /// The last exchange failed.
    Error = 3,
}

impl State {
    /// `status()["state"]`.
    pub fn name(self) -> &'static str {
        match self {
            State::Idle => "idle",
            State::Executing => "executing",
            State::Thinking => "thinking",
            State::Error => "error",
        }
    }
}

/// UI events: the vendor's `CLAW_UI_*` message types (0..=6, what the
/// CM55 panel shows) and the library's own (7 and up, which the vendor's
/// panel ignores).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Ui {
    /// `CLAW_UI_STATUS_TEXT`: the status line ("Online (HTTPS)").
    Status = 0,
    /// `CLAW_UI_LAST_CMD`: the last command (a prompt, a tool's name).
    LastCmd = 1,
    /// `CLAW_UI_LAST_RESULT`: how the last call ended.
    LastResult = 2,
    /// `CLAW_UI_PROGRESS`: a notification (`ui_notify`).
    Progress = 3,
    /// `CLAW_UI_ERROR`: an error ("Backend error").
    Error = 4,
    /// `CLAW_UI_CLEAR`: clear the panel.
    Clear = 5,
    /// `CLAW_UI_STATS`: the statistics card.
    Stats = 6,
    /// The user's prompt (extension).
    ChatUser = 7,
    /// The model's answer (extension).
    ChatAssistant = 8,
    /// A tool ran: its TOOL turn (extension).
    Tool = 9,
    /// The `led` tool's state (extension).
    Led = 10,
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
    /// The USB host's TACP requests (EXEC): USB.
    Usb,
    /// A tool request of the backend's model: HTTPS (never above the
    /// current level).
    Backend,
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
    pub(crate) fn enter(&mut self, own: Level) -> Result<Frame, Status> {
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

    pub(crate) fn leave(&mut self, frame: Frame) {
        self.depth = self.depth.saturating_sub(1);
        self.cap = frame.cap;
    }

    /// The trust the current call runs at.
    pub(crate) fn level(&self) -> Level {
        Level::from_c(self.cap)
    }

    /// Counts one backend request; false when the chain has used them all.
    pub(crate) fn take_request(&mut self) -> bool {
        if self.requests >= CALL_REQUESTS_MAX {
            return false;
        }
        self.requests += 1;
        true
    }

    pub(crate) fn requests_left(&self) -> bool {
        self.requests < CALL_REQUESTS_MAX
    }

    /// Nesting depth (0: no call running).
    pub fn depth(&self) -> u8 {
        self.depth
    }
}

/// The agent's state in [`crate::state::State`].
pub struct Agent {
    pub(crate) errors: u32,
    /// Tool calls admitted (`status()["exec_count"]`).
    pub(crate) execs: u32,
    pub(crate) last_cmd: [u8; LAST_CMD_MAX],
    pub(crate) last_cmd_len: u8,
    pub(crate) state: u8,
    pub(crate) last_result: [u8; LAST_RESULT_MAX],
    pub(crate) last_len: u8,
    pub(crate) led: bool,
    pub(crate) chain: Chain,
    pub(crate) config: config::Config,
    /// The tick of the last answered exchange (idle timeout without RTC).
    pub(crate) last_ticks: u32,
    pub(crate) last_ticks_valid: bool,
    /// The last backend request failed: compactions use the local digest
    /// until one succeeds again.
    pub(crate) last_request_failed: bool,
    /// A model's tool call held for the person at the device (`confirm`).
    pub(crate) pending: super::confirm::Pending,
}

impl Agent {
    /// At rest (all zeros).
    pub const fn new() -> Self {
        Self {
            errors: 0,
            execs: 0,
            last_cmd: [0; LAST_CMD_MAX],
            last_cmd_len: 0,
            state: State::Idle as u8,
            last_result: [0; LAST_RESULT_MAX],
            last_len: 0,
            led: false,
            chain: Chain::new(),
            config: config::Config::UNLOADED,
            last_ticks: 0,
            last_ticks_valid: false,
            last_request_failed: false,
            pending: super::confirm::Pending::none(),
        }
    }

    /// `status()["errors"]`.
    pub fn errors(&self) -> u32 {
        self.errors
    }

    /// `status()["state"]`.
    pub fn state(&self) -> State {
        match self.state {
            1 => State::Executing,
            2 => State::Thinking,
            3 => State::Error,
            _ => State::Idle,
        }
    }

    /// `status()["exec_count"]`.
    pub fn execs(&self) -> u32 {
        self.execs
    }

    /// The slot of the tool call held for confirmation.
    pub fn pending(&self) -> Option<u8> {
        self.pending.slot()
    }

    /// `status()["last_cmd"]`.
    pub fn last_cmd(&self) -> &[u8] {
        self.last_cmd
            .get(..usize::from(self.last_cmd_len))
            .unwrap_or(&[])
    }

    /// `status()["last_result"]`.
    pub fn last_result(&self) -> &[u8] {
        self.last_result
            .get(..usize::from(self.last_len))
            .unwrap_or(&[])
    }

    /// The settings, read from the file at first use after a soft reset.
    pub fn config<P: crate::port::Port>(&mut self, p: &mut P) -> config::Config {
        config::current(&mut self.config, p)
    }

    /// The settings as they are in RAM: what [`Agent::config`] read, or the
    /// defaults when it could not (no I/O).
    pub fn config_cached(&self) -> config::Config {
        config::cached(&self.config)
    }

    /// The chain (for tests and the FFI layer).
    pub fn chain(&self) -> &Chain {
        &self.chain
    }

    pub(crate) fn set_state(&mut self, s: State) {
        self.state = s as u8;
    }

    pub(crate) fn set_last_result(&mut self, parts: &[&[u8]]) {
        self.last_len = put_parts(&mut self.last_result, parts) as u8;
    }

    /// `last_cmd`: `text` cut to [`LAST_CMD_MAX`] bytes on a character
    /// boundary, control characters as spaces.
    pub(crate) fn set_last_cmd(&mut self, text: &[u8]) {
        let n = put_parts(&mut self.last_cmd, &[text]);
        self.last_cmd_len = crate::text::sanitize_in_place(&mut self.last_cmd, n) as u8;
    }

    /// A new VM (soft reset): what the previous one left is forgotten.
    pub fn reset(&mut self) {
        *self = Agent::new();
    }
}

impl crate::state::State<Registry, Agent> {
    /// The agent's settings (read at first use), passing on what the
    /// session needs of them.
    pub fn config<P: crate::port::Port>(&mut self, p: &mut P) -> config::Config {
        let c = self.agent.config(p);
        self.session.archive = c.archive;
        c
    }

    /// [`Self::config`] without I/O: the settings it read last, or the
    /// defaults (for the deep frames of a tool round; the caller read them
    /// first from a shallow one).
    pub fn config_cached(&mut self) -> config::Config {
        let c = self.agent.config_cached();
        self.session.archive = c.archive;
        c
    }
}

/// `parts` one after the other into `buf`, cut on a character boundary
/// where they stop fitting; returns the length.
fn put_parts(buf: &mut [u8], parts: &[&[u8]]) -> usize {
    let mut n = 0usize;
    for p in parts {
        let room = buf.len() - n;
        let take = floor_char_boundary(p, room);
        if let Some(dst) = buf.get_mut(n..n + take) {
            crate::text::copy_prefix(dst, p);
            n += take;
        }
    }
    n
}

impl Default for Agent {
    fn default() -> Self {
        Self::new()
    }
}
