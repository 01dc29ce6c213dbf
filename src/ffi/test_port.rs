//! Test builds only: the `claw_port_*` symbols over an in-memory port, so the
//! exported functions can be driven from Rust tests exactly as C calls them.

use std::cell::Cell;
use std::ffi::{CStr, c_char};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Mutex, MutexGuard};

use crate::port::{Mode, Port};
use crate::testing::MemPort;

/// The file system and clock behind the exported functions.
pub static PORT: Mutex<Option<MemPort>> = Mutex::new(None);
/// Serialises tests that use the global state.
pub static SERIAL: Mutex<()> = Mutex::new(());

/// Takes the test lock and installs a fresh port; re-initialises the library.
pub fn fresh() -> MutexGuard<'static, ()> {
    let guard = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    *PORT.lock().unwrap() = Some(MemPort::new());
    super::safety::claw_rate_init();
    super::safety::claw_cb_init();
    super::session::claw_session_init();
    super::safety::claw_trust_set(super::safety::CLAW_TRUST_USB);
    guard
}

/// Runs `f` on the installed port.
pub fn port<R>(f: impl FnOnce(&mut MemPort) -> R) -> R {
    f(PORT.lock().unwrap().as_mut().expect("fresh() first"))
}

thread_local! {
    /// This thread plays a task other than the MicroPython one.
    static OFF_TASK: Cell<bool> = const { Cell::new(false) };
}

/// File calls (anything but the clock and `claw_port_on_vm_task`) made on
/// a thread of [`off_task`]: the core must make none.
pub static OFF_TASK_FILE_CALLS: AtomicU32 = AtomicU32::new(0);

/// Runs `f` on a thread of its own that `claw_port_on_vm_task` calls
/// another task; returns what it returned.
pub fn off_task<R: Send>(f: impl FnOnce() -> R + Send) -> R {
    std::thread::scope(|scope| {
        scope
            .spawn(|| {
                OFF_TASK.set(true);
                f()
            })
            .join()
            .expect("the off-task thread panicked")
    })
}

/// Calls of `claw_port_ticks_ms`, from any thread.
pub static CLOCK_CALLS: AtomicU32 = AtomicU32::new(0);

/// What runs at the start of every file call on the MicroPython task.
type FileHook = Box<dyn FnMut() + Send>;
static FILE_HOOK: Mutex<Option<FileHook>> = Mutex::new(None);

/// Installs (or removes) the hook run at the start of every file call made
/// on the MicroPython task: the call in progress holds the library's state.
pub fn set_file_hook(hook: Option<FileHook>) {
    *FILE_HOOK.lock().unwrap() = hook;
}

/// A file call: counted when made off the task, the hook run on it.
fn with<R>(f: impl FnOnce(&mut MemPort) -> R) -> R {
    if OFF_TASK.get() {
        OFF_TASK_FILE_CALLS.fetch_add(1, Ordering::SeqCst);
    } else if let Some(hook) = FILE_HOOK.lock().unwrap().as_mut() {
        hook();
    }
    port(f)
}

/// Test port: the MicroPython task is every thread but those of [`off_task`].
#[unsafe(no_mangle)]
pub extern "C" fn claw_port_on_vm_task() -> bool {
    !OFF_TASK.get()
}

fn code<T>(r: Result<T, crate::port::Errno>, ok: impl FnOnce(T) -> i32) -> i32 {
    match r {
        Ok(v) => ok(v),
        Err(e) => -e.0,
    }
}

/// # Safety
/// Test port: see `claw_port.h`.
#[unsafe(no_mangle)]
pub extern "C" fn claw_port_ticks_ms() -> u32 {
    CLOCK_CALLS.fetch_add(1, Ordering::SeqCst);
    port(|p| p.now)
}

/// # Safety
/// `path` is a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn claw_port_open(path: *const c_char, mode: u8) -> i32 {
    // SAFETY: the core passes its NUL-terminated path constants.
    let path = unsafe { CStr::from_ptr(path) };
    let mode = match mode {
        0 => Mode::Read,
        1 => Mode::Write,
        _ => Mode::Append,
    };
    with(|p| code(p.open(path, mode), |fd| fd))
}

