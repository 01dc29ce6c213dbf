//! TACP v2, the claw sub-protocol of the BENTO AI IDE (`docs/TACP.md`):
//! one request frame's sub-command and payload in, its answers out through
//! [`Host::tacp_respond`] (framed by the vendor's `tacp.c`, or by
//! [`frame`] where that is absent).
//!
//! ```text
//! 0x00 READY       (device → IDE)   {"fw":…,"board":…,"tools":N,"proto":2}
//! 0x01 EXEC        "tool [args]"    the tool's result text | error
//! 0x02 ASK         prompt           the reply (offline: the prompt)
//! 0x03 STATUS      —                {"state","exec","err","tools","session","connected"}
//! 0x04 TOOLS       —                [{"name","desc","risk","confirm"},…]
//! 0x05 HISTORY     —                the context text
//! 0x06 REMEMBER    key=value        ok | full
//! 0x07 CLEAR       —                ok
//! 0x08 CONNECT     host:port:key    host:port
//! 0x09 DISCONNECT  —                ok
//! 0x40 SAFETY      —                safety() as JSON      (extension)
//! 0x41 RECALL      key              the value             (extension)
//! 0xFF ERROR       (device → IDE)   the reason
//! ```
//!
//! The sub-commands, payloads, answers and error texts are the vendor's
//! (`../shared/spec/VENDOR-SDK.md` §3.3); what the agent does underneath is
//! the agent's own (the same gates, accounting and session turns as every
//! other door), as `docs/TACP.md` lists. EXEC runs at USB trust: authority
//! follows the origin, the USB host.

pub mod frame;

use serde::Serialize;

use super::{Account, Arg, Host, Status, Ui, Value, wire, with_state_or_busy};
use crate::message::Role;
use crate::text::floor_char_boundary;

/// Device → IDE once it is up.
pub const READY: u8 = 0x00;
/// Run a tool.
pub const EXEC: u8 = 0x01;
/// A prompt for the backend.
pub const ASK: u8 = 0x02;
/// The agent's state.
pub const STATUS: u8 = 0x03;
/// The registry.
pub const TOOLS: u8 = 0x04;
/// The context text.
pub const HISTORY: u8 = 0x05;
/// Store `key=value`.
pub const REMEMBER: u8 = 0x06;
/// Clear the session.
pub const CLEAR: u8 = 0x07;
/// Connect `host:port:api_key`.
pub const CONNECT: u8 = 0x08;
/// Disconnect.
pub const DISCONNECT: u8 = 0x09;
/// Extension: `safety()`.
pub const SAFETY: u8 = 0x40;
/// Extension: one memory value.
pub const RECALL: u8 = 0x41;
/// An error answer; its payload is the reason.
pub const ERROR: u8 = 0xFF;

/// The work buffer every sub-command but an online ASK needs: one answer.
pub const WORK_SIZE: usize = frame::PAYLOAD_MAX;
/// The vendor's cuts of a REMEMBER's key and value (`CLAW_MEM_KEY_MAX - 1`,
/// `CLAW_MEM_VAL_MAX - 1`).
const KEY_CUT: usize = crate::memory::KEY_MAX_BYTES;
const VAL_CUT: usize = crate::memory::VAL_MAX_BYTES;
/// TOOLS stops adding entries this close to the payload's end (the
/// vendor's rule).
const TOOLS_MARGIN: usize = 64;

/// Bytes of work buffer [`dispatch`] needs: one answer, and after it the
/// room of HISTORY's context scratch (nothing is kept between requests).
pub fn work_size<H: Host>(_h: &mut H, _sub: u8, _payload: &[u8]) -> usize {
    WORK_SIZE + super::SCRATCH_LEN
}

/// The error answer `text`.
fn error<H: Host>(h: &mut H, text: &[u8]) {
    h.tacp_respond(ERROR, text);
}

