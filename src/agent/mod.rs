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
pub mod wire;

pub use host::{Account, Host, NoReply};
use host::{nested, with_state_or_busy};
pub use state::*;

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

/// Where `ask()` keeps its buffers: one block the caller allocates for the
/// call and frees after it (never static RAM, nothing kept between calls),
/// [`ask_work_size`] bytes: the reply area (`REPLY_MAX + 1`), then the
/// body area (the rest). What is never live at the same time shares them:
///
/// * building a request: the reply area holds the pending tool result,
///   the name of the tool it answers after it, then the context rendered
///   after both; the context's [`crate::context::Scratch`] is carved from
///   the body area while the context is rendered (the body comes after);
/// * writing the body: the body area, from the prompt and the reply area;
/// * the POST: the body is sent, the reply lands in the reply area;
/// * a tool request: its argument is decoded to the start of the body
///   area and its name to the body area's last [`NAME_ECHO_MAX`] bytes (the
///   reply is done with); the tool's result goes to the start of the reply
///   area, and the name is copied after it for the next request.
struct Work<'a> {
    /// The backend's reply; before a request the pending tool result, its
    /// tool's name and the rendered context.
    reply: &'a mut [u8],
    /// The request body; during a tool round the tool's argument and name;
    /// while the context is rendered its scratch.
    body: &'a mut [u8],
}

/// Bytes of a request body beyond its strings: the member names, quotes
/// and punctuation of `prompt`, `context`, `tool_result` (a `status` of 7
/// bytes at most) and the `tools` member's brackets (its entries are
/// counted one by one). A test checks the bound.
const BODY_OVERHEAD: usize = 128;

/// The work buffer of `ask()` for a prompt that escapes to at most
/// [`PROMPT_MAX`] bytes in JSON (every prompt of plain text): with one open
/// file of the board's littlefs (a 2 KiB cache and its object) the call
/// stays within 12 KiB of GC heap (issue 22; `docs/PERFORMANCE.md`).
pub const ASK_WORK: usize = 9472;

/// The body area of [`ASK_WORK`].
const BODY_AREA: usize = ASK_WORK - (REPLY_MAX + 1);
// The body area holds a prompt of PROMPT_MAX escaped bytes with a whole
// tool result and a short name; a tool request's argument (at most a reply)
// and its name; the context's scratch.
const _: () = assert!(BODY_AREA >= BODY_OVERHEAD + PROMPT_MAX + TOOL_RESULT_MAX + 2 * 31);
const _: () = assert!(BODY_AREA >= REPLY_MAX + NAME_ECHO_MAX);
const _: () = assert!(BODY_AREA >= SCRATCH_LEN);

/// Bytes a [`crate::context::Scratch`] takes in a byte area, aligned.
const SCRATCH_LEN: usize = crate::ffi::agent::SCRATCH_LEN;

/// Bytes of work buffer `ask(prompt)` needs: [`ASK_WORK`], plus what the
/// prompt's escaped form takes beyond [`PROMPT_MAX`] (quotes, backslashes,
/// control characters), so that every prompt leaves the body the same room.
pub fn ask_work_size(prompt: &[u8]) -> usize {
    ASK_WORK + wire::escaped_len(prompt).saturating_sub(PROMPT_MAX)
}

/// Bytes the opt-in `"tools"` member gives one entry `{"name":"…","risk":N}`
/// beyond the escaped name (a risk is one digit, 0..=2), and a comma
/// before every entry but the first.
const TOOL_ENTRY: usize = 20;

/// The body area during a tool round: (the argument's room, the name's:
/// the last [`NAME_ECHO_MAX`] bytes).
fn arg_and_name(body: &mut [u8]) -> (&mut [u8], &mut [u8]) {
    let at = body.len().saturating_sub(NAME_ECHO_MAX);
    body.split_at_mut_checked(at).unwrap_or((&mut [], &mut []))
}

fn split_work(work: &mut [u8]) -> Option<Work<'_>> {
    let (reply, body) = work.split_at_mut_checked(REPLY_MAX + 1)?;
    (body.len() >= BODY_AREA).then_some(Work { reply, body })
}

