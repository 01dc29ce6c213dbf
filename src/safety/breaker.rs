//! The circuit breaker: three consecutive failures open it for 30 s; then it
//! admits one trial call at a time.

/// Consecutive failures that open the breaker.
pub(crate) const THRESHOLD: u8 = 3;
/// How long the breaker stays open, in ms.
pub(crate) const COOLDOWN_MS: u32 = 30_000;

/// What `claw_cb_state` reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum State {
    /// Calls pass.
    Closed = 0,
    /// Cooling down: calls are refused.
    Open = 1,
    /// Cooldown over: one trial call at a time.
    HalfOpen = 2,
}

/// Breaker state. Between two calls a tick may wrap; elapsed times are
/// wrapping differences, and a passed cooldown is latched so that a tick
/// wrapping round (49.7 days later) cannot re-open the breaker.
#[derive(Clone, Copy, Debug)]
pub struct CircuitBreaker {
    failures: u8,
    open: bool,
    opened_at: u32,
    /// The cooldown has passed (latched, see above).
    cooled: bool,
    /// A half-open trial was admitted at this tick and has not reported.
    trial_at: Option<u32>,
}

impl CircuitBreaker {
    /// Closed, no failures (`claw_cb_init`).
    pub const fn new() -> Self {
        Self {
            failures: 0,
            open: false,
            opened_at: 0,
            cooled: false,
            trial_at: None,
        }
    }

    fn refresh(&mut self, now: u32) {
        if self.open && !self.cooled && now.wrapping_sub(self.opened_at) >= COOLDOWN_MS {
            self.cooled = true;
        }
        if let Some(t) = self.trial_at {
            // A trial that never reported (a later gate refused the call)
            // must not wedge the breaker: after another cooldown it lapses.
            if now.wrapping_sub(t) >= COOLDOWN_MS {
                self.trial_at = None;
            }
        }
    }

    /// Gate 1: may a call proceed now?
    pub fn allow(&mut self, now: u32) -> bool {
        self.refresh(now);
        if !self.open {
            return true;
        }
        if !self.cooled || self.trial_at.is_some() {
            return false;
        }
        self.trial_at = Some(now);
        true
    }

    /// A call succeeded: closed, counter 0.
    pub fn success(&mut self) {
        *self = Self::new();
    }

    /// A call failed.
    pub fn failure(&mut self, now: u32) {
        self.refresh(now);
        self.failures = self.failures.saturating_add(1);
        if self.open || self.failures >= THRESHOLD {
            // Opening, or a failed half-open trial: a fresh cooldown.
            self.open = true;
            self.opened_at = now;
            self.cooled = false;
            self.trial_at = None;
        }
    }

    /// The state at `now`.
    pub fn state(&mut self, now: u32) -> State {
        self.refresh(now);
        match (self.open, self.cooled) {
            (false, _) => State::Closed,
            (true, false) => State::Open,
            (true, true) => State::HalfOpen,
        }
    }

    /// Milliseconds of cooldown left, 0 when not cooling down.
    pub fn cooldown_remaining(&mut self, now: u32) -> u32 {
        self.refresh(now);
        if self.open && !self.cooled {
            COOLDOWN_MS.saturating_sub(now.wrapping_sub(self.opened_at))
        } else {
            0
        }
    }
}

impl Default for CircuitBreaker {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const STARTS: [u32; 4] = [0, 1_000_000, u32::MAX - 5_000, u32::MAX - 40_000];

    #[test]
    fn opens_after_three_consecutive_failures() {
        for t0 in STARTS {
            let mut b = CircuitBreaker::new();
            b.failure(t0);
            b.failure(t0);
            assert!(b.allow(t0));
            b.success();
            b.failure(t0);
            assert_eq!(b.state(t0), State::Closed, "fail fail success fail");
            b.failure(t0);
            b.failure(t0.wrapping_add(10));
            assert_eq!(b.state(t0.wrapping_add(10)), State::Open);
            assert!(!b.allow(t0.wrapping_add(10)));
            assert_eq!(b.cooldown_remaining(t0.wrapping_add(10)), COOLDOWN_MS);
            assert_eq!(b.cooldown_remaining(t0.wrapping_add(29_999)), 11);
            assert!(!b.allow(t0.wrapping_add(30_009)));
            assert_eq!(b.state(t0.wrapping_add(30_010)), State::HalfOpen);
            assert_eq!(b.cooldown_remaining(t0.wrapping_add(30_010)), 0);
        }
    }

