#!/usr/bin/env bash
# An offline tour of Cordon on a fresh machine: builds the bundled plugins and the
# `cordon` binary, validates the bundles and calls their tools in the sandbox,
# then runs the demo agent (a scripted model) over this repository: its calls
# pass the permission gate, one is denied, one waits for approval, and the run's
# committed history is shown.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

"$root/scripts/build-plugins.sh" >/dev/null
cargo build --quiet -p cordon-cli
target_dir="${CARGO_TARGET_DIR:-target}"
case "$target_dir" in
    /*) ;;
    *) target_dir="$root/$target_dir" ;;
esac
cordon="$target_dir/debug/cordon"

scratch="$(mktemp -d)"
export CORDON_STORE="$scratch/cordon.db"

step() {
    printf '\n\033[1m$ cordon %s\033[0m\n' "$*"
    "$cordon" "$@" || printf '(exit code %d)\n' "$?"
}

step plugins check plugins
step tool list
step tool call jq.query --args '{"filter": ".[] | select(.stars > 100) | .name", "input": [{"name": "wasmtime", "stars": 15000}, {"name": "toy", "stars": 3}]}'
step tool call files.search --args '{"pattern": "fn main", "glob": "*.rs", "max_results": 3}'
step tool call files.read --args '{"path": "wit/tools.wit", "limit": 12}'
step tool call notes.add --args '{"title": "Sandbox", "body": "Each call runs in a fresh instance with only its grants.", "tags": ["cordon"]}'
step tool call notes.list --args '{"tag": "cordon"}'
echo
echo "Refused: a path outside the granted workspace, and arguments that break the schema."
step tool call files.read --args '{"path": "../../etc/passwd"}'
step tool call jq.query --args '{"filter": 42}'

echo
echo "The demo agent (examples/demo): reads freely, may not read .env, asks before writing a note;"
echo "the bundled hooks redact secrets from what it reads, guard its paths and count its calls."
step run --agent examples/demo/agent.toml --run-id demo "Where does the cordon CLI start?" </dev/null
step runs resume demo --approve call-3-1 </dev/null
step runs show demo
