//! Test builds only: the `claw_port_*` symbols over an in-memory port, so the
//! exported functions can be driven from Rust tests exactly as C calls them.

use std::ffi::{CStr, c_char};
use std::sync::{Mutex, MutexGuard};

use crate::port::{Mode, Port};
use crate::testing::MemPort;

/// The file system and clock behind the exported functions.
pub static PORT: Mutex<Option<MemPort>> = Mutex::new(None);
/// Serialises tests that use the global state.
pub static SERIAL: Mutex<()> = Mutex::new(());

/// Takes the test lock and installs a fresh port; re-initialises the library.
pub fn fresh() -> MutexGuard<'static, ()> {
    let guard = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    *PORT.lock().unwrap() = Some(MemPort::new());
    super::safety::claw_rate_init();
    super::safety::claw_cb_init();
    super::session::claw_session_init();
    super::safety::claw_trust_set(super::safety::CLAW_TRUST_USB);
    guard
}

/// Runs `f` on the installed port.
pub fn port<R>(f: impl FnOnce(&mut MemPort) -> R) -> R {
    f(PORT.lock().unwrap().as_mut().expect("fresh() first"))
}

fn with<R>(f: impl FnOnce(&mut MemPort) -> R) -> R {
    port(f)
}

fn code<T>(r: Result<T, crate::port::Errno>, ok: impl FnOnce(T) -> i32) -> i32 {
    match r {
        Ok(v) => ok(v),
        Err(e) => -e.0,
    }
}

/// # Safety
/// Test port: see `claw_port.h`.
#[unsafe(no_mangle)]
pub extern "C" fn claw_port_ticks_ms() -> u32 {
    with(|p| p.now)
}

/// # Safety
/// `path` is a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn claw_port_open(path: *const c_char, mode: u8) -> i32 {
    // SAFETY: the core passes its NUL-terminated path constants.
    let path = unsafe { CStr::from_ptr(path) };
    let mode = match mode {
        0 => Mode::Read,
        1 => Mode::Write,
        _ => Mode::Append,
    };
    with(|p| code(p.open(path, mode), |fd| fd))
}

/// # Safety
/// `buf` is valid for `len` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn claw_port_read(fd: i32, buf: *mut u8, len: usize) -> i32 {
    // SAFETY: the core passes a live buffer of `len` bytes.
    let buf = unsafe { std::slice::from_raw_parts_mut(buf, len) };
    with(|p| code(p.read(fd, buf), |n| n as i32))
}

/// # Safety
/// `buf` is valid for `len` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn claw_port_write(fd: i32, buf: *const u8, len: usize) -> i32 {
    // SAFETY: the core passes a live buffer of `len` bytes.
    let buf = unsafe { std::slice::from_raw_parts(buf, len) };
    with(|p| code(p.write(fd, buf), |()| len as i32))
}

/// Test port close.
#[unsafe(no_mangle)]
pub extern "C" fn claw_port_close(fd: i32) -> i32 {
    with(|p| code(p.close(fd), |()| 0))
}

/// # Safety
/// `path` is a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn claw_port_remove(path: *const c_char) -> i32 {
    // SAFETY: the core passes its NUL-terminated path constants.
    let path = unsafe { CStr::from_ptr(path) };
    with(|p| code(p.remove(path), |()| 0))
}

/// # Safety
/// `from` and `to` are NUL-terminated strings.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn claw_port_rename(from: *const c_char, to: *const c_char) -> i32 {
    // SAFETY: the core passes its NUL-terminated path constants.
    let (from, to) = unsafe { (CStr::from_ptr(from), CStr::from_ptr(to)) };
    with(|p| code(p.rename(from, to), |()| 0))
}

/// # Safety
/// `path` is a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn claw_port_atomic_write(path: *const c_char) -> u8 {
    // SAFETY: the core passes its NUL-terminated path constants.
    let path = unsafe { CStr::from_ptr(path) };
    with(|p| u8::from(p.atomic_write(path)))
}
