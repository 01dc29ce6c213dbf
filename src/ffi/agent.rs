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

/// The agent's host: the `claw_port_*` callbacks, with the binding's
/// context pointer of the running call. Off the MicroPython task it reaches
/// none of them: the core is busy, the host says it was aborted, and nothing
/// runs (a tool is Python code, and so may be the transport and the files).
pub struct CHost {
    ctx: *mut c_void,
    on_task: bool,
}

impl CHost {
    fn new(ctx: *mut c_void) -> Self {
        // SAFETY: no arguments; callable from any task per `claw_port.h`.
        let on_task = unsafe { sys::claw_port_on_vm_task() };
        Self { ctx, on_task }
    }
}

impl Host for CHost {
    type Files = super::CPort;

    fn with_state<R>(&mut self, f: impl FnOnce(&mut State, &mut super::CPort) -> R) -> Option<R> {
        if !self.on_task {
            return None;
        }
        let mut f = Some(f);
        with_state(None, |s, p| f.take().map(|f| f(s, p)))
    }

    fn post(&mut self, body: &[u8], reply: &mut [u8]) -> Result<usize, agent::NoReply> {
        if !self.on_task {
            return Err(agent::NoReply::Failed);
        }
        // SAFETY: both slices are valid for their lengths; the port copies
        // at most `reply.len()` bytes.
        let n = unsafe {
            sys::claw_port_post(body.as_ptr(), body.len(), reply.as_mut_ptr(), reply.len())
        };
        // -2: the answer was larger than the buffer (mpy/claw_transport.h:
        // the unix transport tells; the vendor's gives -1 for every
        // failure).
        match usize::try_from(n) {
            Ok(n) if n <= reply.len() => Ok(n),
            _ if n == POST_TOO_LONG => Err(agent::NoReply::TooLong),
            _ => Err(agent::NoReply::Failed),
        }
    }

    // Out of line: its out-pointer is not on the frame of `call_tool`,
    // which is under a built-in's store pass.
    #[inline(never)]
    fn run_tool(&mut self, slot: u8, arg: Arg<'_>, out: &mut [u8]) -> ToolOutcome {
        if !self.on_task {
            return ToolOutcome::Abort;
        }
        let (kind, text): (u8, &[u8]) = match arg {
            Arg::None => (sys::CLAW_PORT_ARG_NONE as u8, &[]),
            Arg::Text(t) => (sys::CLAW_PORT_ARG_TEXT as u8, t),
            _ => (sys::CLAW_PORT_ARG_CALLER as u8, &[]),
        };
        let mut len = 0usize;
        // SAFETY: `text` and `out` are valid for their lengths; `len` is a
        // valid out-pointer; `ctx` is the binding's, passed back untouched.
        // No borrow of the state is held (the agent calls this between
        // `with_state` closures), so the tool may call back in.
        let r = unsafe {
            sys::claw_port_tool(
                self.ctx,
                slot,
                kind,
                text.as_ptr(),
                text.len(),
                out.as_mut_ptr(),
                out.len(),
                &mut len,
            )
        };
        // Whatever the host wrote: at most `out`, valid UTF-8, no NUL.
        let len = crate::text::sanitize_in_place(out, len.min(out.len()));
        match u32::from(r) {
            sys::CLAW_PORT_TOOL_RETURNED => ToolOutcome::Returned(len),
            sys::CLAW_PORT_TOOL_RAISED => ToolOutcome::Raised(len),
            _ => ToolOutcome::Abort,
        }
    }

    fn hold(&mut self, slot: u8, arg: Arg<'_>) -> bool {
        if !self.on_task {
            return false;
        }
        let (kind, text): (u8, &[u8]) = match arg {
            Arg::Text(t) => (sys::CLAW_PORT_ARG_TEXT as u8, t),
            _ => (sys::CLAW_PORT_ARG_NONE as u8, &[]),
        };
        // SAFETY: `text` is valid for its length.
        unsafe { sys::claw_port_confirm_hold(slot, kind, text.as_ptr(), text.len()) }
    }

    fn describe(&mut self, slot: u8, out: &mut [u8]) -> usize {
        if !self.on_task {
            return 0;
        }
        // A C tool's is in its def; a Python tool's the host holds.
        let def = with_state(None, |s, p| {
            let slot = usize::from(slot);
            match s.registry.how(slot) {
                How::Host => p.tools.find(s.rate.name(slot)),
                _ => None,
            }
        });
        let text = match def {
            // SAFETY: checked at registration: NULL or NUL-terminated, static.
            Some(d) => unsafe { c_bytes((*d).description) }.unwrap_or(&[]),
            None => {
                // SAFETY: `out` is valid for its length.
                let n = unsafe { sys::claw_port_tool_desc(slot, out.as_mut_ptr(), out.len()) };
                return crate::text::sanitize_in_place(out, n.min(out.len()));
            }
        };
        let n = crate::text::floor_char_boundary(text, out.len());
        crate::text::copy_prefix(out, text);
        n
    }

    fn ui(&mut self, ev: Ui, text: &[u8]) {
        if self.on_task {
            // SAFETY: `text` is valid for its length.
            unsafe { sys::claw_port_ui(ev as u8, text.as_ptr(), text.len()) }
        }
    }

    fn ui_init(&mut self) {
        if self.on_task {
            // SAFETY: no arguments.
            unsafe { sys::claw_port_ui_init() }
        }
    }

    fn tacp_respond(&mut self, sub: u8, payload: &[u8]) {
        if !self.on_task {
            return;
        }
        // SAFETY: `payload` is valid for its length.
        unsafe { sys::claw_port_tacp_respond(sub, payload.as_ptr(), payload.len()) }
    }

    // Its own frame: the buffers are not on the stack under the session
    // calls of `connect()`.
    #[inline(never)]
    fn connect(&mut self, host: &[u8], port: u16, api_key: &[u8]) -> bool {
        // The binding passes NUL-terminated strings, and the agent hands the
        // same slices back; copy into NUL-terminated buffers all the same.
        let mut h = [0u8; 64];
        let mut k = [0u8; 128];
        if !self.on_task || host.len() >= h.len() || api_key.len() >= k.len() {
            return false;
        }
        crate::text::copy_prefix(&mut h, host);
        crate::text::copy_prefix(&mut k, api_key);
        // SAFETY: both buffers are NUL-terminated (zeroed past the copies).
        unsafe { sys::claw_port_connect(h.as_ptr().cast(), port, k.as_ptr().cast()) }
    }

    fn disconnect(&mut self) {
        if self.on_task {
            // SAFETY: no arguments.
            unsafe { sys::claw_port_disconnect() }
        }
    }

    fn connected(&mut self) -> bool {
        // SAFETY: no arguments.
        self.on_task && unsafe { sys::claw_port_connected() }
    }

    fn tokens(&mut self) -> (u32, u32) {
        let (mut i, mut o) = (0u32, 0u32);
        if self.on_task {
            // SAFETY: two valid out-pointers.
            unsafe { sys::claw_port_tokens(&mut i, &mut o) };
        }
        (i, o)
    }

    fn time_s(&mut self) -> u32 {
        // SAFETY: no arguments.
        if self.on_task {
            unsafe { sys::claw_port_time_s() }
        } else {
            0
        }
    }

