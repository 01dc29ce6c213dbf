//! The 22 functions called from a task other than the MicroPython one (a
//! thread that the test port's `claw_port_on_vm_task` calls another task),
//! and from inside a running call: what each answers, that none of them
//! makes a file call there, and that the state they leave is right for the
//! MicroPython task afterwards.

use core::ffi::c_char;
use std::ffi::CString;
use std::sync::atomic::Ordering;

use super::safety::*;
use super::session::*;
use super::test_port::{OFF_TASK_FILE_CALLS, fresh, off_task, port, set_file_hook};
use crate::port::SESSION_PATH;

fn cs(s: &str) -> CString {
    CString::new(s).unwrap()
}

fn add(role: claw_role_t, s: &str) -> bool {
    let c = cs(s);
    // SAFETY: a valid C string.
    unsafe { claw_session_add(role, c.as_ptr()) }
}

fn set(k: &str, v: &str) -> bool {
    let (k, v) = (cs(k), cs(v));
    // SAFETY: valid C strings.
    unsafe { claw_memory_set(k.as_ptr(), v.as_ptr()) }
}

/// `claw_memory_get` into a buffer of canaries: the value, and whether the
/// buffer was left untouched on a miss.
fn get(k: &str) -> (Option<String>, bool) {
    let k = cs(k);
    let mut buf = [0x55u8; 64];
    // SAFETY: `buf` holds 64 bytes.
    let ok = unsafe { claw_memory_get(k.as_ptr(), buf.as_mut_ptr().cast(), buf.len()) };
    let untouched = buf.iter().all(|&b| b == 0x55);
    let v = ok.then(|| {
        let n = buf.iter().position(|&b| b == 0).unwrap();
        String::from_utf8(buf[..n].to_vec()).unwrap()
    });
    (v, untouched)
}

/// `claw_session_build_context` into 256 bytes of canaries: its return and
/// the text up to the NUL (None: no NUL was written).
fn context() -> (usize, Option<String>) {
    let mut buf = [0x55u8; 256];
    // SAFETY: `buf` holds 256 bytes.
    let n = unsafe { claw_session_build_context(buf.as_mut_ptr().cast(), buf.len()) };
    let text = buf
        .iter()
        .position(|&b| b == 0)
        .map(|i| String::from_utf8(buf[..i].to_vec()).unwrap());
    (n, text)
}

fn name_call(f: unsafe extern "C" fn(*const c_char) -> bool, name: &str) -> bool {
    let c = cs(name);
    // SAFETY: a valid C string.
    unsafe { f(c.as_ptr()) }
}

fn rate_set(name: &str, n: u16) {
    let c = cs(name);
    // SAFETY: a valid C string.
    unsafe { claw_rate_set(c.as_ptr(), n) }
}

fn rate_record(name: &str) {
    let c = cs(name);
    // SAFETY: a valid C string.
    unsafe { claw_rate_record(c.as_ptr()) }
}

/// File calls made off the task since the last call of this.
fn off_task_file_calls() -> u32 {
    OFF_TASK_FILE_CALLS.swap(0, Ordering::SeqCst)
}

/// A turn and a pair on flash, then a fresh boot: nothing loaded.
fn booted_with_files() {
    assert!(add(CLAW_ROLE_USER, "on flash"));
    assert!(claw_session_flush());
    assert!(set("name", "Mali"));
    claw_session_init();
    off_task_file_calls();
}

