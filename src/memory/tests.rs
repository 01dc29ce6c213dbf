//! The store's tests: the merged reader and the edits against the files
//! they write, and against the frozen reference model (`reference`).

use super::hash::{fnv, hash, sig};
use super::*;
use crate::port::MEMORY_PATH;
use crate::testing::{MemPort, Op};

/// The hash that places keys in shard files is FNV-1a, 32 bits (the
/// published test vectors; and a byte at a time, for odd and even
/// lengths).
#[test]
fn fnv_is_fnv_1a() {
    assert_eq!(fnv(b""), 0x811c_9dc5);
    assert_eq!(fnv(b"a"), 0xe40c_292c);
    assert_eq!(fnv(b"foobar"), 0xbf9c_f968);
    let key = b"memory_key_00_abcdefghijklmnop";
    for n in 0..=key.len() {
        let one = key[..n].iter().fold(0x811c_9dc5u32, |h, &b| {
            (h ^ u32::from(b)).wrapping_mul(0x0100_0193)
        });
        assert_eq!(fnv(&key[..n]), one, "{n}");
    }
}

fn recall(port: &mut MemPort, key: &str) -> Option<String> {
    let mut out = [0u8; 128];
    get(port, key.as_bytes(), &mut out)
        .ok()
        .map(|n| String::from_utf8(out[..n].to_vec()).unwrap())
}

fn pairs(port: &mut MemPort) -> Vec<(String, String, bool)> {
    let mut v = Vec::new();
    for_each(port, &mut |p| {
        v.push((
            String::from_utf8(p.key().to_vec()).unwrap(),
            String::from_utf8(p.value().to_vec()).unwrap(),
            p.pinned(),
        ))
    })
    .unwrap();
    v
}

fn file(port: &MemPort, path: &CStr) -> String {
    String::from_utf8(port.get(path).unwrap_or_default()).unwrap()
}

fn shard(port: &MemPort, key: &str) -> String {
    file(port, SHARD_PATHS[shard_of(key.as_bytes())])
}

#[test]
fn set_get_replace_thai() {
    let mut port = MemPort::new();
    assert_eq!(recall(&mut port, "name"), None);
    set(&mut port, b"name", "สมชาย".as_bytes()).unwrap();
    set(&mut port, b"city", b"Chiang \"Mai\"\n").unwrap();
    set(&mut port, b"name", b"Somchai").unwrap();
    assert_eq!(recall(&mut port, "name").as_deref(), Some("Somchai"));
    assert_eq!(
        recall(&mut port, "city").as_deref(),
        Some("Chiang \"Mai\"\n")
    );
    assert_eq!(pairs(&mut port).len(), 2);
    assert!(port.get(MEMORY_TMP_PATH).is_none());
}

#[test]
fn a_set_writes_one_shard_in_one_write() {
    let mut port = MemPort::new();
    set(&mut port, b"city", b"Chiang Mai").unwrap();
    assert_eq!(
        file(&port, MEMORY_PATH),
        "{\"seq\":1}\n{\"key\":\"city\",\"value\":\"Chiang Mai\"}\n",
        "the first set writes the base"
    );
    set(&mut port, b"name", b"Somchai").unwrap();
    assert_eq!(
        shard(&port, "name"),
        "{\"seq\":1}\n{\"key\":\"name\",\"value\":\"Somchai\",\"n\":1}\n"
    );
    let renames = port.count(Op::Rename);
    let base = port.get(MEMORY_PATH);
    set(&mut port, b"name", b"Som").unwrap();
    assert_eq!(port.count(Op::Rename), renames, "no rename");
    assert_eq!(port.get(MEMORY_PATH), base, "no fold");
    assert_eq!(
        shard(&port, "name"),
        "{\"seq\":1}\n{\"key\":\"name\",\"value\":\"Som\",\"n\":1}\n",
        "the key's old line is replaced, its place kept"
    );
    // Where "wb" is not atomic: the shard through the temporary file.
    port.atomic = false;
    set(&mut port, b"name", b"S").unwrap();
    assert_eq!(port.count(Op::Rename), renames + 1);
    assert_eq!(recall(&mut port, "name").as_deref(), Some("S"));
    port.fail(Op::Write, 0, Errno::EIO);
    assert!(set(&mut port, b"name", b"T").is_err());
    assert_eq!(
        recall(&mut port, "name").as_deref(),
        Some("S"),
        "the old shard stays"
    );
}

#[test]
fn reads_the_seed_plain_form_and_shards_override_it() {
    let mut port = MemPort::new();
    let seed =
        "{\"key\":\"name\",\"value\":\"สมชาย\"}\n{\"key\":\"city\",\"value\":\"Chiang Mai\"}\n";
    port.put(MEMORY_PATH, seed.as_bytes());
    // Shards of a generation 0 (not ours) do not apply to it.
    port.put(
        SHARD_PATHS[shard_of(b"city")],
        b"{\"seq\":0}\n{\"key\":\"city\",\"del\":true}\n",
    );
    assert_eq!(recall(&mut port, "city").as_deref(), Some("Chiang Mai"));
    set(&mut port, b"name", b"Somchai").unwrap();
    assert!(
        file(&port, MEMORY_PATH).starts_with("{\"seq\":1}\n"),
        "converted by the first set"
    );
    set(&mut port, b"pet", b"cat").unwrap();
    forget(&mut port, b"city").unwrap();
    let got = pairs(&mut port);
    let keys: Vec<&str> = got.iter().map(|p| p.0.as_str()).collect();
    assert_eq!(keys.len(), 2);
    assert!(keys.contains(&"name") && keys.contains(&"pet"));
    assert_eq!(recall(&mut port, "name").as_deref(), Some("Somchai"));
    assert_eq!(recall(&mut port, "city"), None);
}