/// The error answer of a refused argument: "<what> <status text>" (as the
/// binding names an argument: "key must be valid UTF-8").
fn refused<H: Host>(h: &mut H, what: &[u8], s: Status) {
    let mut buf = [0u8; 128];
    let mut b = wire::Buf::new(&mut buf);
    if s.named() && !what.is_empty() {
        let _ = wire::Sink::put(&mut b, what);
        let _ = wire::Sink::put(&mut b, b" ");
    }
    let _ = wire::Sink::put(&mut b, s.text().as_bytes());
    let n = b.len;
    error(h, buf.get(..n).unwrap_or(&[]));
}

/// The READY frame, once the device is up: the firmware's version `fw`
/// and board name `board` (the binding's), the number of tools; then the
/// STATS card.
pub fn ready<H: Host>(h: &mut H, fw: &[u8], board: &[u8], work: &mut [u8]) -> Result<(), Status> {
    super::ready(h);
    h.ui_init();
    let tools = with_state_or_busy(h, |c, _| c.registry.count() as u16)?;
    #[derive(Serialize)]
    struct Ready<'a> {
        fw: &'a str,
        board: &'a str,
        tools: u16,
        proto: u8,
    }
    let doc = Ready {
        fw: wire::as_str(fw),
        board: wire::as_str(board),
        tools,
        proto: 2,
    };
    let n = json(&doc, work).ok_or(Status::WorkTooSmall)?;
    h.tacp_respond(READY, work.get(..n).unwrap_or(&[]));
    stats(h)
}

fn json<T: Serialize>(v: &T, work: &mut [u8]) -> Option<usize> {
    let len = work.len().min(WORK_SIZE);
    wire::write(v, work.get_mut(..len)?)
}

/// One request: `sub` and its `payload`, answered through
/// [`Host::tacp_respond`]. `work` holds [`work_size`] bytes (HISTORY's
/// context is put together in a scratch at its end). Every request is
/// answered, an abort too ("interrupted"); `Err` only for an abort (a
/// KeyboardInterrupt/SystemExit the host raises once this returns) — and
/// [`Status::TacpAsk`]: an ASK while connected is an `ask()`, which the
/// host runs as for its own caller (the same buffers, the same stack as
/// `claw_ask`), then hands to [`ask_done`], which answers it.
pub fn dispatch<H: Host>(
    h: &mut H,
    sub: u8,
    payload: &[u8],
    work: &mut [u8],
) -> Result<(), Status> {
    super::ready(h);
    h.ui_init();
    // A state left by a call that never finished (the vendor's rule: one
    // task, so nothing else can be running at the top level).
    with_state_or_busy(h, |c, _| {
        let stale = matches!(
            c.agent.state(),
            super::State::Executing | super::State::Thinking
        );
        if stale && c.agent.chain.depth() == 0 {
            c.agent.set_state(super::State::Idle);
        }
    })?;
    let r = match sub {
        EXEC => exec(h, payload, work),
        ASK => ask(h, payload),
        STATUS => status(h, work),
        TOOLS => tools(h, work),
        HISTORY => history(h, work),
        REMEMBER => remember(h, payload),
        CLEAR => clear(h),
        CONNECT => connect(h, payload, work),
        DISCONNECT => disconnect(h),
        SAFETY => safety(h, work),
        RECALL => recall(h, payload, work),
        _ => {
            error(h, b"unknown sub_cmd");
            Ok(())
        }
    };
    match r {
        Err(Status::TacpAsk) => Err(Status::TacpAsk),
        Err(Status::Aborted) => {
            error(h, b"interrupted");
            Err(Status::Aborted)
        }
        Err(s) => {
            refused(h, b"", s);
            Ok(())
        }
        Ok(()) => Ok(()),
    }
}

