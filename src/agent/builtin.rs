//! The tools the library runs itself, next to the host's (registry
//! [`How::Builtin`](super::registry::How::Builtin)).
//!
//! | name | risk | limit | argument | returns |
//! |---|---|---|---|---|
//! | `ui_notify` (vendor) | 1 | 10/min | str | `{"status":"notified"}` after a `CLAW_UI_PROGRESS` event; `{"error":"no message"}` for none |
//! | `echo` | 0 | 10/min | str or None | the str (`""` for None) |
//! | `uptime` | 0 | 10/min | none | ticks in ms |
//! | `led` | 1 | 10/min | None, a bool (or int) or `"toggle"` | the LED state |
//! | `wipe_memory` | 2 | 2/min | none | True (forgets everything `remember()` stored) |
//!
//! A built-in's argument is checked before the gates: a malformed call is
//! the caller's error, not a tool failure, and uses no quota.

use super::registry::{FIRST_OWN, How, UI_NOTIFY};
use super::{Arg, Host, Status, ToolOutcome, Ui, Value};
use crate::port::{Errno, Port};
use crate::text::{copy_prefix, floor_char_boundary};

const ECHO: usize = FIRST_OWN;
const UPTIME: usize = FIRST_OWN + 1;
const LED: usize = FIRST_OWN + 2;
const WIPE_MEMORY: usize = FIRST_OWN + 3;

/// Checks a tool's argument (a host tool takes anything: the host turns
/// it into the text its handler reads).
pub fn check_arg(slot: usize, how: How, arg: Arg<'_>) -> Result<(), Status> {
    if how != How::Builtin {
        return Ok(());
    }
    match (slot, arg) {
        (_, Arg::None) => Ok(()),
        (ECHO | UI_NOTIFY, Arg::Text(_)) => Ok(()),
        (ECHO, _) => Err(Status::EchoArg),
        (UI_NOTIFY, _) => Err(Status::NotifyArg),
        (LED, Arg::Bool(_) | Arg::Int(_) | Arg::Text(b"toggle")) => Ok(()),
        (LED, _) => Err(Status::LedArg),
        _ => Err(Status::NoArg),
    }
}

/// `v` in decimal, in `buf`.
pub fn decimal(v: u32, buf: &mut [u8; 10]) -> &[u8] {
    let mut n = buf.len();
    let mut v = v;
    loop {
        n -= 1;
        if let Some(d) = buf.get_mut(n) {
            *d = b'0' + (v % 10) as u8;
        }
        v /= 10;
        if v == 0 || n == 0 {
            break;
        }
    }
    buf.get(n..).unwrap_or(&[])
}

fn text_out(out: &mut [u8], text: &[u8]) -> usize {
    let n = floor_char_boundary(text, out.len());
    copy_prefix(out, text.get(..n).unwrap_or(&[]));
    n
}

/// Runs a built-in (its argument already checked).
// stack: see docs/STACK.md
#[inline(never)]
pub fn run<H: Host>(h: &mut H, slot: usize, arg: Arg<'_>, out: &mut [u8]) -> (ToolOutcome, Value) {
    match slot {
        UI_NOTIFY => {
            let text: &[u8] = match arg {
                Arg::Text(t) if !t.is_empty() => {
                    h.ui(Ui::Progress, t);
                    br#"{"status":"notified"}"#
                }
                _ => br#"{"error":"no message"}"#,
            };
            let n = text_out(out, text);
            (ToolOutcome::Returned(n), Value::Text(n))
        }
        ECHO => {
            let text = match arg {
                Arg::Text(t) => t,
                _ => b"",
            };
            let n = text_out(out, text);
            let v = if matches!(arg, Arg::Text(_)) {
                Value::Arg(n)
            } else {
                Value::Text(n)
            };
            (ToolOutcome::Returned(n), v)
        }
        UPTIME => uptime(h, out),
        LED => {
            let on = h
                .with_state(|c, _| {
                    let a = &mut c.agent;
                    match arg {
                        Arg::Text(_) => a.led = !a.led,
                        Arg::Bool(b) => a.led = b,
                        Arg::Int(i) => a.led = i != 0,
                        _ => {}
                    }
                    a.led
                })
                .unwrap_or(false);
            // On the board this drives the user LED; the panel shows it.
            h.ui(Ui::Led, if on { b"on" } else { b"off" });
            let n = text_out(out, if on { b"True" } else { b"False" });
            (ToolOutcome::Returned(n), Value::Bool(on))
        }
        WIPE_MEMORY => match h.with_state(|_, p| crate::memory::wipe(p)) {
            Some(Ok(())) => (
                ToolOutcome::Returned(text_out(out, b"True")),
                Value::Bool(true),
            ),
            Some(Err(Errno(e))) => wipe_failed(e, out),
            None => (
                ToolOutcome::Raised(text_out(out, Status::Busy.text().as_bytes())),
                Value::Bool(false),
            ),
        },
        _ => (
            ToolOutcome::Raised(text_out(out, b"bad tool entry")),
            Value::Bool(false),
        ),
    }
}

/// `uptime`: the milliseconds since boot.
fn uptime<H: Host>(h: &mut H, out: &mut [u8]) -> (ToolOutcome, Value) {
    let now = h.with_state(|_, p| p.ticks_ms()).unwrap_or(0);
    let mut buf = [0u8; 10];
    let n = text_out(out, decimal(now, &mut buf));
    (ToolOutcome::Returned(n), Value::Int(now))
}

/// A failed wipe, raised with its errno.
fn wipe_failed(e: i32, out: &mut [u8]) -> (ToolOutcome, Value) {
    let mut buf = [0u8; 10];
    let mut b = super::wire::Buf::new(out);
    for p in [
        &b"memory wipe failed: errno "[..],
        decimal(e as u32, &mut buf),
    ] {
        let _ = super::wire::Sink::put(&mut b, p);
    }
    (ToolOutcome::Raised(b.len), Value::Bool(false))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimals() {
        let mut b = [0u8; 10];
        assert_eq!(decimal(0, &mut b), b"0");
        assert_eq!(decimal(4_294_967_295, &mut b), b"4294967295");
        assert_eq!(decimal(120, &mut b), b"120");
    }

    #[test]
    fn arguments() {
        let b = How::Builtin;
        assert_eq!(check_arg(ECHO, b, Arg::Int(1)), Err(Status::EchoArg));
        assert_eq!(check_arg(LED, b, Arg::Text(b"on")), Err(Status::LedArg));
        assert_eq!(check_arg(LED, b, Arg::Text(b"toggle")), Ok(()));
        assert_eq!(check_arg(UPTIME, b, Arg::Text(b"x")), Err(Status::NoArg));
        assert_eq!(check_arg(UI_NOTIFY, b, Arg::Int(1)), Err(Status::NotifyArg));
        assert_eq!(check_arg(UI_NOTIFY, b, Arg::Text(b"hi")), Ok(()));
        assert_eq!(check_arg(0, How::Python, Arg::Other), Ok(()));
        assert_eq!(check_arg(WIPE_MEMORY, b, Arg::None), Ok(()));
    }
}