/// Where `ask()`'s answer is in the work buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Reply {
    /// Offset of the text.
    pub offset: usize,
    /// Its length.
    pub len: usize,
}

/// What `ask(prompt)` can tell before any buffer exists: the prompt's
/// checks, a command, no connection, the call's request budget. `Ok(n)`:
/// the call needs a work buffer of `n` bytes. Changes nothing (an offline
/// or refused call never makes its caller allocate).
pub fn ask_check<H: Host>(h: &mut H, prompt: &[u8]) -> Result<usize, Status> {
    check_prompt(prompt)?;
    if policy::command(prompt).is_none() {
        if !h.connected() {
            with_state_or_busy(h, |c, _| Account::new().error(c))?;
            return Err(Status::NotConnected);
        }
        let left = with_state_or_busy(h, |c, _| {
            c.agent.chain.requests_left() || c.agent.chain.depth() == 0
        })?;
        if !left {
            with_state_or_busy(h, |c, _| Account::new().error(c))?;
            return Err(Status::RequestLimit);
        }
    }
    Ok(ask_work_size(prompt))
}

/// `ask(prompt)`: see the module docs; the answer is left in `work`
/// ([`ask_work_size`] bytes, [`Work`] says how it is shared; the context's
/// scratch is a part of it, so that its 600-odd bytes are not on the
/// stack). Out of line: it tail-calls the exchange, so `claw_ask`'s frame
/// and its own are not both under it.
#[inline(never)]
pub fn ask<H: Host>(h: &mut H, prompt: &[u8], work: &mut [u8]) -> Result<Reply, Status> {
    check_prompt(prompt)?;
    if work.len() < ask_work_size(prompt) {
        return Err(Status::WorkTooSmall);
    }
    ready(h);
    match policy::command(prompt) {
        Some(cmd) => ask_command(h, cmd, work),
        None => ask_ready(h, prompt, work),
    }
}

/// [`ask`] of a command: its own frame, not the exchange's.
#[inline(never)]
fn ask_command<H: Host>(h: &mut H, cmd: policy::Command, work: &mut [u8]) -> Result<Reply, Status> {
    let Some(w) = split_work(work) else {
        return Err(Status::WorkTooSmall);
    };
    nested(
        h,
        |c| c.trust.get(),
        |h| policy::run_command(h, cmd, w.reply, w.body),
    )
    .map(|n| Reply { offset: 0, len: n })
}

/// [`ask`] after [`ready`], for an exchange: its frames are not on the
/// stack while the files load.
#[inline(never)]
fn ask_ready<H: Host>(h: &mut H, prompt: &[u8], work: &mut [u8]) -> Result<Reply, Status> {
    let Some(mut w) = split_work(work) else {
        return Err(Status::WorkTooSmall);
    };
    nested(h, |c| c.trust.get(), |h| ask_chained(h, prompt, &mut w))
}

fn ask_chained<H: Host>(h: &mut H, prompt: &[u8], w: &mut Work<'_>) -> Result<Reply, Status> {
    let mut acct = Account::new();
    if !h.connected() {
        with_state_or_busy(h, |c, _| acct.error(c))?;
        return Err(Status::NotConnected);
    }
    // Refused before the breaker admits anything, so that no half-open
    // trial is left unreported.
    let refused = with_state_or_busy(h, |c, p| {
        if !c.agent.chain.requests_left() {
            acct.error(c);
            return Some(Status::RequestLimit);
        }
        if !c.breaker.allow(p.ticks_ms()) {
            acct.error(c);
            return Some(Status::AskBreakerOpen);
        }
        c.agent.set_state(State::Thinking);
        None
    })?;
    if let Some(s) = refused {
        return Err(s);
    }
    let r = exchange_rounds(h, prompt, w, &mut acct);
    let _ = h.with_state(|c, p| {
        if r.is_err() && c.agent.state() == State::Thinking {
            c.agent.set_state(State::Idle);
        }
        flush_if_dirty(c, p);
    });
    r
}

