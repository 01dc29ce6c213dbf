//! The session's tests of feature `lasting`.

use super::archive::ARCHIVE_PATH;
use super::flush::INLINE_MAX;
use super::*;
use crate::port::SESSION_PATH;
use crate::testing::{MemPort, Op};

fn texts(s: &mut Session, port: &mut MemPort) -> Vec<(Role, String)> {
    s.ring(port)
        .iter()
        .map(|m| (m.role, String::from_utf8(m.text.to_vec()).unwrap()))
        .collect()
}

#[test]
fn stats_persist_with_the_session_and_reset_with_it() {
    let mut port = MemPort::new();
    let mut s = Session::new();
    s.add(&mut port, Role::User, b"q").unwrap();
    let add = Stats {
        in_bytes: 100,
        out_bytes: 20,
        in_tokens: 7,
        out_tokens: 3,
        context_bytes: 60,
        exchanges: 1,
        last_active: 1_700_000_000,
    };
    s.account(&mut port, &add);
    s.account(&mut port, &add);
    s.flush(&mut port).unwrap();
    let mut again = Session::new();
    let st = again.stats(&mut port);
    assert_eq!((st.in_bytes, st.out_tokens, st.exchanges), (200, 6, 2));
    assert_eq!((st.context_bytes, st.last_active), (60, 1_700_000_000));
    // Statistics alone make the session dirty, and a flush records them.
    again.account(&mut port, &add);
    assert!(again.is_dirty());
    again.flush(&mut port).unwrap();
    assert_eq!(Session::new().stats(&mut port).exchanges, 3);
    again.clear(&mut port);
    assert_eq!(again.stats(&mut port), Stats::default());
}

#[test]
fn compaction_folds_old_turns_into_a_summary_and_archives_them() {
    let mut port = MemPort::new();
    let mut s = Session::new();
    s.archive = true;
    for i in 0..8 {
        let role = if i % 2 == 0 {
            Role::User
        } else {
            Role::Assistant
        };
        s.add(&mut port, role, format!("turn {i}").as_bytes())
            .unwrap();
    }
    s.flush(&mut port).unwrap();
    // keep 3 would keep a reply without its question: one turn less folds.
    assert_eq!(s.compact(&mut port, None, 3).unwrap(), 4);
    let t = texts(&mut s, &mut port);
    assert_eq!(t.len(), 5);
    assert_eq!(t[0].0, Role::Summary);
    assert!(
        t[0].1.starts_with("user: turn 0; assistant: turn 1;"),
        "{}",
        t[0].1
    );
    assert_eq!(t[1].1, "turn 4");
    s.flush(&mut port).unwrap();
    assert_eq!(
        texts(&mut Session::new(), &mut port),
        t,
        "the summary survives a reboot"
    );
    let archive = String::from_utf8(port.get(ARCHIVE_PATH).unwrap()).unwrap();
    assert_eq!(archive.lines().count(), 4);
    assert!(archive.contains("turn 3"));
    // A backend summary replaces the old one; turns keep arriving after it.
    s.add(&mut port, Role::User, b"turn 8").unwrap();
    assert_eq!(
        s.compact(&mut port, Some("the owner likes tea".as_bytes()), 1)
            .unwrap(),
        4
    );
    let t = texts(&mut s, &mut port);
    assert_eq!(t[0], (Role::Summary, "the owner likes tea".to_string()));
    assert_eq!(t.len(), 2);
    for i in 0..20 {
        s.add(&mut port, Role::User, format!("more {i}").as_bytes())
            .unwrap();
    }
    let t = texts(&mut s, &mut port);
    assert_eq!(t.len(), 10);
    assert_eq!(t[0].0, Role::Summary, "the summary stays at the head");
    s.flush(&mut port).unwrap();
    assert_eq!(texts(&mut Session::new(), &mut port), t);
}

