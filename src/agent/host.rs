//! What the agent asks of everything outside the core ([`Host`]), and the
//! accounting of one top-level operation ([`Account`]) over the core.

use super::registry::Registry;
use super::state::{Agent, Arg, Status, ToolOutcome, Ui};
use crate::port::Port;
use crate::safety::trust::Level;
use crate::state::State;

/// Bytes a context scratch takes in a byte area: its size and room to
/// align it.
pub(crate) const SCRATCH_LEN: usize = core::mem::size_of::<crate::context::Scratch>()
    + core::mem::align_of::<crate::context::Scratch>()
    - 1;

/// Everything outside the core.
pub trait Host {
    /// Files and the tick clock.
    type Files: Port;
    /// Runs `f` with the state and the file port, or `None` when the state
    /// is in use (a call from inside a file operation of the core).
    fn with_state<R>(
        &mut self,
        f: impl FnOnce(&mut State<Registry, Agent>, &mut Self::Files) -> R,
    ) -> Option<R>;
    /// POSTs `body` to the backend; the reply body of a 200 answer is
    /// copied into `reply`, its length returned. [`NoReply::TooLong`] when
    /// the transport tells that the body was larger than `reply` (the unix
    /// transport does; the vendor's reports every failure alike),
    /// [`NoReply::Failed`] for any other failure (refused, timeout,
    /// non-200, truncated).
    fn post(&mut self, body: &[u8], reply: &mut [u8]) -> Result<usize, NoReply>;
    /// Carves a context scratch, aligned, out of the end of `area` (at
    /// least [`SCRATCH_LEN`] bytes): (the bytes before it, the scratch).
    /// The one `unsafe` step of the agent's work areas, so the FFI layer's
    /// (`carve_scratch`), handed down through the host.
    fn carve_scratch(area: &mut [u8]) -> Option<(&mut [u8], &mut crate::context::Scratch)>;
    /// Runs the Python tool in `slot` with `arg` (`Arg::Other`: the
    /// caller's own object). The text of its result or exception goes to
    /// `out`, cut to fit.
    fn run_tool(&mut self, slot: u8, arg: Arg<'_>, out: &mut [u8]) -> ToolOutcome;
    /// The description of the host's tool in `slot` (one the host
    /// registered), into `out`; its length (0: none).
    fn describe(&mut self, slot: u8, out: &mut [u8]) -> usize {
        let _ = (slot, out);
        0
    }
    /// Keeps `arg` for the tool call held in `slot` until the person at
    /// the device answers (`confirm`): it comes back with `confirm()`.
    /// False when the host cannot keep it (the call is refused then).
    fn hold(&mut self, slot: u8, arg: Arg<'_>) -> bool {
        let _ = (slot, arg);
        false
    }
    /// A UI event.
    fn ui(&mut self, ev: Ui, text: &[u8]);
    /// One TACP answer to the USB host (`sub`: the request's, or 0xFF for
    /// an error), framed by whoever owns the link (the vendor's `tacp.c`,
    /// or the library's framer, `tacp::frame`) with the request's `seq`.
    fn tacp_respond(&mut self, sub: u8, payload: &[u8]) {
        let _ = (sub, payload);
    }
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

/// Why a POST brought no reply.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NoReply {
    /// Any failure of the request.
    Failed,
    /// An answer larger than the reply buffer.
    TooLong,
}

/// The error and breaker accounting of one top-level operation: at most one
/// error count and one breaker failure, whatever it sent or ran.
#[derive(Default)]
pub struct Account {
    pub(crate) errored: bool,
    pub(crate) failed: bool,
    /// A tool an `ask()` ran raised: the `ask()` ends as a failure.
    pub(crate) tool_failed: bool,
    /// After [`Status::ToolRaised`]: the length of the exception's text in
    /// the caller's `out`.
    pub raised: usize,
}

impl Account {
    /// A fresh account.
    pub fn new() -> Self {
        Self::default()
    }

    pub(crate) fn error(&mut self, c: &mut State<Registry, Agent>) {
        if !self.errored {
            c.agent.errors = c.agent.errors.saturating_add(1);
            self.errored = true;
        }
    }

    /// A request answered while the breaker is half-open ends its trial.
    pub(crate) fn end_trial<P: Port>(c: &mut State<Registry, Agent>, p: &mut P) {
        if c.breaker.state(p.ticks_ms()) == crate::safety::breaker::State::HalfOpen {
            c.breaker.success();
        }
    }

    pub(crate) fn failure<P: Port>(&mut self, c: &mut State<Registry, Agent>, p: &mut P) {
        self.error(c);
        if !self.failed {
            c.breaker.failure(p.ticks_ms());
            self.failed = true;
        }
    }
}

/// [`Host::with_state`]: what `f` returns, or [`Status::Busy`] when the
/// state is in use.
pub(crate) fn with_state_or_busy<H: Host, R>(
    h: &mut H,
    f: impl FnOnce(&mut State<Registry, Agent>, &mut H::Files) -> R,
) -> Result<R, Status> {
    h.with_state(f).ok_or(Status::Busy)
}

/// Enters the chain with `own` trust for the length of `f`.
pub(crate) fn nested<H: Host, R>(
    h: &mut H,
    own: impl FnOnce(&State<Registry, Agent>) -> Level,
    f: impl FnOnce(&mut H) -> Result<R, Status>,
) -> Result<R, Status> {
    let frame = with_state_or_busy(h, |c, _| {
        let own = own(c);
        c.agent.chain.enter(own)
    })??;
    let r = f(h);
    let _ = h.with_state(|c, _| c.agent.chain.leave(frame));
    r
}
