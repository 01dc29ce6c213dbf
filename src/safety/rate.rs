//! Per-tool rate limits over a sliding 60 s window.
//!
//! Each tool keeps the counts of its recorded calls in [`BUCKETS`] buckets
//! of [`BUCKET_MS`] (10 s): O(1) memory per tool. A call is admitted while
//! the calls recorded in the current bucket and the six before it — a span
//! that covers at least the last 60 s — are under the limit. So:
//!
//! * **strict**: no 60 s span ever holds more recorded calls than the limit
//!   (for any span, take its last call: every earlier call of the span was
//!   counted when that call was admitted);
//! * **granularity 10 s**: a call recorded at time t stops counting by
//!   t + 70 s at the latest, so once the calls of the last 60 s are under
//!   the limit, a call is admitted again within 10 s.
//!
//! A bucket counts at most [`BUCKET_CAP`] calls; while the current bucket
//! is full, `check` says no. So a limit above 255 calls per 10 s is held
//! there: stricter than asked, never looser.
//!
//! # Slots
//!
//! The table has [`MAX_TOOLS`] slots (`CLAW_RATE_MAX_TOOLS`):
//!
//! * one per name of [`KNOWN`] — the vendor registry's 32 tool names (the
//!   BENTO firmware's `s_tools[]`, in its order, BSP options included) and
//!   the library's own four built-ins. These slots are always there: a
//!   known name never fails for lack of room, and its name is not copied;
//! * [`SPARE`] more for any other name (a Python tool, a tool the
//!   firmware registers under a new name, a name `claw_rate_set` meets),
//!   the name copied into the slot on its first use.
//!
//! The vendor library's table held 16 names and let every name past the
//! 16th through unlimited: its own 29–32 tools were then partly unlimited.
//! Here each of them has a slot of its own, and a full table, or a name that
//! is empty, too long or not UTF-8, fails closed: `check` says no.

/// The tool names with a slot of their own: the vendor registry's, in its
/// order (`VENDOR_TOOLS` of them), then the library's built-ins.
pub(crate) const KNOWN: [&[u8]; 36] = [
    b"gpio_set",
    b"gpio_read",
    b"sensor_read_all",
    b"lcd_console",
    b"ui_notify",
    b"wifi_status",
    b"trustm_info",
    b"trustm_sign",
    b"joystick_read",
    b"rule_set",
    b"rule_clear",
    b"diagnostics_read",
    b"rtc_read",
    b"radar_read",
    b"heap_info",
    b"fs_list",
    b"fs_stat",
    b"fs_read",
    b"py_exec",
    b"wifi_scan",
    b"wifi_ping",
    b"wifi_packet_stats",
    b"ntp_status",
    b"rtc_set",
    b"fs_write",
    b"fs_delete",
    b"trustm_random",
    b"trustm_sha256",
    b"hard_reset",
    b"safe_boot",
    b"capsense_read",
    b"potentiometer_read",
    b"echo",
    b"uptime",
    b"led",
    b"wipe_memory",
];
/// How many of [`KNOWN`] are the vendor's.
#[cfg_attr(not(any(test, feature = "agent")), allow(dead_code))]
pub(crate) const VENDOR_TOOLS: usize = 32;
/// Slots for names outside [`KNOWN`].
pub(crate) const SPARE: usize = 12;
/// Tools in the table (`CLAW_RATE_MAX_TOOLS`).
pub(crate) const MAX_TOOLS: usize = KNOWN.len() + SPARE;
/// Longest tool name in bytes (`CLAW_RATE_NAME_MAX` - 1).
pub(crate) const NAME_MAX_BYTES: usize = 31;
/// Calls per minute of a tool without its own limit.
pub(crate) const DEFAULT_PER_MIN: u16 = 10;
/// Width of one bucket, in ms: the re-admission granularity.
pub(crate) const BUCKET_MS: u32 = 10_000;
/// Buckets counted by a check: the current one and the six before it.
pub(crate) const BUCKETS: usize = 7;
/// Calls one bucket counts at most.
pub(crate) const BUCKET_CAP: u8 = u8::MAX;

