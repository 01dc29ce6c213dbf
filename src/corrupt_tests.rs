//! Corrupt and hostile files: each loads without a crash, keeps every valid
//! entry, and the next write repairs the file.

use crate::memory;
use crate::message::Role;
use crate::port::{MEMORY_PATH, SESSION_PATH};
use crate::session::Session;
use crate::testing::MemPort;

/// Size of the hostile long line and nesting depth (smaller under Miri,
/// which interprets every byte).
const BIG: usize = if cfg!(miri) { 2_000 } else { 100_000 };

fn line(role: &str, content: &str, end: bool) -> String {
    let end = if end { ",\"end\":true" } else { "" };
    format!("{{\"role\":\"{role}\",\"content\":\"{content}\"{end}}}\n")
}

/// Valid session lines a..c (one batch), then `tail`.
fn session_with(tail: &[u8]) -> Vec<u8> {
    let mut v = Vec::new();
    v.extend_from_slice(line("user", "a", false).as_bytes());
    v.extend_from_slice(line("assistant", "b", false).as_bytes());
    v.extend_from_slice(line("user", "c", true).as_bytes());
    v.extend_from_slice(tail);
    v
}

fn ring_texts(s: &mut Session, port: &mut MemPort) -> Vec<String> {
    s.ring(port)
        .iter()
        .map(|m| String::from_utf8(m.text.to_vec()).unwrap())
        .collect()
}

fn deep(n: usize) -> Vec<u8> {
    let mut v = b"{\"role\":\"user\",\"content\":\"x\",\"n\":".to_vec();
    v.extend(std::iter::repeat_n(b'[', n));
    v.extend(std::iter::repeat_n(b']', n));
    v.extend_from_slice(b",\"end\":true}\n");
    v
}

fn tails() -> Vec<(&'static str, Vec<u8>)> {
    let torn = line("user", "torn", true);
    vec![
        ("torn mid-line", torn.as_bytes()[..torn.len() / 2].to_vec()),
        ("zero-filled tail", vec![0u8; 700]),
        ("0xFF-filled tail", vec![0xFFu8; 700]),
        ("garbage line", b"#!garbage\x01\x02 not json\n".to_vec()),
        (
            "invalid UTF-8 line",
            b"{\"role\":\"user\",\"content\":\"\xC3\x28\",\"end\":true}\n".to_vec(),
        ),
        ("100 KB line", {
            let mut v = b"{\"role\":\"user\",\"content\":\"".to_vec();
            v.extend(std::iter::repeat_n(b'x', BIG));
            v.extend_from_slice(b"\",\"end\":true}\n");
            v
        }),
        ("deeply nested JSON", deep(BIG)),
        ("unknown role", line("root", "x", true).into_bytes()),
        ("empty lines and spaces", b"\n   \n\t\n".to_vec()),
    ]
}

#[test]
fn corrupt_session_tails_keep_valid_lines_and_get_repaired() {
    for (what, tail) in tails() {
        let mut port = MemPort::new();
        port.put(SESSION_PATH, &session_with(&tail));
        let mut s = Session::new();
        assert_eq!(ring_texts(&mut s, &mut port), ["a", "b", "c"], "{what}");
        s.add(&mut port, Role::User, b"d").unwrap();
        s.flush(&mut port).unwrap();
        let mut again = Session::new();
        assert_eq!(
            ring_texts(&mut again, &mut port),
            ["a", "b", "c", "d"],
            "{what}"
        );
        let file = String::from_utf8(port.get(SESSION_PATH).unwrap())
            .unwrap_or_else(|_| panic!("{what}: repaired file is UTF-8"));
        assert_eq!(file.lines().count(), 4, "{what}: rewritten clean");
    }
}

