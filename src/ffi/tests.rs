//! The exported functions driven through their C signatures, over the
//! in-memory test port.

use core::ffi::c_char;
use std::ffi::CString;

use super::safety::*;
use super::session::*;
use super::test_port::{fresh, port};
use crate::port::{Errno, SESSION_PATH};
use crate::testing::Op;

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

fn get(k: &str, out_max: usize) -> Option<String> {
    let k = cs(k);
    let mut buf = vec![0x55u8; out_max + 4];
    // SAFETY: `buf` holds `out_max` bytes (plus canaries).
    let ok = unsafe { claw_memory_get(k.as_ptr(), buf.as_mut_ptr().cast(), out_max) };
    assert!(
        buf[out_max..].iter().all(|&b| b == 0x55),
        "wrote past out_max"
    );
    ok.then(|| {
        let n = buf.iter().position(|&b| b == 0).unwrap();
        String::from_utf8(buf[..n].to_vec()).unwrap()
    })
}

fn context(out_max: usize) -> String {
    let mut buf = vec![0x55u8; out_max + 4];
    // SAFETY: `buf` holds `out_max` bytes (plus canaries).
    let n = unsafe { claw_session_build_context(buf.as_mut_ptr().cast(), out_max) };
    assert!(
        buf[out_max..].iter().all(|&b| b == 0x55),
        "wrote past out_max"
    );
    String::from_utf8(buf[..n].to_vec()).unwrap()
}

fn name_call(f: unsafe extern "C" fn(*const c_char) -> bool, name: &str) -> bool {
    let c = cs(name);
    // SAFETY: a valid C string.
    unsafe { f(c.as_ptr()) }
}

fn record(name: &str) {
    let c = cs(name);
    // SAFETY: a valid C string.
    unsafe { claw_rate_record(c.as_ptr()) }
}

#[test]
fn null_and_bad_arguments_fail_closed() {
    let _g = fresh();
    // SAFETY: NULL is allowed by every contract.
    unsafe {
        assert!(!claw_session_add(CLAW_ROLE_USER, core::ptr::null()));
        assert!(!claw_memory_set(core::ptr::null(), c"v".as_ptr()));
        assert!(!claw_memory_set(c"k".as_ptr(), core::ptr::null()));
        assert!(!claw_memory_get(
            core::ptr::null(),
            core::ptr::null_mut(),
            10
        ));
        assert!(!claw_memory_get(c"k".as_ptr(), core::ptr::null_mut(), 10));
        assert_eq!(claw_session_build_context(core::ptr::null_mut(), 100), 0);
        assert!(!claw_rate_check(core::ptr::null()));
        claw_rate_record(core::ptr::null());
        claw_rate_set(core::ptr::null(), 5);
    }
    assert!(!add(4, "x"));
    assert!(!add(255, "x"));
    assert_eq!(claw_session_count(), 0);
    assert!(add(CLAW_ROLE_TOOL, "ok"));
    let bad = [0xE0u8, 0xB8, 0];
    // SAFETY: NUL-terminated.
    assert!(!unsafe { claw_session_add(CLAW_ROLE_USER, bad.as_ptr().cast()) });
    assert_eq!(context(0), "");
    assert_eq!(context(1), "");
}

#[test]
fn session_lifecycle_through_c() {
    let _g = fresh();
    for i in 0..12 {
        assert!(add(CLAW_ROLE_USER, &format!("m{i} \"q\"\n")));
    }
    assert_eq!(claw_session_count(), 10);
    assert!(claw_session_dirty());
    assert_eq!(port(|p| p.writes), 0, "add writes no flash");
    assert!(claw_session_flush());
    assert!(!claw_session_dirty());
    assert!(claw_session_flush(), "clean flush is a success");
    claw_session_init();
    assert!(!claw_session_dirty());
    assert_eq!(claw_session_count(), 10, "lazy reload");
    // (The turn's line feed written as an escape: one record a line.)
    assert!(context(4096).ends_with("user: m11 \"q\"\\n\n"));
    assert!(set("name", "สมชาย"));
    claw_session_clear();
    assert_eq!(claw_session_count(), 0);
    assert!(port(|p| p.get(SESSION_PATH).is_none()));
    assert_eq!(get("name", 128).as_deref(), Some("สมชาย"));
    claw_session_init();
    assert_eq!(claw_session_count(), 0);
}

#[test]
fn flush_failure_keeps_dirty() {
    let _g = fresh();
    assert!(add(CLAW_ROLE_USER, "a"));
    port(|p| p.fail(Op::Write, 0, Errno::EIO));
    assert!(!claw_session_flush());
    assert!(claw_session_dirty());
    assert!(claw_session_flush());
    claw_session_init();
    assert_eq!(claw_session_count(), 1);
}