    fn aborted(&mut self) -> bool {
        // SAFETY: no arguments.
        !self.on_task || unsafe { sys::claw_port_aborted() }
    }
}

fn done(r: Result<(), Status>) -> claw_status_t {
    match r {
        Ok(()) => CLAW_OK,
        Err(s) => s as claw_status_t,
    }
}

/// The bytes of `p[0..len)`, `None` for NULL.
///
/// # Safety
/// `p` is NULL or valid for reads of `len` bytes for `'a`.
unsafe fn bytes<'a>(p: *const u8, len: usize) -> Option<&'a [u8]> {
    if p.is_null() {
        return (len == 0).then_some(&[]);
    }
    if len > isize::MAX as usize {
        return None;
    }
    // SAFETY: per this function's contract.
    Some(unsafe { core::slice::from_raw_parts(p, len) })
}

/// The exact message of a status (UTF-8, NUL-terminated, static).
#[unsafe(no_mangle)]
pub extern "C" fn claw_status_text(status: claw_status_t) -> *const c_char {
    Status::from_c(status).c_text().as_ptr()
}

/// Whether the binding puts the argument's name before the text
/// ("key must not contain NUL").
#[unsafe(no_mangle)]
pub extern "C" fn claw_status_named(status: claw_status_t) -> bool {
    Status::from_c(status).named()
}

/// Which exception a status is (`CLAW_KIND_*`).
#[unsafe(no_mangle)]
pub extern "C" fn claw_status_kind(status: claw_status_t) -> u8 {
    Status::from_c(status).kind() as u8
}

/// Once per soft reset, after the three seed `_init` calls: the agent's
/// state afresh, the registry's defaults and limits, and the C tools of
/// every table `claw_tools_register` was given (since the hard boot).
/// Fails (false) only when called reentrantly.
#[unsafe(no_mangle)]
pub extern "C" fn claw_agent_init() -> bool {
    with_state(false, |s, p| {
        s.agent.reset();
        let now = crate::port::Port::ticks_ms(p);
        s.registry.reset(&mut s.rate, now);
        let tables = p.tools.tables;
        for (table, n) in tables {
            // SAFETY: the table was checked when it was registered (or is
            // NULL), and its contract makes it const data that lives as
            // long as the firmware.
            for d in unsafe { def_slice(table, n) } {
                // SAFETY: as above: checked, static.
                let _ = unsafe { add_def(s, p, d) };
            }
        }
        true
    })
}

/// The tables of C tools (`claw_tools_register`), kept across soft resets:
/// they are the firmware's const data.
pub struct CTools {
    tables: [(*const claw_tool_def_t, usize); CLAW_TOOL_TABLES],
}

/// How many tables `claw_tools_register` keeps.
pub const CLAW_TOOL_TABLES: usize = 4;

impl CTools {
    pub(crate) const fn new() -> Self {
        Self {
            tables: [(core::ptr::null(), 0); CLAW_TOOL_TABLES],
        }
    }

    fn tables(&self) -> impl Iterator<Item = (*const claw_tool_def_t, usize)> + '_ {
        self.tables.iter().copied().filter(|(t, _)| !t.is_null())
    }

    /// The def of the tool called `name`, from the table registered first
    /// that has one (the firmware's, registered at boot, before the
    /// binding's fallbacks).
    fn find(&self, name: &[u8]) -> Option<*const claw_tool_def_t> {
        for &(table, n) in self.tables.iter() {
            // SAFETY: checked at registration (or NULL); static.
            for d in unsafe { def_slice(table, n) } {
                // SAFETY: checked at registration: a NUL-terminated name.
                if unsafe { c_bytes(d.name) } == Some(name) {
                    return Some(d);
                }
            }
        }
        None
    }
}

/// The defs of a registered table.
///
/// # Safety
/// `table` is valid for reads of `n` elements for the rest of the program.
unsafe fn def_slice(table: *const claw_tool_def_t, n: usize) -> &'static [claw_tool_def_t] {
    if table.is_null() {
        return &[];
    }
    // SAFETY: per this function's contract.
    unsafe { core::slice::from_raw_parts(table, n) }
}

/// Whether `d` is a def the registry takes: a valid name, a handler, a
/// risk of 0..=2, a description of at most 127 bytes of UTF-8.
///
/// # Safety
/// `d`'s strings are NULL or NUL-terminated.
unsafe fn def_ok(d: &claw_tool_def_t) -> Result<(), Status> {
    // SAFETY: per this function's contract.
    let name = unsafe { c_bytes(d.name) }.ok_or(Status::ToolName)?;
    agent::check_tool_name(name)?;
    if d.handler.is_none() {
        return Err(Status::NoHandler);
    }
    if d.risk > crate::safety::trust::RISK_HIGH {
        return Err(Status::Risk);
    }
    // SAFETY: per this function's contract.
    if let Some(desc) = unsafe { c_bytes(d.description) } {
        agent::check_text(desc)?;
        if desc.len() > DESCRIPTION_MAX {
            return Err(Status::Description);
        }
    }
    Ok(())
}

/// Longest description of a registered tool, in bytes.
pub const CLAW_TOOL_DESCRIPTION_MAX: usize = 127;
const DESCRIPTION_MAX: usize = CLAW_TOOL_DESCRIPTION_MAX;

/// Registers the tool `d` describes.
///
/// # Safety
/// `d` passed [`def_ok`].
unsafe fn add_def(
    s: &mut State,
    p: &mut super::CPort,
    d: &claw_tool_def_t,
) -> Result<usize, Status> {
    // SAFETY: per this function's contract (checked: NUL-terminated).
    let name = unsafe { c_bytes(d.name) }.unwrap_or(&[]);
    let spec = Spec {
        how: How::Host,
        risk: d.risk,
        confirm: d.confirm,
        per_min: d.rate_per_min,
    };
    agent::register_tool(s, p, name, spec)
}

/// Registers the firmware's (or the binding's) C tools: `defs[0..n)`,
/// const data that lives as long as the firmware (the table is kept, not
/// copied, and applied again by every `claw_agent_init`). A name of the
/// default registry (`gpio_set`, `fs_read`, ...) gives that tool its
/// handler and keeps its description, risk, flag and limit; another name
/// takes a spare slot with the def's. A name in two tables runs the
/// handler of the table registered first (register the firmware's before
/// MicroPython starts: the binding registers its own at its first call).
/// Every def is checked first: one bad def registers nothing. Registering
/// the same table again changes nothing. Returns the number of tools
/// registered, or `-claw_status_t`.
///
/// # Safety
/// `defs` is NULL or valid for reads of `n` elements for the rest of the
/// program, its strings NULL or NUL-terminated and unchanging.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn claw_tools_register(defs: *const claw_tool_def_t, n: usize) -> i32 {
    if defs.is_null() || n == 0 || n > 64 {
        return -(Status::ToolName as i32);
    }
    // SAFETY: per this function's contract.
    let table = unsafe { def_slice(defs, n) };
    for d in table {
        // SAFETY: per this function's contract.
        if let Err(e) = unsafe { def_ok(d) } {
            return -(e as i32);
        }
    }
    let r = with_state(Err(Status::Busy), |s, p| {
        if !p.tools.tables().any(|(t, _)| t == defs) {
            let free = p.tools.tables.iter_mut().find(|(t, _)| t.is_null());
            match free {
                Some(slot) => *slot = (defs, n),
                None => return Err(Status::RegistryFull),
            }
        }
        let mut count = 0i32;
        for d in table {
            // SAFETY: checked above.
            unsafe { add_def(s, p, d) }?;
            count += 1;
        }
        Ok(count)
    });
    match r {
        Ok(n) => n,
        Err(e) => -(e as i32),
    }
}