#[test]
#[cfg_attr(miri, ignore)] // long; no unsafe code under test
fn a_full_shard_folds_into_the_base_and_retires_the_shards() {
    let mut port = MemPort::new();
    let v = "v".repeat(90);
    let mut folds = 0;
    for i in 0..40 {
        let key = format!("k{}", i % 12);
        let renames = port.count(Op::Rename);
        set(&mut port, key.as_bytes(), format!("{v}{i}").as_bytes()).unwrap();
        folds += port.count(Op::Rename) - renames;
        for s in SHARD_PATHS {
            assert!(file(&port, s).len() <= SHARD_MAX);
        }
        assert_eq!(recall(&mut port, &key), Some(format!("{v}{i}")));
    }
    assert!(folds > 0, "shards filled");
    assert_eq!(pairs(&mut port).len(), 12);
    let base = file(&port, MEMORY_PATH);
    assert!(
        base.starts_with(&format!("{{\"seq\":{folds}}}\n")),
        "{base}"
    );
    for i in 0..12 {
        assert!(recall(&mut port, &format!("k{i}")).is_some());
    }
}

#[test]
fn keys_keep_their_places() {
    let mut port = MemPort::new();
    port.put(
        MEMORY_PATH,
        b"{\"key\":\"a\",\"value\":\"1\"}\n{\"key\":\"b\",\"value\":\"2\"}\n",
    );
    for k in ["c", "d", "e", "f", "g", "h", "i", "j"] {
        set(&mut port, k.as_bytes(), b"new").unwrap();
    }
    set(&mut port, b"a", b"changed").unwrap();
    set(&mut port, b"d", b"changed").unwrap();
    forget(&mut port, b"e").unwrap();
    set(&mut port, b"e", b"again").unwrap();
    let order: Vec<String> = pairs(&mut port).into_iter().map(|p| p.0).collect();
    assert_eq!(order, ["a", "b", "c", "d", "f", "g", "h", "i", "j", "e"]);
    // A fold keeps the order.
    set(&mut port, b"b", "\"".repeat(127).as_bytes()).unwrap();
    assert!(file(&port, MEMORY_PATH).starts_with("{\"seq\":2}"));
    let after: Vec<String> = pairs(&mut port).into_iter().map(|p| p.0).collect();
    assert_eq!(after, order);
}

#[test]
fn a_base_reset_by_hand_does_not_bring_stale_shards_back() {
    let mut port = MemPort::new();
    set(&mut port, b"a", b"1").unwrap();
    set(&mut port, b"b", b"2").unwrap(); // a shard of generation 1
    port.put(MEMORY_PATH, b""); // emptied by hand
    assert!(pairs(&mut port).is_empty());
    // Folds, after removing the shards (none applies beside a base
    // without a header): generation 1 again, and nothing stale left.
    set(&mut port, b"c", b"3").unwrap();
    let got: Vec<String> = pairs(&mut port).into_iter().map(|p| p.0).collect();
    assert_eq!(got, ["c"]);
    assert!(file(&port, MEMORY_PATH).starts_with("{\"seq\":1}"));
    assert!(SHARD_PATHS.iter().all(|p| port.get(p).is_none()));
    // When a shard cannot be removed, the fold goes past it.
    set(&mut port, b"d", b"4").unwrap(); // a shard of generation 1
    port.put(MEMORY_PATH, b"");
    port.fail_all(Op::Remove, Errno::EIO);
    set(&mut port, b"e", b"5").unwrap();
    port.heal();
    let got: Vec<String> = pairs(&mut port).into_iter().map(|p| p.0).collect();
    assert_eq!(got, ["e"]);
    assert!(file(&port, MEMORY_PATH).starts_with("{\"seq\":2}"));
}

#[test]
fn stale_and_foreign_shards_are_ignored() {
    let mut port = MemPort::new();
    port.put(
        MEMORY_PATH,
        b"{\"seq\":4}\n{\"key\":\"a\",\"value\":\"base\"}\n",
    );
    let s = SHARD_PATHS[shard_of(b"a")];
    port.put(s, b"{\"seq\":3}\n{\"key\":\"a\",\"value\":\"stale\"}\n");
    assert_eq!(recall(&mut port, "a").as_deref(), Some("base"));
    port.put(s, b"{\"key\":\"a\",\"value\":\"no header\"}\n");
    assert_eq!(recall(&mut port, "a").as_deref(), Some("base"));
    port.put(s, b"{\"seq\":4}\n{\"key\":\"a\",\"value\":\"new\"}\n");
    assert_eq!(recall(&mut port, "a").as_deref(), Some("new"));
    // A torn shard line is skipped; the rest of it stands.
    port.put(s, b"{\"seq\":4}\n{\"key\":\"a\",\"value\":\"ne");
    assert_eq!(recall(&mut port, "a").as_deref(), Some("base"));
}

/// The keys the merged store shows, each once (a shard the index could
/// not hold included: its records are checked, not read twice), as the
/// reference store reads them, and `get` agreeing key by key.
fn visible(port: &mut MemPort) -> std::collections::BTreeMap<String, String> {
    let mut map = std::collections::BTreeMap::new();
    let got = pairs(port);
    assert_eq!(got, ref_pairs(port), "as the reference reads it");
    for (k, v, _) in got {
        assert!(map.insert(k.clone(), v).is_none(), "{k} read twice");
    }
    for (k, v) in &map {
        assert_eq!(recall(port, k).as_ref(), Some(v), "get {k}");
    }
    map
}

/// `n` keys that the hash puts in shard `s`, named `{prefix}{i}`.
fn keys_of_shard(s: usize, prefix: &str, n: usize) -> Vec<String> {
    (0..)
        .map(|i| format!("{prefix}{i}"))
        .filter(|k| shard_of(k.as_bytes()) == s)
        .take(n)
        .collect()
}

/// A base of ours with `n` pairs `k0..`, generation `g`.
fn put_base(port: &mut MemPort, g: &str, n: usize) {
    let mut base = format!("{{\"seq\":{g}}}\n");
    for i in 0..n {
        base += &format!("{{\"key\":\"k{i}\",\"value\":\"v{i}\"}}\n");
    }
    port.put(MEMORY_PATH, base.as_bytes());
}

