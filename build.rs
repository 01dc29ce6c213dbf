//! Build script: no code generator runs at build time (building the library
//! needs neither libclang nor cbindgen). The bindings are committed files
//! that `scripts/gen_headers.sh` regenerates:
//!
//! * `src/ffi/sys.rs` — bindgen's Rust declarations of `include/claw_port.h`;
//! * `include/claw_session.h`, `claw_safety.h`, `claw_ext.h` — cbindgen's
//!   headers of `src/ffi` (the test command fails when they drift).
//!
//! What this script does is the one cheap check a build can make on its own:
//! `src/ffi/sys.rs` records the FNV-1a hash of the `claw_port.h` it was
//! generated from, and a build whose `claw_port.h` has changed since then
//! stops here, before Rust and C disagree about the port's ABI.

use std::fs;

fn fnv1a(data: &[u8]) -> u64 {
    data.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

fn main() {
    println!("cargo:rerun-if-changed=include/claw_port.h");
    println!("cargo:rerun-if-changed=src/ffi/sys.rs");
    let header = fs::read("include/claw_port.h").expect("include/claw_port.h");
    let sys = fs::read_to_string("src/ffi/sys.rs").expect("src/ffi/sys.rs");
    let want = format!("// claw_port.h fnv1a64: {:016x}", fnv1a(&header));
    if !sys.lines().any(|l| l == want) {
        panic!(
            "include/claw_port.h has changed since src/ffi/sys.rs was generated: \
             run scripts/gen_headers.sh (it needs libclang) and commit both"
        );
    }
}