/// The def of the C tool in `slot` (for the host, which runs it), or NULL
/// when the slot holds no C tool.
#[unsafe(no_mangle)]
pub extern "C" fn claw_tool_def(slot: u8) -> *const claw_tool_def_t {
    with_state(core::ptr::null(), |s, p| {
        let slot = usize::from(slot);
        if s.registry.how(slot) != How::Host {
            return core::ptr::null();
        }
        p.tools.find(s.rate.name(slot)).unwrap_or(core::ptr::null())
    })
}

/// Registers a host tool (`register_tool()`): `name[0..len)`, risk 0..=2,
/// `rate_per_min` 0 for the default, and whether a model's request of it
/// waits for the person at the device. Returns its slot or
/// `-claw_status_t`. Re-registering a name keeps its rate window.
///
/// # Safety
/// `name` is NULL or valid for reads of `len` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn claw_tool_register(
    name: *const u8,
    len: usize,
    risk: u8,
    rate_per_min: u16,
    confirm: bool,
) -> i32 {
    // SAFETY: per this function's contract.
    let Some(name) = (unsafe { bytes(name, len) }) else {
        return -(Status::ToolName as i32);
    };
    let r = with_state(Err(Status::Busy), |s, p| {
        let spec = Spec {
            how: How::Python,
            risk,
            confirm,
            per_min: rate_per_min,
        };
        agent::register_tool(s, p, name, spec)
    });
    match r {
        Ok(slot) => slot as i32,
        Err(e) => -(e as i32),
    }
}

/// Drops every Python tool (a new VM: their callables are gone).
#[unsafe(no_mangle)]
pub extern "C" fn claw_tools_drop_python() {
    with_state((), |s, _| s.registry.drop_python(&mut s.rate));
}

/// The registry entry in `slot` (0..CLAW_RATE_MAX_TOOLS). False when the
/// slot holds no tool.
///
/// # Safety
/// `out` is NULL or valid for writes of one element.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn claw_tool_info(slot: u8, out: *mut claw_tool_info_t) -> bool {
    if out.is_null() {
        return false;
    }
    let info = with_state(None, |s, p| {
        let t = s.registry.tool(&s.rate, usize::from(slot))?;
        let description = match (t.description, t.how) {
            (Some(d), _) => d.as_ptr(),
            (None, How::Host) => p
                .tools
                .find(t.name)
                // SAFETY: checked at registration; static.
                .map_or(core::ptr::null(), |d| unsafe { (*d).description }),
            _ => core::ptr::null(),
        };
        let mut v = claw_tool_info_t {
            name: [0; 32],
            risk: t.risk,
            rate_per_min: t.limit,
            builtin: t.how != How::Python,
            confirm: t.confirm,
            how: t.how as u8,
            description,
        };
        put_cstr(&mut v.name, t.name);
        Some(v)
    });
    match info {
        Some(v) => {
            // SAFETY: non-NULL and valid for one element per the contract.
            unsafe { out.write(v) };
            true
        }
        None => false,
    }
}

/// `execute(name, params)`, the vendor's: gates, recorded, a TOOL turn
/// "execute: NAME"; the tool does not run. `*risk` and `*confirm` are the
/// tool's.
///
/// # Safety
/// `name` valid for `name_len` bytes; `risk` and `confirm` NULL or valid.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn claw_execute(
    name: *const u8,
    name_len: usize,
    risk: *mut u8,
    confirm: *mut bool,
) -> claw_status_t {
    // SAFETY: per this function's contract.
    let Some(name) = (unsafe { bytes(name, name_len) }) else {
        return Status::ToolName as claw_status_t;
    };
    let mut host = CHost::new(core::ptr::null_mut());
    let r = agent::execute(&mut host, name);
    if let Ok((r_risk, r_confirm)) = r {
        if !risk.is_null() {
            // SAFETY: non-NULL and valid per the contract.
            unsafe { risk.write(r_risk) };
        }
        if !confirm.is_null() {
            // SAFETY: non-NULL and valid per the contract.
            unsafe { confirm.write(r_confirm) };
        }
    }
    done(r.map(|_| ()))
}

/// `tool(name, arg)` from the REPL: the tool runs at the current trust
/// level (never above the chain's). `arg_kind` is a `CLAW_ARG_*`; a text
/// argument is `arg[0..arg_len)`, a bool or int `arg_int`. The result's
/// text goes to `out[0..out_max)`, its kind to `*value`.
///
/// # Safety
/// `name` valid for `name_len` bytes, `arg` NULL or valid for `arg_len`
/// bytes, `out` valid for writes of `out_max` bytes, `value` NULL or valid
/// for one element; `ctx` is passed to `claw_port_tool` untouched.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn claw_tool(
    name: *const u8,
    name_len: usize,
    arg_kind: u8,
    arg: *const u8,
    arg_len: usize,
    arg_int: i32,
    ctx: *mut c_void,
    out: *mut u8,
    out_max: usize,
    value: *mut claw_value_t,
) -> claw_status_t {
    // SAFETY: per this function's contract.
    let (Some(name), Some(text), Some(out)) = (
        unsafe { bytes(name, name_len) },
        unsafe { bytes(arg, arg_len) },
        unsafe { out_slice(out.cast(), out_max) },
    ) else {
        return Status::ToolName as claw_status_t;
    };
    let arg = match arg_kind {
        CLAW_ARG_TEXT => Arg::Text(text),
        CLAW_ARG_BOOL => Arg::Bool(arg_int != 0),
        CLAW_ARG_INT => Arg::Int(arg_int),
        CLAW_ARG_OTHER => Arg::Other,
        _ => Arg::None,
    };
    let mut host = CHost::new(ctx);
    let mut acct = agent::Account::new();
    let r = agent::tool(&mut host, name, Origin::Repl, arg, out, &mut acct);
    let v = match r {
        Ok(v) => value_of(v),
        Err(_) => claw_value_t {
            kind: CLAW_VALUE_TEXT,
            ival: 0,
            len: acct.raised,
        },
    };
    if !value.is_null() {
        // SAFETY: non-NULL and valid for one element per the contract.
        unsafe { value.write(v) };
    }
    done(r.map(|_| ()))
}

/// How long a tool call the model asked for waits for `confirm()`, in ms.
pub const CLAW_CONFIRM_TIMEOUT_MS: u32 = 60_000;
const _: () = assert!(CLAW_CONFIRM_TIMEOUT_MS == agent::confirm::TIMEOUT_MS);