/// A failed request of this `ask()` (at most one error and one breaker
/// failure for the whole call).
#[inline(never)]
fn request_failed<H: Host>(
    h: &mut H,
    acct: &mut Account,
    ui: &[u8],
    last: &[u8],
) -> Result<(), Status> {
    with_state_or_busy(h, |c, p| {
        c.agent.set_state(State::Error);
        c.agent.last_request_failed = true;
        if !acct.failed {
            acct.failure(c, p);
        }
        c.agent.set_last_result(&[last]);
    })?;
    h.ui(Ui::Error, ui);
    h.ui(Ui::LastResult, last);
    Ok(())
}

fn exchange_rounds<H: Host>(
    h: &mut H,
    prompt: &[u8],
    w: &mut Work<'_>,
    acct: &mut Account,
) -> Result<Reply, Status> {
    // Lifecycle and compaction before the USER turn (maybe a summary
    // request, when configured).
    policy::prepare(h, w.reply, w.body, acct)?;
    if acct.failed {
        // The summary request failed: the breaker heard it. The exchange
        // goes ahead only if it still admits one (no second report).
        let allowed = with_state_or_busy(h, |c, p| c.breaker.allow(p.ticks_ms()))?;
        if !allowed {
            return Err(Status::RequestFailed);
        }
    }
    h.ui(Ui::Status, b"Thinking...");
    h.ui(Ui::LastCmd, prompt);
    h.ui(Ui::ChatUser, prompt);
    with_state_or_busy(h, |c, _| {
        let _ = c.session.add_loaded(Role::User, prompt);
    })?;

    // (name length, status: an index of TOOL_STATUS, result length): six
    // bytes on the deepest frame of a tool round.
    let mut pending: Option<Pending> = None;
    let mut round = 0u8;
    let n = loop {
        let n = match post_request(h, prompt, w, pending) {
            Ok(n) => n,
            Err(Status::RequestLimit) => {
                with_state_or_busy(h, |c, _| acct.error(c))?;
                return Err(Status::RequestLimit);
            }
            Err(Status::RequestFailed) => {
                request_failed(h, acct, b"Backend error", b"error")?;
                return Err(Status::RequestFailed);
            }
            Err(Status::ReplyTooLong) => {
                request_failed(h, acct, b"Backend error", b"reply too long")?;
                return Err(Status::ReplyTooLong);
            }
            Err(e) => return Err(e),
        };
        if round == 0 {
            // An answered first request ends a half-open trial, so that the
            // tools it asks for pass gate 1; the ask()'s outcome is reported
            // when it ends.
            with_state_or_busy(h, Account::end_trial)?;
        }
        let Some((name_len, arg_len)) = decode_call(w, n) else {
            break n;
        };
        if round == TOOL_ROUNDS_MAX {
            request_failed(h, acct, b"Tool round limit", b"tool round limit")?;
            return Err(Status::RoundLimit);
        }
        round += 1;
        let (args, names) = arg_and_name(w.body);
        let name = names.get(..name_len).unwrap_or(&[]);
        let arg = match arg_len {
            Some(len) => Arg::Text(args.get(..len).unwrap_or(&[])),
            None => Arg::None,
        };
        let result = w.reply.get_mut(..TOOL_RESULT_MAX).unwrap_or(&mut []);
        let (status, result_len) = backend_tool(h, round, name, arg, result, acct)?;
        // The name after the result, for the next request.
        let at = w.reply.get_mut(result_len..).unwrap_or(&mut []);
        crate::text::copy_prefix(at, name);
        pending = Some((name_len as u16, status, result_len as u16));
        with_state_or_busy(h, |c, _| c.agent.set_state(State::Thinking))?;
    };

    answer(h, w, n, acct)
}