#[test]
fn memory_limits_and_out_max() {
    let _g = fresh();
    let k31 = "k".repeat(31);
    assert!(set(&k31, &"v".repeat(127)));
    assert!(!set(&"k".repeat(32), "v"));
    assert!(!set("k", &"v".repeat(128)));
    assert!(!set("", "v"));
    assert!(set("t", "ab"));
    assert_eq!(get("t", 0), None);
    assert_eq!(get("t", 1), None);
    assert_eq!(get("t", 2), None);
    assert_eq!(get("t", 3).as_deref(), Some("ab"));
    assert_eq!(get("missing", 128), None);
    assert_eq!(get(&k31, 128).map(|v| v.len()), Some(127));
    assert_eq!(get(&k31, 127), None);
    // A failed write (of the key's shard) leaves the store as it was.
    port(|p| p.fail(Op::Write, 0, Errno::EIO));
    assert!(!set("t", "x"));
    port(|p| p.heal());
    assert_eq!(get("t", 3).as_deref(), Some("ab"));
}

#[test]
fn breaker_through_c_across_the_wrap() {
    let _g = fresh();
    port(|p| p.now = u32::MAX - 10_000);
    assert_eq!(claw_cb_state(), CLAW_CB_CLOSED);
    for _ in 0..3 {
        assert!(claw_cb_allow());
        claw_cb_failure();
    }
    assert_eq!(claw_cb_state(), CLAW_CB_OPEN);
    assert!(!claw_cb_allow());
    assert_eq!(claw_cb_cooldown_remaining(), 30_000);
    port(|p| p.now = p.now.wrapping_add(29_999));
    assert_eq!(claw_cb_cooldown_remaining(), 1);
    assert!(!claw_cb_allow());
    port(|p| p.now = p.now.wrapping_add(1));
    assert_eq!(claw_cb_state(), CLAW_CB_HALFOPEN);
    assert!(claw_cb_allow());
    assert!(!claw_cb_allow());
    claw_cb_success();
    assert_eq!(claw_cb_state(), CLAW_CB_CLOSED);
    assert_eq!(claw_cb_cooldown_remaining(), 0);
}

#[test]
fn gates_rate_and_trust_through_c() {
    let _g = fresh();
    for i in 0..10 {
        assert!(name_call(claw_rate_check, "led"), "call {i}");
        assert!(name_call(claw_rate_check, "led"), "checks are free");
        record("led");
    }
    assert!(!name_call(claw_rate_check, "led"), "11th default call");
    let slow = cs("slow");
    // SAFETY: valid C string.
    unsafe { claw_rate_set(slow.as_ptr(), 1) };
    record("slow");
    assert!(!name_call(claw_rate_check, "slow"));
    assert!(!name_call(claw_rate_check, &"n".repeat(32)));
    assert_eq!(claw_trust_get(), CLAW_TRUST_USB);
    assert!(claw_trust_allows(2));
    claw_trust_set(CLAW_TRUST_HTTPS);
    assert!(claw_trust_allows(1) && !claw_trust_allows(2));
    claw_trust_set(9);
    assert_eq!(claw_trust_get(), CLAW_TRUST_NONE);
    assert!(!claw_trust_allows(0));
}

#[cfg(feature = "recall")]
#[test]
fn search_forget_pin_and_export_through_c() {
    use super::recall::*;
    let _g = fresh();
    assert!(set("wifi_password", "hunter2"));
    assert!(set("cat", "Mali"));
    assert!(set("แมว", "ชื่อมะลิ"));
    let empty = claw_memory_hit_t {
        key: [0; 32],
        value: [0; 128],
        score: 0,
        pinned: false,
    };
    let mut hits = [empty; 4];
    let q = cs("what is my wifi password");
    // SAFETY: valid string and an array of 4.
    let n = unsafe { claw_memory_search(q.as_ptr(), hits.as_mut_ptr(), hits.len()) };
    assert!(n >= 1);
    let key = |h: &claw_memory_hit_t| {
        let k: Vec<u8> = h
            .key
            .iter()
            .take_while(|&&c| c != 0)
            .map(|&c| c as u8)
            .collect();
        String::from_utf8(k).unwrap()
    };
    assert_eq!(key(&hits[0]), "wifi_password");
    assert!(hits[..n].windows(2).all(|w| w[0].score >= w[1].score));
    let q = cs("แมวของฉันชื่ออะไร");
    // SAFETY: as above.
    let n = unsafe { claw_memory_search(q.as_ptr(), hits.as_mut_ptr(), 1) };
    assert_eq!((n, key(&hits[0])), (1, "แมว".to_string()));
    // SAFETY: NULL arguments are allowed.
    unsafe {
        assert_eq!(
            claw_memory_search(core::ptr::null(), hits.as_mut_ptr(), 4),
            0
        );
        assert_eq!(claw_memory_search(q.as_ptr(), core::ptr::null_mut(), 4), 0);
        assert!(!claw_memory_at(0, core::ptr::null_mut()));
        assert!(!claw_memory_forget(core::ptr::null()));
    }
    let cat = cs("cat");
    // SAFETY: valid strings and one element.
    unsafe {
        assert!(claw_memory_pin(cat.as_ptr(), true));
        // A changed key keeps its place.
        let mut one = empty;
        assert!(claw_memory_at(1, &mut one));
        assert_eq!(key(&one), "cat");
        assert!(one.pinned);
        assert!(!claw_memory_at(3, &mut one));
        assert!(claw_memory_forget(cat.as_ptr()));
        assert!(!claw_memory_forget(cat.as_ptr()));
        assert!(!claw_memory_pin(cat.as_ptr(), true));
    }
    assert_eq!(get("cat", 128), None);
}
