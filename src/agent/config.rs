//! `config()`: the agent's settings, kept in `/.bentoclaw_config`.
//!
//! # `/.bentoclaw_config` — one JSON object
//!
//! ```text
//! {"compact_threshold_pct":80,"compact_min_msgs":4,"compact_keep":4,
//!  "context_budget":4096,"idle_timeout_s":0,"daily_reset_hour":4,
//!  "auto_compact":true,"backend_summary":false,"send_tools":false,
//!  "archive":false,"compact_before_drop":false}
//! ```
//!
//! One line on flash, every setting. Written whole through
//! `/.bentoclaw_config.tmp` and a rename, so a power cut leaves the old file
//! or the new one; only a changed setting writes. The file is read lazily,
//! at the first use after a boot or soft reset. A reader takes what it
//! understands, so an older or newer firmware reads what it can: an unknown
//! key is skipped (a newer firmware's) when its value is flat (a string,
//! number, `true`, `false`, `null`), a value out of range keeps that
//! setting's default, a file that does not parse (torn on a file system
//! without an atomic rename, garbage, a value of the wrong type, an array or
//! object as a value, a key given twice, over [`FILE_MAX`] bytes) is ignored
//! whole: the defaults apply (an unreadable one is read again at the next
//! use). The reader never descends into nested values, so its stack has a
//! fixed bound. The `key=value` lines ending in `end` that earlier releases
//! wrote are still read.
//!
//! Defaults are the seed's behaviour: nothing here changes what goes over
//! the wire unless set (`backend_summary`, `send_tools`).

use serde::de::{DeserializeSeed, MapAccess, Visitor};
use serde::{Deserialize, Serialize};

use crate::port::{Errno, Mode, Port};

pub use crate::port::{CONFIG_PATH, CONFIG_TMP_PATH};
/// A larger file is not ours.
pub const FILE_MAX: usize = 384;

/// One setting: its name, range and default.
pub struct Key {
    /// `config()` keyword and file key.
    pub name: &'static str,
    /// Smallest value.
    pub lo: i32,
    /// Largest value.
    pub hi: i32,
    /// The default.
    pub def: i32,
    /// True/False rather than a number.
    pub is_bool: bool,
}

const fn key(name: &'static str, lo: i32, hi: i32, def: i32, is_bool: bool) -> Key {
    Key {
        name,
        lo,
        hi,
        def,
        is_bool,
    }
}

/// Most context bytes a request carries (`CONTEXT_MAX`).
pub const CONTEXT_MAX: usize = 4096;

/// Every setting, in `config()`'s order. `compact_keep` stops at
/// 10 - 3: after a compaction the summary, the kept turns and one exchange
/// fit the ring.
pub const KEYS: [Key; 11] = [
    key("compact_threshold_pct", 1, 100, 80, false),
    key("compact_min_msgs", 1, 10, 4, false),
    key("compact_keep", 0, 7, 4, false),
    key(
        "context_budget",
        256,
        CONTEXT_MAX as i32,
        CONTEXT_MAX as i32,
        false,
    ),
    key("idle_timeout_s", 0, 30 * 86_400, 0, false),
    key("daily_reset_hour", -1, 23, 4, false),
    key("auto_compact", 0, 1, 1, true),
    key("backend_summary", 0, 1, 0, true),
    key("send_tools", 0, 1, 0, true),
    key("archive", 0, 1, 0, true),
    key("compact_before_drop", 0, 1, 0, true),
];

