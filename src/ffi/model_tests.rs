//! Property tests: random sequences of all 22 exported functions (with
//! injected faults, clock jumps and reboots) against a plain reference
//! model. After every step the files are decoded with an independent JSON
//! parser (the `json` crate) and compared with what the model says is on flash.

use std::collections::{BTreeMap, VecDeque};
use std::ffi::CString;

use proptest::prelude::*;

use crate::ffi::safety::*;
use crate::ffi::session::*;
use crate::ffi::test_port::{fresh, port};
use crate::port::{Errno, MEMORY_PATH, MEMORY_TMP_PATH, SESSION_PATH};
use crate::testing::Op as Fault;

const TOOLS: [&str; 4] = ["led", "sensor", "wipe", "t4"];

#[derive(Clone, Debug)]
enum Step {
    Add(u8, String),
    Flush,
    Clear,
    Reboot,
    Count,
    Dirty,
    Context(usize),
    MemSet(String, String),
    MemGet(String, usize),
    Fault(u8),
    Advance(u32),
    CbAllow,
    CbSuccess,
    CbFailure,
    CbState,
    RateCheck(usize),
    RateRecord(usize),
    RateSet(usize, u16),
    TrustSet(u8),
    TrustAllows(u8),
}

fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z \"\\\\\n]{0,20}",
        "[ก-ฮ]{0,100}",
        "[a-zก-ฮ\t\u{1}]{250,300}",
    ]
}

fn key() -> impl Strategy<Value = String> {
    prop_oneof!["k[0-9]", "[a-z]{1,33}", "[ก-ฮ]{1,11}"]
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        4 => (0u8..5, text()).prop_map(|(r, t)| Step::Add(r, t)),
        2 => Just(Step::Flush),
        1 => Just(Step::Clear),
        1 => Just(Step::Reboot),
        1 => Just(Step::Count),
        1 => Just(Step::Dirty),
        1 => (0usize..400).prop_map(Step::Context),
        3 => (key(), "[a-zก-ฮ\"\n]{0,130}").prop_map(|(k, v)| Step::MemSet(k, v)),
        2 => (key(), 0usize..140).prop_map(|(k, n)| Step::MemGet(k, n)),
        2 => (0u8..5).prop_map(Step::Fault),
        2 => prop_oneof![0u32..2_000, 25_000u32..40_000, 60_000u32..75_000, Just(1u32 << 31)].prop_map(Step::Advance),
        2 => Just(Step::CbAllow),
        1 => Just(Step::CbSuccess),
        2 => Just(Step::CbFailure),
        1 => Just(Step::CbState),
        2 => (0usize..4).prop_map(Step::RateCheck),
        2 => (0usize..4).prop_map(Step::RateRecord),
        1 => (0usize..4, 0u16..4).prop_map(|(t, n)| Step::RateSet(t, n)),
        1 => (0u8..4).prop_map(Step::TrustSet),
        1 => (0u8..4).prop_map(Step::TrustAllows),
    ]
}

/// The reference: plain collections, no flash format, 64-bit time.
#[derive(Default)]
struct Model {
    ring: VecDeque<(u8, String)>,
    flushed: VecDeque<(u8, String)>,
    dirty: bool,
    memory: BTreeMap<String, String>,
    time: u64,
    failures: u32,
    open_at: Option<u64>,
    trial_at: Option<u64>,
    limits: BTreeMap<usize, u16>,
    calls: BTreeMap<usize, Vec<u64>>,
    trust: u8,
    loaded: bool,
}

fn cut(s: &str, max: usize) -> String {
    let mut end = s.len().min(max);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    s[..end].to_string()
}

impl Model {
    fn cooled(&self) -> bool {
        self.open_at.is_some_and(|t| self.time - t >= 30_000)
    }
}