/// Edits on a store over the cap: new keys refused, every key kept,
/// replacing and forgetting working, until it is under the cap again.
fn edits_over_the_cap(
    port: &mut MemPort,
    mut want: std::collections::BTreeMap<String, String>,
    tag: &str,
) {
    assert!(want.len() > MAX_ENTRIES, "{tag}");
    assert_eq!(set(port, b"brand-new", b"x"), Err(MemError::Full), "{tag}");
    assert_eq!(
        visible(port),
        want,
        "{tag}: the refused set changed nothing"
    );
    let keys: Vec<String> = want.keys().cloned().collect();
    for (i, k) in keys.iter().enumerate() {
        if want.len() >= MAX_ENTRIES && i % 3 != 2 {
            assert_eq!(forget(port, k.as_bytes()), Ok(()), "{tag}: forget {k}");
            want.remove(k);
        } else {
            assert_eq!(
                set(port, k.as_bytes(), b"replaced"),
                Ok(()),
                "{tag}: set {k}"
            );
            want.insert(k.clone(), "replaced".to_string());
        }
        assert_eq!(visible(port), want, "{tag}: after {k}");
        if want.len() >= MAX_ENTRIES {
            assert_eq!(set(port, b"brand-new", b"x"), Err(MemError::Full), "{tag}");
        }
    }
    assert_eq!(
        set(port, b"brand-new", b"x"),
        Ok(()),
        "{tag}: under the cap"
    );
    want.insert("brand-new".into(), "x".into());
    assert_eq!(visible(port), want, "{tag}");
}

#[test]
fn no_key_is_hidden_by_hand_edited_shards() {
    // Issue 23: a base of 30 pairs, two keys set through the API, then
    // shards edited by hand: one shard with 10 records (an override of
    // a base pair, a forgotten base key, eight new keys): 45 keys.
    let mut port = MemPort::new();
    put_base(&mut port, "1", 30);
    let mut want: std::collections::BTreeMap<String, String> = (0..30)
        .map(|i| (format!("k{i}"), format!("v{i}")))
        .collect();
    let api = keys_of_shard(0, "api", 2);
    for k in &api {
        set(&mut port, k.as_bytes(), b"through the API").unwrap();
        want.insert(k.clone(), "through the API".into());
    }
    let base0: Vec<String> = (0..30)
        .map(|i| format!("k{i}"))
        .filter(|k| shard_of(k.as_bytes()) == 0)
        .collect();
    let mut shard = file(&port, SHARD_PATHS[0]);
    shard += &format!("{{\"key\":\"{}\",\"value\":\"over\"}}\n", base0[0]);
    want.insert(base0[0].clone(), "over".into());
    shard += &format!("{{\"key\":\"{}\",\"del\":true}}\n", base0[1]);
    want.remove(&base0[1]);
    for (i, k) in keys_of_shard(0, "hand", 8).iter().enumerate() {
        shard += &format!("{{\"key\":\"{k}\",\"value\":\"h{i}\",\"n\":{}}}\n", 3 + i);
        want.insert(k.clone(), format!("h{i}"));
    }
    port.put(SHARD_PATHS[0], shard.as_bytes());
    // And a few more in another shard.
    let mut other = String::from("{\"seq\":1}\n");
    for (i, k) in keys_of_shard(5, "more", 6).iter().enumerate() {
        other += &format!("{{\"key\":\"{k}\",\"value\":\"m{i}\",\"n\":{}}}\n", 20 + i);
        want.insert(k.clone(), format!("m{i}"));
    }
    port.put(SHARD_PATHS[5], other.as_bytes());
    assert_eq!(want.len(), 45);
    assert_eq!(visible(&mut port), want, "every key on flash is visible");
    edits_over_the_cap(&mut port, want, "hand-edited shards");
}

#[test]
fn shards_past_what_the_index_holds_are_read_in_file_order() {
    // 64 records in the shards of the base's generation (the index
    // holds 48): the shards that do not fit are streamed.
    let mut port = MemPort::new();
    put_base(&mut port, "7", 4);
    let mut want: std::collections::BTreeMap<String, String> =
        (0..4).map(|i| (format!("k{i}"), format!("v{i}"))).collect();
    let mut n = 0;
    for (s, path) in SHARD_PATHS.iter().enumerate() {
        let mut shard = String::from("{\"seq\":7}\n");
        for (i, k) in keys_of_shard(s, &format!("s{s}_"), 8).iter().enumerate() {
            n += 1;
            shard += &format!("{{\"key\":\"{k}\",\"value\":\"{s}.{i}\",\"n\":{n}}}\n");
            want.insert(k.clone(), format!("{s}.{i}"));
        }
        for i in 0..4 {
            let k = format!("k{i}");
            if shard_of(k.as_bytes()) == s {
                shard += &format!("{{\"key\":\"{k}\",\"value\":\"later\"}}\n");
                want.insert(k, "later".into());
            }
        }
        port.put(path, shard.as_bytes());
    }
    assert_eq!(want.len(), 68);
    assert_eq!(visible(&mut port), want, "every key on flash is visible");
    edits_over_the_cap(&mut port, want, "shards past the index");
}

#[test]
fn a_seed_form_base_of_40_pairs_keeps_every_key() {
    let mut port = MemPort::new();
    let mut base = String::new();
    for i in 0..40 {
        base += &format!("{{\"key\":\"k{i}\",\"value\":\"v{i}\"}}\n");
    }
    port.put(MEMORY_PATH, base.as_bytes());
    let want: std::collections::BTreeMap<String, String> = (0..40)
        .map(|i| (format!("k{i}"), format!("v{i}")))
        .collect();
    assert_eq!(visible(&mut port), want);
    edits_over_the_cap(&mut port, want, "seed base of 40");
}

#[test]
fn a_generation_at_the_top_of_u32_loses_nothing() {
    for g in ["4294967294", "4294967295", "100000000000000000000"] {
        let mut port = MemPort::new();
        put_base(&mut port, g, 3);
        // A shard of that generation (past u32: read as 4294967295).
        let gen_read = if g == "4294967294" { g } else { "4294967295" };
        let k0 = keys_of_shard(shard_of(b"k0"), "x", 1).remove(0);
        port.put(
            SHARD_PATHS[shard_of(b"k0")],
            format!(
                "{{\"seq\":{gen_read}}}\n{{\"key\":\"k0\",\"value\":\"shard\"}}\n\
                 {{\"key\":\"{k0}\",\"value\":\"new\",\"n\":1}}\n"
            )
            .as_bytes(),
        );
        let mut want: std::collections::BTreeMap<String, String> =
            (0..3).map(|i| (format!("k{i}"), format!("v{i}"))).collect();
        want.insert("k0".into(), "shard".into());
        want.insert(k0.clone(), "new".into());
        assert_eq!(visible(&mut port), want, "{g}");
        // Each edit folds (a value too big for a shard) or writes a
        // shard; the stale shards never come back.
        for (i, k) in ["k1", "k0", "k2", "k1", "k0"].iter().enumerate() {
            let v = if i % 2 == 0 {
                "\"".repeat(120)
            } else {
                format!("e{i}")
            };
            assert_eq!(
                set(&mut port, k.as_bytes(), v.as_bytes()),
                Ok(()),
                "{g} {i}"
            );
            want.insert(k.to_string(), v);
            assert_eq!(visible(&mut port), want, "{g}: edit {i}");
        }
        // Numbered from 0 again past the top.
        let base = file(&port, MEMORY_PATH);
        let number: u32 = base[7..base.find('}').unwrap()].parse().unwrap();
        assert!(number < 10, "{g}: {base}");
    }
}

