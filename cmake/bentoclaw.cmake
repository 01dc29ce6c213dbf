# bentoclaw.cmake — build libbentoclaw.a with cargo from a CMake firmware build
# and expose it as an imported library.
#
#   set(BENTOCLAW_RUST_TARGET thumbv8m.main-none-eabi)        # optional
#   set(BENTOCLAW_RUSTFLAGS "-C target-cpu=cortex-m33")       # optional
#   include(/path/to/bentoclaw/cmake/bentoclaw.cmake)
#   target_link_libraries(firmware PRIVATE bentoclaw::bentoclaw)
#
# What it defines:
#   bentoclaw_cargo           custom target; runs `cargo rustc` every build
#                             (cargo's own change tracking makes that a no-op
#                             when nothing changed)
#   bentoclaw::bentoclaw      IMPORTED STATIC library: the archive, depending
#                             on bentoclaw_cargo, with include/ (claw_session.h,
#                             claw_safety.h, claw_port.h) as its include dir
#   BENTOCLAW_STATICLIB       full path of the archive
#   BENTOCLAW_INCLUDE_DIR     <repo>/include
#   BENTOCLAW_MPY_DIR         <repo>/mpy (the MicroPython user C module)
#
# Cache variables (all optional):
#   BENTOCLAW_RUST_TARGET     Rust target triple. Default: thumbv8m.main-none-eabi
#                             (soft-float calling convention, the BENTO CM33)
#                             when CMAKE_CROSSCOMPILING, else "" (= the host);
#                             thumbv8m.main-none-eabihf for a hard-float firmware.
#   BENTOCLAW_CARGO_PROFILE   cargo profile (default release)
#   BENTOCLAW_CARGO_TARGET_DIR  cargo's target dir (default <build>/bentoclaw-cargo)
#   BENTOCLAW_CARGO_FEATURES  cargo features, comma separated (default agent,
#                             which the MicroPython module uses)
#   BENTOCLAW_RUSTFLAGS       RUSTFLAGS for this build; empty leaves RUSTFLAGS
#                             alone (a non-empty value replaces any rustflags
#                             from .cargo/config.toml, as cargo does)
#   BENTOCLAW_CARGO           the cargo executable
#   BENTO_HAS_MPY             ON (default, or the environment's BENTO_HAS_MPY at
#                             the first configure). OFF/0: the seed's build
#                             switch — no cargo target, no archive;
#                             bentoclaw::bentoclaw is then an empty INTERFACE
#                             library (linking it adds nothing) and
#                             BENTOCLAW_STATICLIB is empty.
#
# The firmware's C flags and the Rust target must agree on the float ABI:
# thumbv8m.main-none-eabi links with -mfloat-abi=softfp (and soft) objects,
# as every BENTO Cortex-M33 object is; thumbv8m.main-none-eabihf is
# hard-float (-mfloat-abi=hard). Soft- and hard-float objects do not link
# together. See docs/BUILD.md for the link order (before the vendor's
# libbento_mpy.a).
# Needs CMake >= 3.13 and rustup's target (`rustup target add <triple>`).

include_guard(GLOBAL)
if(CMAKE_VERSION VERSION_LESS 3.13)
    message(FATAL_ERROR "bentoclaw.cmake needs CMake 3.13 or newer")
endif()

get_filename_component(BENTOCLAW_ROOT "${CMAKE_CURRENT_LIST_DIR}/.." ABSOLUTE)
set(BENTOCLAW_INCLUDE_DIR "${BENTOCLAW_ROOT}/include")
set(BENTOCLAW_MPY_DIR "${BENTOCLAW_ROOT}/mpy")

if(DEFINED ENV{BENTO_HAS_MPY} AND NOT "$ENV{BENTO_HAS_MPY}" STREQUAL "")
    set(_bentoclaw_has_mpy "$ENV{BENTO_HAS_MPY}")
else()
    set(_bentoclaw_has_mpy ON)
endif()
set(BENTO_HAS_MPY "${_bentoclaw_has_mpy}" CACHE BOOL
    "link the bentoclaw module and libbentoclaw.a (OFF: leave both out)")
if(NOT BENTO_HAS_MPY)
    # Nothing of bentoclaw in the image; cargo is never looked for nor run.
    add_library(bentoclaw::bentoclaw INTERFACE IMPORTED GLOBAL)
    set(BENTOCLAW_STATICLIB "")
    message(STATUS "bentoclaw: BENTO_HAS_MPY=${BENTO_HAS_MPY}, module and libbentoclaw.a left out")
    return()
endif()