/// What an independent JSON parser reads from the session files (the
/// layout of `crate::session`): the base up to its last end line (whole
/// when it has none), then the slots newer than it in `seq` order, each up
/// to its end line; newest 10.
fn session_on_flash() -> VecDeque<(u8, String)> {
    fn batch(bytes: &[u8]) -> (Vec<(u8, String)>, Option<u64>) {
        let text = String::from_utf8(bytes.to_vec()).expect("session file is UTF-8");
        let mut lines = Vec::new();
        let (mut trusted, mut seq) = (None, None);
        for line in text.lines() {
            let v = json::parse(line).expect("each line is JSON");
            if !v["role"].is_null() {
                let role = match v["role"].as_str().unwrap() {
                    "user" => 0,
                    "assistant" => 1,
                    "system" => 2,
                    "tool" => 3,
                    r => panic!("role {r}"),
                };
                lines.push((role, v["content"].as_str().unwrap().to_string()));
            }
            if v["end"] == true {
                trusted = Some(lines.len());
                seq = Some(v["seq"].as_u64().unwrap_or(0));
            }
        }
        if let Some(t) = trusted {
            lines.truncate(t);
        }
        (lines, seq)
    }
    let mut ring = Vec::new();
    let mut base_seq = 0;
    if let Some(bytes) = port(|p| p.get(SESSION_PATH)) {
        let (lines, seq) = batch(&bytes);
        ring = lines;
        base_seq = seq.unwrap_or(0);
    }
    let mut slots = Vec::new();
    for (i, path) in crate::session::SLOT_PATHS.iter().enumerate() {
        if let Some(bytes) = port(|p| p.get(path)) {
            if let (lines, Some(seq)) = batch(&bytes) {
                if base_seq >= 1 && seq > base_seq && seq % 6 == i as u64 {
                    slots.push((seq, lines));
                }
            }
        }
    }
    slots.sort();
    for (_, lines) in slots {
        ring.extend(lines);
    }
    let skip = ring.len().saturating_sub(10);
    ring.into_iter().skip(skip).collect()
}

/// What an independent JSON parser reads from the store's files (the
/// layout of `crate::memory`): the base, then the shards of its generation,
/// whose records replace or (`"del"`) remove the base's pair of their key.
fn memory_on_flash() -> BTreeMap<String, String> {
    fn lines(bytes: &[u8]) -> Vec<json::JsonValue> {
        let text = String::from_utf8(bytes.to_vec()).expect("memory file is UTF-8");
        text.lines()
            .map(|l| json::parse(l).expect("each line is JSON"))
            .collect()
    }
    let mut map = BTreeMap::new();
    let mut generation = 0;
    if let Some(bytes) = port(|p| p.get(MEMORY_PATH)) {
        for (i, v) in lines(&bytes).into_iter().enumerate() {
            if i == 0 && v["seq"].is_number() {
                generation = v["seq"].as_u64().unwrap();
                continue;
            }
            let k = v["key"].as_str().unwrap().to_string();
            assert!(!map.contains_key(&k), "duplicate key {k} written");
            map.insert(k, v["value"].as_str().unwrap().to_string());
        }
    }
    for path in crate::memory::SHARD_PATHS {
        let Some(bytes) = port(|p| p.get(path)).filter(|_| generation >= 1) else {
            continue;
        };
        let recs = lines(&bytes);
        if recs.first().and_then(|h| h["seq"].as_u64()) != Some(generation) {
            continue;
        }
        let mut seen = std::collections::BTreeSet::new();
        for v in &recs[1..] {
            let k = v["key"].as_str().unwrap().to_string();
            assert!(seen.insert(k.clone()), "key {k} twice in a shard");
            if v["del"] == true {
                map.remove(&k);
            } else {
                map.insert(k, v["value"].as_str().unwrap().to_string());
            }
        }
    }
    map
}