/// A shard of generation `g` that the index cannot hold: `records`
/// (lines) placed among 49 pairs of new keys of shard `s` (`fill{i}`,
/// values `f{i}`; the index holds 48), after the first `at` of them.
/// Returns the filler's keys and values.
fn oversized(
    port: &mut MemPort,
    g: &str,
    s: usize,
    at: usize,
    records: &[String],
) -> Vec<(String, String)> {
    let fill: Vec<(String, String)> = keys_of_shard(s, "fill", 49)
        .into_iter()
        .enumerate()
        .map(|(i, k)| (k, format!("f{i}")))
        .collect();
    let mut lines: Vec<String> = fill
        .iter()
        .enumerate()
        .map(|(i, (k, v))| format!("{{\"key\":\"{k}\",\"value\":\"{v}\",\"n\":{}}}\n", i + 1))
        .collect();
    lines.splice(at..at, records.iter().cloned());
    let text = format!("{{\"seq\":{g}}}\n{}", lines.concat());
    port.put(SHARD_PATHS[s], text.as_bytes());
    fill
}

fn del_line(k: &str) -> String {
    format!("{{\"key\":\"{k}\",\"del\":true}}\n")
}

fn pair_line(k: &str, v: &str) -> String {
    format!("{{\"key\":\"{k}\",\"value\":\"{v}\"}}\n")
}

/// Every reader agrees with `want`: `for_each` (each key once), `get`,
/// `at`, and the reference store.
fn reads_as(port: &mut MemPort, want: &std::collections::BTreeMap<String, String>, tag: &str) {
    let got = pairs(port);
    let mut seen = std::collections::BTreeSet::new();
    for (k, _, _) in &got {
        assert!(seen.insert(k.clone()), "{tag}: {k} read twice");
    }
    assert_eq!(got, ref_pairs(port), "{tag}: as the reference reads it");
    let map: std::collections::BTreeMap<String, String> =
        got.iter().map(|(k, v, _)| (k.clone(), v.clone())).collect();
    assert_eq!(&map, want, "{tag}");
    for (i, p) in got.iter().enumerate() {
        let mut one = None;
        assert!(
            at(port, i, |q| one =
                Some((q.key().to_vec(), q.value().to_vec())))
            .unwrap()
        );
        assert_eq!(
            one,
            Some((p.0.clone().into_bytes(), p.1.clone().into_bytes())),
            "{tag}: at {i}"
        );
    }
    assert!(!at(port, got.len(), |_| {}).unwrap(), "{tag}: past the end");
    for k in want
        .keys()
        .chain(["k0", "k1", "gone", "twice"].map(String::from).iter())
    {
        assert_eq!(recall(port, k).as_ref(), want.get(k), "{tag}: get {k}");
    }
}

#[test]
fn a_forget_in_a_shard_the_index_cannot_hold_wins() {
    // The audit's case: a base pair forgotten in a shard too big for
    // the index came back (read, and written back by the next edit).
    for at in [0, 20, 48] {
        let tag = format!("the del after {at} pairs");
        let mut port = MemPort::new();
        put_base(&mut port, "1", 10);
        let s = shard_of(b"k0");
        let fill = oversized(&mut port, "1", s, at, &[del_line("k0")]);
        assert!(Store::open(&mut port).unwrap().overflowed(), "{tag}");
        let mut want: std::collections::BTreeMap<String, String> = (1..10)
            .map(|i| (format!("k{i}"), format!("v{i}")))
            .collect();
        want.extend(fill);
        reads_as(&mut port, &want, &tag);
        assert_eq!(forget(&mut port, b"k0"), Err(MemError::NotFound), "{tag}");
        assert_eq!(
            set(&mut port, b"k0", b"back"),
            Err(MemError::Full),
            "{tag}: a new key"
        );
        reads_as(&mut port, &want, &format!("{tag}, after the refused edits"));
        // The next edits fold: k0 stays forgotten, on flash too.
        assert_eq!(set(&mut port, b"k1", b"changed"), Ok(()), "{tag}");
        want.insert("k1".into(), "changed".into());
        assert!(
            !file(&port, MEMORY_PATH).contains("\"k0\""),
            "{tag}: folded without k0"
        );
        reads_as(&mut port, &want, &format!("{tag}, after a fold"));
        assert_eq!(forget(&mut port, b"k2"), Ok(()), "{tag}");
        want.remove("k2");
        reads_as(&mut port, &want, &format!("{tag}, after a forget"));
    }
}