/// The STATS card (the vendor's five lines).
fn stats<H: Host>(h: &mut H) -> Result<(), Status> {
    let (state, tools, execs, errors) = with_state_or_busy(h, |c, _| {
        (
            c.agent.state().name(),
            c.registry.count() as u32,
            c.agent.execs(),
            c.agent.errors(),
        )
    })?;
    let mut buf = [0u8; 96];
    let mut b = wire::Buf::new(&mut buf);
    let mut d = [[0u8; 10]; 3];
    let [d0, d1, d2] = &mut d;
    for part in [
        &b"State       "[..],
        state.as_bytes(),
        b"\nTools       ",
        super::builtin::decimal(tools, d0),
        b"\nExecuted    ",
        super::builtin::decimal(execs, d1),
        b"\nErrors      ",
        super::builtin::decimal(errors, d2),
        b"\nTransport   USB",
    ] {
        let _ = wire::Sink::put(&mut b, part);
    }
    let n = b.len;
    h.ui(Ui::Stats, buf.get(..n).unwrap_or(&[]));
    Ok(())
}

/// EXEC "name" or "name args" (split at the first space).
// stack: see docs/STACK.md
#[inline(never)]
fn exec<H: Host>(h: &mut H, payload: &[u8], work: &mut [u8]) -> Result<(), Status> {
    let (name, arg) = match payload.iter().position(|&c| c == b' ') {
        Some(i) => (
            payload.get(..i).unwrap_or(&[]),
            Arg::Text(payload.get(i + 1..).unwrap_or(&[])),
        ),
        None => (payload, Arg::None),
    };
    let out = work.get_mut(..WORK_SIZE).ok_or(Status::WorkTooSmall)?;
    let mut acct = Account::new();
    let n = match super::exec_tool(h, payload, name, arg, out, &mut acct) {
        Ok(v) => value_text(v, out),
        Err(Status::ToolRaised) => failed(name, out),
        Err(Status::Aborted) => return Err(Status::Aborted),
        Err(Status::UnknownTool) => {
            error(h, b"unknown tool");
            return Ok(());
        }
        Err(Status::BreakerOpen) => {
            error(h, b"circuit breaker open");
            return Ok(());
        }
        Err(Status::TrustRefused) => {
            error(h, b"trust level insufficient");
            return Ok(());
        }
        Err(Status::RateLimited) => {
            error(h, b"rate limited");
            return Ok(());
        }
        Err(s) => {
            refused(h, b"arg", s);
            return Ok(());
        }
    };
    let text = out.get(..n).unwrap_or(&[]);
    with_state_or_busy(h, |c, _| c.agent.set_last_result(&[text]))?;
    h.ui(Ui::LastResult, text);
    h.tacp_respond(EXEC, text);
    stats(h)
}

/// The text of what a tool returned (in `out` already, but for the
/// built-ins' numbers and flags, written again here).
fn value_text(v: Value, out: &mut [u8]) -> usize {
    let mut num = [0u8; 10];
    let text: &[u8] = match v {
        Value::Text(n) | Value::Host(n) | Value::Arg(n) => return n.min(out.len()),
        Value::Int(i) => super::builtin::decimal(i, &mut num),
        Value::Bool(true) => b"True",
        Value::Bool(false) => b"False",
    };
    crate::text::copy_prefix(out, text);
    text.len().min(out.len())
}

/// The vendor's answer for a tool that failed.
fn failed(name: &[u8], out: &mut [u8]) -> usize {
    #[derive(Serialize)]
    struct Failed<'a> {
        tool: &'a str,
        status: &'a str,
        code: i8,
    }
    let doc = Failed {
        tool: wire::as_str(name),
        status: "error",
        code: -1,
    };
    wire::write(&doc, out).unwrap_or(0)
}