/// Whether the reply `w.reply[..n]` is a tool request: its argument
/// decoded to the start of `w.body`, its name to the body's last
/// [`NAME_ECHO_MAX`] bytes (free until the next request is built). Returns
/// (name length, argument length). Its own frame: the parser's state is
/// not on the stack while the tool runs.
#[inline(never)]
fn decode_call(w: &mut Work<'_>, n: usize) -> Option<(usize, Option<usize>)> {
    let call = wire::tool_call(w.reply.get(..n).unwrap_or(&[]))?;
    let (args, names) = arg_and_name(w.body);
    // Longer than the buffer: echo what fits (it is no tool of ours), cut
    // on a character boundary.
    let name_len = {
        let mut b = wire::Capped::new(names);
        let _ = wire::unescape(call.name, &mut b);
        b.len
    };
    let arg_len = match call.arg {
        Some(a) => {
            let mut b = wire::Buf::new(args);
            wire::unescape(a, &mut b)
        }
        None => None,
    };
    Some((name_len, arg_len))
}

/// The answer `w.reply[..n]`: the ask()'s one report, the ASSISTANT turn,
/// flush at the idle point, the UI.
#[inline(never)]
fn answer<H: Host>(
    h: &mut H,
    w: &mut Work<'_>,
    n: usize,
    acct: &mut Account,
) -> Result<Reply, Status> {
    let text = w.reply.get(..n).unwrap_or(&[]);
    let mut num = [0u8; 10];
    let digits = builtin::decimal(n as u32, &mut num);
    with_state_or_busy(h, |c, p| {
        // A failure when one of its tools raised (or an earlier request of
        // it failed), otherwise a success.
        if acct.tool_failed {
            acct.failure(c, p);
        } else if !acct.failed {
            c.breaker.success();
        }
        c.agent.set_state(State::Idle);
        c.agent.set_last_result(&[b"ok (", digits, b" bytes)"]);
        let _ = c.session.add_loaded(Role::Assistant, text);
        flush_if_dirty(c, p);
    })?;
    show_last_result(h)?;
    h.ui(Ui::Status, b"Online (HTTPS)");
    h.ui(Ui::ChatAssistant, text);
    Ok(Reply { offset: 0, len: n })
}

/// Shows the last result (copied out of the core: the UI may call back in).
#[inline(never)]
fn show_last_result<H: Host>(h: &mut H) -> Result<(), Status> {
    let (buf, n) = with_state_or_busy(h, |c, _| {
        let mut buf = [0u8; LAST_RESULT_MAX];
        crate::text::copy_prefix(&mut buf, c.agent.last_result());
        (buf, c.agent.last_result().len())
    })?;
    h.ui(Ui::LastResult, buf.get(..n).unwrap_or(&[]));
    Ok(())
}

/// A tool request of the backend: gated at HTTPS (never above the chain),
/// reported back as (status, result text in `result`). Only an abort
/// escapes as an error.
fn backend_tool<H: Host>(
    h: &mut H,
    round: u8,
    name: &[u8],
    arg: Arg<'_>,
    result: &mut [u8],
    acct: &mut Account,
) -> Result<(u8, usize), Status> {
    let mode = Mode::AskRound(round);
    if let Some(held) = confirm::hold(h, mode, name, arg, result)? {
        return Ok((REFUSED, held));
    }
    match call_tool(h, name, Origin::Backend, arg, result, acct, mode) {
        Ok(Value::Text(n) | Value::Host(n) | Value::Arg(n)) => Ok((OK, n)),
        Ok(v) => Ok((OK, value_text(v, result))),
        Err(Status::Aborted) => Err(Status::Aborted),
        Err(Status::ToolRaised) => Ok((ERROR, acct.raised)),
        Err(Status::UnknownTool) => {
            Ok((UNKNOWN, note(h, mode, name, b"unknown tool", b"", result)))
        }
        Err(s @ (Status::BreakerOpen | Status::TrustRefused | Status::RateLimited)) => Ok((
            REFUSED,
            note(h, mode, name, b"refused: ", s.text().as_bytes(), result),
        )),
        Err(s @ (Status::HasNul | Status::NotUtf8)) => {
            Ok((ERROR, arg_note(h, mode, name, s, result)))
        }
        Err(s) => Ok((
            ERROR,
            note(h, mode, name, b"error: ", s.text().as_bytes(), result),
        )),
    }
}