/// `confirm(yes)`: the person at the device's answer to the tool call held
/// for confirmation. With `yes` it runs with the argument the host kept
/// (`claw_port_confirm_hold`; `arg_kind` `CLAW_ARG_TEXT` or
/// `CLAW_ARG_NONE`) as `claw_tool` runs a tool, its text in
/// `out[0..out_max)` and its kind in `*value`; without, it is refused and
/// `*value` is left as it was (`*ran` false). `ran` is NULL or tells whether
/// the tool ran.
///
/// # Safety
/// As `claw_tool`; `ran` NULL or valid.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn claw_confirm(
    yes: bool,
    arg_kind: u8,
    arg: *const u8,
    arg_len: usize,
    ctx: *mut c_void,
    out: *mut u8,
    out_max: usize,
    value: *mut claw_value_t,
    ran: *mut bool,
) -> claw_status_t {
    // SAFETY: per this function's contract.
    let (Some(text), Some(out)) = (unsafe { bytes(arg, arg_len) }, unsafe {
        out_slice(out.cast(), out_max)
    }) else {
        return Status::WorkTooSmall as claw_status_t;
    };
    let arg = if arg_kind == CLAW_ARG_TEXT {
        Arg::Text(text)
    } else {
        Arg::None
    };
    let mut host = CHost::new(ctx);
    let mut acct = agent::Account::new();
    let r = agent::confirm::confirm(&mut host, yes, arg, out, &mut acct);
    if !ran.is_null() {
        // SAFETY: non-NULL and valid per the contract.
        unsafe { ran.write(matches!(r, Ok(Some(_)))) };
    }
    let v = match r {
        Ok(Some(v)) => value_of(v),
        Ok(None) => return CLAW_OK,
        Err(_) => claw_value_t {
            kind: CLAW_VALUE_TEXT,
            ival: 0,
            len: acct.raised,
        },
    };
    if !value.is_null() {
        // SAFETY: non-NULL and valid for one element per the contract.
        unsafe { value.write(v) };
    }
    done(r.map(|_| ()))
}

/// The C form of a tool's value.
fn value_of(v: Value) -> claw_value_t {
    let (kind, ival, len) = match v {
        Value::Text(n) => (CLAW_VALUE_TEXT, 0, n),
        Value::Int(i) => (CLAW_VALUE_INT, i, 0),
        Value::Bool(b) => (CLAW_VALUE_BOOL, u32::from(b), 0),
        Value::Host(n) => (CLAW_VALUE_HOST, 0, n),
        Value::Arg(n) => (CLAW_VALUE_ARG, 0, n),
    };
    claw_value_t { kind, ival, len }
}

/// Bytes of work buffer `claw_ask` needs for this prompt.
///
/// # Safety
/// `prompt` is NULL or valid for reads of `len` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn claw_ask_work_size(prompt: *const u8, len: usize) -> usize {
    // SAFETY: per this function's contract.
    unsafe { bytes(prompt, len) }.map_or(0, agent::ask_work_size)
}

/// Bytes a context scratch takes in a byte area: its size and room to
/// align it.
pub(crate) const SCRATCH_LEN: usize =
    core::mem::size_of::<context::Scratch>() + core::mem::align_of::<context::Scratch>() - 1;

/// Carves a context scratch, aligned, out of the end of `area` (at least
/// [`SCRATCH_LEN`] bytes): (the bytes before it, the scratch). The agent's
/// work areas lend theirs to it while a context is rendered (`ask()`'s
/// body area, TACP HISTORY's work buffer).
pub(crate) fn carve_scratch(area: &mut [u8]) -> Option<(&mut [u8], &mut context::Scratch)> {
    let size = core::mem::size_of::<context::Scratch>();
    let align = core::mem::align_of::<context::Scratch>();
    let last = area.len().checked_sub(size)?;
    let at = last.checked_sub((area.as_ptr() as usize).wrapping_add(last) % align)?;
    let (bytes, tail) = area.split_at_mut_checked(at)?;
    if tail.len() < size {
        return None;
    }
    let slot = tail.as_mut_ptr().cast::<MaybeUninit<context::Scratch>>();
    // SAFETY: `slot` is aligned for a `Scratch` (`at` was rounded down to
    // it) and `tail`, borrowed exclusively for the returned lifetime, holds
    // at least its size; `MaybeUninit` asks nothing of the bytes.
    let slot = unsafe { &mut *slot };
    Some((bytes, new_scratch(slot)))
}

/// Writes a new scratch into `slot`, put together in place
/// (`Scratch::new` is inlined): not on the stack first, since it is carved
/// under `ask()`'s frames, once a request (and no 632-byte constant image).
#[inline(never)]
fn new_scratch(slot: &mut MaybeUninit<context::Scratch>) -> &mut context::Scratch {
    slot.write(context::Scratch::new())
}

/// Before `claw_ask`: what can be told without a work buffer (the prompt,
/// no connection, the chain's request budget; `NotConnected` and
/// `RequestLimit` count their error). On `CLAW_OK`, `*work_len` is the
/// buffer `claw_ask` needs; allocating it may fail without any state having
/// changed.
///
/// # Safety
/// `prompt` valid for `len` bytes; `work_len` valid.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn claw_ask_check(
    prompt: *const u8,
    len: usize,
    work_len: *mut usize,
) -> claw_status_t {
    // SAFETY: per this function's contract.
    let (Some(prompt), false) = (unsafe { bytes(prompt, len) }, work_len.is_null()) else {
        return Status::PromptLength as claw_status_t;
    };
    let mut host = CHost::new(core::ptr::null_mut());
    match agent::ask_check(&mut host, prompt) {
        Ok(n) => {
            // SAFETY: non-NULL and valid per the contract.
            unsafe { work_len.write(n) };
            CLAW_OK
        }
        Err(s) => s as claw_status_t,
    }
}

/// `ask(prompt)`: the whole exchange (see `docs/DESIGN.md`). On success
/// the reply is `work[0..*reply_len)` (UTF-8, no NUL).
///
/// # Safety
/// `prompt` valid for `len` bytes; `work` valid for writes of `work_len`
/// bytes and not overlapping `prompt`; `reply_len` NULL or valid; `ctx` is
/// passed to `claw_port_tool` untouched.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn claw_ask(
    prompt: *const u8,
    len: usize,
    work: *mut u8,
    work_len: usize,
    ctx: *mut c_void,
    reply_len: *mut usize,
) -> claw_status_t {
    // SAFETY: per this function's contract.
    let Some(prompt) = (unsafe { bytes(prompt, len) }) else {
        return Status::PromptLength as claw_status_t;
    };
    if work.is_null() || work_len > isize::MAX as usize {
        return Status::WorkTooSmall as claw_status_t;
    }
    // SAFETY: non-NULL, valid for writes of `work_len` bytes, not aliased.
    let work = unsafe { core::slice::from_raw_parts_mut(work, work_len) };
    let mut host = CHost::new(ctx);
    // A buffer short of `claw_ask_work_size` is refused (after the
    // prompt's checks).
    let r = agent::ask(&mut host, prompt, work);
    if let (Ok(reply), false) = (&r, reply_len.is_null()) {
        // SAFETY: non-NULL and valid per the contract.
        unsafe { reply_len.write(reply.len) };
    }
    done(r.map(|_| ()))
}