#[test]
fn a_tool_turn_stays_with_its_asker() {
    let mut port = MemPort::new();
    let mut s = Session::new();
    s.add(&mut port, Role::User, b"hi").unwrap();
    s.add(&mut port, Role::Assistant, b"hello").unwrap();
    s.add(&mut port, Role::System, b"connected").unwrap();
    s.add(&mut port, Role::Assistant, b"run led").unwrap();
    s.add(&mut port, Role::Tool, b"led: on").unwrap();
    s.add(&mut port, Role::Assistant, b"done").unwrap();
    // keep 2 would start the kept part with the tool turn: fold less.
    assert_eq!(s.compact(&mut port, None, 2).unwrap(), 3);
    let t = texts(&mut s, &mut port);
    assert_eq!(t[1], (Role::Assistant, "run led".to_string()));
    assert_eq!(t[2].0, Role::Tool);

    // A reply keeps its question.
    let mut s = Session::new();
    s.clear(&mut port);
    for (r, t) in [
        (Role::User, "q1"),
        (Role::Assistant, "a1"),
        (Role::User, "q2"),
        (Role::Assistant, "a2"),
    ] {
        s.add(&mut port, r, t.as_bytes()).unwrap();
    }
    assert_eq!(s.compact(&mut port, None, 1).unwrap(), 2);
    let t = texts(&mut s, &mut port);
    assert_eq!(t[1], (Role::User, "q2".to_string()));
}

#[test]
fn a_long_digest_keeps_its_newest_part_on_character_boundaries() {
    let mut port = MemPort::new();
    let mut s = Session::new();
    for round in 0..6 {
        for i in 0..4 {
            s.add(
                &mut port,
                Role::User,
                format!("ข้อความ {round}-{i} ").repeat(5).as_bytes(),
            )
            .unwrap();
        }
        s.compact(&mut port, None, 1).unwrap();
        let head = &s.ring(&mut port).get(0).unwrap().text;
        assert!(head.len() <= MSG_MAX_BYTES);
        assert!(core::str::from_utf8(head).is_ok());
    }
    let t = texts(&mut s, &mut port);
    assert!(
        t[0].1.contains("5-2"),
        "the newest folded turn is in the digest: {}",
        t[0].1
    );
}

#[test]
fn a_new_session_archives_the_old_one() {
    let mut port = MemPort::new();
    let mut s = Session::new();
    s.archive = true;
    s.add(&mut port, Role::User, b"old chat").unwrap();
    s.flush(&mut port).unwrap();
    s.start_new(&mut port).unwrap();
    assert_eq!(s.count(&mut port), 0);
    assert_eq!(Session::new().count(&mut port), 0);
    let archive = String::from_utf8(port.get(ARCHIVE_PATH).unwrap()).unwrap();
    assert!(archive.contains("old chat"));
    // Nothing changes when the archive cannot be written.
    s.add(&mut port, Role::User, b"keep me").unwrap();
    port.fail(crate::testing::Op::Open, 0, Errno::ENOSPC);
    assert!(s.start_new(&mut port).is_err());
    assert_eq!(s.count(&mut port), 1);
}

fn file_has(port: &MemPort, path: &CStr, text: &str) -> bool {
    String::from_utf8(port.get(path).unwrap_or_default())
        .unwrap()
        .contains(text)
}

fn check_reload(s: &mut Session, port: &mut MemPort) {
    let want = texts(s, port);
    assert_eq!(texts(&mut Session::new(), port), want);
}