#[test]
fn an_override_in_a_shard_the_index_cannot_hold_wins() {
    let mut port = MemPort::new();
    put_base(&mut port, "3", 10);
    let s = shard_of(b"k0");
    // An override of k0, a new key set twice, a new key set and
    // forgotten, and an override of k0 forgotten again for a second
    // base key of the shard when there is one.
    let other = (1..10)
        .map(|i| format!("k{i}"))
        .find(|k| shard_of(k.as_bytes()) == s);
    let gone = keys_of_shard(s, "gone", 1).remove(0);
    let twice = keys_of_shard(s, "twice", 1).remove(0);
    let mut records = vec![
        pair_line("k0", "first"),
        pair_line(&twice, "one"),
        pair_line(&gone, "soon gone"),
    ];
    if let Some(o) = &other {
        records.push(pair_line(o, "over"));
        records.push(del_line(o));
    }
    records.push(pair_line("k0", "later"));
    records.push(del_line(&gone));
    records.push(pair_line(&twice, "two"));
    let fill = oversized(&mut port, "3", s, 10, &records);
    assert!(Store::open(&mut port).unwrap().overflowed());
    let mut want: std::collections::BTreeMap<String, String> = (1..10)
        .map(|i| (format!("k{i}"), format!("v{i}")))
        .collect();
    if let Some(o) = &other {
        want.remove(o);
    }
    want.extend(fill);
    want.insert("k0".into(), "later".into());
    want.insert(twice.clone(), "two".into());
    reads_as(&mut port, &want, "overrides");
    // The pairs that give way are read where the shard has them: the
    // base's others first, in their order.
    let got = pairs(&mut port);
    assert!(
        got.iter()
            .take(8)
            .all(|p| p.0.starts_with('k') && p.0 != "k0")
    );
    // Edits fold the store as it reads.
    assert_eq!(set(&mut port, b"k0", b"edited"), Ok(()));
    want.insert("k0".into(), "edited".into());
    reads_as(&mut port, &want, "after an edit");
    assert!(!file(&port, MEMORY_PATH).contains("soon gone"));
    assert!(!file(&port, MEMORY_PATH).contains("first"));
}

#[test]
fn keys_sharing_a_fingerprint_fold_instead() {
    // Two keys of one shard with the same 16-bit fingerprint.
    let mut found = None;
    'outer: for i in 0..200_000u32 {
        let a = format!("a{i}");
        for j in 0..64u32 {
            let b = format!("b{j}");
            if a != b
                && shard_of(a.as_bytes()) == shard_of(b.as_bytes())
                && sig(a.as_bytes()) == sig(b.as_bytes())
            {
                found = Some((a, b));
                break 'outer;
            }
        }
    }
    let (a, b) = found.expect("a fingerprint collision");
    let mut port = MemPort::new();
    set(&mut port, a.as_bytes(), b"1").unwrap();
    set(&mut port, b.as_bytes(), b"2").unwrap();
    assert!(port.get(MEMORY_PATH).is_some(), "folded");
    assert_eq!(recall(&mut port, &a).as_deref(), Some("1"));
    assert_eq!(recall(&mut port, &b).as_deref(), Some("2"));
    set(&mut port, a.as_bytes(), b"3").unwrap();
    assert_eq!(recall(&mut port, &b).as_deref(), Some("2"));
    assert_eq!(recall(&mut port, &a).as_deref(), Some("3"));
}

#[test]
fn limits() {
    let mut port = MemPort::new();
    let k31 = "k".repeat(31);
    let v127 = "v".repeat(127);
    assert!(set(&mut port, k31.as_bytes(), v127.as_bytes()).is_ok());
    assert_eq!(recall(&mut port, &k31), Some(v127.clone()));
    assert_eq!(
        set(&mut port, "k".repeat(32).as_bytes(), b"v"),
        Err(MemError::Invalid)
    );
    assert_eq!(
        set(&mut port, b"k", "v".repeat(128).as_bytes()),
        Err(MemError::Invalid)
    );
    assert_eq!(set(&mut port, b"", b"v"), Err(MemError::Invalid));
    assert_eq!(set(&mut port, &[0xFF], b"v"), Err(MemError::Invalid));
    let mut small = [0u8; 10];
    assert_eq!(
        get(&mut port, k31.as_bytes(), &mut small),
        Err(MemError::TooSmall)
    );
    assert_eq!(set(&mut port, b"empty", b""), Ok(()));
    assert_eq!(recall(&mut port, "empty").as_deref(), Some(""));
}

#[test]
fn full_store_refuses_new_keys_only() {
    let mut port = MemPort::new();
    for i in 0..MAX_ENTRIES {
        set(&mut port, format!("k{i}").as_bytes(), b"v").unwrap();
    }
    let writes = port.writes;
    assert_eq!(set(&mut port, b"new", b"v"), Err(MemError::Full));
    assert_eq!(
        port.writes, writes,
        "a full store is refused without writing"
    );
    assert!(port.get(MEMORY_TMP_PATH).is_none());
    assert_eq!(set(&mut port, b"k3", b"changed"), Ok(()));
    assert_eq!(recall(&mut port, "k3").as_deref(), Some("changed"));
    forget(&mut port, b"k4").unwrap();
    assert_eq!(set(&mut port, b"new", b"v"), Ok(()), "room again");
    assert_eq!(set(&mut port, b"new2", b"v"), Err(MemError::Full));
}

#[test]
fn failures_leave_the_old_store() {
    // A shard write, then a fold (a value too big for a shard).
    for big in [false, true] {
        for op in [Op::Open, Op::Write, Op::Close, Op::Rename] {
            if op == Op::Rename && !big {
                continue;
            }
            let mut port = MemPort::new();
            set(&mut port, b"a", b"1").unwrap();
            set(&mut port, b"b", b"2").unwrap();
            let before = pairs(&mut port);
            let value = if big { "\"".repeat(127) } else { "3".into() };
            // Count the opens for reading first.
            let mut probe = MemPort::new();
            set(&mut probe, b"a", b"1").unwrap();
            set(&mut probe, b"b", b"2").unwrap();
            let opens = probe.count(Op::Open);
            set(&mut probe, b"b", value.as_bytes()).unwrap();
            let n = if op == Op::Open {
                probe.count(Op::Open) - opens - 1
            } else {
                0
            };
            port.fail(op, n, Errno::ENOSPC);
            assert_eq!(
                set(&mut port, b"b", value.as_bytes()),
                Err(MemError::Io(Errno::ENOSPC)),
                "{op:?} big {big}"
            );
            assert_eq!(pairs(&mut port), before, "{op:?} big {big}");
            assert!(port.get(MEMORY_TMP_PATH).is_none(), "{op:?}");
        }
    }
}

#[test]
fn duplicates_and_garbage_are_repaired_by_the_next_set() {
    let mut port = MemPort::new();
    port.put(
        MEMORY_PATH,
        b"{\"key\":\"a\",\"value\":\"old\"}\ngarbage\n{\"key\":\"b\",\"value\":\"x\"}\n\
          {\"key\":\"a\",\"value\":\"new\"}\n{\"key\":\"c\",\"val",
    );
    assert_eq!(recall(&mut port, "a").as_deref(), Some("new"));
    set(&mut port, b"d", b"4").unwrap();
    let file = String::from_utf8(port.get(MEMORY_PATH).unwrap()).unwrap();
    assert_eq!(
        file,
        "{\"seq\":1}\n{\"key\":\"b\",\"value\":\"x\"}\n{\"key\":\"a\",\"value\":\"new\"}\n{\"key\":\"d\",\"value\":\"4\"}\n"
    );
    assert!(port.max_open <= crate::port::MAX_OPEN_FILES);
}

