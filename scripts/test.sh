#!/usr/bin/env bash
# Runs Cordon's whole test suite on a fresh machine: adds the wasm32-wasip2 target,
# builds the guest components (the build script of tests/artifacts does that once
# per run), then runs every test of every crate.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

rustup target add wasm32-wasip2 >/dev/null 2>&1 || {
    echo "error: could not add the wasm32-wasip2 target; run \`rustup target add wasm32-wasip2\`" >&2
    exit 1
}
cargo test --workspace "$@"