#[test]
fn a_compaction_is_one_summary_line_in_the_next_batch() {
    let mut port = MemPort::new();
    let mut s = Session::new();
    for i in 0..4 {
        s.add(&mut port, Role::User, format!("q{i}").as_bytes())
            .unwrap();
        s.add(&mut port, Role::Assistant, format!("a{i}").as_bytes())
            .unwrap();
        s.flush(&mut port).unwrap();
    }
    let before = port.writes;
    assert_eq!(s.compact(&mut port, None, 4).unwrap(), 4);
    assert_eq!(port.writes, before, "compact writes nothing by itself");
    assert!(port.get(ARCHIVE_PATH).is_none(), "the archive is opt-in");
    s.add(&mut port, Role::User, b"q4").unwrap();
    s.add(&mut port, Role::Assistant, b"a4").unwrap();
    s.flush(&mut port).unwrap();
    let batch = String::from_utf8(port.get(SLOT_PATHS[5]).unwrap()).unwrap();
    let lines: Vec<&str> = batch.lines().collect();
    assert_eq!(lines.len(), 3, "{batch}");
    assert!(lines[0].starts_with("{\"role\":\"summary\",\"content\":\"user: q0;"));
    assert!(lines[0].ends_with(",\"keep\":4}"), "{}", lines[0]);
    assert!(!file_has(&port, SESSION_PATH, "q4"), "no fold");
    check_reload(&mut s, &mut port);
    assert_eq!(texts(&mut s, &mut port).len(), 7);
}

#[test]
#[cfg_attr(miri, ignore)] // long; no unsafe code under test
fn compactions_between_flushes_replay_exactly() {
    // Compactions before a flush, with pending turns before and after
    // them, a backend summary, tool rounds, failed flushes: every state
    // read back is the ring in RAM.
    let mut port = MemPort::new();
    let mut s = Session::new();
    let mut n = 0u32;
    for step in 0..400u32 {
        let r = step.wrapping_mul(2_654_435_761) >> 7;
        match r % 7 {
            0..=2 => {
                let role =
                    [Role::User, Role::Assistant, Role::Tool, Role::System][(r / 7 % 4) as usize];
                n += 1;
                s.add(&mut port, role, format!("t{n}").as_bytes()).unwrap();
            }
            3 => {
                let text = format!("backend summary {n}");
                let summary = (r / 7 % 2 == 0).then_some(text.as_bytes());
                let _ = s.compact(&mut port, summary, (r / 14 % 6) as usize);
            }
            4 if r / 7 % 5 == 0 && s.is_dirty() => {
                port.fail(Op::Write, 0, Errno::ENOSPC);
                assert!(s.flush(&mut port).is_err());
                port.heal();
            }
            _ => {
                s.flush(&mut port).unwrap();
                check_reload(&mut s, &mut port);
            }
        }
    }
}

#[test]
fn a_compaction_too_big_to_stay_inline_goes_first_in_a_batch_of_its_own() {
    let mut port = MemPort::new();
    let mut s = Session::new();
    let long = "ข".repeat(60); // 180 bytes
    for i in 0..8 {
        let role = if i % 2 == 0 {
            Role::User
        } else {
            Role::Assistant
        };
        s.add(&mut port, role, format!("{i} {long}").as_bytes())
            .unwrap();
        s.flush(&mut port).unwrap();
    }
    assert!(s.compact(&mut port, None, 4).unwrap() > 0);
    s.add(&mut port, Role::User, long.as_bytes()).unwrap();
    s.add(&mut port, Role::Assistant, long.as_bytes()).unwrap();
    // The second step fails: the compaction alone is on flash.
    port.fail(Op::Open, 1, Errno::ENOSPC);
    assert!(s.flush(&mut port).is_err());
    assert!(s.is_dirty());
    let mid = texts(&mut Session::new(), &mut port);
    assert_eq!(mid.len(), 5, "the summary and the 4 kept turns");
    assert_eq!(mid[0].0, Role::Summary);
    let summary_slot = String::from_utf8(port.get(SLOT_PATHS[9 % 6]).unwrap()).unwrap();
    assert!(summary_slot.contains("\"keep\":4"), "{summary_slot}");
    assert!(summary_slot.len() <= INLINE_MAX);
    s.flush(&mut port).unwrap();
    check_reload(&mut s, &mut port);
    assert_eq!(texts(&mut s, &mut port).len(), 7);
    for path in SLOT_PATHS {
        assert!(port.get(path).map_or(0, |f| f.len()) <= 512, "stays inline");
    }
}
