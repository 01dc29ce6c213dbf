//! `confirm`: a tool whose registry entry says `confirm` does not run on
//! the backend's model's word alone.
//!
//! When the model asks for one (a tool round of the outermost `ask()`),
//! and the tool's risk is within the trust the request runs at, the call
//! is held: the tool does not run, the model hears `"refused"` with
//! [`WAITING`], the session gets the TOOL turn "NAME: waiting for
//! confirmation", and the panel a `CLAW_UI_PROGRESS` "Confirm NAME?". The
//! `ask()` ends as usual with the model's answer (which, told the tool
//! waits, typically asks the person to confirm).
//!
//! The person at the device then answers with a REPL call, within
//! [`TIMEOUT_MS`]: `bentoclaw.confirm()` runs the held call — through the
//! gates, at the trust the model's request had (never above HTTPS, never
//! above the current level), its TOOL turn logged — and returns its result;
//! `bentoclaw.confirm(False)` refuses it. After the timeout the call is
//! refused: the first call that notices logs "NAME: refused: not confirmed",
//! and `confirm()` raises [`Status::ConfirmExpired`].
//!
//! What is not held: a call the person at the device makes (`tool()` at the
//! REPL, `execute()`), the USB host's TACP EXEC (the IDE confirms with its
//! user), a tool the trust gate refuses anyway (every confirm tool of the
//! vendor's registry is risk 2, which a model's request never gets), and a
//! request made while calls are nested through tools (no REPL to answer
//! from: refused at once with [`NESTED`]). One call is held at a time; a
//! request for another while one waits is refused with [`BUSY`]. The held
//! argument is the host's to keep (`claw_port_confirm_hold`): the core
//! keeps the slot and the deadline.

use super::registry::{How, Registry};
use super::{
    Account, Agent, Arg, Host, Mode, Origin, Status, Ui, Value, log_tool, note, with_state_or_busy,
};
use crate::port::Port;
use crate::safety::trust::Level;
use crate::state::State;

/// How long a held call waits for the person at the device, in ms
/// (`CLAW_CONFIRM_TIMEOUT_MS`).
pub const TIMEOUT_MS: u32 = 60_000;
/// What the model hears about a held call.
pub const WAITING: &[u8] = b"waiting for the person at the device to confirm (60 s)";
/// What it hears when another call is held already.
pub const BUSY: &[u8] = b"another tool waits for confirmation";
/// What it hears when the request comes from inside a tool.
pub const NESTED: &[u8] = b"needs confirmation at the device (not from inside a tool)";

/// A held call: its registry slot and the tick its wait ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pending {
    /// The slot + 1; 0: nothing held (all zeros, so the state stays in
    /// `.bss`).
    slot: u8,
    deadline: u32,
}

impl Pending {
    /// Nothing held.
    pub const fn none() -> Self {
        Self {
            slot: 0,
            deadline: 0,
        }
    }

    fn held(slot: u8, deadline: u32) -> Self {
        Self {
            slot: slot.saturating_add(1),
            deadline,
        }
    }

    /// The held call's slot, if one is held.
    pub fn slot(&self) -> Option<u8> {
        self.slot.checked_sub(1)
    }

    /// Whether the wait is over at `now` (wrapping ticks).
    fn expired(&self, now: u32) -> bool {
        (now.wrapping_sub(self.deadline) as i32) >= 0
    }
}

/// Drops a held call whose wait is over, with its TOOL turn "NAME: refused:
/// not confirmed". True when one was dropped.
pub fn expire<H: Host>(h: &mut H) -> Result<bool, Status> {
    let gone = with_state_or_busy(h, |c, p| {
        let slot = c.agent.pending.slot()?;
        if !c.agent.pending.expired(p.ticks_ms()) {
            return None;
        }
        c.agent.pending = Pending::none();
        Some(name_of(c, slot))
    })?;
    match gone {
        Some((name, n)) => {
            refused(h, name.get(..n).unwrap_or(&[]), false);
            Ok(true)
        }
        None => Ok(false),
    }
}

fn name_of(c: &State<Registry, Agent>, slot: u8) -> ([u8; 31], usize) {
    let mut name = [0u8; 31];
    let src = c.rate.name(usize::from(slot));
    let n = src.len().min(name.len());
    crate::text::copy_prefix(&mut name, src);
    (name, n)
}

/// The TOOL turn of a call refused for want of a confirmation; flushed at
/// once when `flush` (an idle point of its own).
fn refused<H: Host>(h: &mut H, name: &[u8], flush: bool) {
    log_tool(h, Mode::IdlePoint, name, &[b"refused: not confirmed"]);
    if flush {
        let _ = h.with_state(|c, p| {
            if c.session.is_dirty() {
                let _ = c.session.flush(p);
            }
        });
    }
}

