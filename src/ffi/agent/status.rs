//! connect/disconnect/clear, `status()`, `safety()`, `config()`, the
//! argument checks of the binding and the config names.

use super::*;

/// `connect(host, port, api_key)`: `*ok` tells whether it connected.
///
/// # Safety
/// `host` and `api_key` NUL-terminated; `ok` NULL or valid.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn claw_connect(
    host: *const c_char,
    port: u16,
    api_key: *const c_char,
    ok: *mut bool,
) -> claw_status_t {
    // SAFETY: per this function's contract.
    let (Some(h), Some(k)) = (unsafe { c_bytes(host) }, unsafe { c_bytes(api_key) }) else {
        return Status::NotUtf8 as claw_status_t;
    };
    let mut host = CHost::new(core::ptr::null_mut());
    let r = agent::connect(&mut host, h, port, k);
    if let (Ok(v), false) = (&r, ok.is_null()) {
        // SAFETY: non-NULL and valid per the contract.
        unsafe { ok.write(*v) };
    }
    done(r.map(|_| ()))
}

/// `disconnect()`.
#[unsafe(no_mangle)]
pub extern "C" fn claw_disconnect() -> claw_status_t {
    let mut host = CHost::new(core::ptr::null_mut());
    done(agent::disconnect(&mut host))
}

/// `session_clear()`: the ring, its file, and the chat panel.
#[unsafe(no_mangle)]
pub extern "C" fn claw_clear() -> claw_status_t {
    let mut host = CHost::new(core::ptr::null_mut());
    done(agent::session_clear(&mut host))
}

/// `status()`. False when called from inside a file operation.
///
/// # Safety
/// `out` NULL or valid for writes of one element.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn claw_agent_status(out: *mut claw_agent_status_t) -> bool {
    if out.is_null() {
        return false;
    }
    // SAFETY: no arguments.
    let connected = unsafe { sys::claw_port_connected() };
    with_state(false, |s, p| {
        // Loaded here, under a small frame; the document reads RAM only.
        let _ = s.session.ring(p);
        // SAFETY: non-NULL, valid for writes of one element per the
        // contract; no other reference to it exists.
        unsafe { status_into(s, connected, out) };
        true
    })
}

/// Fills `*out` from the state in RAM (its own frame: the copies are not
/// on the stack while the ring loads).
///
/// # Safety
/// `out` valid for writes of one element.
// stack: see docs/STACK.md
#[inline(never)]
unsafe fn status_into(s: &State, connected: bool, out: *mut claw_agent_status_t) {
    let mut bufs = agent::report::StatusBufs::new();
    let d = agent::report::status_doc(s, connected, &mut bufs);
    let mut v = claw_agent_status_t {
        state: [0; 12],
        connected: d.connected,
        dirty: d.dirty,
        session_msgs: d.session_msgs,
        tool_count: d.tool_count,
        errors: d.error_count,
        exec_count: d.exec_count,
        last_result: [0; 48],
        last_cmd: [0; 48],
        pending_confirm: [0; 32],
    };
    if let Some(slot) = s.agent.pending() {
        put_cstr(&mut v.pending_confirm, s.rate.name(usize::from(slot)));
    }
    put_cstr(&mut v.state, d.state.as_bytes());
    put_cstr(&mut v.last_result, d.last_result.as_bytes());
    put_cstr(&mut v.last_cmd, d.last_cmd.as_bytes());
    // SAFETY: per this function's contract.
    unsafe { out.write(v) };
}

/// `safety()`. False when called from inside a file operation.
///
/// # Safety
/// `out` NULL or valid for writes of one element.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn claw_agent_safety(out: *mut claw_agent_safety_t) -> bool {
    if out.is_null() {
        return false;
    }
    // SAFETY: no arguments.
    let connected = unsafe { sys::claw_port_connected() };
    let v = with_state(None, |s, p| {
        let d = agent::report::safety_doc(s, p, connected);
        let mut v = claw_agent_safety_t {
            circuit_breaker: [0; 12],
            cooldown_ms: d.cooldown_ms,
            trust_level: [0; 8],
            connected: d.connected,
            errors: d.errors,
        };
        put_cstr(&mut v.circuit_breaker, d.circuit_breaker.as_bytes());
        put_cstr(&mut v.trust_level, d.trust_level.as_bytes());
        Some(v)
    });
    match v {
        Some(v) => {
            // SAFETY: non-NULL, valid for one element per the contract.
            unsafe { out.write(v) };
            true
        }
        None => false,
    }
}

/// The index of the setting called `name[0..len)`, or -1.
///
/// # Safety
/// `name` NULL or valid for reads of `len` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn claw_config_index(name: *const u8, len: usize) -> i32 {
    // SAFETY: per this function's contract.
    unsafe { bytes(name, len) }
        .and_then(config::index)
        .map_or(-1, |i| i as i32)
}

/// Setting `i` (0..CLAW_CONFIG_KEYS): its name and range.
///
/// # Safety
/// `out` NULL or valid for writes of one element.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn claw_config_key(i: usize, out: *mut claw_config_key_t) -> bool {
    let (Some(k), false) = (config::KEYS.get(i), out.is_null()) else {
        return false;
    };
    let mut v = claw_config_key_t {
        name: [0; 24],
        lo: k.lo,
        hi: k.hi,
        is_bool: k.is_bool,
    };
    put_cstr(&mut v.name, k.name.as_bytes());
    // SAFETY: non-NULL, valid for one element per the contract.
    unsafe { out.write(v) };
    true
}