/// A tool round's outcome for the next request: (name length, status —
/// an index of [`TOOL_STATUS`] —, result length).
type Pending = (u16, u8, u16);

/// The `"status"` of a tool result (`docs/BACKEND.md`).
const TOOL_STATUS: [&str; 4] = ["ok", "refused", "error", "unknown"];
const OK: u8 = 0;
const REFUSED: u8 = 1;
const ERROR: u8 = 2;
const UNKNOWN: u8 = 3;

/// A tool's value other than text, as the text the backend hears.
#[inline(never)]
fn value_text(v: Value, result: &mut [u8]) -> usize {
    let mut buf = [0u8; 10];
    let text: &[u8] = match v {
        Value::Int(i) => builtin::decimal(i, &mut buf),
        Value::Bool(true) => b"True",
        Value::Bool(false) => b"False",
        _ => b"",
    };
    let n = floor_char_boundary(text, result.len());
    crate::text::copy_prefix(result, text);
    n
}

/// [`note`] for an argument refused: "arg must not contain NUL".
#[inline(never)]
fn arg_note<H: Host>(h: &mut H, mode: Mode, name: &[u8], s: Status, result: &mut [u8]) -> usize {
    let mut msg = [0u8; 32];
    let mut b = wire::Buf::new(&mut msg);
    for p in [&b"arg "[..], s.text().as_bytes()] {
        let _ = wire::Sink::put(&mut b, p);
    }
    let n = b.len;
    let text = msg.get(..n).unwrap_or(&[]);
    note(h, mode, name, b"error: ", text, result)
}

/// A TOOL turn for a request that did not run, and its text as the result.
#[inline(never)]
pub(crate) fn note<H: Host>(
    h: &mut H,
    mode: Mode,
    name: &[u8],
    what: &[u8],
    text: &[u8],
    result: &mut [u8],
) -> usize {
    log_tool(h, mode, name, &[what, text]);
    // The backend hears the reason alone (the status says what happened).
    let reason = if text.is_empty() { what } else { text };
    let n = floor_char_boundary(reason, result.len());
    crate::text::copy_prefix(result, reason);
    n
}

/// What a request body holds besides the context, each part cut only when
/// it cannot fit (in this order: the prompt always fits, [`ask_work_size`]):
/// the pending tool's name and result text, the opt-in tools (the first
/// that fit), then the room left for the escaped context.
#[derive(Clone, Copy)]
struct Plan {
    /// Bytes of the pending tool's name sent.
    name: usize,
    /// Bytes of the pending result sent.
    result: usize,
    /// Tools the `"tools"` member lists.
    tools: usize,
    /// Room left for the context, escaped.
    room: usize,
}

/// The [`Plan`] of the next body, over the pending result `reply[..rl]`
/// and its tool's name after it.
#[inline(never)]
fn plan_body(
    c: &mut crate::state::State<registry::Registry, Agent>,
    prompt: &[u8],
    reply: &[u8],
    body_len: usize,
    pending: Option<Pending>,
) -> Plan {
    let mut room = body_len.saturating_sub(BODY_OVERHEAD + wire::escaped_len(prompt));
    let (mut name, mut result) = (0, 0);
    if let Some((nl, _, rl)) = pending {
        let rl = usize::from(rl);
        let (take, esc) = wire::fit(reply.get(rl..rl + usize::from(nl)).unwrap_or(&[]), room);
        name = take;
        room -= esc;
        let (take, esc) = wire::fit(reply.get(..rl).unwrap_or(&[]), room);
        result = take;
        room -= esc;
    }
    let mut tools = 0;
    if c.config_cached().send_tools {
        for t in c.registry.iter(&c.rate) {
            let entry = TOOL_ENTRY + wire::escaped_len(t.name) + usize::from(tools > 0);
            if entry > room {
                break;
            }
            room -= entry;
            tools += 1;
        }
    }
    Plan {
        name,
        result,
        tools,
        room,
    }
}

