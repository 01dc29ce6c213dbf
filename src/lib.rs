//! bentoclaw: the session memory and safety gates of a small AI agent inside
//! MicroPython firmware, as a `no_std` drop-in for the vendor archive
//! `libbento_mpy.a`.
//!
//! Two layers (see `docs/DESIGN.md`):
//! * a safe core — [`session`], [`memory`], [`context`], [`safety`] — that
//!   reaches the clock and the file system only through the [`port::Port`]
//!   trait, and
//! * [`ffi`], the only module with `unsafe`: the 22 exported `claw_*`
//!   functions and the [`port::Port`] implementation over `claw_port.h`.
//!
//! No heap, no locks, no reachable panic (checked by linking the target
//! build with a panic handler that does not exist, `scripts/size_report.sh`).

#![cfg_attr(not(any(test, feature = "std")), no_std)]
#![deny(unsafe_op_in_unsafe_fn)]
#![warn(missing_docs)]

pub mod context;
pub mod ffi;
pub mod jsonl;
pub mod memory;
pub mod port;
#[cfg(feature = "recall")]
pub mod recall;
pub mod safety;
pub mod session;
pub mod text;

#[cfg(any(test, feature = "std"))]
pub mod testing;

#[cfg(test)]
mod corrupt_tests;
#[cfg(test)]
mod model_tests;

/// Host builds only (the unix MicroPython port links the staticlib): the
/// precompiled `core` of hosted targets refers to the unwinding personality
/// even with `panic = "abort"`. Nothing unwinds, so it is never called.
#[cfg(all(not(test), not(feature = "std"), not(target_os = "none")))]
#[unsafe(no_mangle)]
extern "C" fn rust_eh_personality() {}

#[cfg(not(any(test, feature = "std")))]
#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    #[cfg(feature = "panic-check")]
    {
        unsafe extern "C" {
            // Defined nowhere: an image links only when no panic path is
            // reachable from the functions it uses.
            fn bentoclaw_panic_is_reachable() -> !;
        }
        // SAFETY: never runs; the call exists to fail the link.
        unsafe { bentoclaw_panic_is_reachable() }
    }
    #[cfg(not(feature = "panic-check"))]
    loop {
        core::hint::spin_loop();
    }
}
