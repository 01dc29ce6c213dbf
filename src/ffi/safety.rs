//! `claw_safety.h`: circuit breaker, rate limiter, transport trust.

use cty::c_char;

use super::{c_bytes, with_state};
use crate::port::Port;
use crate::safety::{breaker, rate, trust};

/// Tools the rate table holds: a slot for each of the vendor registry's 32
/// names and the library's 4 built-ins, and 12 for other names. (The
/// vendor's 16 held fewer names than its own registry has, and let the
/// rest through unlimited.)
pub const CLAW_RATE_MAX_TOOLS: usize = 48;
/// Of those, the slots of the names the registry knows (the vendor's 32
/// tools and the library's 4 built-ins), always there for them; the rest
/// take any other name.
pub const CLAW_RATE_KNOWN_TOOLS: usize = 36;
/// Size of a tool name buffer: a name is 1..=31 bytes + NUL.
pub const CLAW_RATE_NAME_MAX: usize = 32;
/// Calls per minute of a tool without its own limit.
pub const CLAW_RATE_DEFAULT_PER_MIN: u16 = 10;
/// Granularity of the sliding window, in ms.
pub const CLAW_RATE_GRANULARITY_MS: u32 = 10_000;
/// Consecutive failures that open the breaker.
pub const CLAW_CB_THRESHOLD: u8 = 3;
/// How long the breaker stays open, in ms.
pub const CLAW_CB_COOLDOWN_MS: u32 = 30_000;

// The C constants are literals (cbindgen prints them as written); these
// checks keep them equal to the core's.
const _: () = assert!(CLAW_RATE_MAX_TOOLS == rate::MAX_TOOLS);
const _: () = assert!(CLAW_RATE_KNOWN_TOOLS == rate::KNOWN.len());
const _: () = assert!(CLAW_RATE_NAME_MAX == rate::NAME_MAX_BYTES + 1);
const _: () = assert!(CLAW_RATE_DEFAULT_PER_MIN == rate::DEFAULT_PER_MIN);
const _: () = assert!(CLAW_RATE_GRANULARITY_MS == rate::BUCKET_MS);
const _: () = assert!(CLAW_CB_THRESHOLD == breaker::THRESHOLD);
const _: () = assert!(CLAW_CB_COOLDOWN_MS == breaker::COOLDOWN_MS);

/// Breaker state; a fixed-size integer, not a C enum.
pub type claw_cb_state_t = u8;
/// Calls pass.
pub const CLAW_CB_CLOSED: claw_cb_state_t = 0;
/// Cooling down; calls are refused.
pub const CLAW_CB_OPEN: claw_cb_state_t = 1;
/// Cooldown over; one trial call at a time.
pub const CLAW_CB_HALFOPEN: claw_cb_state_t = 2;

/// Transport trust level; a fixed-size integer, not a C enum.
pub type claw_trust_level_t = u8;
/// Nothing is allowed.
pub const CLAW_TRUST_NONE: claw_trust_level_t = 0;
/// Remote model over HTTPS: low and medium risk.
pub const CLAW_TRUST_HTTPS: claw_trust_level_t = 1;
/// The person at the USB port: every risk.
pub const CLAW_TRUST_USB: claw_trust_level_t = 2;

/// Closes the breaker and zeroes its failure counter.
///
/// Any task: RAM only, as every function of this header (a call made while
/// another one runs does nothing and returns its refused value: see
/// `claw_session_init` in `claw_session.h`).
#[unsafe(no_mangle)]
pub extern "C" fn claw_cb_init() {
    with_state((), |s, _| s.breaker = breaker::CircuitBreaker::new());
}

/// Gate 1: true when closed, or for the one trial call once the 30 s
/// cooldown has passed.
///
/// Any task: RAM only.
#[unsafe(no_mangle)]
pub extern "C" fn claw_cb_allow() -> bool {
    with_state(false, |s, p| s.breaker.allow(p.ticks_ms()))
}

