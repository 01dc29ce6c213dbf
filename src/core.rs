//! Everything the library remembers between calls, in one value: the
//! session, the three safety gates and (feature `agent`) the agent's state.
//!
//! The FFI layer keeps one `Core` in a static; the tests build their own.
//! Safe code reaches it only through [`crate::agent::Host::with_core`] or
//! the FFI layer's `with_state`, both of which hand out a `&mut Core` for the
//! length of one closure, never across a callback into the host.

#[cfg(feature = "agent")]
use crate::agent::{config::Config, registry::Registry, state::Agent};
use crate::safety::{breaker::CircuitBreaker, rate::RateTable, trust::Trust};
use crate::session::Session;

/// The library's state.
pub struct Core {
    /// The conversation ring and its file.
    pub session: Session,
    /// Gate 1.
    pub breaker: CircuitBreaker,
    /// Gate 3 (its slots are the registry's).
    pub rate: RateTable,
    /// The tool registry (feature `agent`).
    #[cfg(feature = "agent")]
    pub registry: Registry,
    /// Gate 2: the transport's trust level.
    pub trust: Trust,
    /// The agent loop's state (feature `agent`).
    #[cfg(feature = "agent")]
    pub agent: Agent,
}

impl Core {
    /// All zeros: the static lives in `.bss`.
    pub const fn new() -> Self {
        Self {
            session: Session::new(),
            breaker: CircuitBreaker::new(),
            rate: RateTable::new(),
            #[cfg(feature = "agent")]
            registry: Registry::new(),
            trust: Trust::new(),
            #[cfg(feature = "agent")]
            agent: Agent::new(),
        }
    }
}

#[cfg(feature = "agent")]
impl Core {
    /// The agent's settings (read at first use), passing on what the
    /// session needs of them.
    pub fn config<P: crate::port::Port>(&mut self, p: &mut P) -> Config {
        let c = self.agent.config(p);
        self.session.archive = c.archive;
        c
    }

    /// [`Core::config`] without I/O: the settings it read last, or the
    /// defaults (for the deep frames of a tool round; the caller read them
    /// first from a shallow one).
    pub fn config_cached(&mut self) -> Config {
        let c = self.agent.config_cached();
        self.session.archive = c.archive;
        c
    }
}

impl Default for Core {
    fn default() -> Self {
        Self::new()
    }
}
