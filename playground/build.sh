#!/usr/bin/env bash
# Builds the playground as plain static files (any static host serves them, and
# `switchboard serve --playground DIR` serves them next to the JSON-RPC endpoint):
#
#   playground/build.sh [OUT_DIR]      (default target/playground)
#
# OUT_DIR gets index.html, app.js, examples.json, switchboard_playground.js (the
# wasm-bindgen glue) and switchboard_playground_bg.wasm (the core and the demo
# methods, for wasm32-unknown-unknown).
#
# Needs the wasm32-unknown-unknown target (installed with rustup when missing) and
# wasm-bindgen-cli of exactly the version of the wasm-bindgen crate in Cargo.lock:
# installed from crates.io (`cargo install --locked`) into target/wasm-tools once.
#
# Environment:
#   PLAYGROUND_SIMD=1   (default) the core's SIMD128 kernel (`-C target-feature=+simd128`):
#                       every current browser runs wasm SIMD; 1.7 to 6 times faster on
#                       the corpus's messages of 100 B to 64 KB (README, Playground)
#   PLAYGROUND_SIMD=0   the scalar kernels (a module every wasm engine loads)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
cd "$root"
out="${1:-target/playground}"

if ! rustup target list --installed 2>/dev/null | grep -qx wasm32-unknown-unknown; then
    rustup target add wasm32-unknown-unknown
fi

version="$(awk '/^name = "wasm-bindgen"$/ { getline; gsub(/version = |"/, ""); print; exit }' Cargo.lock)"
[ -n "$version" ] || { echo "playground/build.sh: no wasm-bindgen in Cargo.lock" >&2; exit 1; }
tools="$root/target/wasm-tools"
bindgen="$tools/bin/wasm-bindgen"
if [ "$("$bindgen" --version 2>/dev/null)" != "wasm-bindgen $version" ]; then
    # --locked: the versions the CLI's release was tested with. When the registry no
    # longer has one of them (a yanked crate), resolve afresh, saying so.
    cargo install wasm-bindgen-cli --version "=$version" --locked --root "$tools" \
        || { echo "playground/build.sh: the locked build of wasm-bindgen-cli $version failed; resolving its dependencies afresh" >&2
             cargo install wasm-bindgen-cli --version "=$version" --root "$tools"; }
fi

case "${PLAYGROUND_SIMD:-1}" in
    1) flags="-C target-feature=+simd128" kernels=simd128 ;;
    0) flags="" kernels=scalar ;;
    *) echo "playground/build.sh: PLAYGROUND_SIMD is 0 or 1, not '$PLAYGROUND_SIMD'" >&2; exit 1 ;;
esac
# The `wasm-release` profile (Cargo.toml): release, with LTO and one codegen unit.
# The flags go to the wasm target only (not to build scripts and proc macros).
CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUSTFLAGS="$flags" \
    cargo build -p switchboard-playground --target wasm32-unknown-unknown --profile wasm-release
mkdir -p "$out"
"$bindgen" --target web --no-typescript --out-dir "$out" \
    target/wasm32-unknown-unknown/wasm-release/switchboard_playground.wasm
cp "$here"/site/index.html "$here"/site/app.js "$here"/site/examples.json "$out"/
echo "playground: $(cd "$out" && pwd) ($(stat -c %s "$out/switchboard_playground_bg.wasm") bytes of wasm, $kernels kernels)"