/// The settings in RAM.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Config {
    loaded: bool,
    /// Context use (% of `context_budget`) that triggers a compaction.
    pub compact_threshold_pct: u8,
    /// Turns the ring must hold before the threshold compacts.
    pub compact_min_msgs: u8,
    /// Newest turns a compaction keeps.
    pub compact_keep: u8,
    /// Context bytes a request carries at most.
    pub context_budget: u16,
    /// Idle seconds after which the next `ask()` starts a new session (0: off).
    pub idle_timeout_s: u32,
    /// Hour (RTC, 0..23) of the daily fresh session; -1: off.
    pub daily_reset_hour: i8,
    /// Compact automatically.
    pub auto_compact: bool,
    /// Ask the backend to write compaction summaries (opt-in: a request of
    /// another shape, docs/BACKEND.md).
    pub backend_summary: bool,
    /// List the tool registry in every request (opt-in: `"tools"`).
    pub send_tools: bool,
    /// Keep compacted and retired turns in `/.bentoclaw_archive` (opt-in:
    /// flash writes beyond the session's own).
    pub archive: bool,
    /// Compact before the ring would drop a turn (opt-in: the seed's ring
    /// drops its oldest turn; this writes a summary every second exchange
    /// once the ring is full).
    pub compact_before_drop: bool,
}

impl Config {
    /// Not read yet (all zeros: `.bss`).
    pub const UNLOADED: Config = Config {
        loaded: false,
        compact_threshold_pct: 0,
        compact_min_msgs: 0,
        compact_keep: 0,
        context_budget: 0,
        idle_timeout_s: 0,
        daily_reset_hour: 0,
        auto_compact: false,
        backend_summary: false,
        send_tools: false,
        archive: false,
        compact_before_drop: false,
    };

    /// The defaults.
    pub fn defaults() -> Config {
        let mut c = Config::UNLOADED;
        for (i, k) in KEYS.iter().enumerate() {
            c.set(i, k.def);
        }
        c
    }

    /// Setting `i` as an integer.
    pub fn get(&self, i: usize) -> i32 {
        match i {
            0 => i32::from(self.compact_threshold_pct),
            1 => i32::from(self.compact_min_msgs),
            2 => i32::from(self.compact_keep),
            3 => i32::from(self.context_budget),
            4 => self.idle_timeout_s as i32,
            5 => i32::from(self.daily_reset_hour),
            6 => i32::from(self.auto_compact),
            7 => i32::from(self.backend_summary),
            8 => i32::from(self.send_tools),
            9 => i32::from(self.archive),
            _ => i32::from(self.compact_before_drop),
        }
    }

    /// Sets setting `i` to `v` when `v` is in its range; false otherwise.
    pub fn set(&mut self, i: usize, v: i32) -> bool {
        let Some(k) = KEYS.get(i) else {
            return false;
        };
        if v < k.lo || v > k.hi {
            return false;
        }
        match i {
            0 => self.compact_threshold_pct = v as u8,
            1 => self.compact_min_msgs = v as u8,
            2 => self.compact_keep = v as u8,
            3 => self.context_budget = v as u16,
            4 => self.idle_timeout_s = v as u32,
            5 => self.daily_reset_hour = v as i8,
            6 => self.auto_compact = v != 0,
            7 => self.backend_summary = v != 0,
            8 => self.send_tools = v != 0,
            9 => self.archive = v != 0,
            _ => self.compact_before_drop = v != 0,
        }
        true
    }
}

/// The index of setting `name`.
pub fn index(name: &[u8]) -> Option<usize> {
    KEYS.iter().position(|k| k.name.as_bytes() == name)
}

/// The file's object, as written. Read by hand ([`DocInto`]) rather than
/// derived: the derive skips an
/// unknown key's value with serde's `IgnoredAny`, which recurses into
/// nested arrays and objects (a stack frame per level). Ours are flat, so
/// an unknown key's value must be a scalar or a string ([`Flat`]); a nested
/// one makes the file not parse (the defaults apply), like any other value
/// of the wrong type.
#[derive(Serialize, Default)]
struct Doc {
    #[serde(default)]
    compact_threshold_pct: Option<i32>,
    #[serde(default)]
    compact_min_msgs: Option<i32>,
    #[serde(default)]
    compact_keep: Option<i32>,
    #[serde(default)]
    context_budget: Option<i32>,
    #[serde(default)]
    idle_timeout_s: Option<i32>,
    #[serde(default)]
    daily_reset_hour: Option<i32>,
    #[serde(default)]
    auto_compact: Option<bool>,
    #[serde(default)]
    backend_summary: Option<bool>,
    #[serde(default)]
    send_tools: Option<bool>,
    #[serde(default)]
    archive: Option<bool>,
    #[serde(default)]
    compact_before_drop: Option<bool>,
}