/// Records a success: closed, counter 0.
///
/// Any task: RAM only.
#[unsafe(no_mangle)]
pub extern "C" fn claw_cb_success() {
    with_state((), |s, _| s.breaker.success());
}

/// Records a failure: the third consecutive one (or a failed trial) opens
/// the breaker for 30 s from now.
///
/// Any task: RAM only.
#[unsafe(no_mangle)]
pub extern "C" fn claw_cb_failure() {
    with_state((), |s, p| s.breaker.failure(p.ticks_ms()));
}

/// The breaker state now.
///
/// Any task: RAM only.
#[unsafe(no_mangle)]
pub extern "C" fn claw_cb_state() -> claw_cb_state_t {
    with_state(CLAW_CB_OPEN, |s, p| s.breaker.state(p.ticks_ms()) as u8)
}

/// Milliseconds of cooldown left while open, else 0.
///
/// Any task: RAM only.
#[unsafe(no_mangle)]
pub extern "C" fn claw_cb_cooldown_remaining() -> u32 {
    with_state(0, |s, p| s.breaker.cooldown_remaining(p.ticks_ms()))
}

/// Clears the rate table.
///
/// Any task: RAM only.
#[unsafe(no_mangle)]
pub extern "C" fn claw_rate_init() {
    with_state((), |s, _| s.rate.reset());
}

/// Gate 3: true while `tool_name` is under its limit. Consumes nothing.
/// False for NULL, empty, over-long or non-UTF-8 names and, for a tool not
/// yet in the table, when the table is full.
///
/// Any task: RAM only.
///
/// # Safety
/// `tool_name` is NULL or a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn claw_rate_check(tool_name: *const c_char) -> bool {
    // SAFETY: per this function's contract.
    let Some(name) = (unsafe { c_bytes(tool_name) }) else {
        return false;
    };
    with_state(false, |s, p| s.rate.check(name, p.ticks_ms()))
}

/// Counts one call of `tool_name`; call only after all gates passed.
///
/// Any task: RAM only.
///
/// # Safety
/// `tool_name` is NULL or a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn claw_rate_record(tool_name: *const c_char) {
    // SAFETY: per this function's contract.
    let Some(name) = (unsafe { c_bytes(tool_name) }) else {
        return;
    };
    with_state((), |s, p| s.rate.record(name, p.ticks_ms()));
}

/// Installs a per-minute limit for `tool_name` (0 restores the default of
/// 10; it never means unlimited). Ignored for invalid names or a full table.
///
/// Any task: RAM only.
///
/// # Safety
/// `tool_name` is NULL or a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn claw_rate_set(tool_name: *const c_char, max_per_minute: u16) {
    // SAFETY: per this function's contract.
    let Some(name) = (unsafe { c_bytes(tool_name) }) else {
        return;
    };
    with_state((), |s, p| {
        s.rate.set(name, max_per_minute, p.ticks_ms());
    });
}

/// Sets the transport trust level; an unknown level sets NONE.
///
/// Any task: RAM only.
#[unsafe(no_mangle)]
pub extern "C" fn claw_trust_set(level: claw_trust_level_t) {
    with_state((), |s, _| s.trust.set(trust::Level::from_c(level)));
}

/// The transport trust level.
///
/// Any task: RAM only.
#[unsafe(no_mangle)]
pub extern "C" fn claw_trust_get() -> claw_trust_level_t {
    with_state(CLAW_TRUST_NONE, |s, _| s.trust.get() as u8)
}

/// Gate 2: whether the trust level allows a tool of `risk` (0 low, 1 medium,
/// 2 high); unknown risks are refused.
///
/// Any task: RAM only.
#[unsafe(no_mangle)]
pub extern "C" fn claw_trust_allows(risk: u8) -> bool {
    with_state(false, |s, _| s.trust.allows(risk))
}
