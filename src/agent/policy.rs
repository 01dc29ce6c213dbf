//! Sessions that last, as `ask()` applies them (docs/SESSIONS.md): the
//! commands `/new`, `/reset`, `/compact`; the idle and daily resets; when to
//! compact; byte and token accounting.
//!
//! A compaction folds the older turns into one summary entry at the head of
//! the ring (the session keeps them in its archive first). Its text is a
//! local digest — unless `config(backend_summary=True)`, when the backend is
//! asked for a summary (a request of another shape, docs/BACKEND.md §4); if
//! that request fails, the digest is used and the failure is the `ask()`'s
//! one breaker failure.

use super::registry::Registry;
use super::{Account, Agent, Host, Status, Ui, wire, with_state_or_busy};
use crate::message::MSG_MAX_BYTES;
use crate::port::Port;
use crate::session::ring::MAX_MSGS;
use crate::state::State;

/// An RTC reading before 2024-01-01T00:00:00Z means "not set" (a board
/// whose RTC starts at 2000 after a power-on).
pub const RTC_SET_AFTER: u32 = 1_704_067_200;

/// "summary: " + 255 bytes + "\n": the most a summary takes in the
/// context. Folding fewer bytes than this cannot make the context smaller.
const SUMMARY_LINE_MAX: usize = 9 + MSG_MAX_BYTES + 1;

/// A command `ask()` answers itself.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Command {
    /// `/new`, `/reset`: retire the session.
    New,
    /// `/compact`: fold the older turns now.
    Compact,
}

/// The command `prompt` is (surrounding whitespace allowed), if any.
pub fn command(prompt: &[u8]) -> Option<Command> {
    let ws = |b: &u8| matches!(b, b' ' | b'\t' | b'\r' | b'\n');
    let start = prompt.iter().position(|b| !ws(b))?;
    let end = prompt.iter().rposition(|b| !ws(b))? + 1;
    match prompt.get(start..end)? {
        b"/new" | b"/reset" => Some(Command::New),
        b"/compact" => Some(Command::Compact),
        _ => None,
    }
}

fn put(out: &mut [u8], parts: &[&[u8]]) -> usize {
    let mut b = wire::Buf::new(out);
    for p in parts {
        let _ = wire::Sink::put(&mut b, p);
    }
    b.len
}

/// Runs a command; its answer (the `ask()` reply) goes to `reply`.
// stack: see docs/STACK.md
#[inline(never)]
pub fn run_command<H: Host>(
    h: &mut H,
    cmd: Command,
    reply: &mut [u8],
    body: &mut [u8],
) -> Result<usize, Status> {
    match cmd {
        Command::New => {
            let ok = with_state_or_busy(h, |c, p| {
                let _ = c.config_cached();
                let ok = c.session.start_new_loaded(p).is_ok();
                if ok {
                    c.agent.last_ticks_valid = false;
                    c.agent.set_last_result(&[b"new session"]);
                }
                ok
            })?;
            if !ok {
                return Err(Status::ArchiveFailed);
            }
            h.ui(Ui::Clear, b"");
            h.ui(Ui::LastResult, b"new session");
            Ok(put(reply, &[b"new session"]))
        }
        Command::Compact => {
            let (keep, fold, ask_backend) = with_state_or_busy(h, |c, _| {
                let cfg = c.config_cached();
                let fold = c.session.fold_plan(usize::from(cfg.compact_keep));
                let ask = cfg.backend_summary && !c.agent.last_request_failed;
                (usize::from(cfg.compact_keep), fold, ask)
            })?;
            let mut n = 0usize;
            let mut local = true;
            if fold > 0 {
                // A summary from the backend when configured, reachable, and
                // the breaker admits a request; otherwise the digest, no error.
                let ask_backend = ask_backend
                    && h.connected()
                    && with_state_or_busy(h, |c, p| {
                        c.agent.chain.requests_left() && c.breaker.allow(p.ticks_ms())
                    })?;
                let mut acct = Account::new();
                let summary = if ask_backend {
                    summary_request(h, keep, reply, body, &mut acct)?
                } else {
                    None
                };
                local = summary.is_none();
                n = with_state_or_busy(h, |c, p| {
                    let text = summary.and_then(|len| reply.get(..len));
                    let n = c.session.compact_loaded(p, text, keep).unwrap_or(0);
                    if c.session.is_dirty() {
                        let _ = c.session.flush(p);
                    }
                    n
                })?;
                if n == 0 {
                    return Err(Status::CompactFailed);
                }
            }
            let mut num = [0u8; 10];
            let digits = super::builtin::decimal(n as u32, &mut num);
            let tail: &[u8] = if n > 0 && local {
                b" turns (local digest)"
            } else {
                b" turns"
            };
            let len = put(reply, &[b"compacted ", digits, tail]);
            let text = reply.get(..len).unwrap_or(&[]);
            with_state_or_busy(h, |c, _| c.agent.set_last_result(&[text]))?;
            h.ui(Ui::LastResult, text);
            Ok(len)
        }
    }
}

