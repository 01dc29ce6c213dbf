//! Any bytes as `/.bentoclaw_config`: the reader (`agent::config`) never
//! panics and always gives settings within their ranges; what `store`
//! writes reads back the same; the file read through the port is the bytes
//! parsed (or the defaults past `FILE_MAX`); and where serde_json reads the
//! bytes as the same object, the settings are its values (those in range).
//! The first bytes may put the rest into a setting's place, so that a short
//! run reaches the settings.
#![no_main]

use bentoclaw::agent::config::{self, CONFIG_PATH, Config, FILE_MAX, KEYS};
use bentoclaw::testing::MemPort;
use libfuzzer_sys::fuzz_target;
use serde::Deserialize;

#[derive(Deserialize)]
struct Doc {
    compact_threshold_pct: Option<i32>,
    compact_min_msgs: Option<i32>,
    compact_keep: Option<i32>,
    context_budget: Option<i32>,
    idle_timeout_s: Option<i32>,
    daily_reset_hour: Option<i32>,
    auto_compact: Option<bool>,
    backend_summary: Option<bool>,
    send_tools: Option<bool>,
}

/// Where serde_json and serde-json-core are known to differ, no claim:
/// serde_json reads a struct from an array; serde-json-core takes no
/// escaped member names (`from_slice`), refuses an array or object as a
/// member's value (the file is flat: nothing is skipped recursively), and
/// skips an unknown member's scalar value without checking it.
fn comparable(data: &[u8]) -> bool {
    let first = data
        .iter()
        .find(|b| !matches!(b, b' ' | b'\t' | b'\r' | b'\n'));
    if first != Some(&b'{') || data.contains(&b'\\') {
        return false;
    }
    let (mut depth, mut max, mut in_str) = (0i32, 0i32, false);
    for &b in data {
        match (in_str, b) {
            (_, b'"') => in_str = !in_str,
            (false, b'{' | b'[') => {
                depth += 1;
                max = max.max(depth);
            }
            (false, b'}' | b']') => depth -= 1,
            _ => {}
        }
    }
    max <= 1
}

/// The file: the bytes as they are, or (so that the fuzzer reaches the
/// settings quickly) one setting with the bytes as its value, the file
/// `store` writes with the bytes spliced in, or a line of the old format;
/// the first two bytes choose.
fn file(data: &[u8]) -> Vec<u8> {
    let (Some(&mode), Some(&at)) = (data.first(), data.get(1)) else {
        return data.to_vec();
    };
    let rest = &data[2..];
    let name = KEYS[usize::from(at) % KEYS.len()].name.as_bytes();
    match mode % 4 {
        0 => data.to_vec(),
        1 => [&b"{\""[..], name, b"\":", rest, b"}"].concat(),
        2 => {
            let mut p = MemPort::new();
            config::store(&mut p, &Config::defaults()).expect("store");
            let mut f = p.get(CONFIG_PATH).expect("written");
            let i = usize::from(at) % (f.len() + 1);
            f.splice(i..i, rest.iter().copied());
            f
        }
        _ => [name, b"=", rest, b"\nend\n"].concat(),
    }
}

fuzz_target!(|data: &[u8]| {
    let whole = file(data);
    let data = &whole[..];
    let c = config::parse(data);
    for (i, k) in KEYS.iter().enumerate() {
        let v = c.get(i);
        assert!(k.lo <= v && v <= k.hi, "{} = {v}", k.name);
    }

    // Against serde_json.
    if comparable(data) {
        if let Ok(doc) = serde_json::from_slice::<Doc>(data) {
            let b = |v: Option<bool>| v.map(i32::from);
            let values = [
                doc.compact_threshold_pct,
                doc.compact_min_msgs,
                doc.compact_keep,
                doc.context_budget,
                doc.idle_timeout_s,
                doc.daily_reset_hour,
                b(doc.auto_compact),
                b(doc.backend_summary),
                b(doc.send_tools),
            ];
            let mut want = Config::defaults();
            for (i, v) in values.iter().enumerate() {
                if let Some(v) = v {
                    let _ = want.set(i, *v);
                }
            }
            for i in 0..KEYS.len() {
                assert_eq!(
                    c.get(i),
                    want.get(i),
                    "{}: {:?}",
                    KEYS[i].name,
                    String::from_utf8_lossy(data)
                );
            }
        }
    }

    // Through the port.
    let mut p = MemPort::new();
    p.put(CONFIG_PATH, data);
    let loaded = config::load(&mut p).expect("a readable file");
    if data.len() <= FILE_MAX {
        assert_eq!(loaded, c);
    } else {
        assert_eq!(loaded, config::parse(b""));
    }

    // What store writes reads back the same, and is the seed's JSON.
    config::store(&mut p, &c).expect("store");
    let file = p.get(CONFIG_PATH).expect("written");
    assert!(file.len() <= FILE_MAX);
    assert_eq!(config::load(&mut p).expect("load"), c);
    let v: serde_json::Value = serde_json::from_slice(&file).expect("the file is JSON");
    assert_eq!(v.as_object().map(|o| o.len()), Some(KEYS.len()));
    for (i, k) in KEYS.iter().enumerate() {
        let got = if k.is_bool {
            v[k.name].as_bool().map(i32::from)
        } else {
            v[k.name].as_i64().map(|n| n as i32)
        };
        assert_eq!(got, Some(c.get(i)), "{}", k.name);
    }
});