/// The settings, `values[0..CLAW_CONFIG_KEYS)`. False when called from
/// inside a file operation.
///
/// # Safety
/// `values` NULL or valid for writes of `CLAW_CONFIG_KEYS` elements.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn claw_config_get(values: *mut i32) -> bool {
    if values.is_null() {
        return false;
    }
    let Some(c) = with_state(None, |s, p| Some(s.agent.config(p))) else {
        return false;
    };
    for i in 0..CLAW_CONFIG_KEYS {
        // SAFETY: `values` is valid for CLAW_CONFIG_KEYS elements.
        unsafe { values.add(i).write(c.get(i)) };
    }
    true
}

/// `config(**kw)`: the settings whose bit is set in `mask` take
/// `values[i]`. All are checked first; a change is written at once (temp
/// file + rename). Returns 0; `-1 - i` when setting `i` is out of its range;
/// a positive errno when the file could not be written; -100 when called
/// from inside a file operation. Nothing changes on an error.
///
/// # Safety
/// `values` valid for reads of `CLAW_CONFIG_KEYS` elements.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn claw_config_set(values: *const i32, mask: u32) -> i32 {
    if values.is_null() {
        return -100;
    }
    // SAFETY: valid for CLAW_CONFIG_KEYS elements per the contract.
    let v = unsafe { core::slice::from_raw_parts(values, CLAW_CONFIG_KEYS) };
    with_state(-100, |s, p| {
        match config::set(&mut s.agent.config, p, v, mask) {
            Ok(_) => 0,
            Err(config::SetError::Range(i)) => -1 - i as i32,
            Err(config::SetError::Io(e)) => e.0.max(1),
        }
    })
}

/// `claw_check`: text the core takes, UTF-8 without NUL (one rule everywhere).
pub const CLAW_CHECK_TEXT: u8 = 0;
/// `claw_check`: a memory key, text of 1..31 bytes.
pub const CLAW_CHECK_KEY: u8 = 1;
/// `claw_check`: a memory value, text of 0..127 bytes.
pub const CLAW_CHECK_VALUE: u8 = 2;
/// `claw_check`: a tool name, text of 1..31 bytes.
pub const CLAW_CHECK_TOOL_NAME: u8 = 3;
/// `claw_check`: a prompt, text of 1..4096 bytes.
pub const CLAW_CHECK_PROMPT: u8 = 4;
/// `claw_check`: a backend host, 1..63 bytes of printable ASCII.
pub const CLAW_CHECK_HOST: u8 = 5;
/// `claw_check`: an API key, 1..127 bytes of printable ASCII.
pub const CLAW_CHECK_API_KEY: u8 = 6;

/// Whether `s[0..len)` is what `what` (a `CLAW_CHECK_*`) takes: `CLAW_OK`, or
/// the status that names the rule it breaks. NULL with a length is
/// `NotUtf8`; NULL with 0 is the empty text. An unknown `what` refuses
/// every text (fail closed).
///
/// # Safety
/// `s` is NULL or valid for reads of `len` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn claw_check(what: u8, s: *const u8, len: usize) -> claw_status_t {
    let rule: fn(&[u8]) -> Result<(), Status> = match what {
        CLAW_CHECK_TEXT => agent::check_text,
        CLAW_CHECK_KEY => agent::check_key,
        CLAW_CHECK_VALUE => agent::check_value,
        CLAW_CHECK_TOOL_NAME => agent::check_tool_name,
        CLAW_CHECK_PROMPT => agent::check_prompt,
        CLAW_CHECK_HOST => agent::check_host,
        CLAW_CHECK_API_KEY => agent::check_api_key,
        _ => return Status::NotUtf8 as claw_status_t,
    };
    // SAFETY: per this function's contract.
    match unsafe { bytes(s, len) } {
        Some(s) => done(rule(s)),
        None => Status::NotUtf8 as claw_status_t,
    }
}

/// The longest prefix of `s[0..len)` that is whole UTF-8 characters (for
/// a text the host cut to a size).
///
/// # Safety
/// `s` is NULL or valid for reads of `len` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn claw_text_prefix(s: *const u8, len: usize) -> usize {
    // SAFETY: per this function's contract.
    let Some(s) = (unsafe { bytes(s, len) }) else {
        return 0;
    };
    let mut v = crate::text::Utf8::new();
    let mut last = 0usize;
    for (i, &b) in s.iter().enumerate() {
        if !v.feed(b) {
            break;
        }
        if v.complete() {
            last = i + 1;
        }
    }
    last
}

/// The keywords of `config()`, for an error message.
#[unsafe(no_mangle)]
pub extern "C" fn claw_config_names() -> *const c_char {
    CONFIG_NAMES.as_ptr()
}

/// `config()`'s keys, in `config::KEYS` order (a unit test holds them equal).
const CONFIG_NAMES: &core::ffi::CStr = c"compact_threshold_pct, compact_min_msgs, compact_keep, \
context_budget, idle_timeout_s, daily_reset_hour, auto_compact, backend_summary, send_tools, \
archive, compact_before_drop";

#[cfg(test)]
#[test]
fn config_names_are_the_keys() {
    let names: Vec<&str> = config::KEYS.iter().map(|k| k.name).collect();
    assert_eq!(CONFIG_NAMES.to_str().unwrap(), names.join(", "));
}
