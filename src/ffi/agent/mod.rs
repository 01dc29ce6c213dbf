//! `claw_ext.h`, part 3: the agent (feature `agent`) — `ask()`, tool
//! calls, TACP, connect/disconnect, the tool registry, `status()`,
//! `safety()` and `config()` for the binding. The agent's host is
//! [`CHost`], over the `claw_port_*` callbacks of `include/claw_port.h`.
//!
//! Every call that may run a tool takes the binding's `ctx` pointer and
//! hands it, untouched, to `claw_port_tool()`: it is how the binding finds
//! the caller's own Python argument and keeps a tool's result and exception
//! (Rust never looks behind it, and never keeps it past the call).

use core::mem::MaybeUninit;

use cty::{c_char, c_void};

use super::{State, c_bytes, out_slice, sys, with_state};
use crate::agent::registry::{How, Spec};
use crate::agent::{
    self, Arg, Host, Origin, Status, ToolOutcome, Ui, Value, config, tacp as tacp_mod,
};
use crate::context;

// The exports by what they serve. cbindgen reads these modules in this
// order, and writes their items to `claw_ext.h` in it: keep it.
mod host;

mod tools;

mod ask;

mod tacp;

mod status;

mod memory;

pub use ask::*;
pub use host::*;
pub use memory::*;
pub use status::*;
pub use tacp::*;
pub use tools::*;

/// `claw_status_t`: how an agent call ended (0 = done). A fixed-size
/// integer, not a C enum. `claw_status_text()` and `claw_status_kind()`
/// say what to raise.
pub type claw_status_t = u8;
/// Done.
pub const CLAW_OK: claw_status_t = 0;
/// No tool of that name (the binding names it in the ValueError).
pub const CLAW_STATUS_UNKNOWN_TOOL: claw_status_t = 9;
/// Called from inside a file operation of the core.
pub const CLAW_STATUS_BUSY: claw_status_t = 12;
/// A tool name of 0 or more than 31 bytes.
pub const CLAW_STATUS_TOOL_NAME: claw_status_t = 24;
/// `claw_memory_import`: a bad line in strict mode (`claw_import_result_t`
/// says which and why).
pub const CLAW_STATUS_IMPORT_LINE: claw_status_t = 30;
/// `claw_memory_import`: a write failed part way.
pub const CLAW_STATUS_IMPORT_WRITE: claw_status_t = 32;
/// `claw_tacp_dispatch`: an ASK while connected — run `claw_ask` with the
/// payload as for `ask()`, then `claw_tacp_ask_done` with its outcome.
pub const CLAW_STATUS_TACP_ASK: claw_status_t = 40;
/// An RTC reading before this (2024-01-01) means "not set".
pub const CLAW_RTC_SET_AFTER: u32 = 1_704_067_200;
const _: () = assert!(CLAW_RTC_SET_AFTER == agent::policy::RTC_SET_AFTER);
const _: () = assert!(CLAW_STATUS_UNKNOWN_TOOL == Status::UnknownTool as u8);
const _: () = assert!(CLAW_STATUS_BUSY == Status::Busy as u8);
const _: () = assert!(CLAW_STATUS_TOOL_NAME == Status::ToolName as u8);
const _: () = assert!(CLAW_STATUS_IMPORT_LINE == Status::ImportLine as u8);
const _: () = assert!(CLAW_STATUS_IMPORT_WRITE == Status::ImportWrite as u8);
const _: () = assert!(CLAW_STATUS_TACP_ASK == Status::TacpAsk as u8);

/// `claw_status_kind()`: not an error.
pub const CLAW_KIND_NONE: u8 = 0;
/// `claw_status_kind()`: raise `RuntimeError(claw_status_text(s))`.
pub const CLAW_KIND_RUNTIME: u8 = 1;
/// `claw_status_kind()`: raise `ValueError`.
pub const CLAW_KIND_VALUE: u8 = 2;
/// `claw_status_kind()`: raise `TypeError`.
pub const CLAW_KIND_TYPE: u8 = 3;
/// `claw_status_kind()`: raise `OSError`.
pub const CLAW_KIND_OS: u8 = 4;
/// `claw_status_kind()`: raise the exception the host keeps for this call
/// (a tool's, or a KeyboardInterrupt/SystemExit).
pub const CLAW_KIND_PENDING: u8 = 5;

