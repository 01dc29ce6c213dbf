//! The agent's host [`CHost`] over the `claw_port_*` callbacks, and the
//! small helpers the exports share (`done`, `bytes`).

use super::*;

/// The agent's host: the `claw_port_*` callbacks, with the binding's
/// context pointer of the running call. Off the MicroPython task it reaches
/// none of them: the core is busy, the host says it was aborted, and nothing
/// runs (a tool is Python code, and so may be the transport and the files).
pub struct CHost {
    ctx: *mut c_void,
    pub(super) on_task: bool,
}

impl CHost {
    pub(super) fn new(ctx: *mut c_void) -> Self {
        // SAFETY: no arguments; callable from any task per `claw_port.h`.
        let on_task = unsafe { sys::claw_port_on_vm_task() };
        Self { ctx, on_task }
    }
}

impl Host for CHost {
    type Files = crate::ffi::CPort;

    fn with_state<R>(
        &mut self,
        f: impl FnOnce(&mut State, &mut crate::ffi::CPort) -> R,
    ) -> Option<R> {
        if !self.on_task {
            return None;
        }
        let mut f = Some(f);
        with_state(None, |s, p| f.take().map(|f| f(s, p)))
    }

    fn carve_scratch(area: &mut [u8]) -> Option<(&mut [u8], &mut context::Scratch)> {
        carve_scratch(area)
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
    // stack: see docs/STACK.md
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
    // stack: see docs/STACK.md
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

pub(super) fn done(r: Result<(), Status>) -> claw_status_t {
    match r {
        Ok(()) => CLAW_OK,
        Err(s) => s as claw_status_t,
    }
}

/// The bytes of `p[0..len)`, `None` for NULL.
///
/// # Safety
/// `p` is NULL or valid for reads of `len` bytes for `'a`.
pub(super) unsafe fn bytes<'a>(p: *const u8, len: usize) -> Option<&'a [u8]> {
    if p.is_null() {
        return (len == 0).then_some(&[]);
    }
    if len > isize::MAX as usize {
        return None;
    }
    // SAFETY: per this function's contract.
    Some(unsafe { core::slice::from_raw_parts(p, len) })
}