#[test]
fn off_task_with_nothing_loaded() {
    let _g = fresh();
    booted_with_files();
    let files = port(|p| p.snapshot());
    let r = off_task(|| {
        let count = claw_session_count();
        let added = add(CLAW_ROLE_USER, "from the runner");
        let dirty = claw_session_dirty();
        let flushed = claw_session_flush();
        claw_session_clear();
        let ctx = context();
        let got = get("name");
        let stored = set("k", "v");
        (count, added, dirty, flushed, ctx, got, stored)
    });
    assert_eq!(off_task_file_calls(), 0, "no file call off the task");
    assert_eq!(port(|p| p.snapshot()), files, "no file changed");
    let (count, added, dirty, flushed, ctx, got, stored) = r;
    assert_eq!(count, 0, "count: 0 while the ring is not loaded");
    assert!(!added, "add: false while the ring is not loaded");
    assert!(!dirty, "dirty: nothing added");
    assert!(flushed, "flush: true, nothing dirty");
    assert_eq!(
        ctx,
        (0, Some(String::new())),
        "build_context: 0, the empty string"
    );
    assert_eq!(got, (None, true), "memory_get: false, out untouched");
    assert!(!stored, "memory_set: false");
    // The clear did nothing: on the task the ring loads as it was.
    assert_eq!(claw_session_count(), 1);
    assert_eq!(get("name").0.as_deref(), Some("Mali"));
    assert_eq!(get("k").0, None, "the refused set left no pair");
    assert_eq!(
        context().1.as_deref(),
        Some("Memory:\n- name: Mali\nConversation:\nuser: on flash\n")
    );
}

#[test]
fn off_task_with_the_ring_loaded() {
    let _g = fresh();
    booted_with_files();
    assert_eq!(claw_session_count(), 1, "loaded on the task");
    let (added, count, dirty, flushed) = off_task(|| {
        (
            add(CLAW_ROLE_TOOL, "execute: gpio_set"),
            claw_session_count(),
            claw_session_dirty(),
            claw_session_flush(),
        )
    });
    assert_eq!(off_task_file_calls(), 0);
    assert!(added, "add: from RAM");
    assert_eq!(count, 2);
    assert!(dirty, "the ring is dirty");
    assert!(!flushed, "flush: false off the task while dirty");
    assert!(claw_session_dirty(), "still dirty for the task's flush");
    assert!(claw_session_flush(), "the task flushes it");
    claw_session_init();
    assert_eq!(claw_session_count(), 2, "the runner's turn reached flash");
    // A clear off the task: RAM now, the files at the task's next flush.
    assert_eq!(claw_session_count(), 2);
    off_task(|| claw_session_clear());
    assert_eq!(off_task_file_calls(), 0);
    assert!(
        port(|p| p.get(SESSION_PATH).is_some()),
        "the file stays until the flush"
    );
    assert_eq!(claw_session_count(), 0, "the ring is empty at once");
    assert!(claw_session_dirty(), "the clear is pending");
    assert!(claw_session_flush());
    assert!(!claw_session_dirty());
    claw_session_init();
    assert_eq!(
        claw_session_count(),
        0,
        "the old session does not come back"
    );
    assert_eq!(get("name").0.as_deref(), Some("Mali"), "memory untouched");
    // A new turn after a clear whose flush is pending goes to flash with it.
    assert_eq!(claw_session_count(), 0);
    assert!(add(CLAW_ROLE_USER, "one"));
    assert!(claw_session_flush());
    off_task(|| claw_session_clear());
    assert!(off_task(|| add(CLAW_ROLE_USER, "after the clear")));
    assert!(claw_session_flush());
    claw_session_init();
    assert_eq!(claw_session_count(), 1);
    assert_eq!(
        context().1.as_deref(),
        Some("Memory:\n- name: Mali\nConversation:\nuser: after the clear\n")
    );
}

#[test]
fn off_task_init_drops_the_ram_ring() {
    let _g = fresh();
    booted_with_files();
    assert_eq!(claw_session_count(), 1);
    assert!(add(CLAW_ROLE_USER, "unflushed"));
    off_task(|| claw_session_init());
    assert_eq!(off_task_file_calls(), 0);
    assert!(!claw_session_dirty());
    assert_eq!(claw_session_count(), 1, "reloaded from flash on the task");
}