/// An unknown key's value, checked and dropped: a string, number, `true`,
/// `false` or `null`; an array or object is an error, found without
/// descending into it.
struct Flat;

impl<'de> Deserialize<'de> for Flat {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Flat, D::Error> {
        d.deserialize_ignored_any(Flat)
    }
}

impl<'de> Visitor<'de> for Flat {
    type Value = Flat;
    fn expecting(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("a flat value")
    }
    fn visit_str<E: serde::de::Error>(self, _: &str) -> Result<Flat, E> {
        Ok(Flat)
    }
    fn visit_unit<E: serde::de::Error>(self) -> Result<Flat, E> {
        Ok(Flat)
    }
}

/// A key of the file: the setting's index, `None` when unknown.
struct Name(Option<usize>);

impl<'de> Deserialize<'de> for Name {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Name, D::Error> {
        d.deserialize_identifier(NameVisitor)
    }
}

struct NameVisitor;

impl<'de> Visitor<'de> for NameVisitor {
    type Value = Name;
    fn expecting(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("a setting")
    }
    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Name, E> {
        Ok(Name(index(v.as_bytes())))
    }
}

/// Reads the file's object straight into the settings (no copy of it on
/// the stack: the reader's frame is under every agent export). The
/// settings are the defaults before; on an error some may have been set,
/// and the caller puts the defaults back.
struct DocInto<'c>(&'c mut Config);

impl<'de> DeserializeSeed<'de> for DocInto<'_> {
    type Value = ();
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for DocInto<'_> {
    type Value = ();
    fn expecting(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("the settings")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        // As the derive does: a key given twice makes the file not parse.
        let mut seen = 0u16;
        while let Some(Name(i)) = map.next_key::<Name>()? {
            let Some(i) = i else {
                map.next_value::<Flat>()?;
                continue;
            };
            let bit = 1u16 << (i & 15);
            if seen & bit != 0 {
                return Err(serde::de::Error::custom("duplicate setting"));
            }
            seen |= bit;
            // Settings 0..=5 are numbers, the rest flags (as 0 or 1). Out of
            // its range, a value leaves the default.
            let v = if i <= 5 {
                map.next_value::<Option<i32>>()?
            } else {
                map.next_value::<Option<bool>>()?.map(i32::from)
            };
            if let Some(v) = v {
                let _ = self.0.set(i, v);
            }
        }
        Ok(())
    }
}

impl Doc {
    fn from_config(c: &Config) -> Doc {
        Doc {
            compact_threshold_pct: Some(c.get(0)),
            compact_min_msgs: Some(c.get(1)),
            compact_keep: Some(c.get(2)),
            context_budget: Some(c.get(3)),
            idle_timeout_s: Some(c.get(4)),
            daily_reset_hour: Some(c.get(5)),
            auto_compact: Some(c.auto_compact),
            backend_summary: Some(c.backend_summary),
            send_tools: Some(c.send_tools),
            archive: Some(c.archive),
            compact_before_drop: Some(c.compact_before_drop),
        }
    }
}

/// The settings a file's bytes give (the defaults for what it lacks).
pub fn parse(bytes: &[u8]) -> Config {
    let mut c = Config::UNLOADED;
    parse_into(bytes, &mut c);
    c
}

/// [`parse`], into `c` (no copy of the settings on the reader's frame, which
/// is under every agent export).
fn parse_into(bytes: &[u8], c: &mut Config) {
    set_defaults_loaded(c);
    let mut de = serde_json_core::de::Deserializer::new(bytes, None);
    if DocInto(c)
        .deserialize(&mut de)
        .and_then(|()| de.end())
        .is_err()
    {
        // Not the object (or not only it): none of its values count.
        set_defaults_loaded(c);
        parse_legacy(bytes, c);
    }
}