#[cfg(feature = "recall")]
#[test]
fn forget_and_pin() {
    let mut port = MemPort::new();
    set(&mut port, b"a", b"1").unwrap();
    set(&mut port, b"b", b"2").unwrap();
    set(&mut port, b"c", b"3").unwrap();
    assert_eq!(forget(&mut port, b"zz"), Err(MemError::NotFound));
    assert_eq!(pin(&mut port, b"zz", true), Err(MemError::NotFound));
    pin(&mut port, b"b", true).unwrap();
    let w = port.writes;
    pin(&mut port, b"b", true).unwrap();
    assert_eq!(port.writes, w, "pinning a pinned key writes nothing");
    set(&mut port, b"b", b"two").unwrap();
    forget(&mut port, b"a").unwrap();
    assert_eq!(recall(&mut port, "a"), None);
    let mut got = pairs(&mut port);
    got.sort();
    assert_eq!(
        got,
        [
            ("b".to_string(), "two".to_string(), true),
            ("c".to_string(), "3".to_string(), false)
        ],
        "a set keeps the key's pin"
    );
    pin(&mut port, b"b", false).unwrap();
    assert!(pairs(&mut port).iter().all(|p| !p.2));
}

#[test]
fn a_rename_that_landed_but_reported_an_error_is_a_success() {
    let mut port = MemPort::new();
    // Quotes escape to two bytes: too big for a shard, so folds.
    let big = "\"".repeat(120);
    set(&mut port, b"a", big.as_bytes()).unwrap();
    // The rename happens, then its read-back fails.
    port.fail_after(Op::Rename, 0, Errno::EIO);
    assert_eq!(set(&mut port, b"a", format!("{big}2").as_bytes()), Ok(()));
    assert_eq!(recall(&mut port, "a"), Some(format!("{big}2")));
    // A rename that did not happen stays a failure, store as before.
    port.fail(Op::Rename, 0, Errno::EIO);
    assert_eq!(
        set(&mut port, b"a", format!("{big}3").as_bytes()),
        Err(MemError::Io(Errno::EIO))
    );
    assert_eq!(recall(&mut port, "a"), Some(format!("{big}2")));
    assert!(port.get(MEMORY_TMP_PATH).is_none());
}

#[test]
fn same_value_writes_nothing() {
    let mut port = MemPort::new();
    set(&mut port, b"a", b"1").unwrap();
    let w = port.writes;
    set(&mut port, b"a", b"1").unwrap();
    assert_eq!(port.writes, w);
}

