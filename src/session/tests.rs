//! The session's tests.

use super::load::{BASE_FILE, file_path, scan_file};
use super::*;
use crate::format::lines::ByteReader;
use crate::format::session::{self as fmt, Read};
use crate::port::{Mode, SESSION_PATH};
use crate::testing::{MemPort, Op};

fn texts(s: &mut Session, port: &mut MemPort) -> Vec<String> {
    s.ring(port)
        .iter()
        .map(|m| String::from_utf8(m.text.to_vec()).unwrap())
        .collect()
}

fn reboot(port: &mut MemPort) -> Session {
    let _ = port;
    Session::new()
}

/// The ring a load gave before messages were decoded straight into
/// it: each record into a buffer, then pushed (or folded in).
fn reference_load(port: &mut MemPort, files: &[(usize, u32)]) -> Vec<(Role, Vec<u8>, u32)> {
    let mut ring = SessionRing::new();
    for &(file, seq) in files {
        let cut = scan_file(port, file_path(file), None::<&mut Session>)
            .unwrap()
            .unwrap()
            .cut;
        let fd = port.open(file_path(file), Mode::Read).unwrap();
        let mut r = ByteReader::new(fd);
        let mut text = [0u8; MSG_MAX_BYTES];
        while r.offset() < cut {
            let rec = match fmt::read(port, &mut r, Some(&mut text), None).unwrap() {
                Read::Record(rec) => rec,
                Read::Skipped => continue,
                Read::Eof => break,
            };
            let Some(role) = rec.role else { continue };
            let body = &text[..usize::from(rec.len)];
            match rec.keep {
                #[cfg(feature = "lasting")]
                Some(keep) => ring.fold_keep(usize::from(keep), body),
                _ => ring.push(role, body),
            }
            let i = if rec.keep.is_some() || role == Role::Summary {
                0
            } else {
                ring.len() - 1
            };
            ring.get_mut(i).unwrap().seq = seq;
        }
        port.close(fd).unwrap();
    }
    ring.iter()
        .map(|m| (m.role, m.text.to_vec(), m.seq))
        .collect()
}

#[test]
#[cfg_attr(miri, ignore)] // long; no unsafe code under test
fn damaged_files_load_as_when_records_went_through_a_buffer() {
    let mut rng = 0x1234_5678u32;
    let mut next = move |n: u32| {
        rng ^= rng << 13;
        rng ^= rng >> 17;
        rng ^= rng << 5;
        rng % n
    };
    let roles = ["user", "assistant", "tool", "system", "summary"];
    for case in 0..400 {
        let mut port = MemPort::new();
        let line = |next: &mut dyn FnMut(u32) -> u32, n: usize| -> String {
            let body = "ก".repeat(next(4) as usize * 30) + &format!("m{case}-{n}");
            let body = if next(12) == 0 { "x".repeat(256) } else { body };
            let role = roles[next(5) as usize];
            match next(16) {
                0 => "garbage\n".to_string(),
                1 => format!("{{\"role\":\"{role}\",\"content\":\"{body}\",\"zz\":[[1]]}}\n"),
                2 => format!("{{\"role\":\"bogus\",\"content\":\"{body}\"}}\n"),
                3 => format!("{{\"content\":\"{body}\"}}\n"),
                4 => format!("{{\"role\":\"{role}\",\"content\":\"{body}"),
                5 | 6 => format!(
                    "{{\"role\":\"summary\",\"content\":\"S{body}\",\"keep\":{}}}\n",
                    next(13)
                ),
                _ => format!("{{\"role\":\"{role}\",\"content\":\"{body}\"}}\n"),
            }
        };
        let seed_form = next(4) == 0;
        let base_seq = if seed_form { 0 } else { 1 + next(20) };
        let mut base = String::new();
        for n in 0..next(25) as usize {
            base += &line(&mut next, n);
            if !base.ends_with('\n') {
                // A torn line (its end line is not lost).
                base += "\n";
            }
        }
        if !seed_form {
            base += &format!("{{\"end\":true,\"seq\":{base_seq}}}\n");
            if next(3) == 0 {
                base += "{\"role\":\"user\",\"content\":\"after the cut\"}\n";
            }
        }
        port.put(SESSION_PATH, base.as_bytes());
        let mut files = vec![(BASE_FILE, base_seq)];
        if !seed_form {
            for k in 1..=next(7) {
                let seq = base_seq + k;
                let mut batch = String::new();
                for n in 0..next(6) as usize {
                    batch += &line(&mut next, 100 + n);
                    if !batch.ends_with('\n') {
                        batch += "\n";
                    }
                }
                batch += &format!("{{\"end\":true,\"seq\":{seq}}}\n");
                port.put(SLOT_PATHS[slot_of(seq)], batch.as_bytes());
                files.push((slot_of(seq), seq));
            }
        }
        let want = reference_load(&mut port, &files);
        let mut s = Session::new();
        let got: Vec<_> = s
            .ring(&mut port)
            .iter()
            .map(|m| (m.role, m.text.to_vec(), m.seq))
            .collect();
        assert_eq!(got, want, "case {case}");
        assert_eq!(port.open_count(), 0);
    }
}

