//! `claw_session.h`: the session ring and the memory store.

use cty::c_char;

use super::{c_bytes, out_slice, with_state};
use crate::memory::{self, KEY_MAX_BYTES, VAL_MAX_BYTES};
use crate::message::{MSG_MAX_BYTES, Role};
use crate::{context, session};

/// Messages kept in the ring.
pub const CLAW_SESSION_MAX_MSGS: usize = 10;
/// Size of a message buffer: at most 255 bytes + NUL are stored.
pub const CLAW_MSG_MAX_LEN: usize = 256;
/// Size of a key buffer: a key is 1..=31 bytes + NUL.
pub const CLAW_MEM_KEY_MAX: usize = 32;
/// Size of a value buffer: a value is 0..=127 bytes + NUL.
pub const CLAW_MEM_VAL_MAX: usize = 128;
/// Keys the memory store holds.
pub const CLAW_MEM_MAX_ENTRIES: usize = 32;

// The C constants are literals (cbindgen prints them as written); these
// checks keep them equal to the core's.
const _: () = assert!(CLAW_SESSION_MAX_MSGS == session::ring::MAX_MSGS);
const _: () = assert!(CLAW_MSG_MAX_LEN == MSG_MAX_BYTES + 1);
const _: () = assert!(CLAW_MEM_KEY_MAX == KEY_MAX_BYTES + 1);
const _: () = assert!(CLAW_MEM_VAL_MAX == VAL_MAX_BYTES + 1);
const _: () = assert!(CLAW_MEM_MAX_ENTRIES == memory::MAX_ENTRIES);

/// Who said a message. A fixed-size integer, not a C enum, so its size never
/// depends on `-fshort-enums`.
pub type claw_role_t = u8;
/// A message from the user.
pub const CLAW_ROLE_USER: claw_role_t = 0;
/// A reply of the model.
pub const CLAW_ROLE_ASSISTANT: claw_role_t = 1;
/// A note of the system (connect, disconnect).
pub const CLAW_ROLE_SYSTEM: claw_role_t = 2;
/// The result of a tool.
pub const CLAW_ROLE_TOOL: claw_role_t = 3;

/// Resets the session's RAM state; files are read lazily on first use.
/// A second call drops the RAM ring without flushing it.
///
/// Any task: RAM only.
///
/// Tasks, for every function here and in `claw_safety.h`: only the
/// MicroPython task reaches files (the port's `claw_port_on_vm_task` tells
/// it); off it each function answers from RAM or fails cleanly, as its
/// comment says, and never touches the VFS. A call made while another one
/// runs (from a port callback, another task or an interrupt) does nothing
/// and returns false, 0, `CLAW_CB_OPEN` (`claw_cb_state`) or
/// `CLAW_TRUST_NONE` (`claw_trust_get`); none waits.
#[unsafe(no_mangle)]
pub extern "C" fn claw_session_init() {
    with_state((), |s, _| s.session.init());
}

/// Appends a message (cut to 255 bytes on a character boundary), keeping the
/// newest 10. Marks the ring dirty; writes no flash. False for NULL content,
/// an unknown role or content that is not UTF-8.
///
/// Off the MicroPython task: from RAM when the ring is loaded (a call on
/// that task since `claw_session_init` read it); false when it is not (the
/// first call that loads the ring reads the session file).
///
/// # Safety
/// `content` is NULL or a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn claw_session_add(role: claw_role_t, content: *const c_char) -> bool {
    // SAFETY: per this function's contract.
    let Some(text) = (unsafe { c_bytes(content) }) else {
        return false;
    };
    let Some(role) = Role::from_c(role) else {
        return false;
    };
    with_state(false, |s, p| {
        if p.on_task() {
            s.session.add(p, role, text).is_ok()
        } else {
            s.session.add_loaded(role, text).is_ok()
        }
    })
}

/// Messages in the ring, 0..=10.
///
/// Off the MicroPython task: from RAM; 0 while the ring is not loaded.
#[unsafe(no_mangle)]
pub extern "C" fn claw_session_count() -> u16 {
    with_state(0, |s, p| {
        if p.on_task() {
            s.session.count(p)
        } else {
            s.session.ring_loaded().len() as u16
        }
    })
}

/// Deletes the session file and empties the ring; memory is untouched. The
/// old session never comes back, even when the delete fails.
///
/// Off the MicroPython task: a loaded ring is emptied in RAM and the files
/// go at the next `claw_session_flush()` on that task (until then it is
/// dirty, and a reboot reads the old session back: as when the delete
/// fails); while the ring is not loaded, nothing happens.
#[unsafe(no_mangle)]
pub extern "C" fn claw_session_clear() {
    with_state((), |s, p| {
        // Off the task, a ring that is not loaded would need its files:
        // refused; a loaded one is cleared with the files' part pending.
        if p.on_task()
            || !p.needs_files(|p| {
                let _ = s.session.ring(p);
            })
        {
            s.session.clear(p);
        }
    });
}