/// One tool's window: 13 bytes, packed (one per slot of a 48-slot table
/// in static RAM; aligned it would take 16).
#[derive(Clone, Copy, Debug)]
#[repr(C, packed)]
struct Window {
    /// The start of `counts[0]`'s bucket.
    base: u32,
    /// Calls per minute; 0: the slot is not in use.
    limit: u16,
    /// `counts[0]` is the bucket that starts at `base`; `counts[i]` the one
    /// `i` buckets before it.
    counts: [u8; BUCKETS],
}

impl Window {
    const FREE: Window = Window {
        base: 0,
        limit: 0,
        counts: [0; BUCKETS],
    };

    fn used(&self) -> bool {
        self.limit != 0
    }

    /// Buckets that have fully passed since `base`, capped at `BUCKETS`.
    fn shift(&self, now: u32) -> usize {
        let steps = now.wrapping_sub(self.base) / BUCKET_MS;
        (steps as usize).min(BUCKETS)
    }

    /// Whether a call at `now` is admitted, without changing anything.
    fn admits(&self, now: u32) -> bool {
        if !self.used() {
            // Not counted yet: the default applies.
            return true;
        }
        let shift = self.shift(now);
        let counted = self.counts.iter().take(BUCKETS - shift);
        let sum: u32 = counted.clone().map(|&c| u32::from(c)).sum();
        // The current bucket (`counts[0]` once moved forward) must have room.
        let current = if shift == 0 {
            self.counts.first().copied().unwrap_or(0)
        } else {
            0
        };
        sum < u32::from(self.limit) && current < BUCKET_CAP
    }

    /// Moves the buckets forward to `now`.
    fn advance(&mut self, now: u32) {
        let shift = self.shift(now);
        if shift == 0 {
            return;
        }
        if shift >= BUCKETS {
            self.counts = [0; BUCKETS];
            self.base = now;
            return;
        }
        // Shift the counts towards the past (`rotate_right` would carry a
        // panic path for its bounds assertion).
        for i in (0..BUCKETS).rev() {
            let older = i
                .checked_sub(shift)
                .and_then(|j| self.counts.get(j))
                .copied();
            if let Some(c) = self.counts.get_mut(i) {
                *c = older.unwrap_or(0);
            }
        }
        self.base = self
            .base
            .wrapping_add((shift as u32).wrapping_mul(BUCKET_MS));
    }

    /// Starts using the slot at `now` with the default limit.
    fn open(&mut self, now: u32) {
        if !self.used() {
            *self = Window {
                base: now,
                limit: DEFAULT_PER_MIN,
                counts: [0; BUCKETS],
            };
        }
    }

    fn record(&mut self, now: u32) {
        self.open(now);
        self.advance(now);
        if let Some(c) = self.counts.first_mut() {
            *c = c.saturating_add(1);
        }
    }
}

/// A spare slot's name (the known slots' are [`KNOWN`]).
#[derive(Clone, Copy, Debug)]
struct Name {
    bytes: [u8; NAME_MAX_BYTES],
    len: u8,
}

impl Name {
    const EMPTY: Name = Name {
        bytes: [0; NAME_MAX_BYTES],
        len: 0,
    };

    fn get(&self) -> &[u8] {
        self.bytes.get(..usize::from(self.len)).unwrap_or(&[])
    }
}

/// The rate table.
pub struct RateTable {
    windows: [Window; MAX_TOOLS],
    /// The names of slots `KNOWN.len()..`; an empty name: the slot is free.
    spare: [Name; SPARE],
}

fn valid_name(name: &[u8]) -> bool {
    !name.is_empty() && name.len() <= NAME_MAX_BYTES && crate::text::is_utf8(name)
}

