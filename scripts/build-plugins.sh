#!/usr/bin/env bash
# Builds the bundled plugins for wasm32-wasip2 and copies each component into its
# bundle folder as plugins/<name>/<name>.wasm, next to its plugin.toml.
#
# They are built by the build script of the `cordon-bundled` crate, the same
# build that records their digests in `cordon`: a bundle counts as bundled with
# Cordon only when its component is, byte for byte, the one this build made.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

plugins=(jq files notes redactor guard budget dir http)
target_dir="${CARGO_TARGET_DIR:-target}"
case "$target_dir" in
    /*) ;;
    *) target_dir="$root/$target_dir" ;;
esac

rustup target add wasm32-wasip2 >/dev/null 2>&1 || {
    echo "error: could not add the wasm32-wasip2 target; run \`rustup target add wasm32-wasip2\`" >&2
    exit 1
}

echo "build-plugins.sh: building the bundled plugins for wasm32-wasip2 in $target_dir/guests (a first build takes a few minutes; cargo shows each crate)" >&2
# The same build cordon-bundled's build script runs, with cargo's progress
# shown; the build script then finds them built and records their digests.
cargo run --quiet -p cordon-guest-build >/dev/null
cargo build -p cordon-bundled
built="$target_dir/guests/wasm32-wasip2/guest"

for name in "${plugins[@]}"; do
    cp "$built/cordon_plugin_$name.wasm" "plugins/$name/$name.wasm"
    echo "plugins/$name/$name.wasm"
done

# The memory bundle runs the dir backend's component under its own manifest.
cp "$built/cordon_plugin_dir.wasm" plugins/memory/memory.wasm
echo "plugins/memory/memory.wasm"