/// Renders memory and recent turns into `out` (not JSON-escaped),
/// NUL-terminated, never past `out_max`. Returns the bytes written without
/// the NUL; 0 for NULL or `out_max` 0.
///
/// One record a line: `Memory:`, then `- key: value` per pair, then
/// `Conversation:`, then `role: text` per turn (summary, tool results
/// included). Inside a key, a value or a turn's text the characters that
/// could break a line or hide text are written as visible escapes, in the
/// form Python's `repr()` gives them: LF, CR and TAB as `\n`, `\r`, `\t`;
/// every other character of U+0000..U+001F and U+007F..U+009F as `\xHH`
/// (two lower-case hex digits); U+2028 and U+2029 as `\u2028`, `\u2029`.
/// Everything else is copied as it is, `\` and `"` included (a stored
/// backslash-n reads as an escaped line feed does): so only the library
/// starts a line. A memory line is at most 255 bytes escaped (a value full
/// of control characters is cut there); every cut lands on a character,
/// never inside an escape.
///
/// Off the MicroPython task: fails, 0 and `out` the empty string (the
/// memory lines are read from their files).
///
/// # Safety
/// `out` is NULL or valid for writes of `out_max` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn claw_session_build_context(out: *mut c_char, out_max: usize) -> usize {
    // SAFETY: per this function's contract.
    let Some(buf) = (unsafe { out_slice(out, out_max) }) else {
        return 0;
    };
    let n = with_state(None, |s, p| {
        p.on_task().then(|| context::build(p, &mut s.session, buf))
    });
    n.unwrap_or_else(|| {
        // Refused: off the task, or busy.
        if let Some(nul) = buf.first_mut() {
            *nul = 0;
        }
        0
    })
}

/// Stores a pair persistently. False when the key (1..=31 bytes) or value
/// (0..=127 bytes) is NULL, too long or not UTF-8, the store is full, or the
/// write failed — then the store on flash is exactly as before.
///
/// Off the MicroPython task: fails (false), the store untouched (it is
/// written at once, and only that task writes files).
///
/// # Safety
/// `key` and `value` are NULL or NUL-terminated strings.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn claw_memory_set(key: *const c_char, value: *const c_char) -> bool {
    // SAFETY: per this function's contract.
    let (Some(key), Some(value)) = (unsafe { c_bytes(key) }, unsafe { c_bytes(value) }) else {
        return false;
    };
    with_state(false, |_, p| {
        p.on_task() && memory::apply(p, key, memory::Edit::Set(value)).is_ok()
    })
}

/// Copies the value of `key` into `out`, NUL-terminated. False when absent,
/// unreadable, or when it does not fit `out_max` (then `out` is untouched).
///
/// Off the MicroPython task: fails (false, `out` untouched): the store is
/// read from its files.
///
/// # Safety
/// `key` is NULL or a NUL-terminated string; `out` is NULL or valid for
/// writes of `out_max` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn claw_memory_get(
    key: *const c_char,
    out: *mut c_char,
    out_max: usize,
) -> bool {
    // SAFETY: per this function's contract.
    let (Some(key), Some(out)) = (unsafe { c_bytes(key) }, unsafe { out_slice(out, out_max) })
    else {
        return false;
    };
    // Into `out` itself, written only with the value found and when it
    // fits with its NUL (else `out` is untouched).
    let Some(room) = out.len().checked_sub(1) else {
        return false;
    };
    let Ok(n) = with_state(Err(memory::MemError::Invalid), |_, p| {
        if !p.on_task() {
            return Err(memory::MemError::Invalid);
        }
        memory::get(p, key, out.get_mut(..room).unwrap_or(&mut []))
    }) else {
        return false;
    };
    match out.get_mut(n) {
        Some(nul) => {
            *nul = 0;
            true
        }
        None => false,
    }
}

/// Whether the ring has changes not yet on flash. No I/O.
///
/// Any task: RAM only.
#[unsafe(no_mangle)]
pub extern "C" fn claw_session_dirty() -> bool {
    with_state(false, |s, _| s.session.is_dirty())
}

/// Writes the ring to flash. True on success and when nothing was dirty; on
/// failure the ring stays dirty for a retry.
///
/// Off the MicroPython task: true when nothing is dirty; else false, the
/// ring left dirty for a flush on that task (the idle point, `docs/BUILD.md`).
#[unsafe(no_mangle)]
pub extern "C" fn claw_session_flush() -> bool {
    with_state(false, |s, p| {
        if p.on_task() {
            s.session.flush(p).is_ok()
        } else {
            !s.session.is_dirty()
        }
    })
}