#[test]
fn add_keeps_newest_ten_without_writing() {
    let mut port = MemPort::new();
    let mut s = Session::new();
    for i in 0..25 {
        s.add(&mut port, Role::User, format!("m{i}").as_bytes())
            .unwrap();
    }
    assert_eq!(s.count(&mut port), 10);
    assert_eq!(texts(&mut s, &mut port)[0], "m15");
    assert_eq!(port.writes, 0, "add must not write flash");
    assert!(s.is_dirty());
}

fn file(port: &MemPort, path: &CStr) -> String {
    String::from_utf8(port.get(path).unwrap()).unwrap()
}

#[test]
fn flush_writes_one_batch_per_slot_and_reloads() {
    let mut port = MemPort::new();
    let mut s = Session::new();
    s.add(&mut port, Role::User, "สวัสดี \"quoted\"\nline".as_bytes())
        .unwrap();
    s.add(&mut port, Role::Assistant, b"hi").unwrap();
    s.flush(&mut port).unwrap();
    assert!(!s.is_dirty());
    s.add(&mut port, Role::Tool, b"42").unwrap();
    s.flush(&mut port).unwrap();
    let one = file(&port, SESSION_PATH);
    assert_eq!(
        one.lines().count(),
        2,
        "the first flush writes the base: {one}"
    );
    assert!(
        one.lines()
            .nth(1)
            .unwrap()
            .ends_with("\"end\":true,\"seq\":1}")
    );
    assert_eq!(
        file(&port, SLOT_PATHS[2]),
        "{\"role\":\"tool\",\"content\":\"42\",\"end\":true,\"seq\":2}\n"
    );
    let mut s2 = reboot(&mut port);
    assert_eq!(
        texts(&mut s2, &mut port),
        ["สวัสดี \"quoted\"\nline", "hi", "42"]
    );
    assert_eq!(s2.ring(&mut port).get(2).unwrap().role, Role::Tool);
    // The next batch after a reboot takes the next number.
    s2.add(&mut port, Role::User, b"again").unwrap();
    s2.flush(&mut port).unwrap();
    assert!(file(&port, SLOT_PATHS[3]).contains("\"seq\":3"));
}

#[test]
#[cfg_attr(miri, ignore)] // long; no unsafe code under test
fn folds_only_when_the_slot_to_overwrite_is_live() {
    let mut port = MemPort::new();
    let mut s = Session::new();
    let mut folds = 0;
    for i in 0..100 {
        s.add(&mut port, Role::User, format!("q{i}").as_bytes())
            .unwrap();
        s.add(&mut port, Role::Assistant, format!("a{i}").as_bytes())
            .unwrap();
        let renames = port.count(Op::Rename);
        s.flush(&mut port).unwrap();
        folds += port.count(Op::Rename) - renames;
        // Every state read back is the ring in RAM.
        let mut again = Session::new();
        assert_eq!(
            texts(&mut again, &mut port),
            texts(&mut s, &mut port),
            "{i}"
        );
    }
    assert_eq!(
        folds, 1,
        "two-message batches: six slots hold the ring (the first flush writes the base)"
    );
    // One-message batches: the ring spans ten batches, so slots are live.
    for i in 0..20 {
        s.add(&mut port, Role::User, format!("u{i}").as_bytes())
            .unwrap();
        s.flush(&mut port).unwrap();
        let mut again = Session::new();
        assert_eq!(texts(&mut again, &mut port), texts(&mut s, &mut port));
    }
    assert_eq!(Session::new().count(&mut port), 10);
    let base = file(&port, SESSION_PATH);
    assert!(base.lines().count() <= 10, "{base}");
}

