//! The agent's exported functions (`include/claw_ext.h`, feature `agent`)
//! driven through their C signatures, over the scripted agent callbacks of
//! [`super::test_port::agent`]: `claw_ask`, `claw_tool`, `claw_tacp`,
//! `claw_connect`, the config, MEMORY.md export/import, the checks and the
//! status texts — including tools that call back into `claw_ask` and
//! `claw_tool` (nesting through the FFI), a host that lies about lengths,
//! NULL pointers and short buffers. Miri runs these (`scripts/test.sh`).

use core::ffi::{CStr, c_void};
use std::sync::Mutex;

use super::agent::*;
use super::safety::*;
use super::session::*;
use super::sys;
use super::test_port::agent::{Post, ToolScript, fresh, host};
use super::test_port::port;
use crate::agent::Status;

const OK: claw_status_t = CLAW_OK;

fn st(s: Status) -> claw_status_t {
    s as claw_status_t
}

fn text_of(s: claw_status_t) -> String {
    // SAFETY: claw_status_text returns a static NUL-terminated string.
    let t = unsafe { CStr::from_ptr(claw_status_text(s)) };
    t.to_str().expect("UTF-8").to_string()
}

/// `ask(prompt)` as the binding makes it: check, allocate, ask.
fn ask(prompt: &[u8], ctx: *mut c_void) -> (claw_status_t, Vec<u8>) {
    let mut need = 0usize;
    // SAFETY: a live prompt and out-pointer.
    let s = unsafe { claw_ask_check(prompt.as_ptr(), prompt.len(), &mut need) };
    if s != OK {
        return (s, Vec::new());
    }
    // SAFETY: as above.
    assert_eq!(need, unsafe {
        claw_ask_work_size(prompt.as_ptr(), prompt.len())
    });
    let mut work = vec![0u8; need];
    let mut n = usize::MAX;
    // SAFETY: the work buffer holds `need` bytes and does not overlap the
    // prompt; `ctx` is only handed back to claw_port_tool.
    let s = unsafe {
        claw_ask(
            prompt.as_ptr(),
            prompt.len(),
            work.as_mut_ptr(),
            work.len(),
            ctx,
            &mut n,
        )
    };
    if s == OK {
        assert!(n <= CLAW_REPLY_MAX);
        (s, work[..n].to_vec())
    } else {
        assert_eq!(n, usize::MAX, "reply_len written on failure");
        (s, Vec::new())
    }
}

/// `tool(name, text)` from the REPL.
fn tool(
    name: &[u8],
    arg: Option<&[u8]>,
    ctx: *mut c_void,
    out_max: usize,
) -> (claw_status_t, claw_value_t, Vec<u8>) {
    let mut out = vec![0u8; out_max + 8];
    let mut v = claw_value_t {
        kind: 99,
        ival: 99,
        len: 99,
    };
    let (kind, a) = match arg {
        Some(a) => (CLAW_ARG_TEXT, a),
        None => (CLAW_ARG_NONE, &[][..]),
    };
    // SAFETY: live buffers of the lengths given.
    let s = unsafe {
        claw_tool(
            name.as_ptr(),
            name.len(),
            kind,
            a.as_ptr(),
            a.len(),
            0,
            ctx,
            out.as_mut_ptr(),
            out_max,
            &mut v,
        )
    };
    assert!(out[out_max..].iter().all(|&b| b == 0), "wrote past out_max");
    let n = v.len.min(out_max);
    (s, v, out[..n].to_vec())
}

/// One TACP request: its status and the answers it sent.
fn tacp(sub: u8, payload: &[u8], ctx: *mut c_void) -> (claw_status_t, Vec<(u8, String)>) {
    // SAFETY: a live payload.
    let need = unsafe { claw_tacp_work_size(sub, payload.as_ptr(), payload.len()) };
    let mut work = vec![0u8; need];
    let mark = host(|h| h.tacp.len());
    // SAFETY: live buffers of the lengths given.
    let s = unsafe {
        claw_tacp_dispatch(
            sub,
            payload.as_ptr(),
            payload.len(),
            work.as_mut_ptr(),
            work.len(),
            ctx,
        )
    };
    let answers = host(|h| h.tacp.split_off(mark));
    let answers = answers
        .into_iter()
        .map(|(sub, p)| (sub, String::from_utf8(p).expect("a TACP answer is UTF-8")))
        .collect();
    (s, answers)
}

fn connect() -> bool {
    let mut ok = false;
    // SAFETY: NUL-terminated strings and a valid out-pointer.
    let s = unsafe { claw_connect(c"127.0.0.1".as_ptr(), 8080, c"key".as_ptr(), &mut ok) };
    assert_eq!(s, OK);
    ok
}

fn register(name: &str, risk: u8) -> i32 {
    // SAFETY: a live name.
    unsafe { claw_tool_register(name.as_ptr(), name.len(), risk, 0, false) }
}

fn status() -> claw_agent_status_t {
    let mut v = core::mem::MaybeUninit::<claw_agent_status_t>::uninit();
    // SAFETY: a valid out-pointer.
    assert!(unsafe { claw_agent_status(v.as_mut_ptr()) });
    // SAFETY: written on success.
    unsafe { v.assume_init() }
}

fn cstr(b: &[core::ffi::c_char]) -> String {
    // SAFETY: the library NUL-terminates every name it writes.
    unsafe { CStr::from_ptr(b.as_ptr()) }
        .to_str()
        .unwrap()
        .to_string()
}

/// A body as text. (The exact bytes are checked: serde-json-core writes
/// them deterministically, and the `json` crate, which the other tests
/// parse with, is itself undefined behaviour under Miri's Stacked Borrows.)
fn text(body: &[u8]) -> &str {
    std::str::from_utf8(body).expect("UTF-8")
}