fn run(steps: Vec<Step>) {
    let _g = fresh();
    let t0 = u32::MAX - 50_000;
    port(|p| p.now = t0);
    let mut m = Model {
        trust: CLAW_TRUST_USB,
        ..Model::default()
    };
    let mut fault = false;
    let mut stale_tmp = false;
    for step in steps {
        let mut failed_valid = false;
        match step.clone() {
            Step::Add(role, t) => {
                let c = CString::new(t.clone()).unwrap();
                // SAFETY: valid C string.
                let ok = unsafe { claw_session_add(role, c.as_ptr()) };
                if role < 4 && !ok {
                    // Only an unreadable session file refuses a message.
                    assert!(fault && !m.loaded, "add refused");
                }
                assert!(role < 4 || !ok);
                if ok {
                    m.loaded = true;
                    m.ring.push_back((role, cut(&t, 255)));
                    if m.ring.len() > 10 {
                        m.ring.pop_front();
                    }
                    m.dirty = true;
                }
            }
            Step::Flush => {
                if claw_session_flush() {
                    if m.dirty {
                        m.flushed = m.ring.clone();
                    }
                    m.dirty = false;
                } else {
                    failed_valid = true;
                }
            }
            Step::Clear => {
                claw_session_clear();
                m.loaded = true;
                m.ring.clear();
                m.dirty = claw_session_dirty();
                if m.dirty {
                    // Delete and empty rewrite both refused (two faults):
                    // pending in RAM until the next flush.
                    assert!(fault, "clear left pending without a fault");
                } else {
                    m.flushed.clear();
                }
            }
            Step::Reboot => {
                claw_session_init();
                m.ring = m.flushed.clone();
                m.dirty = false;
                m.loaded = false;
            }
            Step::Count => {
                let n = usize::from(claw_session_count());
                if fault && !m.loaded && n != m.ring.len() {
                    assert_eq!(n, 0, "an unreadable file reads as empty");
                } else {
                    assert_eq!(n, m.ring.len());
                    // (With a fault and an empty ring the load may still
                    // have failed.)
                    m.loaded |= !fault;
                }
            }
            Step::Dirty => assert_eq!(claw_session_dirty(), m.dirty),
            Step::Context(n) => {
                let mut buf = vec![0x55u8; n + 4];
                // SAFETY: `buf` holds `n` bytes.
                let len = unsafe { claw_session_build_context(buf.as_mut_ptr().cast(), n) };
                if !fault && n > 0 {
                    m.loaded = true;
                }
                assert!(buf[n..].iter().all(|&b| b == 0x55));
                assert!(len < n.max(1));
                let s = std::str::from_utf8(&buf[..len]).expect("context is UTF-8");
                if let Some((_, newest)) = m.ring.back() {
                    if len > 0 && s.contains("Conversation:\n") {
                        let last = s.rsplit_once(": ").map(|x| x.1).unwrap_or("");
                        let shown = last.strip_suffix('\n').unwrap_or(last);
                        // The newest turn as the context writes it.
                        let mut esc = vec![0u8; 8 * newest.len() + 8];
                        let n =
                            crate::text::escape(Some(&mut esc), newest.as_bytes(), usize::MAX).1;
                        let newest = std::str::from_utf8(&esc[..n]).unwrap();
                        assert!(newest.ends_with(shown) || newest.starts_with(shown));
                    }
                }
            }
            Step::MemSet(k, v) => {
                let (ck, cv) = (
                    CString::new(k.clone()).unwrap(),
                    CString::new(v.clone()).unwrap(),
                );
                // SAFETY: valid C strings.
                let ok = unsafe { claw_memory_set(ck.as_ptr(), cv.as_ptr()) };
                let valid = !k.is_empty() && k.len() <= 31 && v.len() <= 127;
                let room = m.memory.contains_key(&k) || m.memory.len() < 32;
                if ok {
                    assert!(valid && room);
                    m.memory.insert(k, v);
                }
                // A refusal of a valid pair with room is only allowed under
                // an injected fault, checked below.
                failed_valid = valid && room && !ok;
            }
            Step::MemGet(k, n) => {
                let ck = CString::new(k.clone()).unwrap();
                let mut buf = vec![0x55u8; n + 4];
                // SAFETY: `buf` holds `n` bytes.
                let ok = unsafe { claw_memory_get(ck.as_ptr(), buf.as_mut_ptr().cast(), n) };
                assert!(buf[n..].iter().all(|&b| b == 0x55));
                let want = m.memory.get(&k).filter(|v| v.len() < n);
                // An unreadable store (injected fault) reads as absent.
                if !fault || ok {
                    assert_eq!(ok, want.is_some(), "get {k} into {n}");
                }
                if let Some(v) = want.filter(|_| ok) {
                    assert_eq!(&buf[..v.len()], v.as_bytes());
                    assert_eq!(buf[v.len()], 0);
                }
            }
            Step::Fault(kind) => {
                let op = [
                    Fault::Open,
                    Fault::Write,
                    Fault::Close,
                    Fault::Remove,
                    Fault::Rename,
                ][usize::from(kind)];
                port(|p| p.fail(op, 0, Errno::ENOSPC));
                fault = true;
                continue;
            }
            Step::Advance(ms) => {
                m.time += u64::from(ms);
                port(|p| p.now = t0.wrapping_add(m.time as u32));
                // The firmware looks at the breaker at least once per tick
                // period (49.7 days): a u32 clock cannot tell a wrap from
                // nothing. Observing here is what that looks like.
                let want = match m.open_at {
                    None => CLAW_CB_CLOSED,
                    Some(_) if m.cooled() => CLAW_CB_HALFOPEN,
                    Some(_) => CLAW_CB_OPEN,
                };
                assert_eq!(claw_cb_state(), want);
            }
            Step::CbAllow => {
                let want = match m.open_at {
                    None => true,
                    Some(_) if !m.cooled() => false,
                    Some(_) => match m.trial_at {
                        Some(t) if m.time - t < 30_000 => false,
                        _ => {
                            m.trial_at = Some(m.time);
                            true
                        }
                    },
                };
                assert_eq!(claw_cb_allow(), want);
            }
            Step::CbSuccess => {
                claw_cb_success();
                m.failures = 0;
                m.open_at = None;
                m.trial_at = None;
            }
            Step::CbFailure => {
                claw_cb_failure();
                m.failures += 1;
                if m.open_at.is_some() || m.failures >= 3 {
                    m.open_at = Some(m.time);
                    m.trial_at = None;
                }
            }
            Step::CbState => {
                let want = match m.open_at {
                    None => CLAW_CB_CLOSED,
                    Some(_) if m.cooled() => CLAW_CB_HALFOPEN,
                    Some(t) => {
                        assert_eq!(
                            u64::from(claw_cb_cooldown_remaining()),
                            30_000 - (m.time - t)
                        );
                        CLAW_CB_OPEN
                    }
                };
                assert_eq!(claw_cb_state(), want);
            }
            Step::RateCheck(t) => {
                let c = CString::new(TOOLS[t]).unwrap();
                // SAFETY: valid C string.
                let ok = unsafe { claw_rate_check(c.as_ptr()) };
                let limit = u64::from(*m.limits.get(&t).unwrap_or(&10));
                let calls = m.calls.get(&t).cloned().unwrap_or_default();
                let within =
                    |span: u64| calls.iter().filter(|&&c| m.time - c < span).count() as u64;
                if within(60_000) >= limit {
                    assert!(!ok, "strict: the last 60 s are at the limit");
                }
                // A tool idle for a whole tick period may look recent (fail
                // closed) until 70 s after its stale calls' apparent time.
                let wrapped = calls.iter().any(|&c| m.time - c >= (1u64 << 32) - 70_000);
                if within(70_000) < limit && !wrapped {
                    assert!(ok, "granularity: nothing in the last 70 s blocks");
                }
            }
            Step::RateRecord(t) => {
                let c = CString::new(TOOLS[t]).unwrap();
                // SAFETY: valid C string.
                let allowed = unsafe { claw_rate_check(c.as_ptr()) };
                if allowed {
                    // SAFETY: valid C string.
                    unsafe { claw_rate_record(c.as_ptr()) };
                    m.calls.entry(t).or_default().push(m.time);
                }
            }
            Step::RateSet(t, n) => {
                let c = CString::new(TOOLS[t]).unwrap();
                // SAFETY: valid C string.
                unsafe { claw_rate_set(c.as_ptr(), n) };
                m.limits.insert(t, if n == 0 { 10 } else { n });
            }
            Step::TrustSet(l) => {
                claw_trust_set(l);
                m.trust = if l <= 2 { l } else { CLAW_TRUST_NONE };
                assert_eq!(claw_trust_get(), m.trust);
            }
            Step::TrustAllows(r) => {
                assert_eq!(
                    claw_trust_allows(r),
                    r <= 2 && r < m.trust.saturating_add(1) && m.trust > 0
                );
            }
        }
        port(|p| p.heal());
        if failed_valid {
            assert!(fault, "{step:?} failed without a fault");
        }
        assert_eq!(session_on_flash(), m.flushed, "session file after {step:?}");
        assert_eq!(memory_on_flash(), m.memory, "memory file after {step:?}");
        // A temporary file may only survive when its removal itself failed
        // (and it is harmless: the next set overwrites it).
        let tmp = port(|p| p.get(MEMORY_TMP_PATH).is_some());
        assert!(!tmp || fault || stale_tmp, "memory temporary left behind");
        stale_tmp = tmp;
        assert_eq!(port(|p| p.open_count()), 0, "a file was left open");
        fault = false;
    }
}

proptest! {
    // Failing cases are kept in tests/proptest-regressions/ffi/; the ones
    // found so far are unit tests of session/ and memory/.
    #![proptest_config(ProptestConfig {
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(256),
        ..crate::testing::regressions("tests/proptest-regressions/ffi/model_tests.txt")
    })]

    #[test]
    fn api_sequences_match_the_model(steps in prop::collection::vec(step(), 1..80)) {
        run(steps);
    }
}