fn ref_pairs(port: &mut MemPort) -> Vec<(String, String, bool)> {
    let mut v = Vec::new();
    reference::for_each(port, &mut |p| {
        v.push((
            String::from_utf8(p.key().to_vec()).unwrap(),
            String::from_utf8(p.value().to_vec()).unwrap(),
            p.pinned(),
        ))
    })
    .unwrap();
    v
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig {
        cases: 64,
        ..crate::testing::regressions("tests/proptest-regressions/memory.txt")
    })]
    /// The merged store (base, shards overriding base pairs, new keys)
    /// reads as it did with a second reader per override, by every
    /// reader: `for_each` (the base reopened past an override), `get`
    /// (overrides read after the pass); and the edits on it (their
    /// duplicate and fingerprint checks read it with `get`'s pass) give
    /// the same results as a plain ordered map, keys keeping their
    /// places (a key of the base forgotten and set again takes its
    /// place back).
    #[test]
    fn reads_as_it_did_with_two_readers(
        ops in proptest::collection::vec((0usize..14, 0usize..128, 0u8..9), 1..60),
    ) {
        let mut port = MemPort::new();
        let mut model: Vec<(String, String, bool)> = Vec::new();
        for (k, len, op) in ops {
            let key = format!("k{k}");
            let value: String = (0..len).map(|i| if (i + k) % 7 == 0 { '"' } else { 'v' }).collect();
            let at = model.iter().position(|p| p.0 == key);
            match op {
                0 => {
                    let r = forget(&mut port, key.as_bytes());
                    match at {
                        Some(i) => {
                            proptest::prop_assert_eq!(r, Ok(()));
                            model.remove(i);
                        }
                        None => proptest::prop_assert_eq!(r, Err(MemError::NotFound)),
                    }
                }
                #[cfg(feature = "recall")]
                1 => {
                    let on = len % 2 == 0;
                    let r = pin(&mut port, key.as_bytes(), on);
                    match at {
                        Some(i) => {
                            proptest::prop_assert_eq!(r, Ok(()));
                            model[i].2 = on;
                        }
                        None => proptest::prop_assert_eq!(r, Err(MemError::NotFound)),
                    }
                }
                8 => {
                    // A hand edit: a line that is not a record, and a
                    // duplicate of the first pair, after the header.
                    if let Some(base) = port.get(MEMORY_PATH) {
                        let base = String::from_utf8(base).unwrap();
                        let mut lines: Vec<&str> = base.lines().collect();
                        let at = 1.min(lines.len());
                        lines.insert(at, "garbage");
                        if let Some(dup) = lines.get(at + 1).copied() {
                            lines.push(dup);
                        }
                        port.put(MEMORY_PATH, (lines.join("\n") + "\n").as_bytes());
                    }
                }
                _ => {
                    proptest::prop_assert_eq!(set(&mut port, key.as_bytes(), value.as_bytes()), Ok(()));
                    match at {
                        Some(i) => model[i].1 = value,
                        None => model.push((key, value, false)),
                    }
                }
            }
            let got = pairs(&mut port);
            proptest::prop_assert_eq!(&got, &ref_pairs(&mut port));
            let mut sorted = got.clone();
            sorted.sort();
            sorted.dedup_by(|a, b| a.0 == b.0);
            let mut want = model.clone();
            want.sort();
            proptest::prop_assert_eq!(sorted.len(), want.len());
            for (k, v, _) in &want {
                let mut a = [0u8; 128];
                let mut b = [0u8; 128];
                let n = get(&mut port, k.as_bytes(), &mut a);
                let m = reference::get(&mut port, k.as_bytes(), &mut b);
                proptest::prop_assert_eq!(n, m);
                proptest::prop_assert_eq!(&a[..n.unwrap()], v.as_bytes());
                let mut small = [0u8; 3];
                proptest::prop_assert_eq!(
                    get(&mut port, k.as_bytes(), &mut small),
                    reference::get(&mut port, k.as_bytes(), &mut small)
                );
            }
            proptest::prop_assert!(port.max_open <= crate::port::MAX_OPEN_FILES);
        }
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig {
        cases: 64,
        ..crate::testing::regressions("tests/proptest-regressions/memory.txt")
    })]
    /// Stores with a shard the index cannot hold (a hand edit: 48 pairs
    /// of new keys and records among them: pairs and `"del"`s of keys
    /// of the base, new keys, keys of other shards, lines that are not
    /// records), beside an indexed shard: every reader (`for_each`,
    /// `get`, `at`) reads them as the reference store does (a key's
    /// last record in the shard wins over the base, a streamed pair
    /// shows when it is its key's last record there), and edits on
    /// them do what they say to what they read, a forgotten key never
    /// coming back.
    #[test]
    fn shards_the_index_cannot_hold_read_as_the_reference(
        base in proptest::collection::vec(0usize..10, 0..12),
        recs in proptest::collection::vec((0usize..16, 0u8..4, 0usize..3), 0..14),
        other in proptest::collection::vec((0usize..16, 0u8..2), 0..4),
        place_at in 0usize..49,
        shard in 0usize..SHARDS,
        edits in proptest::collection::vec((0usize..16, 0u8..3), 0..4),
    ) {
        // Keys 0..10 of the shard, 10..13 new keys of another shard,
        // 13..16 keys of the other shard in this one.
        let t = (shard + 3) % SHARDS;
        let mine = keys_of_shard(shard, "k", 13);
        let theirs = keys_of_shard(t, "t", 3);
        let key = |i: usize| if i < 13 { mine[i].clone() } else { theirs[i - 13].clone() };
        let mut port = MemPort::new();
        let mut text = String::from("{\"seq\":5}\n");
        for &i in &base {
            text += &pair_line(&key(i), &format!("b{i}"));
        }
        port.put(MEMORY_PATH, text.as_bytes());
        let lines: Vec<String> = recs
            .iter()
            .map(|&(i, kind, v)| match kind {
                0 => del_line(&key(i)),
                3 => String::from("garbage\n"),
                _ => pair_line(&key(i), &format!("s{v}")),
            })
            .collect();
        oversized(&mut port, "5", shard, place_at, &lines);
        let mut text = String::from("{\"seq\":5}\n");
        for &(i, kind) in &other {
            let k = theirs[i % 3].clone();
            text += &if kind == 0 { del_line(&k) } else { pair_line(&k, &format!("o{i}")) };
        }
        port.put(SHARD_PATHS[t], text.as_bytes());
        proptest::prop_assert!(Store::open(&mut port).unwrap().overflowed());
        let mut model: std::collections::BTreeMap<String, String> = Default::default();
        for (k, v, _) in ref_pairs(&mut port) {
            model.insert(k, v);
        }
        for (e, &(i, op)) in edits.iter().enumerate() {
            let got = pairs(&mut port);
            proptest::prop_assert_eq!(&got, &ref_pairs(&mut port));
            let mut n = 0;
            while at(&mut port, n, |p| {
                assert_eq!((p.key(), p.value()), (got[n].0.as_bytes(), got[n].1.as_bytes()))
            })
            .unwrap()
            {
                n += 1;
            }
            proptest::prop_assert_eq!(n, got.len());
            for j in 0..16 {
                let k = key(j);
                let mut a = [0u8; 128];
                let mut b = [0u8; 128];
                let r = get(&mut port, k.as_bytes(), &mut a);
                proptest::prop_assert_eq!(r, reference::get(&mut port, k.as_bytes(), &mut b));
                proptest::prop_assert_eq!(r.ok().map(|n| a[..n].to_vec()), model.get(&k).map(|v| v.clone().into_bytes()));
            }
            let k = key(i);
            let value = format!("e{e}");
            if op == 0 {
                let r = forget(&mut port, k.as_bytes());
                proptest::prop_assert_eq!(r, if model.remove(&k).is_some() { Ok(()) } else { Err(MemError::NotFound) });
            } else {
                let r = set(&mut port, k.as_bytes(), value.as_bytes());
                let full = !model.contains_key(&k) && model.len() >= MAX_ENTRIES;
                proptest::prop_assert_eq!(r, if full { Err(MemError::Full) } else { Ok(()) });
                if !full {
                    model.insert(k, value);
                }
            }
            let mut now: std::collections::BTreeMap<String, String> = Default::default();
            for (k, v, _) in pairs(&mut port) {
                now.insert(k, v);
            }
            proptest::prop_assert_eq!(&now, &model);
            proptest::prop_assert!(port.max_open <= crate::port::MAX_OPEN_FILES);
        }
    }
}