/// ASK: offline the prompt comes back for the IDE to send on (the vendor's
/// proxy), online it is an `ask()`.
// stack: see docs/STACK.md
#[inline(never)]
fn ask<H: Host>(h: &mut H, prompt: &[u8]) -> Result<(), Status> {
    if let Err(s) = super::check_prompt(prompt) {
        refused(h, b"prompt", s);
        return Ok(());
    }
    if !h.connected() {
        with_state_or_busy(h, |c, _| {
            let _ = c.session.add_loaded(Role::User, prompt);
        })?;
        h.ui(Ui::Status, b"Thinking...");
        h.ui(Ui::LastCmd, prompt);
        with_state_or_busy(h, |c, p| {
            c.agent.set_state(super::State::Idle);
            super::flush_if_dirty(c, p);
        })?;
        h.ui(Ui::Status, b"Local (USB)");
        h.tacp_respond(ASK, prompt);
        return stats(h);
    }
    Err(Status::TacpAsk)
}

/// The answer of an online ASK: the outcome of the `ask()` the host ran
/// for it ([`Status::TacpAsk`]) — the reply (cut to 3072 bytes on a
/// character boundary), or "circuit breaker open", or "backend request
/// failed"; then STATS. `Err` only for an abort or a state in use.
pub fn ask_done<H: Host>(h: &mut H, outcome: Result<&[u8], Status>) -> Result<(), Status> {
    match outcome {
        Ok(reply) => {
            let n = floor_char_boundary(reply, frame::PAYLOAD_MAX);
            h.tacp_respond(ASK, reply.get(..n).unwrap_or(&[]));
        }
        Err(Status::Aborted) => {
            error(h, b"interrupted");
            return Err(Status::Aborted);
        }
        Err(Status::AskBreakerOpen) => error(h, b"circuit breaker open"),
        Err(s @ (Status::Busy | Status::NestingLimit)) => refused(h, b"", s),
        Err(_) => error(h, b"backend request failed"),
    }
    stats(h)
}

#[derive(Serialize)]
struct StatusJson<'a> {
    state: &'a str,
    exec: u32,
    err: u32,
    tools: u16,
    session: u16,
    connected: bool,
}

// stack: see docs/STACK.md
#[inline(never)]
fn status<H: Host>(h: &mut H, work: &mut [u8]) -> Result<(), Status> {
    let connected = h.connected();
    let n = with_state_or_busy(h, |c, _| {
        let doc = StatusJson {
            state: c.agent.state().name(),
            exec: c.agent.execs(),
            err: c.agent.errors(),
            tools: c.registry.count() as u16,
            session: c.session.ring_loaded().len() as u16,
            connected,
        };
        json(&doc, work)
    })?
    .ok_or(Status::WorkTooSmall)?;
    h.tacp_respond(STATUS, work.get(..n).unwrap_or(&[]));
    h.ui(
        Ui::Status,
        if connected {
            b"Online (HTTPS)"
        } else {
            b"Local (USB)"
        },
    );
    stats(h)
}

#[derive(Serialize)]
struct ToolJson<'a> {
    name: &'a str,
    desc: &'a str,
    risk: u8,
    confirm: bool,
}

/// TOOLS: every tool in slot order while the next entry starts more than
/// 64 bytes before the payload's end (and fits).
// stack: see docs/STACK.md
#[inline(never)]
fn tools<H: Host>(h: &mut H, work: &mut [u8]) -> Result<(), Status> {
    let out = work.get_mut(..WORK_SIZE).ok_or(Status::WorkTooSmall)?;
    let mut off = 0usize;
    if let Some(b) = out.get_mut(off) {
        *b = b'[';
        off += 1;
    }
    let mut first = true;
    for slot in 0..crate::safety::rate::MAX_TOOLS {
        if off >= WORK_SIZE - TOOLS_MARGIN {
            break;
        }
        let Some(n) = tool_entry(h, slot, first, out.get_mut(off..WORK_SIZE - 1))? else {
            continue;
        };
        if n == 0 {
            break;
        }
        off += n;
        first = false;
    }
    if let Some(b) = out.get_mut(off) {
        *b = b']';
        off += 1;
    }
    h.tacp_respond(TOOLS, out.get(..off).unwrap_or(&[]));
    Ok(())
}