/// # Safety
/// `buf` is valid for `len` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn claw_port_read(fd: i32, buf: *mut u8, len: usize) -> i32 {
    // SAFETY: the core passes a live buffer of `len` bytes.
    let buf = unsafe { std::slice::from_raw_parts_mut(buf, len) };
    with(|p| code(p.read(fd, buf), |n| n as i32))
}

/// # Safety
/// `buf` is valid for `len` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn claw_port_write(fd: i32, buf: *const u8, len: usize) -> i32 {
    // SAFETY: the core passes a live buffer of `len` bytes.
    let buf = unsafe { std::slice::from_raw_parts(buf, len) };
    with(|p| code(p.write(fd, buf), |()| len as i32))
}

/// Test port close.
#[unsafe(no_mangle)]
pub extern "C" fn claw_port_close(fd: i32) -> i32 {
    with(|p| code(p.close(fd), |()| 0))
}

/// # Safety
/// `path` is a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn claw_port_remove(path: *const c_char) -> i32 {
    // SAFETY: the core passes its NUL-terminated path constants.
    let path = unsafe { CStr::from_ptr(path) };
    with(|p| code(p.remove(path), |()| 0))
}

/// # Safety
/// `from` and `to` are NUL-terminated strings.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn claw_port_rename(from: *const c_char, to: *const c_char) -> i32 {
    // SAFETY: the core passes its NUL-terminated path constants.
    let (from, to) = unsafe { (CStr::from_ptr(from), CStr::from_ptr(to)) };
    with(|p| code(p.rename(from, to), |()| 0))
}

/// # Safety
/// `path` is a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn claw_port_atomic_write(path: *const c_char) -> u8 {
    // SAFETY: the core passes its NUL-terminated path constants.
    let path = unsafe { CStr::from_ptr(path) };
    with(|p| u8::from(p.atomic_write(path)))
}

/// The agent's callbacks (`claw_port_post`, `claw_port_tool`, …), scripted:
/// the backend answers from [`AgentPort::replies`], each tool call does the
/// next [`ToolScript`] (which may call back into the library), and every
/// call is recorded.
#[cfg(feature = "agent")]
pub mod agent {
    use std::collections::VecDeque;
    use std::ffi::{CStr, c_char, c_void};
    use std::sync::Mutex;

    /// What one `claw_port_post` answers.
    #[derive(Clone, Debug)]
    pub enum Post {
        /// A 200 with this body (longer than `reply_max`: -1, as the
        /// contract says).
        Body(Vec<u8>),
        /// -1.
        Fail,
        /// -2: an answer larger than `reply_max` (a transport that tells).
        TooLong,
        /// A port that lies: claims this many bytes more than `reply_max`.
        Overclaim(usize),
    }

