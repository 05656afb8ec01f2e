#!/usr/bin/env bash
# Regenerates include/switchboard.h from ffi/src with the pinned cbindgen, installing
# it first if missing (cargo install --locked). CI runs this, then
# `git diff --exit-code ffi/include/switchboard.h` to check the committed header is current.
set -euo pipefail
CBINDGEN_VERSION=0.29.4
here="$(cd "$(dirname "$0")" && pwd)"

cbindgen_bin="$(command -v cbindgen || true)"
if [ -z "$cbindgen_bin" ] || ! "$cbindgen_bin" --version | grep -qx "cbindgen $CBINDGEN_VERSION"; then
  echo "gen-header: installing cbindgen $CBINDGEN_VERSION" >&2
  cargo install cbindgen --version "$CBINDGEN_VERSION" --locked --quiet
  cbindgen_bin="${CARGO_HOME:-$HOME/.cargo}/bin/cbindgen"
fi

"$cbindgen_bin" --quiet --config "$here/cbindgen.toml" --crate switchboard-ffi \
  --output "$here/include/switchboard.h" "$here"
echo "gen-header: wrote $here/include/switchboard.h" >&2
