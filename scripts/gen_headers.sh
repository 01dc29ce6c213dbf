#!/usr/bin/env bash
# Regenerates include/claw_session.h and include/claw_safety.h with cbindgen
# (pinned by Cargo.lock) from src/ffi. The test suite fails when the
# committed headers differ from what this produces.
set -euo pipefail
cd "$(dirname "$0")/.."
BENTOCLAW_WRITE_HEADERS=1 cargo build --quiet
git diff --stat -- include/ || true