/// `c` becomes the defaults, marked loaded (written in place).
fn set_defaults_loaded(c: &mut Config) {
    *c = Config::UNLOADED;
    for (i, k) in KEYS.iter().enumerate() {
        c.set(i, k.def);
    }
    c.loaded = true;
}

/// Earlier releases: `key=value` lines, a last line `end`; trusted only
/// whole.
fn parse_legacy(bytes: &[u8], c: &mut Config) {
    let Some(body) = bytes.strip_suffix(b"end\n") else {
        return;
    };
    if !(body.is_empty() || body.ends_with(b"\n")) {
        return;
    }
    for line in body.split(|&b| b == b'\n') {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        let Some(eq) = line.iter().position(|&b| b == b'=') else {
            continue;
        };
        let (name, value) = (
            line.get(..eq).unwrap_or(&[]),
            line.get(eq + 1..).unwrap_or(&[]),
        );
        let (neg, digits) = match value.strip_prefix(b"-") {
            Some(d) => (true, d),
            None => (false, value),
        };
        if digits.is_empty() || digits.len() > 9 || !digits.iter().all(u8::is_ascii_digit) {
            continue;
        }
        let v = digits
            .iter()
            .fold(0i32, |v, d| v * 10 + i32::from(d - b'0'));
        if let Some(i) = index(name) {
            let _ = c.set(i, if neg { -v } else { v });
        }
    }
}

/// Reads the file. A missing file is the defaults; a read error is an
/// error (the caller keeps the defaults for now and reads again later).
pub fn load<P: Port>(p: &mut P) -> Result<Config, Errno> {
    let mut c = Config::UNLOADED;
    load_into(p, &mut c)?;
    Ok(c)
}

/// [`load`], into `c` (left as it was on an error).
// stack: see docs/STACK.md
#[inline(never)]
fn load_into<P: Port>(p: &mut P, c: &mut Config) -> Result<(), Errno> {
    let fd = match p.open(CONFIG_PATH, Mode::Read) {
        Ok(fd) => fd,
        Err(Errno::ENOENT) => {
            set_defaults_loaded(c);
            return Ok(());
        }
        Err(e) => return Err(e),
    };
    let mut buf = [0u8; FILE_MAX + 1];
    let mut len = 0usize;
    let r = loop {
        let Some(room) = buf.get_mut(len..) else {
            break Ok(());
        };
        if room.is_empty() {
            break Ok(());
        }
        match p.read(fd, room) {
            Ok(0) => break Ok(()),
            Ok(n) => len += n,
            Err(e) => break Err(e),
        }
    };
    let _ = p.close(fd);
    r?;
    if len > FILE_MAX {
        set_defaults_loaded(c);
        return Ok(());
    }
    parse_into(buf.get(..len).unwrap_or(&[]), c);
    Ok(())
}

/// Writes `c` (temp file + rename).
// stack: see docs/STACK.md
#[inline(never)]
pub fn store<P: Port>(p: &mut P, c: &Config) -> Result<(), Errno> {
    let mut buf = [0u8; FILE_MAX];
    let n = serde_json_core::to_slice(&Doc::from_config(c), &mut buf).map_err(|_| Errno::EIO)?;
    let fd = p.open(CONFIG_TMP_PATH, Mode::Write)?;
    let w = p.write(fd, buf.get(..n).unwrap_or(&[]));
    let cl = p.close(fd);
    let r = w
        .and(cl)
        .and_then(|()| p.rename(CONFIG_TMP_PATH, CONFIG_PATH));
    if r.is_err() {
        let _ = p.remove(CONFIG_TMP_PATH);
    }
    r
}

/// The settings held in `cfg`, read from the file at first use after a soft
/// reset (an unreadable file: the defaults, read again next time).
pub fn current<P: Port>(cfg: &mut Config, p: &mut P) -> Config {
    if !cfg.loaded {
        // Left as it was (not loaded) on an error.
        let _ = load_into(p, cfg);
    }
    cached(cfg)
}

/// What [`current`] returns without reading: the settings read, or the
/// defaults (marked not loaded) when none were.
pub fn cached(cfg: &Config) -> Config {
    if cfg.loaded {
        *cfg
    } else {
        let mut c = Config::defaults();
        c.loaded = false;
        c
    }
}