/// `claw_arg_kind`: no argument.
pub const CLAW_ARG_NONE: u8 = 0;
/// `claw_arg_kind`: UTF-8 text (`arg`, `arg_len`).
pub const CLAW_ARG_TEXT: u8 = 1;
/// `claw_arg_kind`: a bool (`arg_int` 0 or 1).
pub const CLAW_ARG_BOOL: u8 = 2;
/// `claw_arg_kind`: an int (`arg_int`).
pub const CLAW_ARG_INT: u8 = 3;
/// `claw_arg_kind`: another object, kept by the host in `ctx`.
pub const CLAW_ARG_OTHER: u8 = 4;

/// `claw_value_t.kind`: text, `out[0..len)`.
pub const CLAW_VALUE_TEXT: u8 = 0;
/// `claw_value_t.kind`: an int, `ival`.
pub const CLAW_VALUE_INT: u8 = 1;
/// `claw_value_t.kind`: a bool, `ival` 0 or 1.
pub const CLAW_VALUE_BOOL: u8 = 2;
/// `claw_value_t.kind`: the host's own result object (kept in `ctx`);
/// its text is `out[0..len)`.
pub const CLAW_VALUE_HOST: u8 = 3;
/// `claw_value_t.kind`: the caller's own argument (`echo`).
pub const CLAW_VALUE_ARG: u8 = 4;

/// Longest payload of a TACP v2 frame (`TACP_CLAW_PAYLOAD_MAX`).
pub const CLAW_TACP_PAYLOAD_MAX: usize = 3072;
/// Longest TACP v2 frame: the payload and 9 bytes around it.
pub const CLAW_TACP_FRAME_MAX: usize = 3081;
/// Longest prompt, in bytes.
pub const CLAW_PROMPT_MAX: usize = 4096;
/// Most context bytes a request carries.
pub const CLAW_CONTEXT_MAX: usize = 4096;
/// Longest reply accepted, in bytes.
pub const CLAW_REPLY_MAX: usize = 4096;
/// Tool rounds per `ask()`.
pub const CLAW_TOOL_ROUNDS_MAX: u8 = 3;
/// Backend requests per top-level call.
pub const CLAW_CALL_REQUESTS_MAX: u8 = 16;
/// Calls nested through tools, at most.
pub const CLAW_CALL_DEPTH_MAX: u8 = 4;
/// Settings of `config()`.
pub const CLAW_CONFIG_KEYS: usize = 11;
/// Size of `claw_agent_status_t.last_result` (47 bytes + NUL).
pub const CLAW_LAST_RESULT_MAX: usize = 48;
/// Size of `claw_agent_status_t.last_cmd` (47 bytes + NUL, the vendor's).
pub const CLAW_LAST_CMD_MAX: usize = 48;

const _: () = assert!(CLAW_TACP_PAYLOAD_MAX == tacp_mod::frame::PAYLOAD_MAX);
const _: () = assert!(CLAW_TACP_FRAME_MAX == tacp_mod::frame::FRAME_MAX);
const _: () = assert!(CLAW_PROMPT_MAX == agent::PROMPT_MAX);
const _: () = assert!(CLAW_CONTEXT_MAX == agent::CONTEXT_MAX);
const _: () = assert!(CLAW_REPLY_MAX == agent::REPLY_MAX);
/// What `claw_port_post` returns for an answer larger than its buffer,
/// when the transport can tell (`mpy/claw_transport.h`,
/// `claw_https_post`): the call fails with `Status::ReplyTooLong`.
const POST_TOO_LONG: i32 = -2;
const _: () = assert!(CLAW_TOOL_ROUNDS_MAX == agent::TOOL_ROUNDS_MAX);
const _: () = assert!(CLAW_CALL_REQUESTS_MAX == agent::CALL_REQUESTS_MAX);
const _: () = assert!(CLAW_CALL_DEPTH_MAX == agent::CALL_DEPTH_MAX);
const _: () = assert!(CLAW_CONFIG_KEYS == config::KEYS.len());
const _: () = assert!(CLAW_LAST_RESULT_MAX == agent::LAST_RESULT_MAX + 1);
const _: () = assert!(CLAW_LAST_CMD_MAX == agent::LAST_CMD_MAX + 1);

/// What a tool call returned.
#[repr(C)]
#[derive(Clone, Copy, Default)]
pub struct claw_value_t {
    /// `CLAW_VALUE_*`.
    pub kind: u8,
    /// The int or bool.
    pub ival: u32,
    /// Bytes of text in the caller's `out`.
    pub len: usize,
}

