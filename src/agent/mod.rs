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
//!   TACP (the USB host's EXEC) USB. A call made while a tool runs (the chain's depth > 0)
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
//! * No borrow of the [`crate::state::State`] is held across a host callback: the state is
//!   reached through [`Host::with_state`] for the length of one closure, so a
//!   tool that calls back into the agent finds it consistent.

mod ask;
mod body;
pub mod builtin;
pub mod config;
pub mod confirm;
pub mod host;
#[cfg(test)]
mod model_tests;
pub mod policy;
pub mod registry;
pub mod report;
pub mod state;
pub mod tacp;
mod tools;
pub mod wire;

pub use ask::*;
pub(crate) use body::*;
pub use host::{Account, Host, NoReply};
use host::{SCRATCH_LEN, nested, with_state_or_busy};
pub use state::*;
pub use tools::*;

use crate::message::{MSG_MAX_BYTES, Role};
use crate::port::Port;
use crate::safety::trust::Level;
use crate::text::floor_char_boundary;
use registry::How;

/// Registers a tool the host runs: a Python callable (`register_tool(name,
/// handler, risk, rate_per_min, description, confirm)`, [`How::Python`]) or a
/// C handler (`claw_tools_register`, [`How::Host`]). Returns its slot.
pub fn register_tool<P: Port>(
    c: &mut crate::state::State<registry::Registry, Agent>,
    p: &mut P,
    name: &[u8],
    spec: registry::Spec,
) -> Result<usize, Status> {
    check_tool_name(name)?;
    let now = p.ticks_ms();
    c.registry
        .add(&mut c.rate, name, spec, now)
        .map_err(|e| match e {
            registry::AddError::Risk => Status::Risk,
            registry::AddError::Full => Status::RegistryFull,
            registry::AddError::Taken => Status::BuiltinTool,
        })
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

/// Reads the settings and the session ring when they are not in RAM yet
/// (the first call after a soft reset): what a top-level call does first,
/// from its shallowest frame. Everything under it works on them in RAM
/// (`State::config_cached`, `Session::*_loaded`), so that no file load
/// sits under the frames of a tool round. A load that fails leaves the
/// defaults and an unloaded ring: the turns of that call are then not
/// recorded (the next call tries again).
// stack: see docs/STACK.md
#[inline(never)]
pub fn ready<H: Host>(h: &mut H) {
    let _ = h.with_state(|c, p| {
        let _ = c.config(p);
        let _ = c.session.ring(p);
    });
}

/// The idle point: one flash write for what a call changed. A failed flush
/// leaves the ring dirty for the next one; nothing is lost from RAM.
fn flush_if_dirty<P: Port>(c: &mut crate::state::State<registry::Registry, Agent>, p: &mut P) {
    if c.session.is_dirty() {
        let _ = c.session.flush(p);
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
            with_state_or_busy(h, |c, _| c.trust.set(Level::Https))?;
            let ok = h.connect(host, port, api_key);
            if ok {
                h.ui(Ui::Status, b"Online (HTTPS)");
                with_state_or_busy(h, |c, p| {
                    let _ = c
                        .session
                        .add(p, Role::System, b"Connected to TESAIoT backend");
                })?;
            } else {
                h.ui(Ui::Status, b"Connect failed");
                with_state_or_busy(h, |c, _| {
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
            with_state_or_busy(h, |c, p| {
                c.trust.set(Level::Usb);
                let _ = c.session.add(p, Role::System, b"Disconnected from backend");
            })
        },
    )
}

/// `session_clear()`: the ring and its file, and the chat panel.
pub fn session_clear<H: Host>(h: &mut H) -> Result<(), Status> {
    with_state_or_busy(h, |c, p| c.session.clear(p))?;
    h.ui(Ui::Clear, b"");
    Ok(())
}
