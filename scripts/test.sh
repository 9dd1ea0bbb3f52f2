#!/usr/bin/env bash
# Runs Cordon's whole test suite on a fresh machine, phase by phase:
#
#   toolchains   the wasm32-wasip2 target, cargo-nextest (installed from
#                crates.io when missing) and the pinned toolchains for tools in
#                other languages (once, cached outside the clone)
#   test build   every test binary: one per crate for its unit tests, one per
#                crate for its integration tests; beside the host's crates,
#                the build scripts of cordon-bundled and cordon-test-artifacts
#                build the guest components, bundled plugins and hostile
#                fixtures, once for the whole run (cordon-guest-build), and
#                report that as two phases of their own
#   examples     the bundled Python interpreter, the example skill's tool, the
#                example tools and the hostile fixtures in Python, JavaScript
#                and C, with `cordon build`
#   test run     the Python and JavaScript SDKs' own tests, then, beside a
#                throwaway Postgres server on loopback (Debian's package is
#                installed when missing), every test of every crate with
#                cargo-nextest, which runs the tests of all binaries side by
#                side, and the doc tests
#
# Arguments are handed to `cargo nextest run` (a test name filter, say). When
# CORDON_TIMINGS names a file, each phase appends `NAME<TAB>SECONDS` to it.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

# timed NAME WHAT COMMAND...: say what the phase does and how long it takes
# from scratch, run COMMAND in this shell, then say how long it took.
timed() {
    local name="$1" started=$SECONDS
    echo "test.sh: $name: $2" >&2
    shift 2
    "$@"
    local took=$((SECONDS - started))
    echo "test.sh: $name took ${took}s" >&2
    if [ -n "${CORDON_TIMINGS:-}" ]; then
        printf '%s\t%s\n' "$name" "$took" >>"$CORDON_TIMINGS"
    fi
}

toolchains() {
    rustup target add wasm32-wasip2 >/dev/null 2>&1 || {
        echo "error: could not add the wasm32-wasip2 target; run \`rustup target add wasm32-wasip2\`" >&2
        exit 1
    }
    if ! cargo nextest --version >/dev/null 2>&1; then
        echo "test.sh: installing cargo-nextest from crates.io" >&2
        cargo install --locked cargo-nextest || {
            echo "error: could not install cargo-nextest; run \`cargo install --locked cargo-nextest\`" >&2
            exit 1
        }
    fi
    eval "$(scripts/toolchains.sh)"
}

test_build() {
    cargo test --workspace --no-run
}

examples() {
    local target_dir="${CARGO_TARGET_DIR:-target}"
    "$target_dir/debug/cordon" build --no-compile plugins/python plugins/node plugins/commands plugins/git examples/skills/csv-report/tools \
        examples/tools examples/tools/markdown/quickjs \
        tests/guests/hostile-py tests/guests/hostile-js tests/guests/hostile-js/quickjs tests/guests/fetch-js
}

test_run() {
    PYTHONDONTWRITEBYTECODE=1 python3 -m unittest discover -s sdk/python/tests
    node --test sdk/js/tests/
    if postgres="$(scripts/postgres.sh start)"; then
        eval "$postgres"
        trap 'scripts/postgres.sh stop "$CORDON_TEST_POSTGRES_DIR"' EXIT
    else
        echo "WARNING: no Postgres server could be started: the Postgres store's tests will be SKIPPED" >&2
    fi
    cargo nextest run --workspace --no-fail-fast "$@"
    cargo test --workspace --doc
}

timed toolchains "the wasm32-wasip2 target, cargo-nextest and the toolchains for tools in other languages (a few minutes the first time, cached in ~/.cache afterwards)" toolchains
timed "test build" "every test binary and, beside them, the guest components (from scratch about 15 minutes on 2 cores, mostly wasmtime; cargo shows each crate as it goes; the guests build inside cordon-bundled and cordon-test-artifacts, whose lines wait until they are done)" test_build
timed examples "the Python interpreter and the example tools, with cordon build (about a minute)" examples
timed "test run" "every test, side by side (about 7 minutes on 2 cores)" test_run "$@"