#[test]
fn reads_the_seed_plain_form_and_the_previous_release() {
    let mut port = MemPort::new();
    // What the vendor library leaves: one message a line, no markers.
    let mut seed = String::new();
    for i in 0..12 {
        seed += &format!("{{\"role\":\"user\",\"content\":\"s{i}\"}}\n");
    }
    port.put(SESSION_PATH, seed.as_bytes());
    let mut s = Session::new();
    let t = texts(&mut s, &mut port);
    assert_eq!((t.len(), t[0].as_str(), t[9].as_str()), (10, "s2", "s11"));
    s.add(&mut port, Role::User, b"next").unwrap();
    s.flush(&mut port).unwrap();
    assert_eq!(
        texts(&mut Session::new(), &mut port).last().unwrap(),
        "next"
    );
    let base = file(&port, SESSION_PATH);
    assert!(
        base.ends_with("\"seq\":1}\n"),
        "converted by the first flush: {base}"
    );
    // A hand-written seed-form file is what it says: no slot applies.
    s.add(&mut port, Role::User, b"more").unwrap();
    s.flush(&mut port).unwrap();
    port.put(
        SESSION_PATH,
        b"{\"role\":\"user\",\"content\":\"by hand\"}\n",
    );
    assert_eq!(texts(&mut Session::new(), &mut port), ["by hand"]);

    // The previous release: appended batches, statistics as fields.
    let mut port = MemPort::new();
    port.put(
        SESSION_PATH,
        b"{\"role\":\"user\",\"content\":\"a\",\"end\":true}\n\
          {\"role\":\"user\",\"content\":\"b\",\"in\":5,\"n\":2,\"end\":true}\n\
          {\"role\":\"user\",\"content\":\"torn\"}\n",
    );
    assert_eq!(texts(&mut Session::new(), &mut port), ["a", "b"]);
}

#[test]
fn truncates_on_a_character_boundary() {
    let mut port = MemPort::new();
    let mut s = Session::new();
    let long = "ก".repeat(100); // 300 bytes
    s.add(&mut port, Role::User, long.as_bytes()).unwrap();
    let t = &s.ring(&mut port).get(0).unwrap().text;
    assert_eq!(t.len(), 255);
    assert!(core::str::from_utf8(t).is_ok());
    assert_eq!(
        s.add(&mut port, Role::User, &[0xE0, 0xB8]),
        Err(AddError::NotUtf8)
    );
}

#[test]
fn failed_flush_stays_dirty_and_the_retry_writes_the_batch_again() {
    let mut port = MemPort::new();
    let mut s = Session::new();
    s.add(&mut port, Role::User, b"one").unwrap();
    s.flush(&mut port).unwrap();
    s.add(&mut port, Role::User, b"two").unwrap();
    port.fail(Op::Write, 0, Errno::ENOSPC);
    assert_eq!(s.flush(&mut port), Err(Errno::ENOSPC));
    assert!(s.is_dirty());
    // Nothing of the failed batch is read back.
    assert_eq!(Session::new().count(&mut port), 1);
    s.add(&mut port, Role::User, b"three").unwrap();
    s.flush(&mut port).unwrap();
    assert_eq!(
        texts(&mut Session::new(), &mut port),
        ["one", "two", "three"]
    );
    assert!(
        file(&port, SLOT_PATHS[2]).contains("three"),
        "same batch number"
    );
}

#[test]
fn torn_slots_and_stale_slots_are_ignored() {
    let mut port = MemPort::new();
    port.put(
        SESSION_PATH,
        b"{\"role\":\"user\",\"content\":\"base\",\"end\":true,\"seq\":7}\n",
    );
    // Older than the base: retired.
    port.put(
        SLOT_PATHS[1],
        b"{\"role\":\"user\",\"content\":\"old\",\"end\":true,\"seq\":7}\n",
    );
    // No end line: torn.
    port.put(SLOT_PATHS[0], b"{\"role\":\"user\",\"content\":\"torn\"}\n");
    // In the wrong slot for its number.
    port.put(
        SLOT_PATHS[3],
        b"{\"role\":\"user\",\"content\":\"moved\",\"end\":true,\"seq\":8}\n",
    );
    port.put(
        SLOT_PATHS[2],
        b"{\"role\":\"user\",\"content\":\"new\",\"end\":true,\"seq\":8}\n",
    );
    port.put(SLOT_PATHS[4], b"garbage\n{\"end\":true,\"seq\":10}\n");
    let mut s = Session::new();
    assert_eq!(texts(&mut s, &mut port), ["base", "new"]);
    s.add(&mut port, Role::User, b"x").unwrap();
    s.flush(&mut port).unwrap();
    assert!(
        file(&port, SLOT_PATHS[5]).contains("\"seq\":11"),
        "after the newest seen"
    );
}

