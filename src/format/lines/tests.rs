//! The reader and the writer against hand-written lines.

use super::parser::utf8_run;
use super::reader::READ_CHUNK;
use super::*;
use crate::port::{Errno, Mode, Port};
use crate::testing::MemPort;

const A: &[u8] = b"a";
const B: &[u8] = b"b";

fn parse_all(text: &[u8]) -> Vec<(Line, String, String, Scalar)> {
    let mut port = MemPort::new();
    port.put(c"/f", text);
    let fd = port.open(c"/f", Mode::Read).unwrap();
    let mut r = ByteReader::new(fd);
    let mut out = Vec::new();
    loop {
        let mut a = [0u8; 20];
        let mut b = [0u8; 20];
        let mut strs = [StrField::new(&A, &mut a), StrField::new(&B, &mut b)];
        let mut sc = [ScalarField::new(b"end")];
        let line = read_record(&mut port, &mut r, &mut strs, &mut sc).unwrap();
        if line == Line::Eof {
            break;
        }
        let a = String::from_utf8(strs[0].value().to_vec()).unwrap();
        let b = String::from_utf8(strs[1].value().to_vec()).unwrap();
        out.push((line, a, b, sc[0].value()));
    }
    port.close(fd).unwrap();
    out
}

/// A field name longer than [`NAME_MAX`] is unknown, but checked like
/// any other string.
#[test]
fn long_names_are_checked_and_skipped() {
    let got = parse_all(
        b"{\"a\":\"x\",\"b\":\"y\",\"longername\":5,\"longer_name12\":\"z\"}\n\
          {\"a\":\"x\",\"b\":\"y\",\"longname\\u0000\":5}\n\
          {\"a\":\"x\",\"b\":\"y\",\"longname\\ud800\":5}\n\
          {\"a\":\"x\",\"b\":\"y\",\"longname\xff\":5}\n\
          {\"a\":\"x\",\"b\":\"y\",\"longname\x01\":5}\n\
          {\"a\":\"x\",\"b\":\"y\",\"end_of_it\":true}\n",
    );
    let lines: Vec<Line> = got.iter().map(|g| g.0).collect();
    assert_eq!(
        lines,
        [
            Line::Record,
            Line::Skipped,
            Line::Skipped,
            Line::Skipped,
            Line::Skipped,
            Line::Record
        ]
    );
    assert_eq!(got[5].3, Scalar::Absent);
}

#[test]
fn reads_records_and_skips_garbage() {
    let text = b"{\"a\":\"x\",\"b\":\"y\"}\n\
                 garbage\n\
                 {\"a\":\"1\",\"zz\":[[1]],\"b\":\"2\"}\n\
                 {\"b\":\"\\u0e01\\n\\\"\",\"unknown\":\"long string that is skipped\",\"a\":\"q\",\"end\":true}\r\n\
                 {\"a\":\"torn";
    let lines = parse_all(text);
    assert_eq!(lines.len(), 5);
    assert_eq!(lines[0].0, Line::Record);
    assert_eq!((lines[0].1.as_str(), lines[0].2.as_str()), ("x", "y"));
    assert_eq!(lines[1].0, Line::Skipped);
    assert_eq!(lines[2].0, Line::Skipped, "nested value");
    assert_eq!(lines[3].0, Line::Record);
    assert_eq!(lines[3].2, "ก\n\"");
    assert_eq!(lines[3].3, Scalar::True);
    assert_eq!(lines[4].0, Line::Skipped, "torn tail");
}

#[test]
fn rejects_what_c_strings_and_utf8_cannot_hold() {
    for bad in [
        &b"{\"a\":\"\\u0000\",\"b\":\"\"}\n"[..],
        b"{\"a\":\"\xff\",\"b\":\"\"}\n",
        b"{\"a\":\"\\ud800\",\"b\":\"\"}\n",
        b"{\"a\":\"raw\ttab\",\"b\":\"\"}\n",
        b"{\"a\":\"0123456789abcdefghijX\",\"b\":\"\"}\n",
        b"{\"a\":\"x\"}\n",
        b"{\"a\":\"x\",\"b\":\"y\"} trailing\n",
    ] {
        let lines = parse_all(bad);
        assert_eq!(
            lines[0].0,
            Line::Skipped,
            "{:?}",
            String::from_utf8_lossy(bad)
        );
    }
}