/// A registry entry (`claw_tool_info`).
#[repr(C)]
#[derive(Clone, Copy)]
pub struct claw_tool_info_t {
    /// The name, NUL-terminated.
    pub name: [c_char; 32],
    /// 0 low, 1 medium, 2 high.
    pub risk: u8,
    /// Calls per minute.
    pub rate_per_min: u16,
    /// One of the board's (the library's, the binding's or the firmware's),
    /// not a Python tool of `register_tool`.
    pub builtin: bool,
    /// The person at the device confirms a model's request of it first.
    pub confirm: bool,
    /// How it runs: `CLAW_TOOL_BUILTIN`, `CLAW_TOOL_C` or `CLAW_TOOL_PYTHON`.
    pub how: u8,
    /// Its description (static, NUL-terminated), or NULL for a Python
    /// tool's (the host holds it).
    pub description: *const c_char,
}

/// `claw_tool_info_t.how`: the library runs it.
pub const CLAW_TOOL_BUILTIN: u8 = 1;
/// `claw_tool_info_t.how`: a C handler of `claw_tools_register`.
pub const CLAW_TOOL_C: u8 = 2;
/// `claw_tool_info_t.how`: a Python callable of `claw_tool_register`.
pub const CLAW_TOOL_PYTHON: u8 = 3;
const _: () = assert!(CLAW_TOOL_BUILTIN == How::Builtin as u8);
const _: () = assert!(CLAW_TOOL_C == How::Host as u8);
const _: () = assert!(CLAW_TOOL_PYTHON == How::Python as u8);

/// A C tool's handler: `args[0..args_len)` is its argument as text (UTF-8,
/// no NUL inside; `args[args_len]` is a NUL), its result goes to
/// `out[0..out_max)`. Returns the result's length (> 0: it ran; the vendor's
/// tools answer `{"error":…}` JSON for their own failures), 0 for a failure
/// without a text, or -n for a failure whose text is `out[0..n)`. Called on
/// the MicroPython task, inside the binding's exception handler.
pub type claw_tool_fn_t =
    Option<unsafe extern "C" fn(*const c_char, usize, *mut c_char, usize) -> i32>;

/// A tool the host provides (`claw_tools_register`): const data that lives
/// as long as the firmware.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct claw_tool_def_t {
    /// 1..31 bytes of UTF-8, NUL-terminated.
    pub name: *const c_char,
    /// What it does (NUL-terminated, at most 127 bytes), or NULL. Ignored
    /// for a name of the default registry (its description stays).
    pub description: *const c_char,
    /// 0 low, 1 medium, 2 high (a default registry name keeps its own).
    pub risk: u8,
    /// The person at the device confirms a model's request of it first
    /// (a default registry name keeps its own).
    pub confirm: bool,
    /// Calls per minute, 0 for the default (a default registry name keeps
    /// its own).
    pub rate_per_min: u16,
    /// The handler (not NULL).
    pub handler: claw_tool_fn_t,
}

/// `status()`: the vendor's keys, then the library's.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct claw_agent_status_t {
    /// "idle", "executing", "thinking" or "error", NUL-terminated.
    pub state: [c_char; 12],
    /// The transport is connected.
    pub connected: bool,
    /// The ring holds turns not yet on flash.
    pub dirty: bool,
    /// Messages in the ring.
    pub session_msgs: u16,
    /// Tools in the registry.
    pub tool_count: u16,
    /// Errors counted since the soft reset (`error_count`).
    pub errors: u32,
    /// Tool calls admitted since the soft reset.
    pub exec_count: u32,
    /// How the last call ended, NUL-terminated.
    pub last_result: [c_char; 48],
    /// The last command, NUL-terminated.
    pub last_cmd: [c_char; 48],
    /// The tool whose call waits for `confirm()`, NUL-terminated ("" none).
    pub pending_confirm: [c_char; 32],
}

/// `safety()`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct claw_agent_safety_t {
    /// "closed", "open" or "half-open", NUL-terminated.
    pub circuit_breaker: [c_char; 12],
    /// ms of cooldown left.
    pub cooldown_ms: u32,
    /// "none", "https" or "usb", NUL-terminated.
    pub trust_level: [c_char; 8],
    /// The transport is connected.
    pub connected: bool,
    /// Errors counted since the soft reset.
    pub errors: u32,
}

/// A setting of `config()` (`claw_config_key`).
#[repr(C)]
#[derive(Clone, Copy)]
pub struct claw_config_key_t {
    /// Its keyword, NUL-terminated.
    pub name: [c_char; 24],
    /// Smallest value.
    pub lo: i32,
    /// Largest value.
    pub hi: i32,
    /// True/False rather than a number.
    pub is_bool: bool,
}

fn put_cstr(dst: &mut [c_char], s: &[u8]) {
    let n = s.len().min(dst.len().saturating_sub(1));
    for (d, s) in dst
        .iter_mut()
        .zip(s.iter().take(n).chain(core::iter::repeat(&0)))
    {
        *d = *s as c_char;
    }
}
