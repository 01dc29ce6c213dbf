//! The request body: the pending tool result, the plan of what fits, the
//! context's room, and the POST.

use super::*;

/// A tool round's outcome for the next request: (name length, status —
/// an index of [`TOOL_STATUS`] —, result length).
pub(super) type Pending = (u16, u8, u16);

/// The `"status"` of a tool result (`docs/BACKEND.md`).
pub(super) const TOOL_STATUS: [&str; 4] = ["ok", "refused", "error", "unknown"];
pub(super) const OK: u8 = 0;
pub(super) const REFUSED: u8 = 1;
pub(super) const ERROR: u8 = 2;
pub(super) const UNKNOWN: u8 = 3;

/// A tool's value other than text, as the text the backend hears.
pub(super) fn value_text(v: Value, result: &mut [u8]) -> usize {
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
#[inline(never)] // stack: see docs/STACK.md
pub(super) fn arg_note<H: Host>(
    h: &mut H,
    mode: Mode,
    name: &[u8],
    s: Status,
    result: &mut [u8],
) -> usize {
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
#[inline(never)] // stack: see docs/STACK.md
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
#[inline(never)] // stack: see docs/STACK.md
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
#[inline(never)] // stack: see docs/STACK.md
pub(super) fn post_request<H: Host>(
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
            let (_, scratch) = H::carve_scratch(w.body).ok_or(Status::WorkTooSmall)?;
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