/// `bad` then a valid line: `bad` is skipped, the next line read.
fn skipped_then_next(bad: &[u8]) {
    let mut text = bad.to_vec();
    text.extend_from_slice(b"\n{\"a\":\"next\",\"b\":\"1\"}\n");
    let lines = parse_all(&text);
    let what = String::from_utf8_lossy(bad);
    assert_eq!(lines.len(), 2, "{what:?}");
    assert_eq!(lines[0].0, Line::Skipped, "{what:?}");
    assert_eq!((lines[1].0, lines[1].1.as_str()), (Line::Record, "next"));
}

#[test]
fn a_line_torn_inside_a_string_does_not_swallow_the_next() {
    for torn in [
        &b"{\"a\":\"x\",\"b\":\"y"[..],
        b"{\"a\":\"x\",\"b\":\"y\\",
        b"{\"a\":\"x\",\"b\":\"\\u00",
        b"{\"a\":\"x\",\"zz\":tr",
        b"{\"a\":\"x\",\"zz\":\"skipped",
        b"{\"a\":\"x\",\"zz\":12",
    ] {
        skipped_then_next(torn);
    }
}

/// A field name read at any place in a chunk (whole in its first word
/// or not, escaped, cut by the chunk's end) is the name decoded; a name
/// that is not valid UTF-8, or holds a control character or a bad
/// escape, is refused.
#[test]
fn names_anywhere_in_a_chunk() {
    for pad in 0..72 {
        let p = "p".repeat(pad);
        let ok = format!(
            "{{\"zz\":\"{p}\",\"\\u0061\":\"x\",\"b\":\"y\",\"a\":\"q\",\"\":1,\"\u{e9}\":2,\"e\\u006ed\":true,\"end1234\":3}}\n"
        );
        let got = parse_all(ok.as_bytes());
        assert_eq!(got.len(), 1, "{pad}");
        assert_eq!(got[0].0, Line::Record, "{pad}");
        assert_eq!((got[0].1.as_str(), got[0].2.as_str()), ("q", "y"));
        assert_eq!(got[0].3, Scalar::True, "{pad}");
        for bad in [&b"\xff"[..], b"a\x01", b"\xc3", b"a\\x"] {
            let mut line = format!("{{\"zz\":\"{p}\",\"a\":\"q\",\"b\":\"y\",\"").into_bytes();
            line.extend_from_slice(bad);
            line.extend_from_slice(b"\":1}\n");
            assert_eq!(parse_all(&line)[0].0, Line::Skipped, "{pad} {bad:?}");
        }
    }
}

/// Each line's kind and its `"a"` as [`parse_all`] reads them.
fn kinds(text: &[u8]) -> Vec<(Line, String)> {
    parse_all(text).into_iter().map(|g| (g.0, g.1)).collect()
}

/// Blank lines (whitespace only) are skipped one at a time without
/// taking the next line; whitespace may come before a record's brace;
/// a line not starting with one is skipped whole; whitespace then the
/// end of the file is the end. After a record's brace: whitespace then
/// the newline (a record), anything else (the line skipped up to its
/// newline, the next line read), whitespace then the end of the file
/// (a record at the end).
#[test]
fn whitespace_around_records() {
    let (s, r) = (Line::Skipped, Line::Record);
    let blank = b"\n \t\r\n {\"a\":\"1\",\"b\":\"2\"}\n\t{ \"a\":\"3\",\"b\":\"4\"}\nx{\"a\":\"5\",\"b\":\"6\"}\n{\n\"a\":\"7\",\"b\":\"8\"}\n  ";
    let want = [
        (s, ""),
        (s, ""),
        (r, "1"),
        (r, "3"),
        (s, ""),
        (s, ""),
        (s, ""),
    ];
    assert_eq!(kinds(blank), want.map(|(l, a)| (l, a.to_string())));
    let after = b"{\"a\":\"1\",\"b\":\"2\"} \t\r\n{\"a\":\"3\",\"b\":\"4\"} x\"a\"\n{\"a\":\"5\",\"b\":\"6\"},\n{\"a\":\"7\",\"b\":\"8\"} \t";
    let want = [(r, "1"), (s, "3"), (s, "5"), (Line::RecordAtEof, "7")];
    assert_eq!(kinds(after), want.map(|(l, a)| (l, a.to_string())));
}

