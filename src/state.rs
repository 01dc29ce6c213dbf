//! Everything the library remembers between calls, in one value: the
//! session, the three safety gates and what feature `agent` adds, the tool
//! registry `R` and the agent's state `A` (`()` and `()` without it). It
//! builds on the session and the gates alone: the agent's methods on it
//! live in `agent`.
//!
//! The FFI layer keeps one `State` in a static; the tests build their own.
//! Safe code reaches it only through the agent's `Host::with_state` or the
//! FFI layer's `with_state`, both of which hand out a `&mut State` for the
//! length of one closure, never across a callback into the host.

use crate::safety::{breaker::CircuitBreaker, rate::RateTable, trust::Trust};
use crate::session::Session;

/// The library's state.
pub struct State<R, A> {
    /// The conversation ring and its file.
    pub session: Session,
    /// Gate 1.
    pub breaker: CircuitBreaker,
    /// Gate 3 (with feature `agent`, its slots are the registry's).
    pub rate: RateTable,
    /// The tool registry (feature `agent`).
    pub registry: R,
    /// Gate 2: the transport's trust level.
    pub trust: Trust,
    /// The agent loop's state (feature `agent`).
    pub agent: A,
}

impl<R, A> State<R, A> {
    /// All zeros but `registry` and `agent`: the static lives in `.bss`.
    pub const fn new(registry: R, agent: A) -> Self {
        Self {
            session: Session::new(),
            breaker: CircuitBreaker::new(),
            rate: RateTable::new(),
            registry,
            trust: Trust::new(),
            agent,
        }
    }
}

impl<R: Default, A: Default> Default for State<R, A> {
    fn default() -> Self {
        Self::new(R::default(), A::default())
    }
}
