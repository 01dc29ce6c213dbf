//! `confirm()` and `ask()`: the work area an ask needs and how it is
//! carved (`carve_scratch`).

use super::*;

/// How long a tool call the model asked for waits for `confirm()`, in ms.
pub const CLAW_CONFIRM_TIMEOUT_MS: u32 = 60_000;
const _: () = assert!(CLAW_CONFIRM_TIMEOUT_MS == agent::confirm::TIMEOUT_MS);

/// `confirm(yes)`: the person at the device's answer to the tool call held
/// for confirmation. With `yes` it runs with the argument the host kept
/// (`claw_port_confirm_hold`; `arg_kind` `CLAW_ARG_TEXT` or
/// `CLAW_ARG_NONE`) as `claw_tool` runs a tool, its text in
/// `out[0..out_max)` and its kind in `*value`; without, it is refused and
/// `*value` is left as it was (`*ran` false). `ran` is NULL or tells whether
/// the tool ran.
///
/// # Safety
/// As `claw_tool`; `ran` NULL or valid.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn claw_confirm(
    yes: bool,
    arg_kind: u8,
    arg: *const u8,
    arg_len: usize,
    ctx: *mut c_void,
    out: *mut u8,
    out_max: usize,
    value: *mut claw_value_t,
    ran: *mut bool,
) -> claw_status_t {
    // SAFETY: per this function's contract.
    let (Some(text), Some(out)) = (unsafe { bytes(arg, arg_len) }, unsafe {
        out_slice(out.cast(), out_max)
    }) else {
        return Status::WorkTooSmall as claw_status_t;
    };
    let arg = if arg_kind == CLAW_ARG_TEXT {
        Arg::Text(text)
    } else {
        Arg::None
    };
    let mut host = CHost::new(ctx);
    let mut acct = agent::Account::new();
    let r = agent::confirm::confirm(&mut host, yes, arg, out, &mut acct);
    if !ran.is_null() {
        // SAFETY: non-NULL and valid per the contract.
        unsafe { ran.write(matches!(r, Ok(Some(_)))) };
    }
    let r = match r {
        Ok(None) => return CLAW_OK,
        Ok(Some(v)) => Ok(v),
        Err(e) => Err(e),
    };
    // SAFETY: per this function's contract.
    unsafe { put_value(value, &r, &acct) };
    done(r.map(|_| ()))
}

/// Writes what a tool call came to (its value, or the text the tool raised:
/// `acct.raised` bytes of the output) to `value`, unless it is NULL.
///
/// # Safety
/// `value` is NULL or valid for writing one element.
pub(super) unsafe fn put_value<E>(
    value: *mut claw_value_t,
    r: &Result<Value, E>,
    acct: &agent::Account,
) {
    let v = match *r {
        Ok(v) => value_of(v),
        Err(_) => claw_value_t {
            kind: CLAW_VALUE_TEXT,
            ival: 0,
            len: acct.raised,
        },
    };
    if !value.is_null() {
        // SAFETY: non-NULL, and valid per this function's contract.
        unsafe { value.write(v) };
    }
}

/// The C form of a tool's value.
pub(super) fn value_of(v: Value) -> claw_value_t {
    let (kind, ival, len) = match v {
        Value::Text(n) => (CLAW_VALUE_TEXT, 0, n),
        Value::Int(i) => (CLAW_VALUE_INT, i, 0),
        Value::Bool(b) => (CLAW_VALUE_BOOL, u32::from(b), 0),
        Value::Host(n) => (CLAW_VALUE_HOST, 0, n),
        Value::Arg(n) => (CLAW_VALUE_ARG, 0, n),
    };
    claw_value_t { kind, ival, len }
}

/// Bytes of work buffer `claw_ask` needs for this prompt.
///
/// # Safety
/// `prompt` is NULL or valid for reads of `len` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn claw_ask_work_size(prompt: *const u8, len: usize) -> usize {
    // SAFETY: per this function's contract.
    unsafe { bytes(prompt, len) }.map_or(0, agent::ask_work_size)
}