#[test]
fn scalar_names_match_exactly() {
    let f = ScalarField::new(b"end");
    assert!(f.is(b"end"));
    for other in [&b""[..], b"en", b"ends", b"tout"] {
        assert!(!f.is(other), "{other:?}");
    }
    assert!(ScalarField::new(b"pin").is(b"pin"));
    assert!(!ScalarField::new(b"tout").is(b"tout"));
    assert!(!ScalarField::new(b"").is(b""));
    assert!(!ScalarField::new(b"toolong").is(b"toolong"));
    assert!(!ScalarField::new(b"toolong").is(b"tool"));
}

/// [`utf8_run`] over a text cut anywhere agrees with
/// `core::str::from_utf8` on the whole.
#[test]
fn utf8_runs_check_as_from_utf8() {
    let bytes = [
        0x41, 0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0, 0xC1, 0xC2, 0xDF, 0xE0, 0xE1, 0xED,
        0xEF, 0xF0, 0xF1, 0xF4, 0xF5, 0xFF,
    ];
    let mut texts: Vec<Vec<u8>> = vec![Vec::new()];
    let mut level = texts.clone();
    // Every text of up to four of those bytes (two under Miri: slow).
    for _ in 0..if cfg!(miri) { 2 } else { 4 } {
        level = level
            .iter()
            .flat_map(|t| {
                bytes.iter().map(move |&b| {
                    let mut t = t.clone();
                    t.push(b);
                    t
                })
            })
            .collect();
        texts.extend(level.iter().cloned());
    }
    for t in &texts {
        let want = core::str::from_utf8(t).is_ok();
        for cut in 0..=t.len() {
            let u = crate::text::Utf8::new();
            let got = utf8_run(u, &t[..cut])
                .valid()
                .and_then(|u| utf8_run(u, &t[cut..]).valid())
                .is_some_and(|u| u.complete());
            assert_eq!(got, want, "{t:x?} cut at {cut}");
        }
    }
}

/// Strings decode the same wherever the 64-byte chunks cut them:
/// through a character, before an escape, at the closing quote; a
/// character left open before an escape, or at the end, is refused.
#[test]
fn strings_decode_across_chunk_cuts() {
    for pad in 0..(READ_CHUNK + 8) {
        let x = "x".repeat(pad % 13);
        let mut text = format!("{{\"zz\":\"{}\",", "p".repeat(pad)).into_bytes();
        text.extend_from_slice(format!("\"a\":\"{x}ก\\n\\\"ไ\",\"b\":\"\"}}\n").as_bytes());
        for bad in [&b"\xe0\xb8\\n"[..], b"\xe0\\n\xb8\x81"] {
            text.extend_from_slice(format!("{{\"a\":\"{x}").as_bytes());
            text.extend_from_slice(bad);
            text.extend_from_slice(b"\",\"b\":\"\"}\n");
        }
        let lines = parse_all(&text);
        assert_eq!(lines.len(), 3, "pad {pad}");
        assert_eq!(lines[0].0, Line::Record, "pad {pad}");
        assert_eq!(lines[0].1, format!("{x}ก\n\"ไ"), "pad {pad}");
        assert_eq!((lines[1].0, lines[2].0), (Line::Skipped, Line::Skipped));
    }
}