if(CMAKE_CROSSCOMPILING)
    set(_bentoclaw_default_target "thumbv8m.main-none-eabi")
else()
    set(_bentoclaw_default_target "")
endif()
set(BENTOCLAW_RUST_TARGET "${_bentoclaw_default_target}" CACHE STRING
    "Rust target triple for libbentoclaw.a (empty = host)")
set(BENTOCLAW_CARGO_PROFILE "release" CACHE STRING "cargo profile for libbentoclaw.a")
set(BENTOCLAW_CARGO_TARGET_DIR "${CMAKE_BINARY_DIR}/bentoclaw-cargo" CACHE PATH
    "cargo target directory for libbentoclaw.a")
set(BENTOCLAW_CARGO_FEATURES "agent" CACHE STRING "cargo features (comma separated)")
set(BENTOCLAW_RUSTFLAGS "" CACHE STRING "RUSTFLAGS for libbentoclaw.a (empty: unchanged)")

find_program(BENTOCLAW_CARGO cargo HINTS "$ENV{CARGO_HOME}/bin" "$ENV{HOME}/.cargo/bin")
if(NOT BENTOCLAW_CARGO)
    message(FATAL_ERROR "bentoclaw: cargo not found (install Rust with rustup, "
                        "or set BENTOCLAW_CARGO)")
endif()

# cargo writes the dev profile to "debug", every other profile to its own name.
if(BENTOCLAW_CARGO_PROFILE STREQUAL "dev")
    set(_bentoclaw_profile_dir "debug")
else()
    set(_bentoclaw_profile_dir "${BENTOCLAW_CARGO_PROFILE}")
endif()

# `cargo rustc --crate-type staticlib`: built alone, the archive is one
# LTO-merged object; built next to the rlib it keeps core and heapless as
# separate members and costs about 2 KiB more flash (docs/SIZE.md).
set(_bentoclaw_args rustc --manifest-path "${BENTOCLAW_ROOT}/Cargo.toml"
    --lib --profile "${BENTOCLAW_CARGO_PROFILE}" --crate-type staticlib)
if(BENTOCLAW_RUST_TARGET)
    list(APPEND _bentoclaw_args --target "${BENTOCLAW_RUST_TARGET}")
    set(BENTOCLAW_STATICLIB
        "${BENTOCLAW_CARGO_TARGET_DIR}/${BENTOCLAW_RUST_TARGET}/${_bentoclaw_profile_dir}/libbentoclaw.a")
else()
    set(BENTOCLAW_STATICLIB
        "${BENTOCLAW_CARGO_TARGET_DIR}/${_bentoclaw_profile_dir}/libbentoclaw.a")
endif()
if(BENTOCLAW_CARGO_FEATURES)
    list(APPEND _bentoclaw_args --features "${BENTOCLAW_CARGO_FEATURES}")
endif()

if(BENTOCLAW_RUST_TARGET)
    set(_bentoclaw_target_name "${BENTOCLAW_RUST_TARGET}")
else()
    set(_bentoclaw_target_name "host")
endif()

set(_bentoclaw_env "CARGO_TARGET_DIR=${BENTOCLAW_CARGO_TARGET_DIR}")
if(BENTOCLAW_RUSTFLAGS)
    list(APPEND _bentoclaw_env "RUSTFLAGS=${BENTOCLAW_RUSTFLAGS}")
endif()

# Always run cargo: it knows the crate's real inputs (sources, build.rs,
# Cargo.lock, features) better than any DEPENDS list written here.
add_custom_target(bentoclaw_cargo
    COMMAND "${CMAKE_COMMAND}" -E env ${_bentoclaw_env} "${BENTOCLAW_CARGO}" ${_bentoclaw_args}
    WORKING_DIRECTORY "${BENTOCLAW_ROOT}"
    BYPRODUCTS "${BENTOCLAW_STATICLIB}"
    COMMENT "cargo build libbentoclaw.a (${_bentoclaw_target_name})"
    USES_TERMINAL
    VERBATIM)

add_library(bentoclaw::bentoclaw STATIC IMPORTED GLOBAL)
set_target_properties(bentoclaw::bentoclaw PROPERTIES
    IMPORTED_LOCATION "${BENTOCLAW_STATICLIB}"
    INTERFACE_INCLUDE_DIRECTORIES "${BENTOCLAW_INCLUDE_DIR}")
# Followed transitively: anything linking bentoclaw::bentoclaw builds after cargo,
# and relinks when the archive changed.
add_dependencies(bentoclaw::bentoclaw bentoclaw_cargo)

message(STATUS "bentoclaw: ${BENTOCLAW_STATICLIB}")