/// The known slot of `name`.
pub(crate) fn known_slot(name: &[u8]) -> Option<usize> {
    KNOWN.iter().position(|k| *k == name)
}

impl RateTable {
    /// An empty table (`claw_rate_init`).
    pub const fn new() -> Self {
        Self {
            windows: [Window::FREE; MAX_TOOLS],
            spare: [Name::EMPTY; SPARE],
        }
    }

    /// The slot that holds `name`, if one does.
    pub fn find(&self, name: &[u8]) -> Option<usize> {
        if !valid_name(name) {
            return None;
        }
        known_slot(name).or_else(|| {
            self.spare
                .iter()
                .position(|n| n.len != 0 && n.get() == name)
                .map(|i| KNOWN.len() + i)
        })
    }

    /// The slot of `name`, taking a free spare slot for a new one. `None`
    /// for an invalid name or when no spare slot is free.
    pub fn claim(&mut self, name: &[u8]) -> Option<usize> {
        if let Some(i) = self.find(name) {
            return Some(i);
        }
        if !valid_name(name) {
            return None;
        }
        let i = self.spare.iter().position(|n| n.len == 0)?;
        let slot = self.spare.get_mut(i)?;
        crate::text::copy_prefix(slot.bytes.get_mut(..name.len())?, name);
        slot.len = name.len() as u8;
        Some(KNOWN.len() + i)
    }

    /// The name of `slot` (empty for a free spare slot).
    pub fn name(&self, slot: usize) -> &[u8] {
        match KNOWN.get(slot) {
            Some(k) => k,
            None => slot
                .checked_sub(KNOWN.len())
                .and_then(|i| self.spare.get(i))
                .map_or(&[], |n| n.get()),
        }
    }

    /// Empties the table in place (`claw_rate_init`; building a new table
    /// and copying it would put its bytes on the stack).
    pub fn reset(&mut self) {
        for w in self.windows.iter_mut() {
            *w = Window::FREE;
        }
        for n in self.spare.iter_mut() {
            *n = Name::EMPTY;
        }
    }

    /// Installs a limit; 0 restores the default (it never means unlimited).
    /// Returns false when the name is invalid or the table is full.
    pub fn set(&mut self, name: &[u8], per_min: u16, now: u32) -> bool {
        match self.claim(name) {
            Some(slot) => {
                self.set_slot(slot, per_min, now);
                true
            }
            None => false,
        }
    }

    /// Installs the limit of `slot` (0: the default), keeping its window.
    pub fn set_slot(&mut self, slot: usize, per_min: u16, now: u32) {
        if let Some(w) = self.windows.get_mut(slot) {
            w.open(now);
            w.limit = if per_min == 0 {
                DEFAULT_PER_MIN
            } else {
                per_min
            };
        }
    }

    /// The limit of `slot` (the default while it has none).
    pub fn limit(&self, slot: usize) -> u16 {
        self.windows
            .get(slot)
            .filter(|w| w.used())
            .map_or(DEFAULT_PER_MIN, |w| w.limit)
    }

    /// Gate 3: is `name` under its limit at `now`? Changes nothing.
    pub fn check(&self, name: &[u8], now: u32) -> bool {
        if !valid_name(name) {
            return false;
        }
        match self.find(name) {
            Some(slot) => self.check_slot(slot, now),
            // Not in the table: the default applies, if a slot is free to
            // count its calls in.
            None => self.spare.iter().any(|n| n.len == 0),
        }
    }

    /// Counts one call of `name` at `now` (nothing when it has no slot and
    /// none is free: `check` refuses it then).
    pub fn record(&mut self, name: &[u8], now: u32) {
        if let Some(slot) = self.claim(name) {
            self.record_slot(slot, now);
        }
    }

    /// Gate 3 by slot: is the tool under its limit at `now`?
    pub fn check_slot(&self, slot: usize, now: u32) -> bool {
        self.windows.get(slot).is_some_and(|w| w.admits(now))
    }