/// Carves a context scratch, aligned, out of the end of `area` (at least
/// [`agent::host::SCRATCH_LEN`] bytes): (the bytes before it, the scratch). The agent's
/// work areas lend theirs to it while a context is rendered (`ask()`'s
/// body area, TACP HISTORY's work buffer).
pub fn carve_scratch(area: &mut [u8]) -> Option<(&mut [u8], &mut context::Scratch)> {
    let size = core::mem::size_of::<context::Scratch>();
    let align = core::mem::align_of::<context::Scratch>();
    let last = area.len().checked_sub(size)?;
    let at = last.checked_sub((area.as_ptr() as usize).wrapping_add(last) % align)?;
    let (bytes, tail) = area.split_at_mut_checked(at)?;
    if tail.len() < size {
        return None;
    }
    let slot = tail.as_mut_ptr().cast::<MaybeUninit<context::Scratch>>();
    // SAFETY: `slot` is aligned for a `Scratch` (`at` was rounded down to
    // it) and `tail`, borrowed exclusively for the returned lifetime, holds
    // at least its size; `MaybeUninit` asks nothing of the bytes.
    let slot = unsafe { &mut *slot };
    Some((bytes, new_scratch(slot)))
}

/// Writes a new scratch into `slot`, put together in place
/// (`Scratch::new` is inlined): not on the stack first, since it is carved
/// under `ask()`'s frames, once a request (and no constant image of it).
// stack: see docs/STACK.md
#[inline(never)]
fn new_scratch(slot: &mut MaybeUninit<context::Scratch>) -> &mut context::Scratch {
    slot.write(context::Scratch::new())
}

/// Before `claw_ask`: what can be told without a work buffer (the prompt,
/// no connection, the chain's request budget; `NotConnected` and
/// `RequestLimit` count their error). On `CLAW_OK`, `*work_len` is the
/// buffer `claw_ask` needs; allocating it may fail without any state having
/// changed.
///
/// # Safety
/// `prompt` valid for `len` bytes; `work_len` valid.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn claw_ask_check(
    prompt: *const u8,
    len: usize,
    work_len: *mut usize,
) -> claw_status_t {
    // SAFETY: per this function's contract.
    let (Some(prompt), false) = (unsafe { bytes(prompt, len) }, work_len.is_null()) else {
        return Status::PromptLength as claw_status_t;
    };
    let mut host = CHost::new(core::ptr::null_mut());
    match agent::ask_check(&mut host, prompt) {
        Ok(n) => {
            // SAFETY: non-NULL and valid per the contract.
            unsafe { work_len.write(n) };
            CLAW_OK
        }
        Err(s) => s as claw_status_t,
    }
}

/// `ask(prompt)`: the whole exchange (see `docs/DESIGN.md`). On success
/// the reply is `work[0..*reply_len)` (UTF-8, no NUL).
///
/// # Safety
/// `prompt` valid for `len` bytes; `work` valid for writes of `work_len`
/// bytes and not overlapping `prompt`; `reply_len` NULL or valid; `ctx` is
/// passed to `claw_port_tool` untouched.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn claw_ask(
    prompt: *const u8,
    len: usize,
    work: *mut u8,
    work_len: usize,
    ctx: *mut c_void,
    reply_len: *mut usize,
) -> claw_status_t {
    // SAFETY: per this function's contract.
    let Some(prompt) = (unsafe { bytes(prompt, len) }) else {
        return Status::PromptLength as claw_status_t;
    };
    if work.is_null() || work_len > isize::MAX as usize {
        return Status::WorkTooSmall as claw_status_t;
    }
    // SAFETY: non-NULL, valid for writes of `work_len` bytes, not aliased.
    let work = unsafe { core::slice::from_raw_parts_mut(work, work_len) };
    let mut host = CHost::new(ctx);
    // A buffer short of `claw_ask_work_size` is refused (after the
    // prompt's checks).
    let r = agent::ask(&mut host, prompt, work);
    if let (Ok(reply), false) = (&r, reply_len.is_null()) {
        // SAFETY: non-NULL and valid per the contract.
        unsafe { reply_len.write(reply.len) };
    }
    done(r.map(|_| ()))
}