/// Whether the session is due for a fresh start (idle timeout, daily
/// reset); `now_s` is the RTC (0: not set).
fn reset_due<P: Port>(
    c: &mut State<Registry, Agent>,
    p: &mut P,
    now_s: u32,
    cfg: &super::config::Config,
) -> bool {
    let last = c.session.stats_loaded().last_active;
    let now = if now_s >= RTC_SET_AFTER { now_s } else { 0 };
    if cfg.idle_timeout_s > 0 {
        if now != 0 && last != 0 {
            if now >= last && now - last >= cfg.idle_timeout_s {
                return true;
            }
        } else if c.agent.last_ticks_valid {
            let idle_ms = p.ticks_ms().wrapping_sub(c.agent.last_ticks);
            if u64::from(idle_ms) >= u64::from(cfg.idle_timeout_s) * 1000 {
                return true;
            }
        }
    }
    if cfg.daily_reset_hour >= 0 && now != 0 && last != 0 {
        // The newest hh:00:00 at or before now (RTC time taken as local).
        let since = now.wrapping_sub(cfg.daily_reset_hour as u32 * 3600) % 86_400;
        if last < now - since {
            return true;
        }
    }
    false
}

/// Context bytes of the summary and the `fold` turns after it.
fn fold_bytes(c: &State<Registry, Agent>, fold: usize) -> usize {
    let ring = c.session.ring_loaded();
    let head = usize::from(ring.summary().is_some());
    ring.iter()
        .take(head + fold)
        .map(|m| m.role.name().len() + 2 + m.text.len() + 1)
        .sum()
}

/// Before the USER turn of an admitted `ask()`: a due reset, then an
/// automatic compaction when due. `reply`/`body` are scratch.
// stack: see docs/STACK.md
#[inline(never)]
pub fn prepare<H: Host>(
    h: &mut H,
    reply: &mut [u8],
    body: &mut [u8],
    acct: &mut Account,
) -> Result<(), Status> {
    let now_s = h.time_s();
    let (ask_backend, keep) = match with_state_or_busy(h, |c, p| {
        let cfg = c.config_cached();
        if reset_due(c, p, now_s, &cfg) && c.session.start_new_loaded(p).is_ok() {
            // (An archive that cannot be written keeps the session; the next
            // ask() tries again.)
            c.agent.last_ticks_valid = false;
        }
        if !cfg.auto_compact {
            return None;
        }
        let keep = usize::from(cfg.compact_keep);
        let fold = c.session.fold_plan(keep);
        if fold == 0 {
            return None;
        }
        let ring = c.session.ring_loaded();
        let head = usize::from(ring.summary().is_some());
        let turns = ring.len() - head;
        // 1. (Opt-in) the exchange's USER and ASSISTANT turns would push a
        //    turn out.
        let mut due = cfg.compact_before_drop && head + turns + 2 > MAX_MSGS;
        // 2. The last request's context passed the threshold, the ring
        //    holds enough turns, and folding frees more than a summary takes.
        if !due
            && turns >= usize::from(cfg.compact_min_msgs)
            && fold_bytes(c, fold) > SUMMARY_LINE_MAX
        {
            let ctx = u64::from(c.session.stats_loaded().context_bytes);
            due = ctx * 100 >= u64::from(cfg.compact_threshold_pct) * u64::from(cfg.context_budget);
        }
        due.then_some((
            cfg.backend_summary && !c.agent.last_request_failed && c.agent.chain.requests_left(),
            keep,
        ))
    })? {
        Some(x) => x,
        None => return Ok(()),
    };
    let summary = if ask_backend {
        summary_request(h, keep, reply, body, acct)?
    } else {
        None
    };
    with_state_or_busy(h, |c, p| {
        let text = summary.and_then(|len| reply.get(..len));
        let _ = c.session.compact_loaded(p, text, keep);
    })?;
    Ok(())
}