    /// Counts one call of the tool in `slot`.
    pub fn record_slot(&mut self, slot: usize, now: u32) {
        if let Some(w) = self.windows.get_mut(slot) {
            w.record(now);
        }
    }

    /// Frees a spare slot (a name no longer in use: its window goes too).
    pub fn release(&mut self, slot: usize) {
        let Some(i) = slot.checked_sub(KNOWN.len()) else {
            return;
        };
        if let (Some(n), Some(w)) = (self.spare.get_mut(i), self.windows.get_mut(slot)) {
            *n = Name::EMPTY;
            *w = Window::FREE;
        }
    }
}

impl Default for RateTable {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_limit_and_read_only_check() {
        for t0 in [0u32, u32::MAX - 5_000] {
            let mut t = RateTable::new();
            for i in 0..10u32 {
                for _ in 0..5 {
                    assert!(
                        t.check(b"tool", t0.wrapping_add(i)),
                        "checks consume nothing"
                    );
                }
                t.record(b"tool", t0.wrapping_add(i));
            }
            assert!(!t.check(b"tool", t0.wrapping_add(11)), "11th call refused");
            assert!(t.check(b"other", t0.wrapping_add(11)), "per tool");
            assert!(!t.check(b"tool", t0.wrapping_add(60_000)));
            assert!(
                t.check(b"tool", t0.wrapping_add(70_000)),
                "within 10 s of the window"
            );
        }
    }

    #[test]
    fn set_limits_and_zero_means_default() {
        let mut t = RateTable::new();
        assert!(t.set(b"slow", 2, 0));
        t.record(b"slow", 0);
        t.record(b"slow", 1);
        assert!(!t.check(b"slow", 2));
        assert!(t.set(b"slow", 0, 3));
        assert!(t.check(b"slow", 3));
    }

    #[test]
    fn fails_closed() {
        let mut t = RateTable::new();
        assert!(!t.check(b"", 0));
        assert!(!t.check(&[b'n'; 32], 0));
        assert!(t.check(&[b'n'; 31], 0));
        assert!(!t.check(&[0xFF], 0));
        assert!(!t.set(&[b'n'; 32], 5, 0));
        for i in 0..SPARE {
            t.record(format!("t{i}").as_bytes(), 0);
        }
        assert!(!t.check(b"newcomer", 0), "full table fails closed");
        assert!(!t.set(b"newcomer", 100, 0));
        t.record(b"newcomer", 0);
        assert!(t.check(b"t3", 0));
        // A known name always has its slot, however full the spare ones are.
        for k in KNOWN {
            assert!(t.check(k, 0));
            assert!(t.set(k, 3, 0));
        }
    }

    #[test]
    fn every_vendor_tool_at_its_own_limit() {
        // The vendor binding's ensure_init: claw_rate_set for each of its
        // tools (limits 1..60), then every tool called until refused.
        let limits: Vec<u16> = (0..VENDOR_TOOLS).map(|i| 1 + (i as u16 * 7) % 60).collect();
        let mut t = RateTable::new();
        for (k, &l) in KNOWN.iter().zip(&limits) {
            assert!(t.set(k, l, 0), "room for {}", String::from_utf8_lossy(k));
        }
        for (k, &l) in KNOWN.iter().zip(&limits) {
            let mut n = 0u16;
            while t.check(k, 5) {
                t.record(k, 5);
                n += 1;
                assert!(n <= l, "never unlimited");
            }
            assert_eq!(n, l, "{} admitted at its limit", String::from_utf8_lossy(k));
        }
        // The spare slots are untouched by all of that.
        for i in 0..SPARE {
            assert!(t.set(format!("py{i}").as_bytes(), 2, 0));
        }
        assert!(!t.set(b"one_more", 2, 0));
    }