    #[test]
    fn half_open_admits_one_trial() {
        for t0 in STARTS {
            let open = |b: &mut CircuitBreaker| {
                for _ in 0..3 {
                    b.failure(t0);
                }
            };
            let t = |d: u32| t0.wrapping_add(d);
            let mut b = CircuitBreaker::new();
            open(&mut b);
            assert!(b.allow(t(30_000)), "elapsed >= 30000 admits");
            assert!(!b.allow(t(30_001)), "only one trial");
            b.success();
            assert_eq!(b.state(t(30_002)), State::Closed);
            assert!(b.allow(t(30_002)));

            let mut b = CircuitBreaker::new();
            open(&mut b);
            assert!(b.allow(t(30_000)));
            b.failure(t(31_000));
            assert_eq!(b.state(t(31_000)), State::Open, "failed trial reopens");
            assert_eq!(b.cooldown_remaining(t(31_000)), COOLDOWN_MS);
            assert!(!b.allow(t(60_999)));
            assert!(b.allow(t(61_000)));

            let mut b = CircuitBreaker::new();
            open(&mut b);
            assert!(b.allow(t(30_000)));
            // The trial was refused by a later gate and never reported.
            assert!(!b.allow(t(59_999)));
            assert!(b.allow(t(60_000)), "an unreported trial lapses");
        }
    }

    #[test]
    fn a_long_idle_does_not_reopen() {
        let mut b = CircuitBreaker::new();
        for _ in 0..3 {
            b.failure(100);
        }
        assert_eq!(b.state(100 + (1 << 31)), State::HalfOpen);
        // One full wrap later the latched cooldown still holds.
        assert_eq!(b.state(200), State::HalfOpen);
        assert!(b.allow(300));
    }
}

#[cfg(test)]
mod props {
    use super::*;
    use proptest::prelude::*;

    #[derive(Clone, Debug)]
    enum Ev {
        Allow,
        Success,
        Failure,
        Wait(u32),
    }

    proptest! {
        #![proptest_config(crate::testing::regressions("tests/proptest-regressions/safety/breaker.txt"))]
        /// Against a reference with 64-bit time: same answers, from a clock
        /// that starts just below the wrap, including 2^31 ms idles.
        #[test]
        fn matches_a_64_bit_reference(
            start in prop_oneof![Just(u32::MAX - 5_000), any::<u32>()],
            evs in prop::collection::vec(prop_oneof![
                3 => Just(Ev::Allow),
                1 => Just(Ev::Success),
                3 => Just(Ev::Failure),
                2 => prop_oneof![0u32..40_000, Just(1u32 << 31)].prop_map(Ev::Wait),
            ], 1..200),
        ) {
            let mut b = CircuitBreaker::new();
            let (mut now, mut failures, mut opened, mut trial): (u64, u32, Option<u64>, Option<u64>) =
                (0, 0, None, None);
            for ev in evs {
                let tick = start.wrapping_add(now as u32);
                match ev {
                    Ev::Allow => {
                        let want = match opened {
                            None => true,
                            Some(o) if now - o < 30_000 => false,
                            Some(_) => match trial {
                                Some(t) if now - t < 30_000 => false,
                                _ => { trial = Some(now); true }
                            },
                        };
                        prop_assert_eq!(b.allow(tick), want);
                    }
                    Ev::Success => { b.success(); failures = 0; opened = None; trial = None; }
                    Ev::Failure => {
                        b.failure(tick);
                        failures += 1;
                        if opened.is_some() || failures >= 3 { opened = Some(now); trial = None; }
                    }
                    Ev::Wait(ms) => now += u64::from(ms),
                }
                let tick = start.wrapping_add(now as u32);
                let (state, left) = match opened {
                    None => (State::Closed, 0),
                    Some(o) if now - o < 30_000 => (State::Open, (30_000 - (now - o)) as u32),
                    Some(_) => (State::HalfOpen, 0),
                };
                prop_assert_eq!(b.state(tick), state);
                prop_assert_eq!(b.cooldown_remaining(tick), left);
            }
        }
    }
}