fn refused_flush<H: Host>(h: &mut H) {
    let _ = h.with_state(|c, p| {
        if c.session.is_dirty() {
            let _ = c.session.flush(p);
        }
    });
}

/// A tool round's request for `name`: `Some(n)` when it is held (or
/// refused for a confirmation it cannot get), its text in `result[..n]`;
/// `None` when it goes ahead as any other call.
pub(crate) fn hold<H: Host>(
    h: &mut H,
    mode: Mode,
    name: &[u8],
    arg: Arg<'_>,
    result: &mut [u8],
) -> Result<Option<usize>, Status> {
    // A call held earlier whose wait is over goes first.
    let _ = expire(h)?;
    let found = with_state_or_busy(h, |c, _| {
        let t = c.registry.find(&c.rate, name)?;
        let level = c.agent.chain.level().min(Level::Https);
        // The trust gate refuses it anyway: no confirmation is asked for.
        (t.confirm && level.allows(t.risk)).then_some((
            t.slot as u8,
            c.agent.chain.depth(),
            c.agent.pending.slot().is_some(),
        ))
    })?;
    let Some((slot, depth, busy)) = found else {
        return Ok(None);
    };
    // The outermost ask() is depth 1 here (its own frame).
    let why = if depth > 1 {
        Some(NESTED)
    } else if busy {
        Some(BUSY)
    } else if !h.hold(slot, arg) {
        Some(NESTED)
    } else {
        None
    };
    if let Some(why) = why {
        return Ok(Some(note(h, mode, name, b"refused: ", why, result)));
    }
    with_state_or_busy(h, |c, p| {
        c.agent.pending = Pending::held(slot, p.ticks_ms().wrapping_add(TIMEOUT_MS));
    })?;
    show(h, name);
    log_tool(h, mode, name, &[b"waiting for confirmation"]);
    let n = crate::text::floor_char_boundary(WAITING, result.len());
    crate::text::copy_prefix(result, WAITING);
    Ok(Some(n))
}

/// "Confirm NAME?" on the panel (its own frame: the buffer only lives for
/// the UI call).
// stack: see docs/STACK.md
#[inline(never)]
fn show<H: Host>(h: &mut H, name: &[u8]) {
    let mut msg = [0u8; 48];
    let mut b = super::wire::Buf::new(&mut msg);
    for part in [&b"Confirm "[..], name, b"?"] {
        let _ = super::wire::Sink::put(&mut b, part);
    }
    let n = b.len;
    h.ui(Ui::Progress, msg.get(..n).unwrap_or(&[]));
}

/// `confirm(yes)`, the person at the device's answer: with `yes` the held
/// call runs with `arg` (the host kept it) through the gates, as the
/// model's request would have, and its result is returned; without, it is
/// refused (`Ok(None)`). [`Status::NothingToConfirm`] when no call is
/// held, [`Status::ConfirmExpired`] when its wait is over (it is refused).
pub fn confirm<H: Host>(
    h: &mut H,
    yes: bool,
    arg: Arg<'_>,
    out: &mut [u8],
    acct: &mut Account,
) -> Result<Option<Value>, Status> {
    super::ready(h);
    if expire(h)? {
        refused_flush(h);
        return Err(Status::ConfirmExpired);
    }
    let held = with_state_or_busy(h, |c, _| {
        let slot = c.agent.pending.slot()?;
        c.agent.pending = Pending::none();
        Some(name_of(c, slot))
    })?;
    let Some((name, n)) = held else {
        return Err(Status::NothingToConfirm);
    };
    let name = name.get(..n).unwrap_or(&[]);
    if !yes {
        refused(h, name, true);
        return Ok(None);
    }
    // The tool may have gone meanwhile (a soft reset drops Python tools
    // and the hold with them; a re-registration replaces it in place).
    let gone = with_state_or_busy(h, |c, _| {
        c.registry
            .find(&c.rate, name)
            .is_none_or(|t| t.how == How::Absent)
    })?;
    if gone {
        return Err(Status::UnknownTool);
    }
    super::call_tool(h, name, Origin::Backend, arg, out, acct, Mode::IdlePoint).map(Some)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deadlines_wrap() {
        let p = Pending::held(3, 5);
        assert!(!p.expired(u32::MAX - 10), "before, across the wrap");
        assert!(p.expired(5) && p.expired(6));
        assert_eq!(Pending::none().slot(), None);
        assert_eq!(p.slot(), Some(3));
    }
}