/// Bytes of work buffer `claw_tacp_dispatch` needs for this request (an
/// online ASK runs `ask()`; the rest need one answer), and
/// `claw_tacp_ready` (`sub` 0). 0 for a NULL payload with a length.
///
/// # Safety
/// `payload` is NULL or valid for reads of `len` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn claw_tacp_work_size(sub: u8, payload: *const u8, len: usize) -> usize {
    // SAFETY: per this function's contract.
    let Some(payload) = (unsafe { bytes(payload, len) }) else {
        return 0;
    };
    let mut host = CHost::new(core::ptr::null_mut());
    tacp_mod::work_size(&mut host, sub, payload)
}

/// One TACP v2 request (`docs/TACP.md`): sub-command `sub`, its payload
/// `payload[0..len)`. The answers go out through `claw_port_tacp_respond`
/// before this returns; every request is answered — but an ASK while
/// connected: `CLAW_STATUS_TACP_ASK` says to run `claw_ask` with the
/// payload (the same buffers and stack as `ask()`) and hand its outcome to
/// `claw_tacp_ask_done`, which answers it. `work` holds
/// `claw_tacp_work_size(sub, payload, len)` bytes. Otherwise not `CLAW_OK`
/// only for a KeyboardInterrupt/SystemExit that stopped it
/// (`CLAW_KIND_PENDING`: the host's to raise or drop) or a buffer too
/// small.
///
/// # Safety
/// `payload` valid for `len` bytes; `work` valid for writes of `work_len`
/// bytes and not overlapping `payload`; `ctx` is passed to
/// `claw_port_tool` untouched.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn claw_tacp_dispatch(
    sub: u8,
    payload: *const u8,
    len: usize,
    work: *mut u8,
    work_len: usize,
    ctx: *mut c_void,
) -> claw_status_t {
    // SAFETY: per this function's contract.
    let Some(payload) = (unsafe { bytes(payload, len) }) else {
        return Status::WorkTooSmall as claw_status_t;
    };
    if work.is_null() || work_len > isize::MAX as usize {
        return Status::WorkTooSmall as claw_status_t;
    }
    // SAFETY: non-NULL, valid for writes of `work_len` bytes, not aliased.
    let work = unsafe { core::slice::from_raw_parts_mut(work, work_len) };
    let mut host = CHost::new(ctx);
    if !host.on_task {
        // Off the MicroPython task: nothing runs, nothing is answered.
        return Status::Busy as claw_status_t;
    }
    if work_len < tacp_mod::work_size(&mut host, sub, payload) {
        return Status::WorkTooSmall as claw_status_t;
    }
    done(tacp_mod::dispatch(&mut host, sub, payload, work))
}

/// The answer of an online ASK (`claw_tacp_dispatch` said
/// `CLAW_STATUS_TACP_ASK`): `status` is what `claw_ask` (or
/// `claw_ask_check`) returned, the reply `reply[0..len)`. Answers through
/// `claw_port_tacp_respond`, then the STATS card. Not `CLAW_OK` only for a
/// KeyboardInterrupt/SystemExit (answered "interrupted").
///
/// # Safety
/// `reply` NULL or valid for `len` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn claw_tacp_ask_done(
    status: claw_status_t,
    reply: *const u8,
    len: usize,
) -> claw_status_t {
    // SAFETY: per this function's contract.
    let reply = unsafe { bytes(reply, len) }.unwrap_or(&[]);
    let outcome = match Status::from_c(status) {
        Status::Ok => Ok(reply),
        s => Err(s),
    };
    let mut host = CHost::new(core::ptr::null_mut());
    if !host.on_task {
        return Status::Busy as claw_status_t;
    }
    done(tacp_mod::ask_done(&mut host, outcome))
}

/// The READY frame's answer (`claw_port_tacp_respond` with sub 0): `fw`
/// (the firmware's version) and `board` (its name), NUL-terminated UTF-8;
/// then the STATS card. `work` holds `claw_tacp_work_size(0, NULL, 0)`
/// bytes.
///
/// # Safety
/// `fw` and `board` NULL or NUL-terminated; `work` valid for writes of
/// `work_len` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn claw_tacp_ready(
    fw: *const c_char,
    board: *const c_char,
    work: *mut u8,
    work_len: usize,
) -> claw_status_t {
    // SAFETY: per this function's contract.
    let (fw, board) = unsafe { (c_bytes(fw), c_bytes(board)) };
    // SAFETY: per this function's contract.
    let Some(work) = (unsafe { out_slice(work.cast(), work_len) }) else {
        return Status::WorkTooSmall as claw_status_t;
    };
    let mut host = CHost::new(core::ptr::null_mut());
    let work = work.get_mut(..tacp_mod::WORK_SIZE).unwrap_or(&mut []);
    if !host.on_task {
        return Status::Busy as claw_status_t;
    }
    done(tacp_mod::ready(
        &mut host,
        fw.unwrap_or(b""),
        board.unwrap_or(b""),
        work,
    ))
}

/// The TACP receiver's state (`claw_tacp_rx_push`): all zero at rest.
#[repr(C)]
#[derive(Clone, Copy, Default)]
pub struct claw_tacp_rx_t {
    /// Where it is in a command or frame.
    pub phase: u8,
    /// The frame's sub-command.
    pub sub: u8,
    /// The frame's sequence number.
    pub seq: u8,
    /// The low byte of the frame's CRC.
    pub crc_lo: u8,
    /// The frame's payload length.
    pub len: u16,
    /// Payload bytes received.
    pub got: u16,
    /// The CRC so far.
    pub crc: u16,
    /// (Padding.)
    pub pad: u16,
    /// The tick of the last byte.
    pub last_ms: u32,
}

/// What one byte made of the stream (`claw_tacp_rx_push`).
#[repr(C)]
#[derive(Clone, Copy, Default)]
pub struct claw_tacp_event_t {
    /// `CLAW_TACP_EV_*`.
    pub kind: u8,
    /// `CLAW_TACP_EV_PASS`: how many of `bytes` go to the REPL.
    pub n: u8,
    /// `CLAW_TACP_EV_PASS`: the bytes; `CLAW_TACP_EV_CONTROL`: `bytes[0]` is
    /// the command; `CLAW_TACP_EV_DROPPED`: `bytes[0]` is why
    /// (`CLAW_TACP_DROP_*`).
    pub bytes: [u8; 3],
    /// `CLAW_TACP_EV_FRAME`: its sub-command.
    pub sub: u8,
    /// `CLAW_TACP_EV_FRAME`: its sequence number.
    pub seq: u8,
    /// `CLAW_TACP_EV_FRAME`: its payload's length (in the caller's buffer).
    pub len: u16,
}

/// `claw_tacp_event_t.kind`: the byte is held (part of a command or frame).
pub const CLAW_TACP_EV_HELD: u8 = 0;
/// `claw_tacp_event_t.kind`: `bytes[0..n)` go to the REPL.
pub const CLAW_TACP_EV_PASS: u8 = 1;
/// `claw_tacp_event_t.kind`: a control command `AA 55 bytes[0]`.
pub const CLAW_TACP_EV_CONTROL: u8 = 2;
/// `claw_tacp_event_t.kind`: a whole frame with a good CRC.
pub const CLAW_TACP_EV_FRAME: u8 = 3;
/// `claw_tacp_event_t.kind`: a frame dropped, not answered.
pub const CLAW_TACP_EV_DROPPED: u8 = 4;
/// `CLAW_TACP_EV_DROPPED`: a bad CRC.
pub const CLAW_TACP_DROP_CRC: u8 = 1;
/// `CLAW_TACP_EV_DROPPED`: a length over `CLAW_TACP_PAYLOAD_MAX` (or the
/// caller's buffer).
pub const CLAW_TACP_DROP_TOO_LONG: u8 = 2;