/// Whitespace may sit around every separator of an object and an
/// array; a separator missing, doubled or trailing is not a record.
#[test]
fn separators_with_and_without_whitespace() {
    let ok: [(&[u8], Scalar); 6] = [
        (b"{\"a\":\"x\",\"b\":\"y\",\"end\":[]}", Scalar::Array(0)),
        (b"{\"a\":\"x\",\"b\":\"y\",\"end\":[ \t]}", Scalar::Array(0)),
        (b"{\"a\":\"x\",\"b\":\"y\",\"end\":[1,2]}", Scalar::Array(2)),
        (
            b" \t{ \"a\" :\t\"x\" , \"b\": \"y\",\"end\" : [ 1 ,\r2 ,3\t] } \r",
            Scalar::Array(3),
        ),
        (
            b"{\"a\":\"x\",\"b\":\"y\",\"end\":[1,2,3,4,5,6,7]}",
            Scalar::Array(7),
        ),
        (b"{\"end\":true , \"b\":\"y\",\"a\":\"x\"}", Scalar::True),
    ];
    for (text, want) in ok {
        let mut line = text.to_vec();
        line.push(b'\n');
        let got = parse_all(&line);
        assert_eq!(got.len(), 1, "{:?}", String::from_utf8_lossy(text));
        assert_eq!(
            (got[0].0, got[0].3),
            (Line::Record, want),
            "{:?}",
            String::from_utf8_lossy(text)
        );
    }
    for bad in [
        &b"{\"a\":\"x\",\"b\":\"y\",\"end\":[1,]}"[..],
        b"{\"a\":\"x\",\"b\":\"y\",\"end\":[,1]}",
        b"{\"a\":\"x\",\"b\":\"y\",\"end\":[1 2]}",
        b"{\"a\":\"x\",\"b\":\"y\",\"end\":[1,2,3,4,5,6,7,8]}",
        b"{\"a\":\"x\",\"b\":\"y\",\"end\":[1",
        b"{\"a\":\"x\",\"b\":\"y\",}",
        b"{,\"a\":\"x\",\"b\":\"y\"}",
        b"{\"a\":\"x\",,\"b\":\"y\"}",
        b"{\"a\" \"x\",\"b\":\"y\"}",
        b"{\"a\"::\"x\",\"b\":\"y\"}",
        b"{\"a\":\"x\" \"b\":\"y\"}",
        b"[\"a\",\"x\"]",
        b"{\"a\":\"x\",\"b\":\"y\"",
    ] {
        skipped_then_next(bad);
    }
}

#[test]
fn surrogate_pairs_decode() {
    let lines = parse_all(b"{\"a\":\"\\ud83d\\ude00\",\"b\":\"\"}");
    assert_eq!(lines[0].0, Line::RecordAtEof);
    assert_eq!(lines[0].1, "\u{1F600}");
}

#[test]
fn a_reader_over_ram_and_a_counting_writer_never_call_the_port() {
    let text = b"{\"a\":\"x\",\"b\":\"y\"}\ngarbage\n{\"a\":\"\\u0e01\",\"b\":\"\"}";
    let mut port = MemPort::new();
    port.fail_all(crate::testing::Op::Read, Errno::EIO);
    let mut r = ByteReader::over(text);
    let mut got = Vec::new();
    loop {
        let mut a = [0u8; 20];
        let mut b = [0u8; 20];
        let mut strs = [StrField::new(&A, &mut a), StrField::new(&B, &mut b)];
        let line = read_record(&mut port, &mut r, &mut strs, &mut []).unwrap();
        if line == Line::Eof {
            break;
        }
        got.push((line, strs[0].value().to_vec()));
    }
    assert_eq!(
        got,
        [
            (Line::Record, b"x".to_vec()),
            (Line::Skipped, Vec::new()),
            (Line::RecordAtEof, "ก".as_bytes().to_vec()),
        ]
    );
    assert_eq!(r.offset() as usize, text.len());
    let mut w = LineWriter::new(NO_FD);
    w.string(&mut port, "q\"\u{1}ไทย".repeat(20).as_bytes())
        .unwrap();
    w.flush(&mut port).unwrap();
    assert_eq!(w.written(), 2 + 20 * (1 + 2 + 6 + 9));
    assert_eq!(port.writes, 0);
}

#[test]
fn writer_escapes_and_reader_round_trips() {
    let mut port = MemPort::new();
    let fd = port.open(c"/f", Mode::Write).unwrap();
    let mut w = LineWriter::new(fd);
    let value = "q\"\\\n\r\t\u{1}ไทย/";
    w.raw(&mut port, b"{\"a\":").unwrap();
    w.string(&mut port, value.as_bytes()).unwrap();
    w.raw(&mut port, b",\"b\":\"\"}\n").unwrap();
    w.flush(&mut port).unwrap();
    port.close(fd).unwrap();
    let text = port.get(c"/f").unwrap();
    assert_eq!(w.written() as usize, text.len());
    let lines = parse_all(&text);
    assert_eq!(lines[0].1, value);
}
