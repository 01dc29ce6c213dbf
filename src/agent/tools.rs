//! Tool calls and their gates: `admit` (breaker → trust → rate), the
//! REPL's `tool()` and `execute()`, a backend's or TACP's call, the chain's
//! trust, and the records and UI lines of a call.

use super::*;

/// Where a tool call stands: an idle point of its own (a REPL `tool()`, a
/// TACP request), or round `n` of an `ask()`.
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
/// The text is put together twice — for the UI in a buffer of its own, and
/// straight into the ring's slot — so that no 255-byte buffer is on the
/// stack while the session compacts or loads underneath.
pub(crate) fn log_tool<H: Host>(h: &mut H, mode: Mode, name: &[u8], parts: &[&[u8]]) {
    show_tool(h, name, parts);
    let _ = h.with_state(|c, p| {
        if let Mode::AskRound(round) = mode {
            policy::before_tool_turn(c, p, round);
        }
        if c.session.add_loaded(Role::Tool, b"").is_ok() {
            if let Some(m) = c.session.newest_mut() {
                // Put together in the slot itself.
                m.text.fill(|buf| tool_turn(buf, name, parts));
            }
        }
    });
}

/// Shows the TOOL turn on the UI (its own frame: the buffer lives only
/// for the UI call).
// stack: see docs/STACK.md
#[inline(never)]
fn show_tool<H: Host>(h: &mut H, name: &[u8], parts: &[&[u8]]) {
    let mut line = [0u8; MSG_MAX_BYTES];
    let n = tool_turn(&mut line, name, parts);
    h.ui(Ui::Tool, line.get(..n).unwrap_or(&[]));
}

/// "<name>: <parts…>" cut to 255 bytes on a character boundary, with the
/// NUL rule applied: a name the backend sent (an unknown tool's is
/// echoed) may hold a NUL ("a\u0000b") or a cut sequence; the turn and the
/// UI show `?` for it. Returns the length.
fn tool_turn(line: &mut [u8], name: &[u8], parts: &[&[u8]]) -> usize {
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
    crate::text::sanitize_in_place(line, n)
}

/// Gates 1–3 for the tool in `slot` at `level`, then gate 4 (record). The
/// one admission of every tool call; an admitted call is counted
/// (`exec_count`) and becomes the last command.
pub fn admit<P: Port>(
    c: &mut crate::state::State<registry::Registry, Agent>,
    p: &mut P,
    slot: usize,
    level: Level,
) -> Result<(), Status> {
    let now = p.ticks_ms();
    let risk = c.registry.tool(&c.rate, slot).map_or(u8::MAX, |t| t.risk);
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
    c.agent.execs = c.agent.execs.saturating_add(1);
    let crate::state::State { agent, rate, .. } = c;
    agent.set_last_cmd(rate.name(slot));
    Ok(())
}

/// `execute(name, params)`, the vendor's: the tool passes the gates at the
/// current trust and is recorded — counted, the last command, a TOOL turn
/// "execute: NAME" — but does not run (the vendor's tools run from the IDE,
/// TACP EXEC). Returns its risk and `confirm` flag. A refusal counts an
/// error, as the vendor's does.
pub fn execute<H: Host>(h: &mut H, name: &[u8]) -> Result<(u8, bool), Status> {
    ready(h);
    nested(
        h,
        |c| c.trust.get(),
        |h| {
            let found = with_state_or_busy(h, |c, p| {
                let t = c.registry.find(&c.rate, name)?;
                let (slot, risk, confirm) = (t.slot, t.risk, t.confirm);
                let level = c.agent.chain.level();
                Some(
                    admit(c, p, slot, level)
                        .inspect_err(|_| Account::new().error(c))
                        .map(|()| (risk, confirm)),
                )
            })?;
            let (risk, confirm) = found.ok_or(Status::UnknownTool)??;
            h.ui_init();
            h.ui(Ui::LastCmd, name);
            with_state_or_busy(h, |c, p| {
                c.agent.set_state(State::Idle);
                if c.session.add_loaded(Role::Tool, b"").is_ok() {
                    if let Some(m) = c.session.newest_mut() {
                        m.text.fill(|buf| tool_turn(buf, b"execute", &[name]));
                    }
                }
                c.breaker.success();
                c.agent.set_last_result(&[b"dispatched"]);
                flush_if_dirty(c, p);
            })?;
            h.ui(Ui::LastResult, b"dispatched");
            Ok((risk, confirm))
        },
    )
}

/// A top-level `tool()` (the REPL): [`ready`], then
/// [`call_tool`] at its own idle point.
pub fn tool<H: Host>(
    h: &mut H,
    name: &[u8],
    origin: Origin,
    arg: Arg<'_>,
    out: &mut [u8],
    acct: &mut Account,
) -> Result<Value, Status> {
    ready(h);
    call_tool(h, name, origin, arg, out, acct, Mode::IdlePoint)
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
    let own = move |c: &crate::state::State<registry::Registry, Agent>| match origin {
        Origin::Repl => c.trust.get(),
        Origin::Usb => Level::Usb,
        Origin::Backend => c.trust.get().min(Level::Https),
    };
    let who = if origin == Origin::Repl {
        Who::Repl
    } else {
        Who::Other
    };
    nested(h, own, |h| {
        let r = run_tool_gated(h, name, who, arg, out, acct, mode);
        if mode == Mode::IdlePoint {
            let _ = h.with_state(flush_if_dirty);
        }
        r
    })
}

