#!/usr/bin/env bash
# The MCP server's figures (see scripts/bench_mcp.py): a release `cordon`,
# the bundled jq plugin and the `test` fixture bundle in a scratch project
# whose permissions allow them, the compile cache warmed, and the official
# Python MCP SDK as the client.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
eval "$(scripts/toolchains.sh mcp)"
cargo build --release -q -p cordon-cli
scripts/build-plugins.sh >/dev/null
cargo build -q --profile guest --target wasm32-wasip2 -p cordon-guest-mcp-fixtures
project="$(mktemp -d)"
trap 'rm -rf "$project"' EXIT
mkdir -p "$project/plugins"
cp -r plugins/jq "$project/plugins/"
mkdir -p "$project/plugins/test"
cp "${CARGO_TARGET_DIR:-target}/wasm32-wasip2/guest/cordon_guest_mcp_fixtures.wasm" "$project/plugins/test/tool.wasm"
printf '[plugin]\nname = "test"\nversion = "0.1.0"\nkind = "tool"\ncomponent = "tool.wasm"\n\n[grants]\nelicit = true\n' \
    > "$project/plugins/test/plugin.toml"
printf 'default = "deny"\nallow = ["jq.*", "test.*"]\n' > "$project/permissions.toml"
cordon="$root/target/release/cordon"
(cd "$project" && "$cordon" grants approve test --plugins plugins --yes >/dev/null)
(cd "$project" && "$cordon" plugins check plugins >/dev/null)
cordon-mcp-python scripts/bench_mcp.py "$cordon" "$project"