/// The context bytes the next request may carry, raw and escaped: the
/// configured budget, and the body's room (a sixteenth of it left for the
/// escapes of the context rendered first; [`post_request`] renders it again
/// shorter when they take more).
#[inline(never)]
fn context_room(
    c: &mut crate::state::State<registry::Registry, Agent>,
    prompt: &[u8],
    w: &Work<'_>,
    pending: Option<Pending>,
) -> (usize, usize) {
    let budget = usize::from(c.config_cached().context_budget).min(CONTEXT_MAX);
    let room = plan_body(c, prompt, w.reply, w.body.len(), pending).room;
    (budget.min(room - room / 16), room)
}

/// Where the pending tool result and its name end in the reply area (the
/// context is rendered after them).
fn pending_len(pending: Option<Pending>) -> usize {
    pending.map_or(0, |(nl, _, rl)| usize::from(nl) + usize::from(rl))
}

/// The request body into `w.body` as [`plan_body`] plans it: the prompt,
/// the context `w.reply[pend..pend + ctx_len]` (its oldest part dropped
/// when control characters make it too long escaped), the pending tool
/// result, the tools when configured. Returns (body length, context bytes
/// sent).
#[inline(never)]
fn write_body(
    c: &mut crate::state::State<registry::Registry, Agent>,
    prompt: &[u8],
    w: &mut Work<'_>,
    pending: Option<Pending>,
    ctx_len: usize,
) -> Result<(usize, usize), Status> {
    let plan = plan_body(c, prompt, w.reply, w.body.len(), pending);
    let send_tools = c.config_cached().send_tools;
    let pend = pending_len(pending);
    let ctx_all = w.reply.get(pend..pend + ctx_len).unwrap_or(&[]);
    let tool_result = pending.map(|(_, status, rl)| {
        let rl = usize::from(rl);
        wire::ToolResult {
            name: wire::as_str(w.reply.get(rl..rl + plan.name).unwrap_or(&[])),
            status: TOOL_STATUS
                .get(usize::from(status))
                .copied()
                .unwrap_or("error"),
            result: wire::as_str(w.reply.get(..plan.result).unwrap_or(&[])),
        }
    });
    // When control characters make the context too long escaped, its
    // oldest part is dropped.
    let room = plan.room;
    let mut start = 0usize;
    let mut esc = wire::escaped_len(ctx_all);
    while esc > room && start < ctx_all.len() {
        let b = ctx_all.get(start).copied().unwrap_or(0);
        esc -= wire::escaped_len(&[b]);
        start += 1;
        while ctx_all.get(start).is_some_and(|b| b & 0xC0 == 0x80) {
            esc -= 1;
            start += 1;
        }
    }
    let ctx = ctx_all.get(start..).unwrap_or(&[]);
    let req = wire::Request {
        prompt: wire::as_str(prompt),
        context: wire::as_str(ctx),
        tool_result,
        tools: send_tools.then_some(wire::Tools(&c.registry, &c.rate, plan.tools)),
    };
    let n = wire::write(&req, w.body).ok_or(Status::WorkTooSmall)?;
    Ok((n, ctx.len()))
}