impl From<claw_tacp_rx_t> for tacp_mod::frame::Rx {
    fn from(r: claw_tacp_rx_t) -> Self {
        Self {
            phase: r.phase,
            sub: r.sub,
            seq: r.seq,
            crc_lo: r.crc_lo,
            len: r.len,
            got: r.got,
            crc: r.crc,
            pad: r.pad,
            last_ms: r.last_ms,
        }
    }
}

impl From<tacp_mod::frame::Rx> for claw_tacp_rx_t {
    fn from(r: tacp_mod::frame::Rx) -> Self {
        Self {
            phase: r.phase,
            sub: r.sub,
            seq: r.seq,
            crc_lo: r.crc_lo,
            len: r.len,
            got: r.got,
            crc: r.crc,
            pad: r.pad,
            last_ms: r.last_ms,
        }
    }
}

/// Feeds one byte received at tick `now_ms` to the TACP receiver `rx`
/// (control commands, claw frames, and the bytes that are neither, for the
/// REPL); a frame's payload goes to `payload[0..payload_max)`, the same
/// buffer until the frame is done (`CLAW_TACP_PAYLOAD_MAX` bytes take any
/// frame). `*ev` says what the byte made; returns `ev->kind`. Pure: no
/// state of the library is touched.
///
/// # Safety
/// `rx` and `ev` NULL or valid; `payload` NULL or valid for writes of
/// `payload_max` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn claw_tacp_rx_push(
    rx: *mut claw_tacp_rx_t,
    byte: u8,
    now_ms: u32,
    payload: *mut u8,
    payload_max: usize,
    ev: *mut claw_tacp_event_t,
) -> u8 {
    use tacp_mod::frame::{Drop, Event};
    if rx.is_null() || ev.is_null() {
        return CLAW_TACP_EV_HELD;
    }
    // SAFETY: per this function's contract.
    let payload = unsafe { out_slice(payload.cast(), payload_max) }.unwrap_or(&mut []);
    // SAFETY: non-NULL and valid per the contract.
    let mut state: tacp_mod::frame::Rx = unsafe { rx.read() }.into();
    let mut e = claw_tacp_event_t::default();
    match state.push(byte, now_ms, payload) {
        Event::Held => {}
        Event::Pass(b, n) => {
            e.kind = CLAW_TACP_EV_PASS;
            e.bytes = b;
            e.n = n;
        }
        Event::Control(c) => {
            e.kind = CLAW_TACP_EV_CONTROL;
            e.bytes[0] = c;
        }
        Event::Frame { sub, seq, len } => {
            e.kind = CLAW_TACP_EV_FRAME;
            e.sub = sub;
            e.seq = seq;
            e.len = len;
        }
        Event::Dropped(d) => {
            e.kind = CLAW_TACP_EV_DROPPED;
            e.bytes[0] = match d {
                Drop::Crc => CLAW_TACP_DROP_CRC,
                Drop::TooLong => CLAW_TACP_DROP_TOO_LONG,
            };
        }
    }
    // SAFETY: non-NULL and valid per the contract.
    unsafe {
        rx.write(state.into());
        ev.write(e);
    }
    e.kind
}

/// Whether the receiver is inside a frame's payload (the caller's payload
/// buffer holds part of one and must be kept).
///
/// # Safety
/// `rx` NULL or valid.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn claw_tacp_rx_in_frame(rx: *const claw_tacp_rx_t) -> bool {
    if rx.is_null() {
        return false;
    }
    // SAFETY: non-NULL and valid per the contract.
    let state: tacp_mod::frame::Rx = unsafe { rx.read() }.into();
    state.in_payload()
}

/// Writes the TACP v2 frame of `sub`, `seq` and `payload[0..len)` (cut to
/// `CLAW_TACP_PAYLOAD_MAX`) into `out`: its length, 0 when `out_max` is too
/// small (`CLAW_TACP_FRAME_MAX` takes any).
///
/// # Safety
/// `payload` NULL or valid for `len` bytes; `out` NULL or valid for writes
/// of `out_max` bytes, not overlapping `payload`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn claw_tacp_frame(
    sub: u8,
    seq: u8,
    payload: *const u8,
    len: usize,
    out: *mut u8,
    out_max: usize,
) -> usize {
    // SAFETY: per this function's contract.
    let (Some(payload), Some(out)) = (unsafe { bytes(payload, len) }, unsafe {
        out_slice(out.cast(), out_max)
    }) else {
        return 0;
    };
    tacp_mod::frame::write_frame(sub, seq, payload, out).unwrap_or(0)
}

/// `connect(host, port, api_key)`: `*ok` tells whether it connected.
///
/// # Safety
/// `host` and `api_key` NUL-terminated; `ok` NULL or valid.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn claw_connect(
    host: *const c_char,
    port: u16,
    api_key: *const c_char,
    ok: *mut bool,
) -> claw_status_t {
    // SAFETY: per this function's contract.
    let (Some(h), Some(k)) = (unsafe { c_bytes(host) }, unsafe { c_bytes(api_key) }) else {
        return Status::NotUtf8 as claw_status_t;
    };
    let mut host = CHost::new(core::ptr::null_mut());
    let r = agent::connect(&mut host, h, port, k);
    if let (Ok(v), false) = (&r, ok.is_null()) {
        // SAFETY: non-NULL and valid per the contract.
        unsafe { ok.write(*v) };
    }
    done(r.map(|_| ()))
}

/// `disconnect()`.
#[unsafe(no_mangle)]
pub extern "C" fn claw_disconnect() -> claw_status_t {
    let mut host = CHost::new(core::ptr::null_mut());
    done(agent::disconnect(&mut host))
}

/// `session_clear()`: the ring, its file, and the chat panel.
#[unsafe(no_mangle)]
pub extern "C" fn claw_clear() -> claw_status_t {
    let mut host = CHost::new(core::ptr::null_mut());
    done(agent::session_clear(&mut host))
}

/// `status()`. False when called from inside a file operation.
///
/// # Safety
/// `out` NULL or valid for writes of one element.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn claw_agent_status(out: *mut claw_agent_status_t) -> bool {
    if out.is_null() {
        return false;
    }
    // SAFETY: no arguments.
    let connected = unsafe { sys::claw_port_connected() };
    with_state(false, |s, p| {
        // Loaded here, under a small frame; the document reads RAM only.
        let _ = s.session.ring(p);
        // SAFETY: non-NULL, valid for writes of one element per the
        // contract; no other reference to it exists.
        unsafe { status_into(s, connected, out) };
        true
    })
}

