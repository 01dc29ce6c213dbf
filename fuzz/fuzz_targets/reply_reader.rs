//! Any bytes as a backend reply: the `tool_call` reader (`agent::wire`)
//! never panics; a recognised call's strings unescape to valid UTF-8; and it
//! agrees with serde_json, with the same strict shape
//! (`{"tool_call":{"name":"…","arg":"…"|null}}`, no other or repeated
//! member), on which replies are a call and on the decoded strings. Also
//! `unescape` alone, against serde_json's string reader, and into small
//! buffers. The first byte may wrap the rest in a tool call's shape, so that
//! whole calls are reached in a short run.
#![no_main]

use bentoclaw::agent::wire::{self, Buf, Capped, Discard};
use libfuzzer_sys::fuzz_target;
use serde::Deserialize;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ReplyDoc {
    tool_call: CallDoc,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CallDoc {
    name: String,
    #[serde(default)]
    arg: Option<String>,
}

fn decode(s: &str) -> Option<String> {
    let mut buf = vec![0u8; s.len() + 4];
    let mut b = Buf::new(&mut buf);
    let n = wire::unescape(s, &mut b)?;
    assert_eq!(n, b.len);
    Some(String::from_utf8(b.bytes().to_vec()).expect("unescape gives UTF-8"))
}

/// Objects all the way (serde_json also reads a struct from an array; the
/// reader takes objects only). The derived structs refuse a repeated member.
fn objects(data: &[u8]) -> bool {
    let Ok(v) = serde_json::from_slice::<serde_json::Value>(data) else {
        return false;
    };
    v.as_object().is_some_and(|o| o.len() == 1) && v["tool_call"].is_object()
}

/// The reply: the bytes as they are, or (so that the fuzzer reaches whole
/// tool calls quickly) put into the shape a tool call has; the first byte
/// chooses.
fn reply(data: &[u8]) -> Vec<u8> {
    let Some((&mode, rest)) = data.split_first() else {
        return Vec::new();
    };
    let (pre, post): (&[u8], &[u8]) = match mode % 6 {
        0 | 1 => return data.to_vec(),
        2 => (br#"{"tool_call":{"name":""#, br#""}}"#),
        3 => (br#"{"tool_call":{"name":"py0","arg":""#, br#""}}"#),
        4 => (br#"{"tool_call":{"#, b"}}"),
        _ => (br#" {"tool_call":"#, b"}"),
    };
    [pre, rest, post].concat()
}

fuzz_target!(|data: &[u8]| {
    let whole = reply(data);
    let data = &whole[..];
    let ours = wire::tool_call(data);
    let theirs = serde_json::from_slice::<ReplyDoc>(data)
        .ok()
        .filter(|_| objects(data));
    match (&ours, &theirs) {
        (Some(call), Some(doc)) => {
            assert_eq!(
                decode(call.name).as_deref(),
                Some(doc.tool_call.name.as_str())
            );
            assert_eq!(
                call.arg
                    .map(|a| decode(a).expect("a recognised arg decodes")),
                doc.tool_call.arg
            );
        }
        (None, None) => {}
        (Some(_), None) => panic!("a tool call serde_json refuses: {data:?}"),
        (None, Some(_)) => panic!("a tool call not recognised: {data:?}"),
    }

    // unescape alone: the bytes as the inside of a JSON string.
    if let Ok(s) = std::str::from_utf8(data) {
        let mine = wire::unescape(s, &mut Discard);
        if !s.contains('"') {
            let quoted = format!("\"{s}\"");
            let json = serde_json::from_str::<String>(&quoted).ok();
            assert_eq!(mine.is_some(), json.is_some(), "{s:?}");
            if let Some(j) = json {
                assert_eq!(decode(s).as_deref(), Some(j.as_str()));
                assert_eq!(mine, Some(j.len()));
            }
        }
        // Into small buffers: a bounded one refuses what does not fit; a
        // capped one keeps whole characters.
        let cap = data.first().map_or(0, |&b| usize::from(b) % 40);
        let mut small = vec![0u8; cap];
        let mut b = Buf::new(&mut small);
        if let Some(n) = wire::unescape(s, &mut b) {
            assert!(n <= cap);
            assert_eq!(Some(n), mine);
        }
        let mut small = vec![0u8; cap];
        let mut c = Capped::new(&mut small);
        let r = wire::unescape(s, &mut c);
        assert_eq!(r, mine);
        assert!(c.len <= cap);
        assert!(std::str::from_utf8(&c.buf[..c.len]).is_ok());
    }
});
