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
//! The table holds [`MAX_TOOLS`] tools. A tool without a `claw_rate_set`
//! entry gets the default limit and a slot on its first recorded call. A
//! full table, or a name that is empty, too long or not UTF-8, fails closed:
//! `check` says no.

/// Tools in the table (`CLAW_RATE_MAX_TOOLS`).
pub(crate) const MAX_TOOLS: usize = 16;
/// Longest tool name in bytes (`CLAW_RATE_NAME_MAX` - 1).
pub(crate) const NAME_MAX_BYTES: usize = 31;
/// Calls per minute of a tool without its own limit.
pub(crate) const DEFAULT_PER_MIN: u16 = 10;
/// Width of one bucket, in ms: the re-admission granularity.
pub(crate) const BUCKET_MS: u32 = 10_000;
/// Buckets counted by a check: the current one and the six before it.
pub(crate) const BUCKETS: usize = 7;

#[derive(Clone, Copy, Debug)]
struct Entry {
    name: [u8; NAME_MAX_BYTES],
    name_len: u8,
    /// 0: a rate entry only; otherwise the tool registered under this name
    /// (feature `agent`: its kind, see [`crate::agent::registry`]).
    tool: u8,
    /// The registry's risk of the tool (0 low, 1 medium, 2 high).
    risk: u8,
    limit: u16,
    /// `counts[0]` is the bucket that starts at `base`; `counts[i]` the one
    /// `i` buckets before it.
    counts: [u16; BUCKETS],
    base: u32,
}

impl Entry {
    fn name(&self) -> &[u8] {
        self.name.get(..usize::from(self.name_len)).unwrap_or(&[])
    }

    /// Buckets that have fully passed since `base`, capped at `BUCKETS`.
    fn shift(&self, now: u32) -> usize {
        let steps = now.wrapping_sub(self.base) / BUCKET_MS;
        (steps as usize).min(BUCKETS)
    }

    /// Calls counted at `now`, without changing anything.
    fn in_window(&self, now: u32) -> u32 {
        let shift = self.shift(now);
        self.counts
            .iter()
            .take(BUCKETS - shift)
            .map(|&c| u32::from(c))
            .sum()
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
}

/// The rate table.
pub struct RateTable {
    entries: [Option<Entry>; MAX_TOOLS],
}

fn valid_name(name: &[u8]) -> bool {
    !name.is_empty() && name.len() <= NAME_MAX_BYTES && crate::text::is_utf8(name)
}

impl RateTable {
    /// An empty table (`claw_rate_init`).
    pub const fn new() -> Self {
        Self {
            entries: [None; MAX_TOOLS],
        }
    }

    fn find(&self, name: &[u8]) -> Option<usize> {
        self.entries
            .iter()
            .position(|e| e.as_ref().is_some_and(|e| e.name() == name))
    }

    fn slot(&mut self, name: &[u8], now: u32) -> Option<&mut Entry> {
        if !valid_name(name) {
            return None;
        }
        let i = match self.find(name) {
            Some(i) => i,
            None => {
                let i = self.entries.iter().position(|e| e.is_none())?;
                let mut e = Entry {
                    name: [0; NAME_MAX_BYTES],
                    name_len: name.len() as u8,
                    tool: 0,
                    risk: 0,
                    limit: DEFAULT_PER_MIN,
                    counts: [0; BUCKETS],
                    base: now,
                };
                crate::text::copy_prefix(e.name.get_mut(..name.len())?, name);
                *self.entries.get_mut(i)? = Some(e);
                i
            }
        };
        self.entries.get_mut(i)?.as_mut()
    }

    /// Empties the table in place (`claw_rate_init`; building a new table
    /// and copying it would put its 900 bytes on the stack).
    pub fn reset(&mut self) {
        for e in self.entries.iter_mut() {
            *e = None;
        }
    }