/// Fills `*out` from the state in RAM (its own frame: the copies are not
/// on the stack while the ring loads).
///
/// # Safety
/// `out` valid for writes of one element.
#[inline(never)]
unsafe fn status_into(s: &State, connected: bool, out: *mut claw_agent_status_t) {
    let mut bufs = agent::report::StatusBufs::new();
    let d = agent::report::status_doc(s, connected, &mut bufs);
    let mut v = claw_agent_status_t {
        state: [0; 12],
        connected: d.connected,
        dirty: d.dirty,
        session_msgs: d.session_msgs,
        tool_count: d.tool_count,
        errors: d.error_count,
        exec_count: d.exec_count,
        last_result: [0; 48],
        last_cmd: [0; 48],
        pending_confirm: [0; 32],
    };
    if let Some(slot) = s.agent.pending() {
        put_cstr(&mut v.pending_confirm, s.rate.name(usize::from(slot)));
    }
    put_cstr(&mut v.state, d.state.as_bytes());
    put_cstr(&mut v.last_result, d.last_result.as_bytes());
    put_cstr(&mut v.last_cmd, d.last_cmd.as_bytes());
    // SAFETY: per this function's contract.
    unsafe { out.write(v) };
}

/// `safety()`. False when called from inside a file operation.
///
/// # Safety
/// `out` NULL or valid for writes of one element.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn claw_agent_safety(out: *mut claw_agent_safety_t) -> bool {
    if out.is_null() {
        return false;
    }
    // SAFETY: no arguments.
    let connected = unsafe { sys::claw_port_connected() };
    let v = with_state(None, |s, p| {
        let d = agent::report::safety_doc(s, p, connected);
        let mut v = claw_agent_safety_t {
            circuit_breaker: [0; 12],
            cooldown_ms: d.cooldown_ms,
            trust_level: [0; 8],
            connected: d.connected,
            errors: d.errors,
        };
        put_cstr(&mut v.circuit_breaker, d.circuit_breaker.as_bytes());
        put_cstr(&mut v.trust_level, d.trust_level.as_bytes());
        Some(v)
    });
    match v {
        Some(v) => {
            // SAFETY: non-NULL, valid for one element per the contract.
            unsafe { out.write(v) };
            true
        }
        None => false,
    }
}

/// The index of the setting called `name[0..len)`, or -1.
///
/// # Safety
/// `name` NULL or valid for reads of `len` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn claw_config_index(name: *const u8, len: usize) -> i32 {
    // SAFETY: per this function's contract.
    unsafe { bytes(name, len) }
        .and_then(config::index)
        .map_or(-1, |i| i as i32)
}

/// Setting `i` (0..CLAW_CONFIG_KEYS): its name and range.
///
/// # Safety
/// `out` NULL or valid for writes of one element.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn claw_config_key(i: usize, out: *mut claw_config_key_t) -> bool {
    let (Some(k), false) = (config::KEYS.get(i), out.is_null()) else {
        return false;
    };
    let mut v = claw_config_key_t {
        name: [0; 24],
        lo: k.lo,
        hi: k.hi,
        is_bool: k.is_bool,
    };
    put_cstr(&mut v.name, k.name.as_bytes());
    // SAFETY: non-NULL, valid for one element per the contract.
    unsafe { out.write(v) };
    true
}

/// The settings, `values[0..CLAW_CONFIG_KEYS)`. False when called from
/// inside a file operation.
///
/// # Safety
/// `values` NULL or valid for writes of `CLAW_CONFIG_KEYS` elements.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn claw_config_get(values: *mut i32) -> bool {
    if values.is_null() {
        return false;
    }
    let Some(c) = with_state(None, |s, p| Some(s.agent.config(p))) else {
        return false;
    };
    for i in 0..CLAW_CONFIG_KEYS {
        // SAFETY: `values` is valid for CLAW_CONFIG_KEYS elements.
        unsafe { values.add(i).write(c.get(i)) };
    }
    true
}

/// `config(**kw)`: the settings whose bit is set in `mask` take
/// `values[i]`. All are checked first; a change is written at once (temp
/// file + rename). Returns 0; `-1 - i` when setting `i` is out of its range;
/// a positive errno when the file could not be written; -100 when called
/// from inside a file operation. Nothing changes on an error.
///
/// # Safety
/// `values` valid for reads of `CLAW_CONFIG_KEYS` elements.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn claw_config_set(values: *const i32, mask: u32) -> i32 {
    if values.is_null() {
        return -100;
    }
    // SAFETY: valid for CLAW_CONFIG_KEYS elements per the contract.
    let v = unsafe { core::slice::from_raw_parts(values, CLAW_CONFIG_KEYS) };
    with_state(-100, |s, p| {
        match config::set(&mut s.agent.config, p, v, mask) {
            Ok(_) => 0,
            Err(config::SetError::Range(i)) => -1 - i as i32,
            Err(config::SetError::Io(e)) => e.0.max(1),
        }
    })
}

/// `claw_check`: text the core takes, UTF-8 without NUL (one rule everywhere).
pub const CLAW_CHECK_TEXT: u8 = 0;
/// `claw_check`: a memory key, text of 1..31 bytes.
pub const CLAW_CHECK_KEY: u8 = 1;
/// `claw_check`: a memory value, text of 0..127 bytes.
pub const CLAW_CHECK_VALUE: u8 = 2;
/// `claw_check`: a tool name, text of 1..31 bytes.
pub const CLAW_CHECK_TOOL_NAME: u8 = 3;
/// `claw_check`: a prompt, text of 1..4096 bytes.
pub const CLAW_CHECK_PROMPT: u8 = 4;
/// `claw_check`: a backend host, 1..63 bytes of printable ASCII.
pub const CLAW_CHECK_HOST: u8 = 5;
/// `claw_check`: an API key, 1..127 bytes of printable ASCII.
pub const CLAW_CHECK_API_KEY: u8 = 6;

/// Whether `s[0..len)` is what `what` (a `CLAW_CHECK_*`) takes: `CLAW_OK`, or
/// the status that names the rule it breaks. NULL with a length is
/// `NotUtf8`; NULL with 0 is the empty text. An unknown `what` refuses
/// every text (fail closed).
///
/// # Safety
/// `s` is NULL or valid for reads of `len` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn claw_check(what: u8, s: *const u8, len: usize) -> claw_status_t {
    let rule: fn(&[u8]) -> Result<(), Status> = match what {
        CLAW_CHECK_TEXT => agent::check_text,
        CLAW_CHECK_KEY => agent::check_key,
        CLAW_CHECK_VALUE => agent::check_value,
        CLAW_CHECK_TOOL_NAME => agent::check_tool_name,
        CLAW_CHECK_PROMPT => agent::check_prompt,
        CLAW_CHECK_HOST => agent::check_host,
        CLAW_CHECK_API_KEY => agent::check_api_key,
        _ => return Status::NotUtf8 as claw_status_t,
    };
    // SAFETY: per this function's contract.
    match unsafe { bytes(s, len) } {
        Some(s) => done(rule(s)),
        None => Status::NotUtf8 as claw_status_t,
    }
}

/// The longest prefix of `s[0..len)` that is whole UTF-8 characters (for
/// a text the host cut to a size).
///
/// # Safety
/// `s` is NULL or valid for reads of `len` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn claw_text_prefix(s: *const u8, len: usize) -> usize {
    // SAFETY: per this function's contract.
    let Some(s) = (unsafe { bytes(s, len) }) else {
        return 0;
    };
    let mut v = crate::text::Utf8::new();
    let mut last = 0usize;
    for (i, &b) in s.iter().enumerate() {
        if !v.feed(b) {
            break;
        }
        if v.complete() {
            last = i + 1;
        }
    }
    last
}

