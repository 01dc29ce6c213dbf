//! The `ask()` loop: its work area, the tool rounds of an exchange, the
//! backend's tool requests and the reply.

use super::*;

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
pub(super) struct Work<'a> {
    /// The backend's reply; before a request the pending tool result, its
    /// tool's name and the rendered context.
    pub(super) reply: &'a mut [u8],
    /// The request body; during a tool round the tool's argument and name;
    /// while the context is rendered its scratch.
    pub(super) body: &'a mut [u8],
}

/// Bytes of a request body beyond its strings: the member names, quotes
/// and punctuation of `prompt`, `context`, `tool_result` (a `status` of 7
/// bytes at most) and the `tools` member's brackets (its entries are
/// counted one by one). A test checks the bound.
pub(super) const BODY_OVERHEAD: usize = 128;

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

/// Bytes of work buffer `ask(prompt)` needs: [`ASK_WORK`], plus what the
/// prompt's escaped form takes beyond [`PROMPT_MAX`] (quotes, backslashes,
/// control characters), so that every prompt leaves the body the same room.
pub fn ask_work_size(prompt: &[u8]) -> usize {
    ASK_WORK + wire::escaped_len(prompt).saturating_sub(PROMPT_MAX)
}

/// Bytes the opt-in `"tools"` member gives one entry `{"name":"…","risk":N}`
/// beyond the escaped name (a risk is one digit, 0..=2), and a comma
/// before every entry but the first.
pub(super) const TOOL_ENTRY: usize = 20;

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
// stack: see docs/STACK.md
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
// stack: see docs/STACK.md
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
// stack: see docs/STACK.md
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
// stack: see docs/STACK.md
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
// stack: see docs/STACK.md
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
// stack: see docs/STACK.md
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
