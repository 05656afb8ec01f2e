#!/usr/bin/env bash
# switchboard's C ABI against libjson-rpc-cpp on the same messages, in one C++ program
# (ffi/bench/vs_jsonrpccpp.cpp), both in memory. Needs Debian's libjsonrpccpp-dev:
#   apt-get install -y libjsonrpccpp-dev
# Usage: ffi/bench/vs_jsonrpccpp.sh [ROUNDS]    (honours CARGO_TARGET_DIR)
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
cd "$here/.."
[ -f /usr/include/jsonrpccpp/server.h ] ||
  { echo "libjson-rpc-cpp is not installed: apt-get install -y libjsonrpccpp-dev" >&2; exit 1; }
cargo build --release -p switchboard-ffi --quiet
target_dir="$(cargo metadata --format-version 1 --no-deps | sed -n 's/.*"target_directory":"\([^"]*\)".*/\1/p')"
out="$target_dir/ffi-bench"
mkdir -p "$out"
g++ -std=c++17 -O2 -DNDEBUG -Wall -Wextra -I ffi/include ffi/bench/vs_jsonrpccpp.cpp \
  "$target_dir/release/libswitchboard_ffi.a" \
  -ljsonrpccpp-server -ljsonrpccpp-common -ljsoncpp -lpthread -ldl -lm -o "$out/vs_jsonrpccpp"
"$out/vs_jsonrpccpp" "$@"