/// Builds one request (the context rendered into the reply area after the
/// pending tool result, then the body), counts it into the chain, POSTs
/// it, accounts the exchange. Returns the reply length. `RequestFailed`
/// for any failure of the request itself.
#[inline(never)]
fn post_request<H: Host>(
    h: &mut H,
    prompt: &[u8],
    w: &mut Work<'_>,
    pending: Option<Pending>,
) -> Result<usize, Status> {
    // The context, rendered into the reply area (the deep part: the ring
    // and the store are read), in a scratch carved from the body area ...
    let ctx_all = with_state_or_busy(h, |c, p| {
        if !c.agent.chain.take_request() {
            return Err(Status::RequestLimit);
        }
        let (mut cap, room) = context_room(c, prompt, w, pending);
        let area = w.reply.get_mut(pending_len(pending)..).unwrap_or(&mut []);
        let mut n = 0;
        // Once more, shorter, when its escapes take more than the room
        // left for them (whatever still does not fit: write_body).
        for _ in 0..2 {
            let out_len = (cap + 1).min(area.len());
            let (_, scratch) =
                crate::ffi::agent::carve_scratch(w.body).ok_or(Status::WorkTooSmall)?;
            let out = area.get_mut(..out_len).unwrap_or(&mut []);
            n = crate::context::build_loaded(p, &c.session, out, scratch);
            let esc = wire::escaped_len(out.get(..n).unwrap_or(&[]));
            if esc <= room {
                break;
            }
            cap = n.saturating_sub(esc - room);
        }
        Ok(n)
    })??;
    // ... then the body, from a frame of its own.
    let built = with_state_or_busy(h, |c, _| write_body(c, prompt, w, pending, ctx_all))??;
    let (body_len, ctx_len) = built;
    if h.aborted() {
        return Err(Status::Aborted);
    }
    let body = w.body.get(..body_len).unwrap_or(&[]);
    // The reply area holds REPLY_MAX + 1 bytes: a transport that ends the
    // text with a NUL has room for it.
    let got = h.post(body, w.reply);
    let usable = match got {
        Ok(n) if n > REPLY_MAX => Err(Status::ReplyTooLong),
        Ok(n) if check_text(w.reply.get(..n).unwrap_or(&[])).is_ok() => Ok(n),
        Err(NoReply::TooLong) => Err(Status::ReplyTooLong),
        _ => Err(Status::RequestFailed),
    };
    match usable {
        Ok(n) => {
            let (tin, tout) = h.tokens();
            let now_s = h.time_s();
            with_state_or_busy(h, |c, p| {
                policy::account(c, p, body_len, n, ctx_len, tin, tout, now_s);
            })?;
            Ok(n)
        }
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod work_tests {
    use super::*;
    extern crate std;
    use crate::safety::rate::RateTable;

    #[test]
    fn the_body_overhead_and_the_tool_entries_are_counted_exactly_or_more() {
        let mut reg = registry::Registry::new();
        let mut rate = RateTable::new();
        reg.reset(&mut rate, 0);
        let spec = registry::Spec {
            how: How::Python,
            risk: 2,
            confirm: false,
            per_min: 0,
        };
        for name in ["plain", "q\"uote", "back\\slash", "ctl\u{1}x", "ไทย"] {
            reg.add(&mut rate, name.as_bytes(), spec, 0).unwrap();
        }
        let tools = reg.iter(&rate).count();
        let mut buf = [0u8; 2048];
        let empty = |n: usize| wire::Request {
            prompt: "",
            context: "",
            tool_result: Some(wire::ToolResult {
                name: "",
                status: "unknown",
                result: "",
            }),
            tools: Some(wire::Tools(&reg, &rate, n)),
        };
        let bare = wire::write(&empty(0), &mut buf).unwrap();
        assert!(bare <= BODY_OVERHEAD, "{bare}");
        let all = wire::write(&empty(tools), &mut buf).unwrap();
        let counted: usize = reg
            .iter(&rate)
            .enumerate()
            .map(|(i, t)| TOOL_ENTRY + wire::escaped_len(t.name) + usize::from(i > 0))
            .sum();
        assert_eq!(all - bare, counted);
    }

    #[test]
    fn fit_cuts_escaped_text_on_a_character() {
        assert_eq!(wire::fit(b"abc", 3), (3, 3));
        assert_eq!(wire::fit(b"abc", 2), (2, 2));
        assert_eq!(wire::fit(b"a\"b", 2), (1, 1));
        assert_eq!(wire::fit(b"a\"b", 3), (2, 3));
        assert_eq!(wire::fit(b"\x01x", 5), (0, 0));
        assert_eq!(wire::fit(b"\x01x", 7), (2, 7));
        let thai = "ไทย".as_bytes();
        assert_eq!(wire::fit(thai, 8), (6, 6));
        assert_eq!(wire::fit(thai, 9), (9, 9));
        assert_eq!(wire::fit(b"", 0), (0, 0));
    }
}