#[test]
fn clear_retires_every_slot_and_survives_failures() {
    let mut port = MemPort::new();
    let mut s = Session::new();
    s.add(&mut port, Role::User, b"secret").unwrap();
    s.flush(&mut port).unwrap();
    s.clear(&mut port);
    assert_eq!(s.count(&mut port), 0);
    assert_eq!(Session::new().count(&mut port), 0);
    assert!(port.get(SLOT_PATHS[1]).is_none(), "the slot is removed");

    // Removes fail: an empty base retires the slots.
    s.add(&mut port, Role::User, b"secret2").unwrap();
    s.flush(&mut port).unwrap();
    port.fail_all(Op::Remove, Errno::EIO);
    s.clear(&mut port);
    assert_eq!(Session::new().count(&mut port), 0);
    assert!(!s.is_dirty());

    // One failed write (the empty base) does not matter: the remove of
    // the base is what retires the conversation.
    port.heal();
    s.add(&mut port, Role::User, b"secret2b").unwrap();
    s.flush(&mut port).unwrap();
    port.fail(Op::Write, 0, Errno::EIO);
    s.clear(&mut port);
    assert_eq!(Session::new().count(&mut port), 0);
    port.heal();
    s.add(&mut port, Role::User, b"after").unwrap();
    s.flush(&mut port).unwrap();
    assert_eq!(texts(&mut Session::new(), &mut port), ["after"]);

    // The base can be neither removed nor written: pending until the
    // next flush.
    port.heal();
    s.add(&mut port, Role::User, b"secret3").unwrap();
    s.flush(&mut port).unwrap();
    port.fail_all(Op::Open, Errno::EIO);
    port.fail_all(Op::Remove, Errno::EIO);
    s.clear(&mut port);
    assert!(s.is_dirty());
    assert_eq!(s.count(&mut port), 0);
    port.heal();
    assert!(s.flush(&mut port).is_ok());
    assert_eq!(Session::new().count(&mut port), 0);
}

/// The `seq` values a file can hold at the top of `u32`, past it, and
/// not numbers at all (issue 23: turns flushed past 2^32 were lost).
const EDGE_SEQS: [&str; 11] = [
    "4294967290",
    "4294967293",
    "4294967294",
    "4294967295",
    "4294967296",
    "100000000000000000000",
    "-5",
    "1.5",
    "\"x\"",
    "0",
    "1000",
];

/// Flushes `rounds` batches of one or two turns; after each, the ring a
/// reboot reads is the ring in RAM, and it holds the batch just flushed.
fn flush_and_reread(port: &mut MemPort, s: &mut Session, rounds: usize, tag: &str) {
    for i in 0..rounds {
        let text = format!("{tag} turn {i}");
        s.add(port, Role::User, text.as_bytes()).unwrap();
        if i % 3 == 1 {
            s.add(port, Role::Assistant, b"reply").unwrap();
        }
        s.flush(port).unwrap();
        assert!(!s.is_dirty(), "{tag} {i}");
        let ram = texts(s, port);
        let read = texts(&mut reboot(port), port);
        assert_eq!(read, ram, "{tag}: flush {i}");
        assert!(read.contains(&text), "{tag}: flush {i} lost");
    }
}

/// The number the newest end line of `path` carries.
fn end_seq(port: &MemPort, path: &CStr) -> Option<u64> {
    let text = String::from_utf8(port.get(path)?).ok()?;
    let line = text.lines().rev().find(|l| l.contains("\"end\":true"))?;
    let at = line.find("\"seq\":")? + 6;
    line[at..]
        .split(|c: char| !c.is_ascii_digit())
        .next()?
        .parse()
        .ok()
}