/// TACP EXEC (`docs/TACP.md`): [`call_tool`] from the USB host at its own
/// idle point, where `line` (the request's payload) is the last command,
/// shown on the UI once the gates admitted the call. The last result is
/// the dispatcher's to set (the answer it sends).
pub fn exec_tool<H: Host>(
    h: &mut H,
    line: &[u8],
    name: &[u8],
    arg: Arg<'_>,
    out: &mut [u8],
    acct: &mut Account,
) -> Result<Value, Status> {
    nested(
        h,
        |_| Level::Usb,
        |h| {
            let r = run_tool_gated(h, name, Who::Exec(line), arg, out, acct, Mode::IdlePoint);
            let _ = h.with_state(flush_if_dirty);
            r
        },
    )
}

/// Who calls a tool, for what differs between the doors.
#[derive(Clone, Copy)]
enum Who<'a> {
    /// The REPL: a host tool gets the caller's own argument object.
    Repl,
    /// A backend's request (or another door with nothing of its own).
    Other,
    /// TACP EXEC with its line.
    Exec(&'a [u8]),
}

/// Shows the last command (copied out of the core: the UI may call back in).
// stack: see docs/STACK.md
#[inline(never)]
fn show_last_cmd<H: Host>(h: &mut H) -> Result<(), Status> {
    let (buf, n) = with_state_or_busy(h, |c, _| {
        let mut buf = [0u8; LAST_CMD_MAX];
        crate::text::copy_prefix(&mut buf, c.agent.last_cmd());
        (buf, c.agent.last_cmd().len())
    })?;
    h.ui(Ui::LastCmd, buf.get(..n).unwrap_or(&[]));
    Ok(())
}

fn run_tool_gated<H: Host>(
    h: &mut H,
    name: &[u8],
    who: Who<'_>,
    arg: Arg<'_>,
    out: &mut [u8],
    acct: &mut Account,
    mode: Mode,
) -> Result<Value, Status> {
    let exec = matches!(who, Who::Exec(_));
    let (slot, how) = with_state_or_busy(h, |c, _| {
        let t = c.registry.find(&c.rate, name)?;
        Some((t.slot, t.how))
    })?
    .ok_or(Status::UnknownTool)?;
    if let Arg::Text(t) = arg {
        check_text(t)?;
    }
    builtin::check_arg(slot, how, arg)?;
    if h.aborted() {
        return Err(Status::Aborted);
    }
    with_state_or_busy(h, |c, p| {
        let level = c.agent.chain.level();
        admit(c, p, slot, level).inspect_err(|_| acct.error(c))?;
        if let Who::Exec(line) = who {
            c.agent.set_last_cmd(line);
        }
        c.agent.set_state(State::Executing);
        Ok(())
    })??;
    if exec {
        show_last_cmd(h)?;
    }
    let outcome = if how == How::Builtin {
        builtin::run(h, slot, arg, out)
    } else {
        // A REPL call's host tool gets the caller's own object.
        let arg = if matches!(who, Who::Repl) {
            Arg::Other
        } else {
            arg
        };
        match h.run_tool(slot as u8, arg, out) {
            ToolOutcome::Returned(n) => (ToolOutcome::Returned(n), Value::Host(n)),
            other => (other, Value::Host(0)),
        }
    };
    let _ = h.with_state(|c, _| {
        if c.agent.state() == State::Executing {
            c.agent.set_state(State::Idle);
        }
    });
    match outcome {
        (ToolOutcome::Returned(n), value) => {
            let text = out.get(..n).unwrap_or(&[]);
            with_state_or_busy(h, |c, _| {
                // A round of an ask() is reported with the ask() (its outcome
                // is the ask()'s); a call of its own now.
                if mode == Mode::IdlePoint {
                    c.breaker.success();
                }
                if !exec {
                    c.agent.set_last_result(&[b"tool ok"]);
                }
            })?;
            if !exec {
                h.ui(Ui::LastResult, b"tool ok");
            }
            log_tool(h, mode, name, &[text]);
            Ok(value)
        }
        (ToolOutcome::Raised(n), _) => {
            with_state_or_busy(h, |c, p| {
                if mode == Mode::IdlePoint {
                    acct.failure(c, p);
                } else {
                    acct.error(c);
                    acct.tool_failed = true;
                }
                if !exec {
                    c.agent.set_last_result(&[b"tool error"]);
                }
            })?;
            // TACP EXEC reports the failure with its own LAST_RESULT (the
            // vendor's EXEC sends no ERROR message).
            if !exec {
                h.ui(Ui::Error, b"Tool error");
                h.ui(Ui::LastResult, b"tool error");
            }
            let text = out.get(..n).unwrap_or(&[]);
            log_tool(h, mode, name, &[b"error: ", text]);
            acct.raised = n;
            Err(Status::ToolRaised)
        }
        (ToolOutcome::Abort, _) => Err(Status::Aborted),
    }
}