#[test]
fn off_task_safety_gates_answer_from_ram() {
    let _g = fresh();
    let r = off_task(|| {
        claw_cb_init();
        let allow = claw_cb_allow();
        for _ in 0..3 {
            claw_cb_failure();
        }
        let open = (
            claw_cb_state(),
            claw_cb_cooldown_remaining(),
            claw_cb_allow(),
        );
        claw_cb_success();
        let closed = claw_cb_state();
        claw_rate_init();
        rate_set("hard_reset", 1);
        let first = name_call(claw_rate_check, "hard_reset");
        rate_record("hard_reset");
        let second = name_call(claw_rate_check, "hard_reset");
        claw_trust_set(CLAW_TRUST_HTTPS);
        let trust = (claw_trust_get(), claw_trust_allows(1), claw_trust_allows(2));
        (allow, open, closed, first, second, trust)
    });
    assert_eq!(off_task_file_calls(), 0);
    let (allow, open, closed, first, second, trust) = r;
    assert!(allow);
    assert_eq!(open, (CLAW_CB_OPEN, 30_000, false));
    assert_eq!(closed, CLAW_CB_CLOSED);
    assert!(first && !second, "the limit of 1 holds");
    assert_eq!(trust, (CLAW_TRUST_HTTPS, true, false));
    // One state for every task.
    assert!(!name_call(claw_rate_check, "hard_reset"));
    assert_eq!(claw_trust_get(), CLAW_TRUST_HTTPS);
    port(|p| p.now += 70_000);
    assert!(
        name_call(claw_rate_check, "hard_reset"),
        "the window slid (10 s granularity)"
    );
}

/// While a call runs on the MicroPython task (stopped here inside one of
/// its file operations), every call from another task is refused: its
/// refused value, nothing changed, no port call at all.
#[test]
fn a_call_from_another_task_during_a_call_is_refused() {
    let _g = fresh();
    booted_with_files();
    claw_trust_set(CLAW_TRUST_HTTPS);
    let seen = std::sync::Arc::new(std::sync::Mutex::new(None));
    let seen2 = seen.clone();
    set_file_hook(Some(Box::new(move || {
        let mut s = seen2.lock().unwrap();
        if s.is_some() {
            return;
        }
        let refused = off_task(|| {
            let before = super::test_port::CLOCK_CALLS.load(Ordering::SeqCst);
            let r = (
                (
                    claw_cb_allow(),
                    claw_cb_state(),
                    claw_cb_cooldown_remaining(),
                    name_call(claw_rate_check, "x"),
                    claw_trust_get(),
                    claw_trust_allows(0),
                ),
                (
                    claw_session_count(),
                    add(CLAW_ROLE_USER, "no"),
                    claw_session_dirty(),
                    claw_session_flush(),
                    context(),
                    get("name"),
                    set("a", "b"),
                ),
            );
            claw_cb_failure();
            claw_trust_set(CLAW_TRUST_USB);
            claw_session_clear();
            claw_session_init();
            (
                r,
                super::test_port::CLOCK_CALLS.load(Ordering::SeqCst) - before,
            )
        });
        *s = Some(refused);
    })));
    // Loads the ring: file calls, during which the hook runs.
    assert_eq!(claw_session_count(), 1);
    set_file_hook(None);
    assert_eq!(off_task_file_calls(), 0);
    let (r, clock_calls) = seen.lock().unwrap().take().expect("the hook ran");
    assert_eq!(
        clock_calls, 0,
        "a refused call reaches no port function, not even the clock"
    );
    assert_eq!(
        r,
        (
            (false, CLAW_CB_OPEN, 0, false, CLAW_TRUST_NONE, false),
            (
                0,
                false,
                false,
                false,
                (0, Some(String::new())),
                (None, true),
                false
            )
        )
    );
    // None of the refused calls changed anything.
    assert_eq!(claw_trust_get(), CLAW_TRUST_HTTPS);
    assert_eq!(claw_cb_state(), CLAW_CB_CLOSED);
    assert!(claw_cb_allow());
    assert_eq!(claw_session_count(), 1);
    assert!(!claw_session_dirty());
    assert_eq!(get("a").0, None);
}