#[test]
fn seq_at_the_top_of_u32_or_past_it_loses_nothing() {
    for base_seq in EDGE_SEQS {
        // (slot: none, or a batch beside the base in each slot file.)
        for slot in [None, Some(0), Some(1), Some(2), Some(3), Some(4), Some(5)] {
            for slot_seq in EDGE_SEQS {
                if slot.is_none() && slot_seq != EDGE_SEQS[0] {
                    continue;
                }
                let tag = format!("base {base_seq} slot {slot:?} {slot_seq}");
                let mut port = MemPort::new();
                port.put(
                    SESSION_PATH,
                    format!(
                        "{{\"role\":\"user\",\"content\":\"b0\"}}\n\
                         {{\"role\":\"assistant\",\"content\":\"b1\",\"end\":true,\"seq\":{base_seq}}}\n"
                    )
                    .as_bytes(),
                );
                if let Some(i) = slot {
                    port.put(
                        SLOT_PATHS[i],
                        format!(
                            "{{\"role\":\"user\",\"content\":\"s{i}\",\"end\":true,\"seq\":{slot_seq}}}\n"
                        )
                        .as_bytes(),
                    );
                }
                let mut s = Session::new();
                let first = texts(&mut s, &mut port);
                assert_eq!(first[..2], ["b0", "b1"], "{tag}: the base is read");
                flush_and_reread(&mut port, &mut s, 14, &tag);
                // Numbered from 1 again once past the top: the base
                // is small, and every slot beside it newer.
                let near_top = |v: &str| v.parse::<f64>().is_ok_and(|n| n >= 4294967290.0);
                let top = near_top(base_seq) || slot.is_some() && near_top(slot_seq);
                let base = end_seq(&port, SESSION_PATH).unwrap();
                assert!(base < if top { 20 } else { 1100 }, "{tag}: base {base}");
                for path in SLOT_PATHS {
                    if let Some(n) = end_seq(&port, path) {
                        assert!(n < u64::from(SEQ_TOP), "{tag}");
                    }
                }
            }
        }
    }
}

