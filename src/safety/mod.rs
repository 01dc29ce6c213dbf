//! The safety gates every tool call passes, in this order: the circuit
//! breaker ([`breaker`]), the transport trust level ([`trust`]), the per-tool
//! rate limit ([`rate`] check, then record).
//!
//! Time is a `u32` millisecond tick that wraps every 49.7 days: every
//! comparison here is `now.wrapping_sub(then)`.

pub mod breaker;
pub mod rate;
pub mod trust;