/// The entry of the tool in `slot` (a comma first unless `first`) into
/// `out`: its length, 0 when it does not fit, `None` for an empty slot.
// stack: see docs/STACK.md
#[inline(never)]
fn tool_entry<H: Host>(
    h: &mut H,
    slot: usize,
    first: bool,
    out: Option<&mut [u8]>,
) -> Result<Option<usize>, Status> {
    let mut name = [0u8; 32];
    let Some((name_len, desc, risk, confirm)) = with_state_or_busy(h, |c, _| {
        let t = c.registry.tool(&c.rate, slot)?;
        crate::text::copy_prefix(&mut name, t.name);
        Some((
            t.name.len().min(name.len()),
            t.description,
            t.risk,
            t.confirm,
        ))
    })?
    else {
        return Ok(None);
    };
    let mut dbuf = [0u8; 128];
    let desc: &[u8] = match desc {
        Some(d) => d.to_bytes(),
        None => {
            let n = h.describe(slot as u8, &mut dbuf);
            dbuf.get(..n).unwrap_or(&[])
        }
    };
    let Some(out) = out else {
        return Ok(Some(0));
    };
    let (comma, rest) = if first {
        (0, &mut out[..])
    } else {
        match out.split_first_mut() {
            Some((c, rest)) => {
                *c = b',';
                (1, rest)
            }
            None => return Ok(Some(0)),
        }
    };
    let doc = ToolJson {
        name: wire::as_str(name.get(..name_len).unwrap_or(&[])),
        desc: wire::as_str(desc),
        risk,
        confirm,
    };
    Ok(Some(wire::write(&doc, rest).map_or(0, |n| n + comma)))
}

fn history<H: Host>(h: &mut H, work: &mut [u8]) -> Result<(), Status> {
    let (work, scratch) = H::carve_scratch(work).ok_or(Status::WorkTooSmall)?;
    let out = work.get_mut(..WORK_SIZE).ok_or(Status::WorkTooSmall)?;
    let n = with_state_or_busy(h, |c, p| {
        crate::context::build_loaded(p, &c.session, &mut *out, scratch)
    })?;
    h.tacp_respond(HISTORY, out.get(..n).unwrap_or(&[]));
    Ok(())
}

/// REMEMBER "key=value": the key cut to 31 bytes and the value to 127, on
/// a character boundary.
// stack: see docs/STACK.md
#[inline(never)]
fn remember<H: Host>(h: &mut H, payload: &[u8]) -> Result<(), Status> {
    let Some(eq) = payload.iter().position(|&c| c == b'=').filter(|&i| i > 0) else {
        error(h, b"format: key=value");
        return Ok(());
    };
    let key = payload.get(..eq).unwrap_or(&[]);
    let value = payload.get(eq + 1..).unwrap_or(&[]);
    if let Err(s) = super::check_text(key) {
        refused(h, b"key", s);
        return Ok(());
    }
    if let Err(s) = super::check_text(value) {
        refused(h, b"value", s);
        return Ok(());
    }
    let key = key.get(..floor_char_boundary(key, KEY_CUT)).unwrap_or(&[]);
    let value = value
        .get(..floor_char_boundary(value, VAL_CUT))
        .unwrap_or(&[]);
    let ok = with_state_or_busy(h, |_, p| crate::memory::set(p, key, value).is_ok())?;
    h.tacp_respond(REMEMBER, if ok { b"ok" } else { b"full" });
    Ok(())
}

fn clear<H: Host>(h: &mut H) -> Result<(), Status> {
    super::session_clear(h)?;
    h.tacp_respond(CLEAR, b"ok");
    stats(h)
}

