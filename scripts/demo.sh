#!/usr/bin/env bash
# An offline tour of Cordon on a fresh machine: builds the bundled plugins and the
# `cordon` binary, validates the bundles and calls their tools in the sandbox,
# then runs the demo agent (a scripted model) over this repository: its calls
# pass the permission gate, one is denied, one waits for approval, and the run's
# committed history is shown. Then the coder agent edits a scratch copy of a
# small project through the `dir` sandbox backend, transactionally, and the
# lead agent hands the same change to two sub-agents. Then the
# analyst agent activates a skill written by someone else: its instructions
# only narrow what the agent may do, its script runs in the sandboxed Python
# interpreter, and its tool runs under the profile of untrusted code. Last,
# the fetcher agent reads a web server on this machine with the bundled http
# plugin, which reaches no origin until the operator approves one.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

# say TEXT: one line of what the demo is doing, on stderr, bold on a terminal.
say() {
    if [ -t 2 ]; then
        printf '\033[1m==> %s\033[0m\n' "$*" >&2
    else
        printf '==> %s\n' "$*" >&2
    fi
}

started=$SECONDS
say "building the bundled plugins for wasm32-wasip2 (about a minute and a half the first time on 2 cores; cargo shows its progress)"
"$root/scripts/build-plugins.sh" >/dev/null
say "building the cordon binary (a first build compiles wasmtime: about 8 minutes on 2 cores, less on more)"
cargo build -p cordon-cli
# The Python interpreter that skills' scripts run in, and the example skill's
# tool, are built with componentize-py (from PyPI, installed once outside the clone).
say "installing componentize-py from PyPI, once, outside the clone"
eval "$("$root/scripts/toolchains.sh" python)"
target_dir="${CARGO_TARGET_DIR:-target}"
case "$target_dir" in
    /*) ;;
    *) target_dir="$root/$target_dir" ;;
esac
cordon="$target_dir/debug/cordon"
say "building the Python interpreter and the example skill's tool with componentize-py, and the shell's everyday commands (about two minutes)"
"$cordon" build plugins/python plugins/commands examples/skills/csv-report/tools
say "built in $((SECONDS - started)) s; the tour starts"

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

echo
echo "The coder agent (examples/demo/coder.toml) edits a scratch copy of examples/demo/project through"
echo "the dir sandbox backend and the built-in tools. It is untrusted, so its workspace is transactional:"
echo "file changes commit with each step and reach the folder only after the commit. Its bash call asks"
echo "for approval; the edits of that step have run and wait, held, with the run."
cp -r examples/demo/project "$scratch/project"
step run --agent examples/demo/coder.toml --workspace "$scratch/project" --run-id coder "Make the greeting friendlier" </dev/null
printf '\nThe folder while the run waits (src/greet.rs):\n'
cat "$scratch/project/src/greet.rs"
step runs diff coder
step runs resume coder --approve call-2-3 </dev/null
printf '\nThe folder after the run (src/greet.rs, CHANGELOG.md):\n'
cat "$scratch/project/src/greet.rs" "$scratch/project/CHANGELOG.md"

echo
echo "The lead agent (examples/demo/lead.toml) hands the work to two sub-agents, each a run of its own:"
echo "a reviewer in a file of its own, which denies itself every edit, and an editor written inline."
echo "Every call a sub-agent makes is judged by its own rules and by the lead's, so the lead's ask on"
echo "write holds inside the editor: the call waits at the root, named by its path, and the editor's"
echo "changes reach the folder only when the lead's step that called it commits."
cp -r examples/demo/project "$scratch/lead-project"
step run --agent examples/demo/lead.toml --workspace "$scratch/lead-project" --run-id lead "Make the greeting friendlier" </dev/null
step runs list
step runs show lead/call-1-1
printf '\nThe folder while the lead waits (src/greet.rs):\n'
cat "$scratch/lead-project/src/greet.rs"
step runs resume lead --approve call-2-1/call-1-2 </dev/null
printf '\nThe folder after the run (src/greet.rs, CHANGELOG.md):\n'
cat "$scratch/lead-project/src/greet.rs" "$scratch/lead-project/CHANGELOG.md"

echo
echo "The analyst agent (examples/demo/analyst.toml) reports on a table with the csv-report skill of"
echo "examples/skills. The model sees the skill's name and description until it activates it; then the"
echo "skill's folder is mounted read-only at /skills/csv-report, its Python script runs inside the sandbox,"
echo "its tool becomes callable, and its allowed-tools deny the write the model tries."
step skills list --skills examples/skills
cp -r examples/demo/sales "$scratch/sales"
step run --agent examples/demo/analyst.toml --workspace "$scratch/sales" --run-id analyst "Report on the sales table" </dev/null
printf '\nThe folder after the run: nothing was written.\n'
ls "$scratch/sales"

echo
echo "The fetcher agent (examples/demo/fetcher.toml) reads release notes from a web server on this"
echo "machine with the bundled http plugin. The plugin asks for any origin and reaches none until the"
echo "operator approves one; a server on loopback is reached only where the operator's config opens"
echo "that range. Its last call names an origin that was not approved, and is denied."
site_port=8765
if python3 -c "import socket, sys; socket.create_connection(('127.0.0.1', int(sys.argv[1])), 1)" "$site_port" 2>/dev/null; then
    echo "(skipped: port $site_port is taken, and the demo's scripted model fetches from it)"
    exit 0
fi
python3 -m http.server "$site_port" --bind 127.0.0.1 --directory examples/demo/site >/dev/null 2>&1 &
site=$!
trap 'kill "$site" 2>/dev/null || true' EXIT
for _ in $(seq 50); do
    python3 -c "import socket, sys; socket.create_connection(('127.0.0.1', int(sys.argv[1])), 1)" "$site_port" 2>/dev/null && break
    sleep 0.1
done
export CORDON_GRANTS="$scratch/grants.toml"
printf '[network]\n# The demo server runs on this machine.\nallow-ranges = ["127.0.0.0/8"]\n' >"$scratch/config.toml"
echo
echo "Before the operator approves an origin, every request is denied:"
step run --agent examples/demo/fetcher.toml --model scripted:examples/demo/fetcher-unapproved-script.toml --config "$scratch/config.toml" --run-id unapproved "What is new?" </dev/null
step grants approve http --origin "http://127.0.0.1:$site_port" --yes
step grants list
step run --agent examples/demo/fetcher.toml --config "$scratch/config.toml" --run-id fetcher "What is new?" </dev/null