/// Every file of the store.
fn files(port: &MemPort) -> Vec<Option<Vec<u8>>> {
    let mut v = vec![port.get(MEMORY_PATH), port.get(MEMORY_TMP_PATH)];
    v.extend(SHARD_PATHS.iter().map(|p| port.get(p)));
    v
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig {
        cases: 96,
        ..crate::testing::regressions("tests/proptest-regressions/memory.txt")
    })]
    /// The same operations on the store as it was (`reference`: a
    /// second reader per override, scans reading values and the shards
    /// again) and as it is give the same results and byte-identical
    /// files: hand edits (lines that are not records, a key twice),
    /// keys that collide in their key hash or fingerprint, full stores,
    /// write failures included.
    #[test]
    fn edits_write_what_they_did(
        ops in proptest::collection::vec((0usize..64, 0usize..128, 0u8..12), 1..60),
    ) {
        // Two keys of one shard with one fingerprint, and two with one
        // 16-bit key hash (found once).
        static KEYS: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();
        let keys = KEYS.get_or_init(|| {
            let mut keys: Vec<String> = (0..34).map(|i| format!("k{i}")).collect();
            'sig: for i in 0..200_000u32 {
                let a = format!("a{i}");
                for j in 0..64u32 {
                    let b = format!("b{j}");
                    if shard_of(a.as_bytes()) == shard_of(b.as_bytes()) && sig(a.as_bytes()) == sig(b.as_bytes()) {
                        keys.extend([a, b]);
                        break 'sig;
                    }
                }
            }
            'hash: for i in 0..200_000u32 {
                let a = format!("c{i}");
                for j in 0..64u32 {
                    let b = format!("d{j}");
                    if hash(a.as_bytes()) == hash(b.as_bytes()) {
                        keys.extend([a, b]);
                        break 'hash;
                    }
                }
            }
            keys
        });
        let mut new = MemPort::new();
        let mut old = MemPort::new();
        for (k, len, op) in ops {
            // Often the colliding keys (the last four), sometimes up to
            // a full store.
            let key = keys[if k < 24 { keys.len() - 8 + k % 8 } else { (k - 24) % keys.len() }].as_bytes();
            let value: Vec<u8> = (0..len).map(|i| if (i + k) % 7 == 0 { b'"' } else { b'v' }).collect();
            match op {
                0 => proptest::prop_assert_eq!(forget(&mut new, key), reference::forget(&mut old, key)),
                #[cfg(feature = "recall")]
                1 | 2 => proptest::prop_assert_eq!(
                    pin(&mut new, key, op == 1),
                    reference::pin(&mut old, key, op == 1)
                ),
                3 => {
                    // A hand edit of the base.
                    if let Some(base) = new.get(MEMORY_PATH) {
                        let base = String::from_utf8(base).unwrap();
                        let mut lines: Vec<&str> = base.lines().collect();
                        let at = (len % 3).min(lines.len());
                        lines.insert(at, "garbage");
                        if len % 2 == 0 {
                            if let Some(dup) = lines.get(at + 1).copied() {
                                lines.push(dup);
                            }
                        }
                        let text = lines.join("\n") + "\n";
                        new.put(MEMORY_PATH, text.as_bytes());
                        old.put(MEMORY_PATH, text.as_bytes());
                    }
                }
                4 => {
                    // A write that fails part way.
                    new.fail(Op::Write, (len % 3) as u32, Errno::ENOSPC);
                    old.fail(Op::Write, (len % 3) as u32, Errno::ENOSPC);
                    proptest::prop_assert_eq!(set(&mut new, key, &value), reference::set(&mut old, key, &value));
                    new.heal();
                    old.heal();
                }
                5 => {
                    // Where "wb" is not atomic.
                    new.atomic = len % 2 == 0;
                    old.atomic = len % 2 == 0;
                    proptest::prop_assert_eq!(set(&mut new, key, &value), reference::set(&mut old, key, &value));
                }
                _ => proptest::prop_assert_eq!(set(&mut new, key, &value), reference::set(&mut old, key, &value)),
            }
            proptest::prop_assert_eq!(files(&new), files(&old));
            proptest::prop_assert_eq!(new.count(Op::Rename), old.count(Op::Rename));
            proptest::prop_assert_eq!(new.writes, old.writes);
            let mut a = [0u8; 128];
            let mut b = [0u8; 128];
            proptest::prop_assert_eq!(get(&mut new, key, &mut a), reference::get(&mut old, key, &mut b));
            proptest::prop_assert_eq!(a, b);
            let mut i = 0;
            loop {
                let mut na = None;
                let got = at(&mut new, i, |p| na = Some((p.key().to_vec(), p.value().to_vec(), p.pinned()))).unwrap();
                let mut nb = None;
                let mut n = 0;
                reference::for_each(&mut old, &mut |p| {
                    if n == i {
                        nb = Some((p.key().to_vec(), p.value().to_vec(), p.pinned()));
                    }
                    n += 1;
                }).unwrap();
                proptest::prop_assert_eq!(got, nb.is_some());
                proptest::prop_assert_eq!(&na, &nb);
                if !got {
                    break;
                }
                i += 1;
            }
        }
    }
}

#[test]
fn a_line_skipped_before_an_override_still_folds_the_next_set() {
    let mut port = MemPort::new();
    for k in ["a", "b", "c"] {
        set(&mut port, k.as_bytes(), "\"".repeat(100).as_bytes()).unwrap();
    }
    set(&mut port, b"d", b"x").unwrap();
    assert!(file(&port, MEMORY_PATH).contains("\"c\""), "folded");
    // Shards override a, b and c of the base.
    for k in ["a", "b", "c"] {
        set(&mut port, k.as_bytes(), b"short").unwrap();
    }
    let base = file(&port, MEMORY_PATH);
    assert!(!base.contains("short"));
    let before = pairs(&mut port);
    let (head, rest) = base.split_once('\n').unwrap();
    port.put(MEMORY_PATH, format!("{head}\ngarbage\n{rest}").as_bytes());
    assert_eq!(pairs(&mut port), before);
    let renames = port.count(Op::Rename);
    set(&mut port, b"d", b"y").unwrap();
    assert_eq!(
        port.count(Op::Rename),
        renames + 1,
        "the skipped line folds"
    );
    assert!(!file(&port, MEMORY_PATH).contains("garbage"));
    assert_eq!(recall(&mut port, "a").as_deref(), Some("short"));
}

#[test]
fn wipe_retires_base_and_shards() {
    let mut port = MemPort::new();
    wipe(&mut port).unwrap();
    assert_eq!(port.writes, 0, "nothing to wipe");
    set(&mut port, b"a", b"1").unwrap();
    set(&mut port, b"b", "\"".repeat(127).as_bytes()).unwrap();
    set(&mut port, b"c", b"3").unwrap();
    port.fail_all(Op::Remove, Errno::EIO);
    wipe(&mut port).unwrap();
    assert!(
        pairs(&mut port).is_empty(),
        "the new generation retires the shards"
    );
    port.heal();
    set(&mut port, b"d", b"4").unwrap();
    wipe(&mut port).unwrap();
    assert!(pairs(&mut port).is_empty());
    assert!(port.get(MEMORY_PATH).is_none(), "no files left");
    assert!(SHARD_PATHS.iter().all(|s| port.get(s).is_none()));
}