/// CONNECT "host:port:api_key".
// stack: see docs/STACK.md
#[inline(never)]
fn connect<H: Host>(h: &mut H, payload: &[u8], work: &mut [u8]) -> Result<(), Status> {
    let mut host: &[u8] = &[];
    let mut key: &[u8] = &[];
    let mut port = 443u32;
    if let Some(p1) = payload.iter().position(|&c| c == b':') {
        host = payload.get(..p1).unwrap_or(&[]);
        let rest = payload.get(p1 + 1..).unwrap_or(&[]);
        if let Some(p2) = rest.iter().position(|&c| c == b':') {
            let digits = rest.get(..p2).unwrap_or(&[]);
            port = 0;
            let mut valid = !digits.is_empty();
            for &c in digits {
                if !c.is_ascii_digit() || port > 65535 {
                    valid = false;
                    break;
                }
                port = port * 10 + u32::from(c - b'0');
            }
            if !valid || port == 0 || port > 65535 {
                error(h, b"invalid port");
                return Ok(());
            }
            key = rest.get(p2 + 1..).unwrap_or(&[]);
        }
    }
    if host.is_empty() || key.is_empty() {
        error(h, b"format: host:port:api_key");
        return Ok(());
    }
    let port = port as u16;
    match super::connect(h, host, port, key) {
        Ok(true) => {
            let mut b = wire::Buf::new(work.get_mut(..WORK_SIZE).unwrap_or(&mut []));
            let mut d = [0u8; 10];
            for part in [host, b":", super::builtin::decimal(u32::from(port), &mut d)] {
                let _ = wire::Sink::put(&mut b, part);
            }
            let n = b.len;
            h.tacp_respond(CONNECT, work.get(..n).unwrap_or(&[]));
        }
        Ok(false) => error(h, b"connect failed"),
        Err(s @ Status::Host) => refused(h, b"host", s),
        Err(s @ Status::ApiKey) => refused(h, b"api_key", s),
        Err(s @ (Status::NotUtf8 | Status::HasNul)) => refused(h, b"payload", s),
        Err(s) => return Err(s),
    }
    stats(h)
}

fn disconnect<H: Host>(h: &mut H) -> Result<(), Status> {
    super::disconnect(h)?;
    h.tacp_respond(DISCONNECT, b"ok");
    stats(h)
}

#[derive(Serialize)]
struct SafetyJson<'a> {
    circuit_breaker: &'a str,
    cooldown_ms: u32,
    trust_level: &'a str,
    connected: bool,
    errors: u32,
}

/// SAFETY (extension): `safety()`'s keys.
// stack: see docs/STACK.md
#[inline(never)]
fn safety<H: Host>(h: &mut H, work: &mut [u8]) -> Result<(), Status> {
    let connected = h.connected();
    let d = with_state_or_busy(h, |c, p| super::report::safety_doc(c, p, connected))?;
    let doc = SafetyJson {
        circuit_breaker: d.circuit_breaker,
        cooldown_ms: d.cooldown_ms,
        trust_level: d.trust_level,
        connected: d.connected,
        errors: d.errors,
    };
    let n = json(&doc, work).ok_or(Status::WorkTooSmall)?;
    h.tacp_respond(SAFETY, work.get(..n).unwrap_or(&[]));
    Ok(())
}

/// RECALL "key" (extension): the value, or "not found".
// stack: see docs/STACK.md
#[inline(never)]
fn recall<H: Host>(h: &mut H, key: &[u8], work: &mut [u8]) -> Result<(), Status> {
    if let Err(s) = super::check_key(key) {
        refused(h, b"key", s);
        return Ok(());
    }
    let out = work
        .get_mut(..crate::memory::VAL_MAX_BYTES)
        .ok_or(Status::WorkTooSmall)?;
    match with_state_or_busy(h, |_, p| crate::memory::get(p, key, &mut *out).ok())? {
        Some(n) => h.tacp_respond(RECALL, out.get(..n).unwrap_or(&[])),
        None => error(h, b"not found"),
    }
    Ok(())
}