#[test]
fn the_renumbering_survives_a_cut_and_slots_that_stay() {
    // Every flush from a base near the top, with the slots' removal
    // failing for a while: the numbers stay at the top (a fold each
    // flush) until the slots are gone, and nothing is lost.
    let mut port = MemPort::new();
    port.put(
        SESSION_PATH,
        b"{\"role\":\"user\",\"content\":\"b0\",\"end\":true,\"seq\":4294967292}\n",
    );
    let mut s = Session::new();
    flush_and_reread(&mut port, &mut s, 2, "before");
    assert_eq!(
        end_seq(&port, SLOT_PATHS[slot_of(4294967294)]),
        Some(4294967294)
    );
    port.fail_all(Op::Remove, Errno::EIO);
    flush_and_reread(&mut port, &mut s, 3, "stuck");
    assert_eq!(end_seq(&port, SESSION_PATH), Some(u64::from(SEQ_TOP)));
    assert!(end_seq(&port, SLOT_PATHS[slot_of(4294967294)]).is_some());
    port.heal();
    flush_and_reread(&mut port, &mut s, 1, "freed");
    assert!(SLOT_PATHS.iter().all(|p| port.get(p).is_none()), "removed");
    assert_eq!(end_seq(&port, SESSION_PATH), Some(1), "in the same flush");
    flush_and_reread(&mut port, &mut s, 3, "after");
    assert_eq!(
        end_seq(&port, SESSION_PATH),
        Some(1),
        "the base again as batch 1"
    );
    assert_eq!(end_seq(&port, SLOT_PATHS[3]), Some(3));
    // The base at 1 not written (its rename fails; or a cut there): a
    // reboot reads the base at the top and renumbers at its first
    // flush; without a reboot the next flush writes it.
    for reboot_between in [true, false] {
        let mut port = MemPort::new();
        port.put(
            SESSION_PATH,
            b"{\"role\":\"user\",\"content\":\"b0\",\"end\":true,\"seq\":4294967294}\n",
        );
        let mut s = Session::new();
        port.fail(Op::Rename, 1, Errno::EIO);
        flush_and_reread(&mut port, &mut s, 1, "top");
        assert_eq!(end_seq(&port, SESSION_PATH), Some(u64::from(SEQ_TOP)));
        if reboot_between {
            s = reboot(&mut port);
        }
        flush_and_reread(&mut port, &mut s, 1, "next");
        assert_eq!(end_seq(&port, SESSION_PATH), Some(1));
        flush_and_reread(&mut port, &mut s, 3, "then");
        assert_eq!(texts(&mut s, &mut port)[0], "b0");
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig {
        cases: 96,
        ..crate::testing::regressions("tests/proptest-regressions/session.txt")
    })]
    /// Files whose numbers sit anywhere near the top of `u32` (or past
    /// it), then flushes of one to three turns with reboots and failed
    /// slot removals between them: every flush that returned `Ok` is
    /// read back whole by a reboot, and the numbers come down again.
    #[test]
    #[cfg_attr(miri, ignore)] // long; no unsafe code under test
    fn flushes_near_the_top_of_u32_are_read_back(
        base in 0u32..24,
        slots in proptest::collection::vec((0usize..SLOTS, 0u32..24), 0..4),
        steps in proptest::collection::vec((1usize..4, 0u8..8), 1..30),
    ) {
        let seq = |k: u32| match k {
            20 => "100000000000000000000".to_string(),
            21 => "-1".to_string(),
            22 => "7".to_string(),
            23 => "\"x\"".to_string(),
            k => (u32::MAX - k).to_string(),
        };
        let mut port = MemPort::new();
        port.put(
            SESSION_PATH,
            format!("{{\"role\":\"user\",\"content\":\"base\",\"end\":true,\"seq\":{}}}\n", seq(base))
                .as_bytes(),
        );
        for (i, k) in slots {
            port.put(
                SLOT_PATHS[i],
                format!("{{\"role\":\"user\",\"content\":\"slot {i}\",\"end\":true,\"seq\":{}}}\n", seq(k))
                    .as_bytes(),
            );
        }
        let mut s = Session::new();
        let mut n = 0;
        for (turns, what) in steps {
            for _ in 0..turns {
                n += 1;
                s.add(&mut port, Role::User, format!("turn {n}").as_bytes()).unwrap();
            }
            if what == 0 {
                port.fail_all(Op::Remove, Errno::EIO);
            }
            proptest::prop_assert_eq!(s.flush(&mut port), Ok(()));
            port.heal();
            let ram = texts(&mut s, &mut port);
            proptest::prop_assert_eq!(texts(&mut reboot(&mut port), &mut port), ram);
            if what == 1 {
                s = reboot(&mut port);
            }
        }
        // Once slots can be removed, a base at the top is followed by
        // the base as batch 1.
        let mut at_top = 0;
        for _ in 0..8 {
            s.add(&mut port, Role::User, b"last").unwrap();
            s.flush(&mut port).unwrap();
            match end_seq(&port, SESSION_PATH) {
                Some(n) if n == u64::from(SEQ_TOP) => at_top += 1,
                Some(n) => {
                    proptest::prop_assert!(at_top == 0 || n == 1);
                    at_top = 0;
                }
                None => {}
            }
            proptest::prop_assert!(at_top <= 1);
        }
    }
}

#[test]
fn clear_on_a_fresh_device_writes_nothing() {
    let mut port = MemPort::new();
    let mut s = Session::new();
    assert_eq!(s.count(&mut port), 0);
    s.clear(&mut port);
    assert_eq!(port.writes, 0);
    assert!(!s.is_dirty());
}

#[test]
fn an_unreadable_slot_leaves_the_session_unloaded() {
    let mut port = MemPort::new();
    let mut s = Session::new();
    s.add(&mut port, Role::User, b"keep").unwrap();
    s.flush(&mut port).unwrap();
    let mut again = Session::new();
    port.fail(Op::Read, 0, Errno::EIO);
    assert_eq!(
        again.add(&mut port, Role::User, b"x"),
        Err(AddError::Io(Errno::EIO))
    );
    assert_eq!(texts(&mut again, &mut port), ["keep"]);
}

#[test]
fn init_drops_unflushed_ram() {
    let mut port = MemPort::new();
    let mut s = Session::new();
    s.add(&mut port, Role::User, b"x").unwrap();
    s.init();
    assert_eq!(s.count(&mut port), 0);
    assert!(!s.is_dirty());
}
