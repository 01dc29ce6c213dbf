//! bentoclaw: the session memory, the safety gates and the agent loop of a
//! small AI agent inside MicroPython firmware, as a `no_std` archive
//! (`libbentoclaw.a`) that links before the vendor's `libbento_mpy.a` and
//! takes the place of its claw members (`docs/BUILD.md`).
//!
//! Two layers (see `docs/DESIGN.md`):
//! * a safe core — [`session`], [`memory`], [`context`], [`safety`] — that
//!   reaches the clock and the file system only through the [`port::Port`]
//!   trait, and
//! * [`ffi`], the only module with `unsafe`: the 22 exported `claw_*`
//!   functions and the [`port::Port`] implementation over `claw_port.h`.
//!
//! No heap, no locks, no reachable panic (checked by linking the target
//! build with a panic handler that does not exist, `scripts/size_report.sh`;
//! the handler lives in [`ffi`] with the rest of the unsafe code).

#![cfg_attr(not(any(test, feature = "std")), no_std)]
#![deny(unsafe_op_in_unsafe_fn)]
#![warn(missing_docs)]

// The C headers describe `ffi` alone (scripts/gen_headers.sh): cbindgen
// skips the core's modules.

/// cbindgen:ignore
#[cfg(feature = "agent")]
pub mod agent;
/// cbindgen:ignore
pub mod context;
pub mod ffi;
/// cbindgen:ignore
pub mod format;
/// cbindgen:ignore
mod kernel;
/// cbindgen:ignore
#[cfg(feature = "agent")]
pub mod markdown;
/// cbindgen:ignore
pub mod memory;
/// cbindgen:ignore
pub mod message;
/// cbindgen:ignore
pub mod port;
/// cbindgen:ignore
#[cfg(feature = "recall")]
pub mod recall;
/// cbindgen:ignore
pub mod safety;
/// cbindgen:ignore
pub mod session;
/// cbindgen:ignore
pub mod state;
/// cbindgen:ignore
pub mod text;

#[cfg(any(test, feature = "std"))]
pub mod testing;

#[cfg(test)]
mod corrupt_tests;