    #[test]
    fn slots_and_names() {
        let mut t = RateTable::new();
        assert_eq!(t.find(b"py_exec"), known_slot(b"py_exec"));
        assert_eq!(t.find(b"mine"), None);
        let s = t.claim(b"mine").unwrap();
        assert_eq!(s, KNOWN.len());
        assert_eq!(t.name(s), b"mine");
        assert_eq!(t.claim(b"mine"), Some(s));
        assert_eq!(t.name(0), b"gpio_set");
        assert_eq!(t.limit(s), DEFAULT_PER_MIN);
        t.set_slot(s, 4, 0);
        assert_eq!(t.limit(s), 4);
        t.release(s);
        assert_eq!(t.find(b"mine"), None);
        assert_eq!(t.name(s), b"");
        t.release(0);
        assert_eq!(t.name(0), b"gpio_set", "known slots are never released");
    }

    #[test]
    fn a_full_bucket_refuses() {
        let mut t = RateTable::new();
        t.set(b"fast", 60_000, 0);
        let mut n = 0u32;
        while t.check(b"fast", 100) {
            t.record(b"fast", 100);
            n += 1;
        }
        assert_eq!(n, u32::from(BUCKET_CAP), "255 calls per 10 s at most");
        assert!(t.check(b"fast", 10_000), "the next bucket has room");
    }

    #[test]
    fn no_60s_span_holds_more_than_the_limit() {
        // A call every second for ten minutes, admitted only when checked ok.
        let mut t = RateTable::new();
        t.set(b"x", 5, 0);
        let mut admitted = Vec::new();
        for s in 0..600u32 {
            let now = (u32::MAX - 200_000).wrapping_add(s * 1000);
            if t.check(b"x", now) {
                t.record(b"x", now);
                admitted.push(s * 1000);
            }
        }
        for (i, &a) in admitted.iter().enumerate() {
            let in_span = admitted[i..]
                .iter()
                .take_while(|&&b| b < a + 60_000)
                .count();
            assert!(in_span <= 5, "span from {a} holds {in_span}");
        }
        // ... and the limit is used: about 5 per 70 s.
        assert!(admitted.len() >= 600 / 70 * 5);
    }
}

#[cfg(test)]
mod props {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(crate::testing::regressions("tests/proptest-regressions/safety/rate.txt"))]
        /// Random call times, the clock starting just below the wrap or
        /// anywhere, with an optional 2^31 ms idle: no 60 s span holds more
        /// admitted calls than the limit, and a refusal always has the limit
        /// reached within the last 70 s.
        #[test]
        fn strict_window_and_granularity(
            start in prop_oneof![Just(u32::MAX - 5_000), any::<u32>()],
            limit in 1u16..20,
            gaps in prop::collection::vec(0u64..20_000, 1..300),
            idle_at in any::<prop::sample::Index>(),
            idle in prop::bool::ANY,
        ) {
            let mut t = RateTable::new();
            prop_assert!(t.set(b"tool", limit, start));
            let idle_at = idle_at.index(gaps.len());
            let mut now: u64 = 0;
            let mut admitted: Vec<u64> = Vec::new();
            for (i, gap) in gaps.iter().enumerate() {
                now += gap;
                if idle && i == idle_at {
                    now += 1 << 31;
                }
                let tick = start.wrapping_add(now as u32);
                if t.check(b"tool", tick) {
                    t.record(b"tool", tick);
                    admitted.push(now);
                } else {
                    let recent = admitted.iter().filter(|&&a| now - a < 70_000).count();
                    prop_assert!(recent >= usize::from(limit), "refused with {} in 70 s", recent);
                }
            }
            for (i, &a) in admitted.iter().enumerate() {
                let span = admitted[i..].iter().take_while(|&&b| b < a + 60_000).count();
                prop_assert!(span <= usize::from(limit), "{} calls in the 60 s from {}", span, a);
            }
        }
    }
}