    /// Installs a limit; 0 restores the default (it never means unlimited).
    /// Returns false when the name is invalid or the table is full.
    pub fn set(&mut self, name: &[u8], per_min: u16, now: u32) -> bool {
        let limit = if per_min == 0 {
            DEFAULT_PER_MIN
        } else {
            per_min
        };
        match self.slot(name, now) {
            Some(e) => {
                e.limit = limit;
                true
            }
            None => false,
        }
    }

    /// Gate 3: is `name` under its limit at `now`? Changes nothing.
    pub fn check(&self, name: &[u8], now: u32) -> bool {
        if !valid_name(name) {
            return false;
        }
        match self.find(name).and_then(|i| self.entries.get(i)?.as_ref()) {
            Some(e) => e.in_window(now) < u32::from(e.limit),
            // Not in the table: the default applies, if a slot is free to
            // count its calls in.
            None => self.entries.iter().any(|e| e.is_none()),
        }
    }

    /// Counts one call of `name` at `now`.
    pub fn record(&mut self, name: &[u8], now: u32) {
        if let Some(e) = self.slot(name, now) {
            e.advance(now);
            if let Some(c) = e.counts.first_mut() {
                *c = c.saturating_add(1);
            }
        }
    }
}

/// A registered tool as the table holds it (feature `agent`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ToolEntry<'a> {
    /// Its name.
    pub name: &'a [u8],
    /// Its kind (non-zero).
    pub kind: u8,
    /// Its risk.
    pub risk: u8,
    /// Calls per minute.
    pub limit: u16,
}

/// The registry of tools lives in the rate table: every tool has a rate
/// entry under its name anyway, so the name is stored once, and the table's
/// 16 slots are the registry's (`CLAW_RATE_MAX_TOOLS`).
impl RateTable {
    /// Registers (or re-registers) a tool of `kind` (non-zero) under
    /// `name`, with its risk and limit (0: the default). Its window is kept
    /// when it was there already (re-registering cannot refill a quota).
    /// Returns its slot; `None` when the name is invalid or the table full.
    pub fn register(
        &mut self,
        name: &[u8],
        kind: u8,
        risk: u8,
        per_min: u16,
        now: u32,
    ) -> Option<usize> {
        self.slot(name, now)?;
        let i = self.find(name)?;
        let e = self.entries.get_mut(i)?.as_mut()?;
        e.tool = kind;
        e.risk = risk;
        e.limit = if per_min == 0 {
            DEFAULT_PER_MIN
        } else {
            per_min
        };
        Some(i)
    }

    /// The slot of the registered tool called `name`.
    pub fn find_tool(&self, name: &[u8]) -> Option<usize> {
        self.find(name).filter(|&i| self.tool(i).is_some())
    }

    /// The registered tool in `slot`.
    pub fn tool(&self, slot: usize) -> Option<ToolEntry<'_>> {
        let e = self.entries.get(slot)?.as_ref()?;
        (e.tool != 0).then(|| ToolEntry {
            name: e.name(),
            kind: e.tool,
            risk: e.risk,
            limit: e.limit,
        })
    }

    /// Gate 3 by slot: is the tool under its limit at `now`?
    pub fn check_slot(&self, slot: usize, now: u32) -> bool {
        self.entries
            .get(slot)
            .and_then(|e| e.as_ref())
            .is_some_and(|e| e.in_window(now) < u32::from(e.limit))
    }

    /// Counts one call of the tool in `slot`.
    pub fn record_slot(&mut self, slot: usize, now: u32) {
        if let Some(e) = self.entries.get_mut(slot).and_then(|e| e.as_mut()) {
            e.advance(now);
            if let Some(c) = e.counts.first_mut() {
                *c = c.saturating_add(1);
            }
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
        for i in 0..MAX_TOOLS {
            t.record(format!("t{i}").as_bytes(), 0);
        }
        assert!(!t.check(b"newcomer", 0), "full table fails closed");
        assert!(!t.set(b"newcomer", 100, 0));
        t.record(b"newcomer", 0);
        assert!(t.check(b"t3", 0));
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
