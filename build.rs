//! Build script:
//! * bindgen: Rust declarations of `include/claw_port.h` (the host port);
//! * cbindgen: `claw_session.h`, `claw_safety.h` (the vendor ABI) and
//!   `claw_ext.h` (our additions, feature `recall`) from `src/ffi`, written
//!   to `OUT_DIR` (a test compares them with the committed `include/`
//!   copies) and, with `BENTOCLAW_WRITE_HEADERS=1`, into `include/`.

use std::env;
use std::fs;
use std::path::PathBuf;

const SESSION_FNS: &[&str] = &[
    "claw_session_init",
    "claw_session_add",
    "claw_session_count",
    "claw_session_clear",
    "claw_session_build_context",
    "claw_memory_set",
    "claw_memory_get",
    "claw_session_dirty",
    "claw_session_flush",
];
const SESSION_ITEMS: &[&str] = &[
    "CLAW_SESSION_MAX_MSGS",
    "CLAW_MSG_MAX_LEN",
    "CLAW_MEM_KEY_MAX",
    "CLAW_MEM_VAL_MAX",
    "CLAW_MEM_MAX_ENTRIES",
    "claw_role_t",
    "CLAW_ROLE_USER",
    "CLAW_ROLE_ASSISTANT",
    "CLAW_ROLE_SYSTEM",
    "CLAW_ROLE_TOOL",
];
const SAFETY_FNS: &[&str] = &[
    "claw_cb_init",
    "claw_cb_allow",
    "claw_cb_success",
    "claw_cb_failure",
    "claw_cb_state",
    "claw_cb_cooldown_remaining",
    "claw_rate_init",
    "claw_rate_check",
    "claw_rate_record",
    "claw_rate_set",
    "claw_trust_set",
    "claw_trust_get",
    "claw_trust_allows",
];
const SAFETY_ITEMS: &[&str] = &[
    "CLAW_RATE_MAX_TOOLS",
    "CLAW_RATE_NAME_MAX",
    "CLAW_RATE_DEFAULT_PER_MIN",
    "CLAW_RATE_GRANULARITY_MS",
    "CLAW_CB_THRESHOLD",
    "CLAW_CB_COOLDOWN_MS",
    "claw_cb_state_t",
    "CLAW_CB_CLOSED",
    "CLAW_CB_OPEN",
    "CLAW_CB_HALFOPEN",
    "claw_trust_level_t",
    "CLAW_TRUST_NONE",
    "CLAW_TRUST_HTTPS",
    "CLAW_TRUST_USB",
];

const EXT_FNS: &[&str] = &[
    "claw_memory_forget",
    "claw_memory_pin",
    "claw_memory_search",
    "claw_memory_at",
];
const EXT_ITEMS: &[&str] = &[
    "claw_memory_hit_t",
    "CLAW_MEMORY_SEARCH_MAX",
    "CLAW_ROLE_SUMMARY",
    "CLAW_ARCHIVE_MAX",
    "claw_session_stats_t",
    "claw_session_account",
    "claw_session_stats",
    "claw_session_compact",
    "claw_session_compact_plan",
    "claw_session_new",
    "claw_session_message",
    "claw_archive_read",
];

fn main() {
    let root = PathBuf::from(env::var("CARGO_MANIFEST_DIR").expect("cargo sets it"));
    let out = PathBuf::from(env::var("OUT_DIR").expect("cargo sets it"));
    println!("cargo:rerun-if-changed=include/claw_port.h");
    println!("cargo:rerun-if-changed=src/ffi");
    println!("cargo:rerun-if-changed=cbindgen.toml");
    println!("cargo:rerun-if-env-changed=BENTOCLAW_WRITE_HEADERS");

    port_bindings(&root, &out);

    let write = env::var("BENTOCLAW_WRITE_HEADERS").is_ok_and(|v| v == "1");
    header(
        &root,
        &out,
        "claw_session.h",
        "CLAW_SESSION_H",
        SESSION_FNS,
        SESSION_ITEMS,
        write,
    );
    header(
        &root,
        &out,
        "claw_safety.h",
        "CLAW_SAFETY_H",
        SAFETY_FNS,
        SAFETY_ITEMS,
        write,
    );
    header(
        &root,
        &out,
        "claw_ext.h",
        "CLAW_EXT_H",
        EXT_FNS,
        EXT_ITEMS,
        write,
    );
}

fn port_bindings(root: &std::path::Path, out: &std::path::Path) {
    let header = root.join("include/claw_port.h");
    let bindings = bindgen::Builder::default()
        .header(header.to_string_lossy())
        .use_core()
        .ctypes_prefix("cty")
        .rust_edition(bindgen::RustEdition::Edition2024)
        .allowlist_function("claw_port_.*")
        .allowlist_var("CLAW_PORT_.*")
        // Freestanding: clang's own stdint/stddef, whatever the target.
        .clang_arg("-ffreestanding")
        .layout_tests(false)
        .generate()
        .expect("bindgen: include/claw_port.h");
    bindings
        .write_to_file(out.join("claw_port_sys.rs"))
        .expect("write claw_port_sys.rs");
}

fn header(
    root: &std::path::Path,
    out: &std::path::Path,
    name: &str,
    guard: &str,
    fns: &[&str],
    items: &[&str],
    write: bool,
) {
    let mut config =
        cbindgen::Config::from_file(root.join("cbindgen.toml")).expect("cbindgen.toml");
    config.include_guard = Some(guard.to_string());
    // Each header lists its own functions and constants; the rest of the
    // crate's exports go to the other header.
    let all: Vec<&str> = SESSION_FNS
        .iter()
        .chain(SESSION_ITEMS)
        .chain(SAFETY_FNS)
        .chain(SAFETY_ITEMS)
        .chain(EXT_FNS)
        .chain(EXT_ITEMS)
        .copied()
        .collect();
    config.export.exclude = all
        .iter()
        .filter(|n| !fns.contains(n) && !items.contains(n))
        .map(|s| s.to_string())
        // Host-build plumbing, not API (src/lib.rs).
        .chain(["rust_eh_personality".to_string()])
        .collect();
    let bindings = cbindgen::Builder::new()
        .with_crate(root)
        .with_config(config)
        .generate()
        .expect("cbindgen");
    let path = out.join(name);
    bindings.write_to_file(&path);
    if write {
        fs::copy(&path, root.join("include").join(name)).expect("write include/");
    }
}