/// The keywords of `config()`, for an error message.
#[unsafe(no_mangle)]
pub extern "C" fn claw_config_names() -> *const c_char {
    CONFIG_NAMES.as_ptr()
}

/// `config()`'s keys, in `config::KEYS` order (a unit test holds them equal).
const CONFIG_NAMES: &core::ffi::CStr = c"compact_threshold_pct, compact_min_msgs, compact_keep, \
context_budget, idle_timeout_s, daily_reset_hour, auto_compact, backend_summary, send_tools, \
archive, compact_before_drop";

#[cfg(test)]
#[test]
fn config_names_are_the_keys() {
    let names: Vec<&str> = config::KEYS.iter().map(|k| k.name).collect();
    assert_eq!(CONFIG_NAMES.to_str().unwrap(), names.join(", "));
}

/// Bytes of work buffer `claw_memory_export` needs now (0 when the store
/// cannot be read; `claw_memory_export` then says so).
#[unsafe(no_mangle)]
pub extern "C" fn claw_memory_export_size() -> usize {
    with_state(0, |_, p| crate::markdown::export_work_size(p).unwrap_or(0))
}

/// `export_memory()`: MEMORY.md of the store, exactly what recall() says
/// key by key, at `work[*off..*off + *len)`.
///
/// # Safety
/// `work` valid for writes of `work_len` bytes; `off`, `len` valid.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn claw_memory_export(
    work: *mut u8,
    work_len: usize,
    off: *mut usize,
    len: *mut usize,
) -> claw_status_t {
    if off.is_null() || len.is_null() {
        return Status::WorkTooSmall as claw_status_t;
    }
    // SAFETY: per this function's contract (a NULL or empty buffer is an
    // empty slice).
    let work: &mut [u8] = unsafe { super::work_slice(work, work_len) }.unwrap_or(&mut []);
    let r = with_state(Err(Status::Busy), |_, p| {
        crate::markdown::export(p, work).map_err(|e| match e {
            crate::markdown::ExportError::TooSmall => Status::WorkTooSmall,
            crate::markdown::ExportError::Io(_) => Status::StoreUnreadable,
        })
    });
    if let Ok((o, n)) = r {
        // SAFETY: both valid per the contract.
        unsafe {
            off.write(o);
            len.write(n);
        }
    }
    done(r.map(|_| ()))
}

/// A line `claw_memory_import` skipped.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct claw_import_bad_t {
    /// Its number (1-based).
    pub line: u32,
    /// Why (`claw_import_why_text`).
    pub why: u8,
}

/// What `claw_memory_import` did.
#[repr(C)]
#[derive(Clone, Copy, Default)]
pub struct claw_import_result_t {
    /// Distinct keys the text held (on success); pairs stored before the
    /// failing line (`CLAW_STATUS_IMPORT_WRITE`).
    pub keys: u32,
    /// Lines skipped (non-strict); the first `bad_max` are in `bad`.
    pub bad: u32,
    /// The bad or failing line (strict mode, write failure).
    pub line: u32,
    /// Why that line is bad.
    pub why: u8,
}

/// The text of a skipped line's reason.
#[unsafe(no_mangle)]
pub extern "C" fn claw_import_why_text(why: u8) -> *const c_char {
    use crate::markdown::Why;
    let w = [
        Why::NotItem,
        Why::NoClose,
        Why::NoColon,
        Why::BadEscape,
        Why::KeyLength,
        Why::ValueLength,
        Why::NotUtf8,
    ]
    .into_iter()
    .find(|w| *w as u8 == why);
    w.map_or(c"".as_ptr(), |w| w.c_text().as_ptr())
}

/// Work buffer `claw_memory_import` needs, in bytes.
pub const CLAW_IMPORT_WORK: usize = 1024;
const _: () = assert!(CLAW_IMPORT_WORK == crate::markdown::IMPORT_WORK);

/// `import_memory(text, strict)`: see `docs/SESSIONS.md`. Skipped lines go
/// to `bad[0..bad_max)`.
///
/// # Safety
/// `text` valid for `len` bytes; `work` valid for writes of
/// `CLAW_IMPORT_WORK` bytes; `bad` NULL or valid for writes of `bad_max`
/// elements; `result` valid.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn claw_memory_import(
    text: *const u8,
    len: usize,
    strict: bool,
    work: *mut u8,
    bad: *mut claw_import_bad_t,
    bad_max: usize,
    result: *mut claw_import_result_t,
) -> claw_status_t {
    use crate::markdown::ImportError;
    // SAFETY: per this function's contract.
    let (Some(text), false) = (unsafe { bytes(text, len) }, result.is_null()) else {
        return Status::NotUtf8 as claw_status_t;
    };
    if let Err(s) = agent::check_text(text) {
        return s as claw_status_t;
    }
    let bad: &mut [claw_import_bad_t] = if bad.is_null() || bad_max > isize::MAX as usize / 8 {
        &mut []
    } else {
        // SAFETY: non-NULL, valid for `bad_max` elements per the contract.
        unsafe { core::slice::from_raw_parts_mut(bad, bad_max) }
    };
    // SAFETY: valid for writes of CLAW_IMPORT_WORK bytes per the contract.
    let Some(work) = (unsafe { out_slice(work.cast(), CLAW_IMPORT_WORK) }) else {
        return Status::WorkTooSmall as claw_status_t;
    };
    // Only the count is kept through the import (the result is put
    // together after it: not on the frame the store's fold runs under).
    let mut nbad = 0u32;
    let r = with_state(Err(ImportError::Io(crate::port::Errno::EIO)), |_, p| {
        crate::markdown::import(p, text, strict, work, |line, why| {
            if let Some(b) = bad.get_mut(nbad as usize) {
                *b = claw_import_bad_t {
                    line,
                    why: why as u8,
                };
            }
            nbad = nbad.saturating_add(1);
        })
    });
    let mut res = claw_import_result_t {
        bad: nbad,
        ..Default::default()
    };
    let status = match r {
        Ok(n) => {
            res.keys = n;
            Status::Ok
        }
        Err(ImportError::Bad(line, why)) => {
            res.line = line;
            res.why = why as u8;
            Status::ImportLine
        }
        Err(ImportError::Full) => Status::ImportFull,
        Err(ImportError::Write(line, n)) => {
            res.line = line;
            res.keys = n;
            Status::ImportWrite
        }
        Err(ImportError::Io(_)) => Status::StoreUnreadable,
    };
    // SAFETY: non-NULL, valid per the contract.
    unsafe { result.write(res) };
    status as claw_status_t
}

/// The last failed file operation of the previous `claw_*` call (so that an
/// error can name the file and the cause): returns its errno, and writes its
/// path NUL-terminated into `path` (cut to `path_max`). 0 when that call
/// had none (a file that was not there to read does not count).
///
/// # Safety
/// `path` NULL or valid for writes of `path_max` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn claw_io_error(path: *mut c_char, path_max: usize) -> i32 {
    // SAFETY: per this function's contract.
    let mut none: [u8; 0] = [];
    let out = unsafe { super::out_slice(path, path_max) }.unwrap_or(&mut none);
    super::last_io_error(out)
}