    /// What one `claw_port_tool` does.
    #[derive(Clone, Copy)]
    pub enum ToolScript {
        /// Returns this text (any bytes; cut to `out_max`).
        Returned(&'static [u8]),
        /// Raises with this text.
        Raised(&'static [u8]),
        /// A KeyboardInterrupt: sets `claw_port_aborted()` and reports ABORT.
        Abort,
        /// Claims `out_max + n` bytes written (a lying host).
        Overclaim(usize),
        /// Calls back into the library with the call's `ctx`, then returns
        /// what the function gives.
        Nested(fn(*mut c_void) -> Vec<u8>),
    }

    /// One `claw_port_tool` call as the core made it.
    #[derive(Clone, Debug, PartialEq, Eq)]
    pub struct ToolCall {
        /// The registry slot.
        pub slot: u8,
        /// `CLAW_PORT_ARG_*`.
        pub kind: u8,
        /// The text argument.
        pub arg: Vec<u8>,
        /// The `ctx` the core passed.
        pub ctx: usize,
        /// `out_max`.
        pub out_max: usize,
    }

    /// The scripted host.
    #[derive(Default)]
    pub struct AgentPort {
        /// `claw_port_connected()`.
        pub connected: bool,
        /// What the next `claw_port_connect` answers.
        pub connect_ok: bool,
        /// (host, port, api key) of each connect.
        pub connects: Vec<(Vec<u8>, u16, Vec<u8>)>,
        /// The backend's answers, in order (then `Fail`).
        pub replies: VecDeque<Post>,
        /// Every posted body.
        pub bodies: Vec<Vec<u8>>,
        /// The tools' scripts, in order (then `Returned(b"done")`).
        pub tools: VecDeque<ToolScript>,
        /// Every tool call.
        pub calls: Vec<ToolCall>,
        /// Every UI event.
        pub ui: Vec<(u8, Vec<u8>)>,
        /// `claw_port_ui_init` calls.
        pub ui_inits: u32,
        /// `claw_port_tokens`.
        pub tokens: (u32, u32),
        /// `claw_port_time_s`.
        pub time_s: u32,
        /// `claw_port_aborted`.
        pub aborted: bool,
        /// Every TACP answer (sub, payload).
        pub tacp: Vec<(u8, Vec<u8>)>,
    }

    /// The agent host behind the exported functions.
    pub static AGENT: Mutex<Option<AgentPort>> = Mutex::new(None);

    /// Runs `f` on the installed agent host. Never held across a call back
    /// into the library.
    pub fn host<R>(f: impl FnOnce(&mut AgentPort) -> R) -> R {
        f(AGENT
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get_or_insert_with(AgentPort::default))
    }

    /// Test port.
    #[unsafe(no_mangle)]
    pub extern "C" fn claw_port_connected() -> bool {
        host(|h| h.connected)
    }

    /// # Safety
    /// `host` and `api_key` are NUL-terminated.
    #[unsafe(no_mangle)]
    pub unsafe extern "C" fn claw_port_connect(
        host_name: *const c_char,
        port: u16,
        api_key: *const c_char,
    ) -> bool {
        // SAFETY: the core passes NUL-terminated buffers.
        let (h, k) = unsafe { (CStr::from_ptr(host_name), CStr::from_ptr(api_key)) };
        host(|a| {
            a.connects
                .push((h.to_bytes().to_vec(), port, k.to_bytes().to_vec()));
            a.connected = a.connect_ok;
            a.connect_ok
        })
    }

    /// Test port.
    #[unsafe(no_mangle)]
    pub extern "C" fn claw_port_disconnect() {
        host(|h| h.connected = false);
    }

    /// # Safety
    /// `body` valid for `body_len` bytes, `reply` for `reply_max`.
    #[unsafe(no_mangle)]
    pub unsafe extern "C" fn claw_port_post(
        body: *const u8,
        body_len: usize,
        reply: *mut u8,
        reply_max: usize,
    ) -> i32 {
        // SAFETY: the core passes a live body of `body_len` bytes.
        let body = unsafe { std::slice::from_raw_parts(body, body_len) }.to_vec();
        let next = host(|h| {
            h.bodies.push(body);
            if h.connected {
                h.replies.pop_front().unwrap_or(Post::Fail)
            } else {
                Post::Fail
            }
        });
        match next {
            Post::Body(b) if b.len() <= reply_max => {
                // SAFETY: the core passes a buffer of `reply_max` bytes.
                unsafe { std::ptr::copy_nonoverlapping(b.as_ptr(), reply, b.len()) };
                b.len() as i32
            }
            Post::Body(_) | Post::Fail => -1,
            Post::TooLong => -2,
            Post::Overclaim(n) => (reply_max + n) as i32,
        }
    }

    /// # Safety
    /// As `claw_port.h` says: `arg` valid for `arg_len` bytes, `out` for
    /// `out_max`, `out_len` valid.
    #[unsafe(no_mangle)]
    #[allow(clippy::too_many_arguments)]
    pub unsafe extern "C" fn claw_port_tool(
        ctx: *mut c_void,
        slot: u8,
        arg_kind: u8,
        arg: *const u8,
        arg_len: usize,
        out: *mut u8,
        out_max: usize,
        out_len: *mut usize,
    ) -> u8 {
        // SAFETY: the core passes a live argument of `arg_len` bytes (an
        // empty one for no text argument).
        let arg = unsafe { std::slice::from_raw_parts(arg, arg_len) }.to_vec();
        let script = host(|h| {
            h.calls.push(ToolCall {
                slot,
                kind: arg_kind,
                arg,
                ctx: ctx as usize,
                out_max,
            });
            h.tools.pop_front().unwrap_or(ToolScript::Returned(b"done"))
        });
        let (code, text): (u32, Vec<u8>) = match script {
            ToolScript::Returned(t) => (super::super::sys::CLAW_PORT_TOOL_RETURNED, t.to_vec()),
            ToolScript::Raised(t) => (super::super::sys::CLAW_PORT_TOOL_RAISED, t.to_vec()),
            ToolScript::Abort => {
                host(|h| h.aborted = true);
                (super::super::sys::CLAW_PORT_TOOL_ABORT, Vec::new())
            }
            ToolScript::Overclaim(n) => {
                // SAFETY: `out_len` is valid; nothing is written to `out`.
                unsafe { out_len.write(out_max + n) };
                return super::super::sys::CLAW_PORT_TOOL_RETURNED as u8;
            }
            // The lock is not held: the tool calls back into the library.
            ToolScript::Nested(f) => (super::super::sys::CLAW_PORT_TOOL_RETURNED, f(ctx)),
        };
        let n = text.len().min(out_max);
        // SAFETY: `out` is valid for `out_max` bytes, `out_len` for one.
        unsafe {
            std::ptr::copy_nonoverlapping(text.as_ptr(), out, n);
            out_len.write(n);
        }
        code as u8
    }

    /// Keeps nothing: a held call is refused (the agent's model tests hold
    /// with a port of their own).
    #[unsafe(no_mangle)]
    pub extern "C" fn claw_port_confirm_hold(
        _slot: u8,
        _kind: u8,
        _arg: *const u8,
        _len: usize,
    ) -> bool {
        false
    }

    /// A Python tool's description: "tool <slot>".
    ///
    /// # Safety
    /// `out` valid for `out_max` bytes.
    #[unsafe(no_mangle)]
    pub unsafe extern "C" fn claw_port_tool_desc(slot: u8, out: *mut u8, out_max: usize) -> usize {
        let text = format!("tool {slot}");
        let n = text.len().min(out_max);
        // SAFETY: `out` is valid for `out_max` bytes.
        unsafe { std::ptr::copy_nonoverlapping(text.as_ptr(), out, n) };
        n
    }

    /// # Safety
    /// Both pointers valid.
    #[unsafe(no_mangle)]
    pub unsafe extern "C" fn claw_port_tokens(tokens_in: *mut u32, tokens_out: *mut u32) {
        let (i, o) = host(|h| h.tokens);
        // SAFETY: the core passes two valid out-pointers.
        unsafe {
            tokens_in.write(i);
            tokens_out.write(o);
        }
    }

    /// Test port.
    #[unsafe(no_mangle)]
    pub extern "C" fn claw_port_time_s() -> u32 {
        host(|h| h.time_s)
    }

    /// Test port.
    #[unsafe(no_mangle)]
    pub extern "C" fn claw_port_ui_init() {
        host(|h| h.ui_inits += 1);
    }

    /// # Safety
    /// `text` valid for `len` bytes.
    #[unsafe(no_mangle)]
    pub unsafe extern "C" fn claw_port_ui(event: u8, text: *const u8, len: usize) {
        // SAFETY: the core passes a live text of `len` bytes.
        let text = unsafe { std::slice::from_raw_parts(text, len) }.to_vec();
        host(|h| h.ui.push((event, text)));
    }

    /// # Safety
    /// `payload` valid for `len` bytes.
    #[unsafe(no_mangle)]
    pub unsafe extern "C" fn claw_port_tacp_respond(sub: u8, payload: *const u8, len: usize) {
        // SAFETY: the core passes a live payload of `len` bytes.
        let p = unsafe { std::slice::from_raw_parts(payload, len) }.to_vec();
        host(|h| h.tacp.push((sub, p)));
    }

    /// Test port.
    #[unsafe(no_mangle)]
    pub extern "C" fn claw_port_aborted() -> bool {
        host(|h| h.aborted)
    }

    /// [`super::fresh`], a fresh agent host (connected when `connected`)
    /// and `claw_agent_init()`.
    pub fn fresh(connected: bool) -> std::sync::MutexGuard<'static, ()> {
        let g = super::fresh();
        *AGENT.lock().unwrap_or_else(|e| e.into_inner()) = Some(AgentPort {
            connected,
            connect_ok: true,
            ..AgentPort::default()
        });
        assert!(crate::ffi::agent::claw_agent_init());
        g
    }
}
