#!/usr/bin/env bash
# Runs Cordon's whole test suite on a fresh machine: adds the wasm32-wasip2 target,
# installs the pinned toolchains for tools in other languages (once, cached
# outside the clone), builds the test binaries (the build script of
# tests/artifacts builds the Rust guest components once per run), builds the
# bundled Python interpreter, the example skill's tool, the example tools and
# the hostile fixtures in Python, JavaScript and C with `cordon build`, runs
# the Python and JavaScript SDKs' own tests, starts a throwaway Postgres server
# on loopback for the Postgres store's tests (installing Debian's package when
# missing), then runs every test of every crate.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

rustup target add wasm32-wasip2 >/dev/null 2>&1 || {
    echo "error: could not add the wasm32-wasip2 target; run \`rustup target add wasm32-wasip2\`" >&2
    exit 1
}
eval "$(scripts/toolchains.sh)"

cargo test --workspace --no-run
target_dir="${CARGO_TARGET_DIR:-target}"
"$target_dir/debug/cordon" build --no-compile plugins/python examples/skills/csv-report/tools \
    examples/tools examples/tools/markdown/quickjs \
    tests/guests/hostile-py tests/guests/hostile-js tests/guests/hostile-js/quickjs tests/guests/fetch-js

PYTHONDONTWRITEBYTECODE=1 python3 -m unittest discover -s sdk/python/tests
node --test sdk/js/tests/

if postgres="$(scripts/postgres.sh start)"; then
    eval "$postgres"
    trap 'scripts/postgres.sh stop "$CORDON_TEST_POSTGRES_DIR"' EXIT
else
    echo "WARNING: no Postgres server could be started: the Postgres store's tests will be SKIPPED" >&2
fi

cargo test --workspace "$@"