/// Before a TOOL turn of round `round` of an `ask()` (with
/// `compact_before_drop`): a local compaction
/// when the ring has no room for it and the reply, keeping at least the
/// `ask()`'s USER turn and its TOOL turns. No request in the middle of a
/// tool round.
/// The settings and the ring were read before (see `log_tool`).
pub fn before_tool_turn<P: Port>(c: &mut State<Registry, Agent>, p: &mut P, round: u8) {
    let cfg = c.config_cached();
    if !cfg.auto_compact
        || !cfg.compact_before_drop
        || c.session.ring_loaded().len() + 2 <= MAX_MSGS
    {
        return;
    }
    let keep = usize::from(cfg.compact_keep).max(usize::from(round));
    let _ = c.session.compact_loaded(p, None, keep);
}

/// The summary request: the old summary and the turns to fold as
/// "role: text" lines. `Some(len)`: the summary is `reply[..len]`.
/// A failed request is this call's failure (error, breaker); an answered
/// one is accounted like any exchange.
fn summary_request<H: Host>(
    h: &mut H,
    keep: usize,
    reply: &mut [u8],
    body: &mut [u8],
    acct: &mut Account,
) -> Result<Option<usize>, Status> {
    let built = with_state_or_busy(h, |c, _| {
        if !c.agent.chain.take_request() {
            return None;
        }
        let fold = c.session.fold_plan(keep);
        let ring = c.session.ring_loaded();
        let head = usize::from(ring.summary().is_some());
        // One line an entry, its text escaped as in the context.
        let mut lines = wire::Buf::new(reply);
        for m in ring.iter().take(head + fold) {
            let _ = wire::Sink::put(&mut lines, m.role.name());
            let _ = wire::Sink::put(&mut lines, b": ");
            let rest = lines.buf.get_mut(lines.len..).unwrap_or(&mut []);
            let room = rest.len().saturating_sub(1);
            lines.len += crate::text::escape(Some(rest), &m.text, room).1;
            let _ = wire::Sink::put(&mut lines, b"\n");
        }
        let req = wire::SummaryRequest {
            summarize: wire::as_str(lines.bytes()),
            max_bytes: MSG_MAX_BYTES as u16,
        };
        wire::write(&req, body)
    })?;
    let Some(body_len) = built else {
        return Ok(None);
    };
    // The reply buffer holds REPLY_MAX + 1 bytes (room for a transport's NUL).
    let got = h.post(body.get(..body_len).unwrap_or(&[]), reply);
    let got = got.ok().filter(|&n| {
        n <= super::REPLY_MAX && super::check_text(reply.get(..n).unwrap_or(&[])).is_ok()
    });
    match got {
        Some(n) => {
            let (tin, tout) = h.tokens();
            let now_s = h.time_s();
            with_state_or_busy(h, |c, p| {
                Account::end_trial(c, p);
                let ctx = c.session.stats_loaded().context_bytes as usize;
                account(c, p, body_len, n, ctx, tin, tout, now_s);
            })?;
            Ok((n > 0).then_some(n))
        }
        None => {
            with_state_or_busy(h, |c, p| {
                c.agent.last_request_failed = true;
                acct.failure(c, p);
                c.agent.set_last_result(&[b"summary failed"]);
            })?;
            h.ui(Ui::Error, b"Summary failed");
            h.ui(Ui::LastResult, b"summary failed");
            Ok(None)
        }
    }
}

/// Counts one answered request into the session's statistics.
#[allow(clippy::too_many_arguments)]
pub fn account<P: Port>(
    c: &mut State<Registry, Agent>,
    p: &mut P,
    body_len: usize,
    reply_len: usize,
    ctx_len: usize,
    tokens_in: u32,
    tokens_out: u32,
    now_s: u32,
) {
    let clamp = |v: usize| u32::try_from(v).unwrap_or(u32::MAX);
    // A count past TOKENS_MAX is ignored by the session itself.
    let add = crate::session::Stats {
        in_bytes: clamp(body_len),
        out_bytes: clamp(reply_len),
        in_tokens: tokens_in,
        out_tokens: tokens_out,
        context_bytes: clamp(ctx_len),
        exchanges: 1,
        last_active: if now_s >= RTC_SET_AFTER { now_s } else { 0 },
    };
    c.session.account_loaded(&add);
    c.agent.last_ticks = p.ticks_ms();
    c.agent.last_ticks_valid = true;
    c.agent.last_request_failed = false;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands() {
        assert_eq!(command(b" /new\n"), Some(Command::New));
        assert_eq!(command(b"/reset"), Some(Command::New));
        assert_eq!(command(b"\t/compact "), Some(Command::Compact));
        assert_eq!(command(b"/news"), None);
        assert_eq!(command(b"please /new"), None);
        assert_eq!(command(b"   "), None);
    }
}