#[test]
fn ask_and_a_tool_round_through_the_c_abi() {
    let _g = fresh(false);
    // Not connected: refused before any buffer, one error.
    assert_eq!(
        ask(b"hi", core::ptr::null_mut()).0,
        st(Status::NotConnected)
    );
    assert_eq!(status().errors, 1);
    assert!(connect());
    assert_eq!(claw_trust_get(), CLAW_TRUST_HTTPS);
    host(|h| {
        assert_eq!(
            h.connects,
            vec![(b"127.0.0.1".to_vec(), 8080, b"key".to_vec())]
        );
        assert_eq!(h.ui_inits, 1);
    });
    let slot = register("py", 0);
    assert!(slot >= 4, "after the built-ins: {slot}");
    host(|h| {
        h.replies.push_back(Post::Body(
            "{\"tool_call\":{\"name\":\"py\",\"arg\":\"สวัสดี\"}}".into(),
        ));
        h.replies.push_back(Post::Body(b"the answer".to_vec()));
        h.tools.push_back(ToolScript::Returned(b"tool says \"hi\""));
        h.tokens = (7, 9);
    });
    let mut marker = 0x5eed_u64;
    let ctx = (&raw mut marker).cast::<c_void>();
    let (s, reply) = ask("hello".as_bytes(), ctx);
    assert_eq!((s, &reply[..]), (OK, &b"the answer"[..]));
    host(|h| {
        assert_eq!(h.calls.len(), 1);
        let c = &h.calls[0];
        assert_eq!(c.slot as i32, slot);
        assert_eq!(u32::from(c.kind), sys::CLAW_PORT_ARG_TEXT);
        assert_eq!(c.arg, "สวัสดี".as_bytes());
        assert_eq!(c.ctx, ctx as usize, "ctx handed back untouched");
        assert_eq!(c.out_max, crate::agent::TOOL_RESULT_MAX);
        assert_eq!(h.bodies.len(), 2);
        let first = text(&h.bodies[0]);
        assert!(
            first.starts_with(r#"{"prompt":"hello","context":""#),
            "{first}"
        );
        assert!(first.ends_with(r#""}"#) && !first.contains("tool_result"));
        let second = text(&h.bodies[1]);
        assert!(second.starts_with(r#"{"prompt":"hello","context":""#));
        assert!(
            second.ends_with(
                r#"","tool_result":{"name":"py","status":"ok","result":"tool says \"hi\""}}"#
            ),
            "{second}"
        );
        let ev = |e: u32, t: &[u8]| h.ui.iter().any(|(k, x)| u32::from(*k) == e && x == t);
        assert!(ev(sys::CLAW_PORT_UI_CHAT_USER, b"hello"));
        assert!(ev(sys::CLAW_PORT_UI_CHAT_ASSISTANT, b"the answer"));
        assert!(ev(sys::CLAW_PORT_UI_TOOL, b"py: tool says \"hi\""));
    });
    let s = status();
    assert_eq!(cstr(&s.state), "idle");
    assert_eq!(cstr(&s.last_result), "ok (10 bytes)");
    assert!(s.connected);
    assert_eq!(s.errors, 1);
    let mut info = core::mem::MaybeUninit::<claw_tool_info_t>::uninit();
    // SAFETY: a valid out-pointer.
    assert!(unsafe { claw_tool_info(slot as u8, info.as_mut_ptr()) });
    // SAFETY: written on success.
    let info = unsafe { info.assume_init() };
    assert_eq!(
        (cstr(&info.name), info.risk, info.builtin),
        ("py".into(), 0, false)
    );
    // The backend fails: one error, one breaker failure.
    host(|h| h.replies.push_back(Post::Fail));
    assert_eq!(ask(b"again", ctx).0, st(Status::RequestFailed));
    assert_eq!(status().errors, 2);
    assert_eq!(cstr(&status().state), "error");
    assert_eq!(claw_cb_state(), CLAW_CB_CLOSED);
    assert_eq!(claw_disconnect(), OK);
    assert_eq!(claw_trust_get(), CLAW_TRUST_USB);
    assert!(!status().connected);
}

/// A tool result of TOOL_RESULT_MAX bytes.
static BIG_RESULT: [u8; crate::agent::TOOL_RESULT_MAX] = [b'r'; crate::agent::TOOL_RESULT_MAX];

/// The value of `"<member>":"` in a body up to the next quote (the test's
/// strings hold none).
fn member<'a>(body: &'a str, name: &str) -> &'a str {
    let key = format!("\"{name}\":\"");
    let at = body.find(&key).map_or(body.len(), |i| i + key.len());
    let rest = &body[at..];
    &rest[..rest.find('"').unwrap_or(rest.len())]
}

#[test]
fn a_4k_prompt_and_a_whole_tool_result_in_the_fixed_work_buffer() {
    use crate::agent::{ASK_WORK, REPLY_MAX, TOOL_RESULT_MAX};
    let _g = fresh(false);
    assert!(connect());
    assert!(register("py", 0) >= 4);
    // A context with something in it: memory and turns.
    for i in 0..12 {
        let key = std::ffi::CString::new(format!("key{i}")).unwrap();
        let value = std::ffi::CString::new("v".repeat(100)).unwrap();
        // SAFETY: NUL-terminated strings.
        assert!(unsafe { claw_memory_set(key.as_ptr(), value.as_ptr()) });
    }
    let turn = std::ffi::CString::new("t".repeat(200)).unwrap();
    for _ in 0..6 {
        // SAFETY: a NUL-terminated string.
        assert!(unsafe { claw_session_add(CLAW_ROLE_USER, turn.as_ptr()) });
    }
    let body_area = ASK_WORK - (REPLY_MAX + 1);
    for (prompt, work) in [
        (vec![b'p'; CLAW_PROMPT_MAX], ASK_WORK),
        (b"short".to_vec(), ASK_WORK),
        // Every byte escaped: the work buffer grows by the excess.
        (vec![b'"'; CLAW_PROMPT_MAX], ASK_WORK + CLAW_PROMPT_MAX),
    ] {
        // SAFETY: a live prompt.
        let need = unsafe { claw_ask_work_size(prompt.as_ptr(), prompt.len()) };
        assert_eq!(need, work);
        host(|h| {
            h.bodies.clear();
            h.replies.push_back(Post::Body(
                br#"{"tool_call":{"name":"py","arg":"a"}}"#.to_vec(),
            ));
            h.replies.push_back(Post::Body(b"done".to_vec()));
            h.tools.push_back(ToolScript::Returned(&BIG_RESULT));
        });
        let (s, reply) = ask(&prompt, core::ptr::null_mut());
        assert_eq!((s, &reply[..]), (OK, &b"done"[..]));
        host(|h| {
            assert_eq!(h.bodies.len(), 2);
            let escaped: String = String::from_utf8(prompt.clone())
                .unwrap()
                .replace('"', "\\\"");
            for b in &h.bodies {
                let body = text(b);
                assert!(b.len() <= body_area + (work - ASK_WORK), "{}", b.len());
                assert!(body.starts_with(&format!("{{\"prompt\":\"{escaped}\",\"context\":\"")));
            }
            let (first, second) = (text(&h.bodies[0]), text(&h.bodies[1]));
            // The whole result in the follow-up, the context in what is left.
            assert!(second.ends_with(&format!(
                r#"","tool_result":{{"name":"py","status":"ok","result":"{}"}}}}"#,
                "r".repeat(TOOL_RESULT_MAX)
            )));
            println!(
                "prompt {} B: context {} B, then {} B",
                prompt.len(),
                member(first, "context").len(),
                member(second, "context").len()
            );
            if prompt.len() < 100 {
                // A short prompt: the context as before (the turns and the
                // memory lines), less the result's room in the second.
                assert!(member(first, "context").len() > 1800, "{first}");
                assert!(member(second, "context").len() > 1800, "{second}");
            } else {
                // A 4 KiB prompt: the context takes what is left.
                assert!(member(first, "context").len() < 1200, "{first}");
                assert!(member(second, "context").len() < 200, "{second}");
            }
        });
    }
}

#[test]
fn the_opt_in_tools_list_is_cut_cleanly_when_the_body_is_full() {
    let _g = fresh(false);
    assert!(connect());
    for i in 0..11 {
        let name = format!("{i:02}{}", "n".repeat(29));
        assert!(register(&name, 1) >= 4);
    }
    assert!(register("py", 0) >= 4);
    let mut values = [0i32; CLAW_CONFIG_KEYS];
    // SAFETY: a live array of CLAW_CONFIG_KEYS values.
    unsafe {
        assert!(claw_config_get(values.as_mut_ptr()));
        values[8] = 1; // send_tools
        assert_eq!(claw_config_set(values.as_ptr(), 1 << 8), 0);
    }
    host(|h| {
        h.replies.push_back(Post::Body(
            br#"{"tool_call":{"name":"py","arg":"a"}}"#.to_vec(),
        ));
        h.replies.push_back(Post::Body(b"done".to_vec()));
        h.tools.push_back(ToolScript::Returned(&BIG_RESULT));
    });
    let prompt = vec![b'p'; CLAW_PROMPT_MAX];
    let (s, reply) = ask(&prompt, core::ptr::null_mut());
    assert_eq!((s, &reply[..]), (OK, &b"done"[..]));
    host(|h| {
        let listed = |b: &str| {
            b[b.find(r#""tools":["#).expect("tools") + 9..]
                .matches(r#"{"name":"#)
                .count()
        };
        let (first, second) = (text(&h.bodies[0]), text(&h.bodies[1]));
        // Every tool in the first request; the follow-up's whole result
        // leaves room for fewer, and the member still ends well.
        assert_eq!(listed(first), 11 + 1 + 5, "{first}");
        assert!(listed(second) < listed(first), "{second}");
        for b in [first, second] {
            assert!(b.ends_with("}]}"), "{b}");
        }
        assert!(second.contains(&"r".repeat(crate::agent::TOOL_RESULT_MAX)));
    });
}

/// What the nested calls of a tool saw.
static SEEN: Mutex<Vec<String>> = Mutex::new(Vec::new());

fn seen(s: String) {
    SEEN.lock().unwrap_or_else(|e| e.into_inner()).push(s);
}

fn take_seen() -> Vec<String> {
    std::mem::take(&mut *SEEN.lock().unwrap_or_else(|e| e.into_inner()))
}

/// A backend-requested tool that calls `ask()`, `tool()` and `tacp()`.
fn calls_back(ctx: *mut c_void) -> Vec<u8> {
    let (s, reply) = ask(b"inner", ctx);
    seen(format!("ask {s} {}", String::from_utf8_lossy(&reply)));
    let (s, v, out) = tool(b"echo", Some(b"x"), ctx, 16);
    seen(format!(
        "echo {s} {} {}",
        v.kind,
        String::from_utf8_lossy(&out)
    ));
    let (s, v, _) = tool(b"wipe_memory", None, ctx, 16);
    seen(format!("wipe {s} {}", v.kind));
    let (s, a) = tacp(0x01, b"wipe_memory", ctx);
    seen(format!("tacp {s} {a:?}"));
    b"nested done".to_vec()
}

#[test]
fn nesting_through_the_ffi() {
    let _g = fresh(false);
    assert!(connect());
    // SAFETY: NUL-terminated strings.
    assert!(unsafe { claw_memory_set(c"k".as_ptr(), c"kept".as_ptr()) });
    register("py", 0);
    take_seen();
    host(|h| {
        h.replies
            .push_back(Post::Body(br#"{"tool_call":{"name":"py"}}"#.to_vec()));
        h.replies.push_back(Post::Body(b"inner answer".to_vec()));
        h.replies.push_back(Post::Body(b"outer answer".to_vec()));
        h.tools.push_back(ToolScript::Nested(calls_back));
    });
    let mut marker = 1u8;
    let ctx = (&raw mut marker).cast::<c_void>();
    let (s, reply) = ask(b"outer", ctx);
    assert_eq!((s, &reply[..]), (OK, &b"outer answer"[..]));
    assert_eq!(
        take_seen(),
        vec![
            "ask 0 inner answer".to_string(),
            format!("echo 0 {CLAW_VALUE_ARG} x"),
            // The chain runs at HTTPS: wipe_memory (risk 2) is refused,
            // from tool() and from tacp() alike.
            format!("wipe {} {CLAW_VALUE_TEXT}", st(Status::TrustRefused)),
            format!(
                "tacp 0 {:?}",
                vec![(0xFFu8, "trust level insufficient".to_string())]
            ),
        ]
    );
    let mut v = [0 as core::ffi::c_char; 8];
    // SAFETY: a NUL-terminated key and an 8-byte buffer.
    assert!(unsafe { claw_memory_get(c"k".as_ptr(), v.as_mut_ptr(), 8) });
    assert_eq!(cstr(&v), "kept");
    host(|h| {
        assert_eq!(h.bodies.len(), 3);
        assert!(text(&h.bodies[1]).starts_with(r#"{"prompt":"inner","#));
        let last = text(&h.bodies[2]);
        assert!(last.starts_with(r#"{"prompt":"outer","#));
        assert!(
            last.ends_with(r#""tool_result":{"name":"py","status":"ok","result":"nested done"}}"#)
        );
        assert!(h.calls.iter().all(|c| c.ctx == ctx as usize));
    });
    // Two errors, one per refused call (wipe_memory from tool() and from
    // tacp()): each nested call is a call of its own.
    assert_eq!(status().errors, 2);
}

/// A REPL tool that calls itself through `claw_tool`.
fn recurse(ctx: *mut c_void) -> Vec<u8> {
    let (s, _, out) = tool(b"py", None, ctx, 64);
    seen(format!("{s}"));
    if s == OK { out } else { b"bottom".to_vec() }
}

#[test]
fn nesting_past_the_bound_through_the_ffi() {
    let _g = fresh(true);
    register("py", 0);
    take_seen();
    host(|h| {
        for _ in 0..12 {
            h.tools.push_back(ToolScript::Nested(recurse));
        }
    });
    let (s, v, out) = tool(b"py", None, core::ptr::null_mut(), 64);
    assert_eq!((s, v.kind), (OK, CLAW_VALUE_HOST));
    assert_eq!(out, b"bottom");
    // CALL_DEPTH_MAX (4) calls deep run; the next is refused.
    let depth = usize::from(CLAW_CALL_DEPTH_MAX);
    let nested = st(Status::NestingLimit);
    let mut want = vec![nested.to_string()];
    want.extend((1..depth).map(|_| "0".to_string()));
    assert_eq!(take_seen(), want);
    assert_eq!(host(|h| h.calls.len()), depth);
    assert_eq!(
        text_of(nested),
        "calls nested too deep through tools (4, CALL_DEPTH_MAX)"
    );
    assert_eq!(claw_status_kind(nested), CLAW_KIND_RUNTIME);
    assert_eq!(status().errors, 0, "a refused nesting is no error");
}

#[test]
fn a_host_that_lies_or_aborts() {
    let _g = fresh(true);
    register("py", 0);
    // A post that claims more than the buffer: a failed request.
    host(|h| h.replies.push_back(Post::Overclaim(5)));
    assert_eq!(
        ask(b"q", core::ptr::null_mut()).0,
        st(Status::RequestFailed)
    );
    // A reply past REPLY_MAX (but within the buffer), or one the
    // transport says is larger than the buffer: failed, with the text that
    // names the limit. (A transport that cannot tell gives -1: failed.)
    host(|h| {
        h.replies
            .push_back(Post::Body(vec![b'y'; CLAW_REPLY_MAX + 1]))
    });
    let (s, _) = ask(b"q", core::ptr::null_mut());
    assert_eq!(s, st(Status::ReplyTooLong));
    assert_eq!(text_of(s), "reply too long (over REPLY_MAX = 4096 bytes)");
    assert_eq!(claw_status_kind(s), CLAW_KIND_RUNTIME);
    assert_eq!(cstr(&status().last_result), "reply too long");
    // Three failed asks open the breaker.
    assert_eq!(claw_cb_state(), CLAW_CB_CLOSED);
    assert_eq!(status().errors, 2);
    host(|h| h.replies.push_back(Post::TooLong));
    assert_eq!(ask(b"q", core::ptr::null_mut()).0, st(Status::ReplyTooLong));
    assert_eq!(claw_cb_state(), CLAW_CB_OPEN);
    assert_eq!(status().errors, 3);
    claw_cb_init();
    // Reply text with a NUL or invalid UTF-8: failed.
    for bad in [
        Post::Body(b"a\0b".to_vec()),
        Post::Body(b"\xff".to_vec()),
        Post::Fail,
    ] {
        host(|h| h.replies.push_back(bad));
        assert_eq!(
            ask(b"q", core::ptr::null_mut()).0,
            st(Status::RequestFailed)
        );
    }
    assert_eq!(claw_cb_state(), CLAW_CB_OPEN);
    assert_eq!(status().errors, 6);
    claw_cb_init();
    // A tool that claims more than out_max, or writes bytes that are not
    // text: cut to out_max, made UTF-8 without NUL.
    host(|h| {
        h.tools.push_back(ToolScript::Overclaim(100));
        h.tools
            .push_back(ToolScript::Returned(b"bad \xff\x00 text \xe0\xb8"));
    });
    let (s, v, out) = tool(b"py", None, core::ptr::null_mut(), 16);
    assert_eq!((s, v.len), (OK, 16));
    assert!(std::str::from_utf8(&out).is_ok() && !out.contains(&0));
    let (s, _, out) = tool(b"py", None, core::ptr::null_mut(), 64);
    assert_eq!((s, &out[..]), (OK, &b"bad ?? text "[..]));
    // A KeyboardInterrupt in a tool: everything stops, the host raises.
    host(|h| h.tools.push_back(ToolScript::Abort));
    let (s, _, _) = tool(b"py", None, core::ptr::null_mut(), 16);
    assert_eq!(s, st(Status::Aborted));
    assert_eq!(claw_status_kind(s), CLAW_KIND_PENDING);
    // ... and an ask() stops before its next request.
    host(|h| {
        h.replies
            .push_back(Post::Body(br#"{"tool_call":{"name":"py"}}"#.to_vec()));
        h.tools.push_back(ToolScript::Abort);
        h.aborted = false;
    });
    let before = host(|h| h.bodies.len());
    assert_eq!(ask(b"q", core::ptr::null_mut()).0, st(Status::Aborted));
    assert_eq!(host(|h| h.bodies.len()), before + 1);
}

/// Issue 23: a reply that reports 4294967295 tokens neither pins nor
/// wraps the session's counters: a count past TOKENS_MAX is ignored (that
/// reply's bytes still count), a count at it is taken.
#[test]
fn token_counts_past_the_bound_are_ignored() {
    let _g = fresh(true);
    let stats = || {
        let mut out = core::mem::MaybeUninit::<super::lasting::claw_session_stats_t>::uninit();
        // SAFETY: a valid out-pointer.
        assert!(unsafe { super::lasting::claw_session_stats(out.as_mut_ptr()) });
        // SAFETY: written on success.
        let out = unsafe { out.assume_init() };
        (out.in_tokens, out.out_tokens, out.exchanges)
    };
    let max = crate::agent::TOKENS_MAX;
    for (tokens, want) in [
        ((7, 9), (7, 9)),
        ((u32::MAX, u32::MAX), (7, 9)),
        ((max + 1, 5), (7, 14)),
        ((max, max), (7 + max, 14 + max)),
        ((3, u32::MAX - 1), (10 + max, 14 + max)),
    ] {
        host(|h| {
            h.replies.push_back(Post::Body(b"ok".to_vec()));
            h.tokens = tokens;
        });
        assert_eq!(ask(b"q", core::ptr::null_mut()).0, OK);
        let (tin, tout, _) = stats();
        assert_eq!((tin, tout), want, "after a reply reporting {tokens:?}");
    }
    assert_eq!(stats().2, 5, "every reply counted as an exchange");
}

/// The same bound for a C caller of `claw_session_account` (its own
/// exchanges): 4294967295 tokens are ignored, its bytes still count.
#[test]
fn token_counts_past_the_bound_are_ignored_from_c() {
    let _g = fresh(true);
    let stats = || {
        let mut out = core::mem::MaybeUninit::<super::lasting::claw_session_stats_t>::uninit();
        // SAFETY: a valid out-pointer.
        assert!(unsafe { super::lasting::claw_session_stats(out.as_mut_ptr()) });
        // SAFETY: written on success.
        unsafe { out.assume_init() }
    };
    let max = crate::agent::TOKENS_MAX;
    super::lasting::claw_session_account(10, 20, 7, 9, 30, 0);
    super::lasting::claw_session_account(10, 20, u32::MAX, max + 1, 30, 0);
    super::lasting::claw_session_account(10, 20, max, 1, 30, 0);
    let s = stats();
    assert_eq!((s.in_tokens, s.out_tokens), (7 + max, 10));
    assert_eq!((s.in_bytes, s.out_bytes, s.exchanges), (30, 60, 3));
}

#[test]
fn tacp_through_the_c_abi() {
    let _g = fresh(true);
    let null = core::ptr::null_mut();
    let (s, a) = tacp(0x03, b"", null);
    assert_eq!(s, OK);
    assert_eq!(
        a,
        vec![(
            0x03,
            r#"{"state":"idle","exec":0,"err":0,"tools":5,"session":0,"connected":true}"#
                .to_string()
        )]
    );
    assert_eq!(
        tacp(0x01, b"echo a b", null).1,
        vec![(0x01, "a b".to_string())]
    );
    assert_eq!(tacp(0x06, b"k=v w", null).1, vec![(0x06, "ok".to_string())]);
    assert_eq!(tacp(0x41, b"k", null).1, vec![(0x41, "v w".to_string())]);
    assert_eq!(
        tacp(0x01, b"\xff", null).1,
        vec![(0xFF, "unknown tool".to_string())]
    );
    assert_eq!(
        tacp(0x0A, b"", null).1,
        vec![(0xFF, "unknown sub_cmd".to_string())]
    );
    // The READY answer, with the STATS card after it.
    let need = unsafe { claw_tacp_work_size(0, core::ptr::null(), 0) };
    let mut work = vec![0u8; need];
    host(|h| {
        h.tacp.clear();
        h.ui.clear();
    });
    // SAFETY: NUL-terminated strings and a live buffer.
    let s = unsafe {
        claw_tacp_ready(
            c"1.11.0".as_ptr(),
            c"mps2-an505".as_ptr(),
            work.as_mut_ptr(),
            work.len(),
        )
    };
    assert_eq!(s, OK);
    host(|h| {
        assert_eq!(
            h.tacp,
            vec![(
                0x00,
                br#"{"fw":"1.11.0","board":"mps2-an505","tools":5,"proto":2}"#.to_vec()
            )]
        );
        assert_eq!(
            h.ui.last().unwrap(),
            &(
                6,
                b"State       idle\nTools       5\nExecuted    1\nErrors      0\nTransport   USB"
                    .to_vec()
            )
        );
    });
    // Short or missing buffers.
    let mut work = vec![0u8; need - 1];
    // SAFETY: the buffers are live for the lengths given (or NULL).
    unsafe {
        assert_eq!(
            claw_tacp_dispatch(0x03, b"".as_ptr(), 0, work.as_mut_ptr(), work.len(), null),
            st(Status::WorkTooSmall)
        );
        assert_eq!(
            claw_tacp_dispatch(0x03, b"".as_ptr(), 0, core::ptr::null_mut(), 5000, null),
            st(Status::WorkTooSmall)
        );
        assert_eq!(
            claw_tacp_dispatch(
                0x03,
                core::ptr::null(),
                6,
                work.as_mut_ptr(),
                work.len(),
                null
            ),
            st(Status::WorkTooSmall)
        );
        assert_eq!(claw_tacp_work_size(0x03, core::ptr::null(), 6), 0);
    }
    // The receiver and the framer through the ABI: a frame in, its bytes out.
    let mut frame = vec![0u8; CLAW_TACP_FRAME_MAX];
    // SAFETY: live buffers.
    let n = unsafe { claw_tacp_frame(0x03, 7, b"ab".as_ptr(), 2, frame.as_mut_ptr(), frame.len()) };
    assert_eq!(n, 11);
    let mut rx = claw_tacp_rx_t::default();
    let mut ev = claw_tacp_event_t::default();
    let mut payload = [0u8; 8];
    let mut kinds = vec![];
    for &b in &frame[..n] {
        // SAFETY: valid pointers.
        kinds.push(unsafe { claw_tacp_rx_push(&mut rx, b, 0, payload.as_mut_ptr(), 8, &mut ev) });
        if kinds.len() == 8 {
            // SAFETY: a valid pointer.
            assert!(unsafe { claw_tacp_rx_in_frame(&rx) } || kinds.len() == 8);
        }
    }
    assert_eq!(kinds[..n - 1], [CLAW_TACP_EV_HELD; 10]);
    assert_eq!(kinds[n - 1], CLAW_TACP_EV_FRAME);
    assert_eq!((ev.sub, ev.seq, ev.len), (0x03, 7, 2));
    assert_eq!(&payload[..2], b"ab");
    // SAFETY: NULL pointers are refused.
    unsafe {
        assert_eq!(
            claw_tacp_rx_push(
                core::ptr::null_mut(),
                0,
                0,
                core::ptr::null_mut(),
                0,
                &mut ev
            ),
            CLAW_TACP_EV_HELD
        );
        assert_eq!(
            claw_tacp_frame(1, 1, b"x".as_ptr(), 1, frame.as_mut_ptr(), 9),
            0
        );
        assert!(!claw_tacp_rx_in_frame(core::ptr::null()));
    }
}

#[test]
fn null_pointers_and_short_buffers() {
    let _g = fresh(true);
    let null = core::ptr::null_mut::<c_void>();
    let mut n = 0usize;
    let mut v = claw_value_t::default();
    let mut work = vec![0u8; 64];
    // SAFETY: every pointer is NULL or live for the length given.
    unsafe {
        // ask
        assert_eq!(
            claw_ask_check(core::ptr::null(), 3, &mut n),
            st(Status::PromptLength)
        );
        assert_eq!(
            claw_ask_check(b"hi".as_ptr(), 2, core::ptr::null_mut()),
            st(Status::PromptLength)
        );
        assert_eq!(
            claw_ask_check(b"a\0b".as_ptr(), 3, &mut n),
            st(Status::HasNul)
        );
        assert_eq!(
            claw_ask_check(b"\xff".as_ptr(), 1, &mut n),
            st(Status::NotUtf8)
        );
        assert_eq!(
            claw_ask_check(core::ptr::null(), 0, &mut n),
            st(Status::PromptLength)
        );
        assert_eq!(claw_ask_work_size(core::ptr::null(), 5), 0);
        assert_eq!(
            claw_ask(core::ptr::null(), 2, work.as_mut_ptr(), 64, null, &mut n),
            st(Status::PromptLength)
        );
        assert_eq!(
            claw_ask(b"hi".as_ptr(), 2, core::ptr::null_mut(), 64, null, &mut n),
            st(Status::WorkTooSmall)
        );
        assert_eq!(
            claw_ask(
                b"hi".as_ptr(),
                2,
                work.as_mut_ptr(),
                work.len(),
                null,
                &mut n
            ),
            st(Status::WorkTooSmall)
        );
        assert_eq!(
            claw_ask(
                b"hi".as_ptr(),
                2,
                work.as_mut_ptr(),
                usize::MAX,
                null,
                &mut n
            ),
            st(Status::WorkTooSmall)
        );
        let need = claw_ask_work_size(b"hi".as_ptr(), 2);
        let mut short = vec![0u8; need - 1];
        assert_eq!(
            claw_ask(
                b"hi".as_ptr(),
                2,
                short.as_mut_ptr(),
                short.len(),
                null,
                &mut n
            ),
            st(Status::WorkTooSmall)
        );
        // No reply_len: the call still runs.
        let mut full = vec![0u8; need];
        host(|h| h.replies.push_back(Post::Body(b"fine".to_vec())));
        assert_eq!(
            claw_ask(
                b"hi".as_ptr(),
                2,
                full.as_mut_ptr(),
                need,
                null,
                core::ptr::null_mut()
            ),
            OK
        );
        // tool
        assert_eq!(
            claw_tool(
                core::ptr::null(),
                4,
                0,
                core::ptr::null(),
                0,
                0,
                null,
                work.as_mut_ptr(),
                64,
                &mut v
            ),
            st(Status::ToolName)
        );
        assert_eq!(
            claw_tool(
                b"echo".as_ptr(),
                4,
                0,
                core::ptr::null(),
                0,
                0,
                null,
                core::ptr::null_mut(),
                64,
                &mut v
            ),
            st(Status::ToolName)
        );
        assert_eq!(
            claw_tool(
                b"echo".as_ptr(),
                4,
                0,
                core::ptr::null(),
                0,
                0,
                null,
                work.as_mut_ptr(),
                0,
                &mut v
            ),
            st(Status::ToolName)
        );
        assert_eq!(
            claw_tool(
                b"echo".as_ptr(),
                4,
                CLAW_ARG_TEXT,
                core::ptr::null(),
                3,
                0,
                null,
                work.as_mut_ptr(),
                64,
                &mut v
            ),
            st(Status::ToolName)
        );
        assert_eq!(
            claw_tool(
                b"echo".as_ptr(),
                4,
                CLAW_ARG_TEXT,
                b"hello".as_ptr(),
                5,
                0,
                null,
                work.as_mut_ptr(),
                64,
                core::ptr::null_mut()
            ),
            OK
        );
        assert_eq!(
            claw_tool(
                b"nope".as_ptr(),
                4,
                0,
                core::ptr::null(),
                0,
                0,
                null,
                work.as_mut_ptr(),
                64,
                &mut v
            ),
            CLAW_STATUS_UNKNOWN_TOOL
        );
        assert_eq!(
            claw_tool(
                b"echo".as_ptr(),
                4,
                CLAW_ARG_INT,
                core::ptr::null(),
                0,
                5,
                null,
                work.as_mut_ptr(),
                64,
                &mut v
            ),
            st(Status::EchoArg)
        );
        // echo into a 3-byte buffer: the text cut on a character boundary.
        let th = "ไทย".as_bytes();
        let mut three = [0u8; 3 + 4];
        assert_eq!(
            claw_tool(
                b"echo".as_ptr(),
                4,
                CLAW_ARG_TEXT,
                th.as_ptr(),
                th.len(),
                0,
                null,
                three.as_mut_ptr(),
                3,
                &mut v
            ),
            OK
        );
        assert_eq!((v.kind, v.len), (CLAW_VALUE_ARG, 3));
        assert_eq!(&three[..], "ไ\0\0\0\0".as_bytes());
        assert_eq!(
            claw_tool(
                b"uptime".as_ptr(),
                6,
                0,
                core::ptr::null(),
                0,
                0,
                null,
                work.as_mut_ptr(),
                64,
                &mut v
            ),
            OK
        );
        assert_eq!(v.kind, CLAW_VALUE_INT);
        // registry
        assert_eq!(
            claw_tool_register(core::ptr::null(), 3, 0, 0, false),
            -(st(Status::ToolName) as i32)
        );
        assert_eq!(
            claw_tool_register(b"echo".as_ptr(), 4, 0, 0, false),
            -(st(Status::BuiltinTool) as i32)
        );
        assert_eq!(
            claw_tool_register(b"x".as_ptr(), 1, 3, 0, false),
            -(st(Status::Risk) as i32)
        );
        assert_eq!(
            claw_tool_register(b"x\0y".as_ptr(), 3, 0, 0, false),
            -(st(Status::HasNul) as i32)
        );
        assert!(!claw_tool_info(0, core::ptr::null_mut()));
        let mut info = core::mem::MaybeUninit::<claw_tool_info_t>::uninit();
        assert!(!claw_tool_info(15, info.as_mut_ptr()), "a free slot");
        assert!(!claw_tool_info(200, info.as_mut_ptr()));
        // connect
        let mut ok = true;
        assert_eq!(
            claw_connect(core::ptr::null(), 1, c"k".as_ptr(), &mut ok),
            st(Status::NotUtf8)
        );
        assert_eq!(
            claw_connect(c"h".as_ptr(), 1, core::ptr::null(), &mut ok),
            st(Status::NotUtf8)
        );
        assert_eq!(
            claw_connect(c"bad host".as_ptr(), 1, c"k".as_ptr(), &mut ok),
            st(Status::Host)
        );
        assert_eq!(
            claw_connect(c"h".as_ptr(), 1, c"k\x7f".as_ptr(), &mut ok),
            st(Status::ApiKey)
        );
        assert!(ok, "*ok untouched on failure");
        assert_eq!(
            claw_connect(c"h".as_ptr(), 1, c"k".as_ptr(), core::ptr::null_mut()),
            OK
        );
        // status, safety
        assert!(!claw_agent_status(core::ptr::null_mut()));
        assert!(!claw_agent_safety(core::ptr::null_mut()));
        let mut sf = core::mem::MaybeUninit::<claw_agent_safety_t>::uninit();
        assert!(claw_agent_safety(sf.as_mut_ptr()));
        let sf = sf.assume_init();
        assert_eq!(
            (cstr(&sf.circuit_breaker), cstr(&sf.trust_level)),
            ("closed".into(), "https".into())
        );
        // checks: NULL with a length is refused; NULL with 0 is the empty text.
        let checks = [
            CLAW_CHECK_TEXT,
            CLAW_CHECK_KEY,
            CLAW_CHECK_VALUE,
            CLAW_CHECK_TOOL_NAME,
            CLAW_CHECK_PROMPT,
            CLAW_CHECK_HOST,
            CLAW_CHECK_API_KEY,
        ];
        let empty = [
            OK,
            st(Status::KeyLength),
            OK,
            st(Status::ToolName),
            st(Status::PromptLength),
            st(Status::Host),
            st(Status::ApiKey),
        ];
        for (w, e) in checks.iter().zip(empty) {
            assert_eq!(claw_check(*w, core::ptr::null(), 4), st(Status::NotUtf8));
            assert_eq!(claw_check(*w, core::ptr::null(), 0), e);
            assert_eq!(claw_check(*w, b"a\0b".as_ptr(), 3), st(Status::HasNul));
            assert_eq!(claw_check(*w, b"\xc3".as_ptr(), 1), st(Status::NotUtf8));
        }
        // An unknown kind refuses every text.
        assert_eq!(claw_check(7, b"a".as_ptr(), 1), st(Status::NotUtf8));
        assert_eq!(claw_check(255, core::ptr::null(), 0), st(Status::NotUtf8));
        assert_eq!(
            claw_check(CLAW_CHECK_KEY, [b'k'; 32].as_ptr(), 32),
            st(Status::KeyLength)
        );
        assert_eq!(
            claw_check(CLAW_CHECK_VALUE, [b'v'; 128].as_ptr(), 128),
            st(Status::ValueLength)
        );
        assert_eq!(
            claw_check(CLAW_CHECK_PROMPT, [b'p'; 4097].as_ptr(), 4097),
            st(Status::PromptLength)
        );
        assert_eq!(
            claw_check(CLAW_CHECK_PROMPT, "ก".repeat(1365).as_ptr(), 4095),
            OK
        );
        assert_eq!(claw_text_prefix(core::ptr::null(), 9), 0);
        assert_eq!(claw_text_prefix("aก".as_ptr(), 3), 1);
        assert_eq!(claw_text_prefix("aก".as_ptr(), 4), 4);
        // clear, disconnect: no pointers.
        assert_eq!(claw_clear(), OK);
        assert_eq!(claw_session_count(), 0);
    }
}

#[test]
fn config_through_the_c_abi() {
    let _g = fresh(true);
    // SAFETY: NUL-terminated static string.
    let names = unsafe { CStr::from_ptr(claw_config_names()) }
        .to_str()
        .unwrap();
    let mut values = [0i32; CLAW_CONFIG_KEYS];
    // SAFETY: every pointer is NULL or live for the length given.
    unsafe {
        for i in 0..CLAW_CONFIG_KEYS {
            let mut k = core::mem::MaybeUninit::<claw_config_key_t>::uninit();
            assert!(claw_config_key(i, k.as_mut_ptr()));
            let k = k.assume_init();
            let name = cstr(&k.name);
            assert!(names.contains(&name));
            assert_eq!(claw_config_index(name.as_ptr(), name.len()), i as i32);
            assert!(k.lo <= k.hi);
        }
        assert!(!claw_config_key(CLAW_CONFIG_KEYS, &mut core::mem::zeroed()));
        assert!(!claw_config_key(0, core::ptr::null_mut()));
        assert_eq!(claw_config_index(core::ptr::null(), 3), -1);
        assert_eq!(claw_config_index(b"nope".as_ptr(), 4), -1);
        assert!(!claw_config_get(core::ptr::null_mut()));
        assert_eq!(claw_config_set(core::ptr::null(), 1), -100);
        assert!(claw_config_get(values.as_mut_ptr()));
        assert_eq!(values, [80, 4, 4, 4096, 0, 4, 1, 0, 0, 0, 0]);
        // Out of range: nothing changes, nothing written.
        let mut next = values;
        next[2] = 8;
        next[5] = -1;
        assert_eq!(claw_config_set(next.as_ptr(), (1 << 2) | (1 << 5)), -3);
        assert!(port(|p| p.get(crate::agent::config::CONFIG_PATH)).is_none());
        // In range: written at once.
        next[2] = 2;
        assert_eq!(claw_config_set(next.as_ptr(), (1 << 2) | (1 << 5)), 0);
        assert!(claw_config_get(values.as_mut_ptr()));
        assert_eq!((values[2], values[5]), (2, -1));
    }
    let file = port(|p| p.get(crate::agent::config::CONFIG_PATH)).expect("written");
    assert_eq!(
        text(&file),
        "{\"compact_threshold_pct\":80,\"compact_min_msgs\":4,\"compact_keep\":2,\
         \"context_budget\":4096,\"idle_timeout_s\":0,\"daily_reset_hour\":-1,\
         \"auto_compact\":true,\"backend_summary\":false,\"send_tools\":false,\
         \"archive\":false,\"compact_before_drop\":false}"
    );
    // A write that fails: nothing changes.
    port(|p| p.fail(crate::testing::Op::Open, 0, crate::port::Errno::EIO));
    let mut next = values;
    next[0] = 50;
    // SAFETY: a live array of CLAW_CONFIG_KEYS values.
    assert_eq!(unsafe { claw_config_set(next.as_ptr(), 1) }, 5);
    // SAFETY: as above.
    assert!(unsafe { claw_config_get(values.as_mut_ptr()) });
    assert_eq!(values[0], 80);
}

#[test]
fn memory_export_and_import_through_the_c_abi() {
    let _g = fresh(true);
    let text =
        "# Memory\n\n- **name**: สมชาย\n- **wifi\\_pw** (pinned): a\\*b\nnot an item\n- **bad\n";
    let mut work = vec![0u8; CLAW_IMPORT_WORK];
    let mut bad = [claw_import_bad_t { line: 0, why: 0 }; 1];
    let mut res = claw_import_result_t::default();
    // SAFETY: every pointer is NULL or live for the length given.
    unsafe {
        let s = claw_memory_import(
            text.as_ptr(),
            text.len(),
            false,
            work.as_mut_ptr(),
            bad.as_mut_ptr(),
            1,
            &mut res,
        );
        assert_eq!(s, OK);
        assert_eq!((res.keys, res.bad), (2, 2), "two pairs, two bad lines");
        assert_eq!(bad[0].line, 5);
        let why = CStr::from_ptr(claw_import_why_text(bad[0].why))
            .to_str()
            .unwrap();
        assert!(!why.is_empty());
        assert_eq!(CStr::from_ptr(claw_import_why_text(200)).to_bytes(), b"");
        // Strict: the first bad line, nothing written.
        let s = claw_memory_import(
            b"- **x**: 1\nbad".as_ptr(),
            14,
            true,
            work.as_mut_ptr(),
            core::ptr::null_mut(),
            0,
            &mut res,
        );
        assert_eq!((s, res.line), (CLAW_STATUS_IMPORT_LINE, 2));
        // NULLs.
        assert_eq!(
            claw_memory_import(
                core::ptr::null(),
                3,
                false,
                work.as_mut_ptr(),
                core::ptr::null_mut(),
                0,
                &mut res
            ),
            st(Status::NotUtf8)
        );
        assert_eq!(
            claw_memory_import(
                b"x".as_ptr(),
                1,
                false,
                work.as_mut_ptr(),
                core::ptr::null_mut(),
                0,
                core::ptr::null_mut()
            ),
            st(Status::NotUtf8)
        );
        assert_eq!(
            claw_memory_import(
                b"x".as_ptr(),
                1,
                false,
                core::ptr::null_mut(),
                core::ptr::null_mut(),
                0,
                &mut res
            ),
            st(Status::WorkTooSmall)
        );
        assert_eq!(
            claw_memory_import(
                b"a\0b".as_ptr(),
                3,
                false,
                work.as_mut_ptr(),
                core::ptr::null_mut(),
                0,
                &mut res
            ),
            st(Status::HasNul)
        );

        // Export: what was imported, in a buffer of exactly the size asked.
        let need = claw_memory_export_size();
        assert!(need > 0);
        let mut out = vec![0u8; need];
        let (mut off, mut len) = (usize::MAX, usize::MAX);
        assert_eq!(
            claw_memory_export(out.as_mut_ptr(), need, &mut off, &mut len),
            OK
        );
        let md = std::str::from_utf8(&out[off..off + len]).unwrap();
        assert_eq!(
            md,
            "# Memory\n\n- **name**: สมชาย\n- **wifi_pw** (pinned): a\\*b\n"
        );
        let mut short = vec![0u8; need - 1];
        assert_eq!(
            claw_memory_export(short.as_mut_ptr(), need - 1, &mut off, &mut len),
            st(Status::WorkTooSmall)
        );
        assert_eq!(
            claw_memory_export(core::ptr::null_mut(), need, &mut off, &mut len),
            st(Status::WorkTooSmall)
        );
        assert_eq!(
            claw_memory_export(out.as_mut_ptr(), need, core::ptr::null_mut(), &mut len),
            st(Status::WorkTooSmall)
        );
        assert_eq!(
            claw_memory_export(out.as_mut_ptr(), need, &mut off, core::ptr::null_mut()),
            st(Status::WorkTooSmall)
        );
    }
}

#[test]
fn every_status_has_a_text_and_a_kind() {
    for s in 0..=255u8 {
        let t = text_of(s);
        let k = claw_status_kind(s);
        if s == 0 {
            assert_eq!((t.as_str(), k), ("", CLAW_KIND_NONE));
        } else {
            assert!(!t.is_empty(), "{s}");
            assert!(k != CLAW_KIND_NONE && k <= CLAW_KIND_PENDING, "{s}");
        }
        if s > Status::ReplyTooLong as u8 {
            // Unknown values fail closed: never OK.
            assert_eq!(t, text_of(CLAW_STATUS_BUSY));
        }
        let _ = claw_status_named(s);
    }
    assert!(claw_status_named(st(Status::HasNul)));
    assert!(!claw_status_named(st(Status::Risk)));
    assert_eq!(
        text_of(st(Status::BreakerOpen)),
        "circuit breaker open \u{2014} cooldown active"
    );
}

/// The agent's calls from another task: refused (busy) before any port
/// call — no file, no tool (Python code), no post, no UI event — and
/// nothing changed for the MicroPython task.
#[test]
fn agent_calls_off_the_task_reach_no_port() {
    use super::test_port::{OFF_TASK_FILE_CALLS, off_task};
    use std::sync::atomic::Ordering;
    let _g = fresh(true);
    OFF_TASK_FILE_CALLS.store(0, Ordering::SeqCst);
    let (a, t, l, c, d, cl) = off_task(|| {
        let null = core::ptr::null_mut();
        let mut ok = false;
        (
            ask(b"hi", null).0,
            tool(b"echo", Some(b"x"), null, 64).0,
            tacp(0x03, b"", null).0,
            // SAFETY: NUL-terminated strings and a valid out-pointer.
            unsafe { claw_connect(c"127.0.0.1".as_ptr(), 8080, c"k".as_ptr(), &mut ok) },
            claw_disconnect(),
            claw_clear(),
        )
    });
    assert_eq!(OFF_TASK_FILE_CALLS.load(Ordering::SeqCst), 0);
    let busy = st(Status::Busy);
    assert_eq!((a, t, l, c, d, cl), (busy, busy, busy, busy, busy, busy));
    host(|h| {
        assert!(h.bodies.is_empty() && h.calls.is_empty() && h.connects.is_empty());
        assert!(h.ui.is_empty() && h.ui_inits == 0);
        assert!(h.connected, "disconnect() off the task did nothing");
    });
    assert_eq!(claw_session_count(), 0);
    assert_eq!(tool(b"echo", Some(b"x"), core::ptr::null_mut(), 64).0, OK);
}
