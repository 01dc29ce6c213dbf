//! What `status()`, `safety()` and TACP STATUS report, read from RAM.

use super::Agent;
use super::registry::Registry;
use super::wire;
use crate::port::Port;
use crate::state::State;

/// `status()` as one value: the vendor's keys first, then the library's.
#[derive(Clone, Copy, Debug)]
pub struct StatusDoc<'a> {
    /// "idle", "executing", "thinking" or "error".
    pub state: &'a str,
    /// Tool calls admitted since the soft reset.
    pub exec_count: u32,
    /// Errors counted since the soft reset (the library's `errors`).
    pub error_count: u32,
    /// Tools in the registry.
    pub tool_count: u16,
    /// The last command (a tool's name, a TACP EXEC line).
    pub last_cmd: &'a str,
    /// How the last call ended ("ok (42 bytes)", "dispatched", "error", ...).
    pub last_result: &'a str,
    /// Messages in the ring.
    pub session_msgs: u16,
    /// The transport is connected.
    pub connected: bool,
    /// The ring holds turns not on flash yet.
    pub dirty: bool,
    /// Request bytes sent this session.
    pub bytes_in: u32,
    /// Reply bytes received this session.
    pub bytes_out: u32,
    /// Input tokens the backend reported.
    pub tokens_in: u32,
    /// Output tokens the backend reported.
    pub tokens_out: u32,
    /// Context bytes of the last request.
    pub context_bytes: u32,
    /// Answered requests.
    pub exchanges: u32,
    /// RTC seconds of the last exchange (0: unknown).
    pub last_active: u32,
}

/// Copies of the texts a [`StatusDoc`] points into.
pub struct StatusBufs {
    last_result: [u8; super::LAST_RESULT_MAX],
    last_cmd: [u8; super::LAST_CMD_MAX],
}

impl StatusBufs {
    /// Empty buffers.
    pub const fn new() -> Self {
        Self {
            last_result: [0; super::LAST_RESULT_MAX],
            last_cmd: [0; super::LAST_CMD_MAX],
        }
    }
}

impl Default for StatusBufs {
    fn default() -> Self {
        Self::new()
    }
}

/// The state `status()` reports, from RAM (the caller loads the ring
/// first: [`crate::session::Session::ring`]); the texts are copied to
/// `bufs`.
pub fn status_doc<'a>(
    c: &State<Registry, Agent>,
    connected: bool,
    bufs: &'a mut StatusBufs,
) -> StatusDoc<'a> {
    let st = c.session.stats_loaded();
    let copy = |dst: &'a mut [u8], src: &[u8]| -> &'a str {
        let n = src.len().min(dst.len());
        crate::text::copy_prefix(dst, src);
        wire::as_str(dst.get(..n).unwrap_or(&[]))
    };
    let StatusBufs {
        last_result,
        last_cmd,
    } = bufs;
    StatusDoc {
        state: c.agent.state().name(),
        exec_count: c.agent.execs(),
        error_count: c.agent.errors(),
        tool_count: c.registry.count() as u16,
        last_cmd: copy(last_cmd, c.agent.last_cmd()),
        last_result: copy(last_result, c.agent.last_result()),
        session_msgs: c.session.ring_loaded().len() as u16,
        connected,
        dirty: c.session.is_dirty(),
        bytes_in: st.in_bytes,
        bytes_out: st.out_bytes,
        tokens_in: st.in_tokens,
        tokens_out: st.out_tokens,
        context_bytes: st.context_bytes,
        exchanges: st.exchanges,
        last_active: st.last_active,
    }
}

/// `safety()` as one value: the vendor's keys, then the library's.
#[derive(Clone, Copy, Debug)]
pub struct SafetyDoc {
    /// "closed", "open", "half-open".
    pub circuit_breaker: &'static str,
    /// Cooldown left while open.
    pub cooldown_ms: u32,
    /// "none", "https", "usb".
    pub trust_level: &'static str,
    /// The transport is connected.
    pub connected: bool,
    /// Errors counted since the soft reset.
    pub errors: u32,
}

/// The state `safety()` reports. Reading the breaker moves it from open to
/// half-open once the cooldown is over (as the vendor's `claw_cb_state()`).
pub fn safety_doc<P: Port>(
    c: &mut State<Registry, Agent>,
    p: &mut P,
    connected: bool,
) -> SafetyDoc {
    use crate::safety::breaker::State as Cb;
    use crate::safety::trust::Level;
    let now = p.ticks_ms();
    SafetyDoc {
        circuit_breaker: match c.breaker.state(now) {
            Cb::Closed => "closed",
            Cb::Open => "open",
            Cb::HalfOpen => "half-open",
        },
        cooldown_ms: c.breaker.cooldown_remaining(now),
        trust_level: match c.trust.get() {
            Level::None => "none",
            Level::Https => "https",
            Level::Usb => "usb",
        },
        connected,
        errors: c.agent.errors(),
    }
}