/// Why [`set`] refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SetError {
    /// Setting `.0` is out of its range (nothing changed).
    Range(usize),
    /// The file could not be written (nothing changed).
    Io(Errno),
}

/// `config(**kw)`: the settings in `mask` take `values[i]`; every value is
/// checked before anything changes, and a change is written at once.
pub fn set<P: Port>(
    cfg: &mut Config,
    p: &mut P,
    values: &[i32],
    mask: u32,
) -> Result<Config, SetError> {
    let cur = current(cfg, p);
    let mut next = cur;
    for (i, &v) in values.iter().enumerate().take(KEYS.len()) {
        if mask & (1 << i) != 0 && !next.set(i, v) {
            return Err(SetError::Range(i));
        }
    }
    if next != cur {
        store(p, &next).map_err(SetError::Io)?;
        *cfg = next;
        cfg.loaded = true;
    }
    Ok(current(cfg, p))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::MemPort;

    #[test]
    fn round_trip_defaults_and_tolerance() {
        let mut p = MemPort::new();
        let d = load(&mut p).unwrap();
        assert_eq!(d.get(0), 80);
        assert_eq!(d.daily_reset_hour, 4);
        assert!(d.auto_compact && !d.backend_summary && !d.send_tools);
        let mut c = d;
        assert!(c.set(5, -1));
        assert!(!c.set(2, 8));
        c.send_tools = true;
        store(&mut p, &c).unwrap();
        let text = String::from_utf8(p.get(CONFIG_PATH).unwrap()).unwrap();
        assert!(text.starts_with("{\"compact_threshold_pct\":80,"), "{text}");
        assert!(text.len() <= FILE_MAX);
        assert_eq!(load(&mut p).unwrap(), c);
        // Unknown keys and out-of-range values; a wrong type spoils it all.
        let got = parse(
            br#"{"future":"x","compact_keep":99,"auto_compact":false,"f2":-1.5e3,"f3":null,"f4":true,"idle_timeout_s":60}"#,
        );
        assert_eq!(got.compact_keep, 4);
        assert!(!got.auto_compact);
        assert_eq!(got.idle_timeout_s, 60);
        // The file is flat: an unknown key's nested value is refused (not
        // skipped by a recursive descent), and so is a key given twice.
        for bad in [
            &br#"{"future":{"x":[1,2]},"idle_timeout_s":60}"#[..],
            br#"{"future":[1],"idle_timeout_s":60}"#,
            br#"{"idle_timeout_s":60,"idle_timeout_s":60}"#,
            br#"{"archive":true,"archive":null}"#,
        ] {
            assert_eq!(parse(bad), Config::defaults_loaded());
        }
        assert_eq!(
            parse(br#"{"auto_compact":0,"idle_timeout_s":60}"#),
            Config::defaults_loaded()
        );
        // Nothing of a file that fails after some of its values were read.
        for bad in [
            &br#"{"idle_timeout_s":60,"compact_keep":2,"auto_compact":0}"#[..],
            br#"{"idle_timeout_s":60,"compact_keep":2} x"#,
            br#"{"idle_timeout_s":60,"compact_keep":2,"f":[1]}"#,
            b"{\"idle_timeout_s\":60}\nend\n",
        ] {
            assert_eq!(parse(bad), Config::defaults_loaded());
        }
        // Garbage and torn files: defaults.
        assert_eq!(parse(b"{\"compact_keep\":2"), Config::defaults_loaded());
        assert_eq!(parse(&[b'['; 300]), Config::defaults_loaded());
        // The old format.
        let old = parse(b"compact_keep=2\ndaily_reset_hour=-1\nbogus=3\nend\n");
        assert_eq!((old.compact_keep, old.daily_reset_hour), (2, -1));
        assert_eq!(parse(b"compact_keep=2\n"), Config::defaults_loaded());
    }

    impl Config {
        fn defaults_loaded() -> Config {
            let mut c = Config::defaults();
            c.loaded = true;
            c
        }
    }
}