#[test]
fn crlf_and_missing_final_newline() {
    let mut port = MemPort::new();
    let text = session_with(b"").iter().fold(Vec::new(), |mut v, &b| {
        if b == b'\n' {
            v.extend_from_slice(b"\r\n");
        } else {
            v.push(b);
        }
        v
    });
    port.put(SESSION_PATH, &text[..text.len() - 2]);
    let mut s = Session::new();
    assert_eq!(ring_texts(&mut s, &mut port), ["a", "b", "c"]);
    s.add(&mut port, Role::User, b"d").unwrap();
    s.flush(&mut port).unwrap();
    assert_eq!(
        ring_texts(&mut Session::new(), &mut port),
        ["a", "b", "c", "d"]
    );
}

#[test]
fn corrupt_memory_keeps_valid_pairs_and_gets_repaired() {
    for (what, tail) in tails() {
        let mut port = MemPort::new();
        // The damage is at the end, where a torn write leaves it (a torn
        // line glued to a following one is lost with it).
        let mut file =
            b"{\"key\":\"a\",\"value\":\"1\"}\n{\"key\":\"b\",\"value\":\"2\"}\n".to_vec();
        file.extend_from_slice(b"{\"key\":\"a\",\"value\":\"3\"}\n");
        file.extend_from_slice(&tail);
        port.put(MEMORY_PATH, &file);
        let mut out = [0u8; 128];
        let n = memory::get(&mut port, b"a", &mut out).unwrap();
        assert_eq!(&out[..n], b"3", "{what}: last duplicate wins");
        memory::set(&mut port, b"c", b"4").unwrap();
        let text = String::from_utf8(port.get(MEMORY_PATH).unwrap()).unwrap();
        assert_eq!(
            text,
            "{\"seq\":1}\n{\"key\":\"b\",\"value\":\"2\"}\n{\"key\":\"a\",\"value\":\"3\"}\n{\"key\":\"c\",\"value\":\"4\"}\n",
            "{what}: folded clean"
        );
    }
}

#[test]
fn more_entries_than_the_capacity_are_all_kept() {
    let mut port = MemPort::new();
    let file: String = (0..40)
        .map(|i| format!("{{\"key\":\"k{i}\",\"value\":\"v{i}\"}}\n"))
        .collect();
    port.put(MEMORY_PATH, file.as_bytes());
    assert_eq!(
        memory::set(&mut port, b"new", b"x"),
        Err(memory::MemError::Full)
    );
    assert_eq!(memory::set(&mut port, b"k39", b"changed"), Ok(()));
    let mut n = 0;
    memory::for_each(&mut port, &mut |_| n += 1).unwrap();
    assert_eq!(n, 40);
    let mut out = [0u8; 128];
    let len = memory::get(&mut port, b"k0", &mut out).unwrap();
    assert_eq!(&out[..len], b"v0");
}

#[test]
fn more_session_lines_than_the_ring_keep_the_newest() {
    let mut port = MemPort::new();
    let file: String = (0..50)
        .map(|i| line("user", &format!("m{i}"), i % 3 == 2))
        .collect();
    port.put(SESSION_PATH, file.as_bytes());
    let mut s = Session::new();
    let texts = ring_texts(&mut s, &mut port);
    // Line 48 ends the last complete batch (m47 and m48's batch is open).
    assert_eq!(texts.first().map(String::as_str), Some("m38"));
    assert_eq!(texts.last().map(String::as_str), Some("m47"));
}

#[test]
fn duplicates_beyond_the_hashed_pairs_do_not_count_against_the_capacity() {
    let mut port = MemPort::new();
    let file: String = (0..40)
        .map(|i| format!("{{\"key\":\"k{}\",\"value\":\"v{i}\"}}\n", i % 30))
        .collect();
    port.put(MEMORY_PATH, file.as_bytes());
    assert_eq!(memory::set(&mut port, b"fresh", b"x"), Ok(()));
    let mut keys = Vec::new();
    memory::for_each(&mut port, &mut |p| {
        keys.push(String::from_utf8(p.key().to_vec()).unwrap())
    })
    .unwrap();
    assert_eq!(keys.len(), 31, "{keys:?}");
    let mut out = [0u8; 128];
    let n = memory::get(&mut port, b"k5", &mut out).unwrap();
    assert_eq!(&out[..n], b"v35", "the last duplicate wins");
}
