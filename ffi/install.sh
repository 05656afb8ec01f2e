#!/usr/bin/env bash
# Builds and installs the C ABI of switchboard under a prefix:
#   PREFIX/lib/libswitchboard.a
#   PREFIX/lib/libswitchboard.so.X.Y.Z, with the soname link (libswitchboard.so.0.MINOR
#     while the version is 0.x, libswitchboard.so.MAJOR after) and libswitchboard.so
#   PREFIX/include/switchboard.h, PREFIX/include/switchboard.hpp
#   PREFIX/lib/pkgconfig/switchboard.pc
# so that `cc app.c $(pkg-config --cflags --libs switchboard)` works with
# PKG_CONFIG_PATH=PREFIX/lib/pkgconfig (and LD_LIBRARY_PATH=PREFIX/lib at run time
# unless PREFIX/lib is a system library folder).
#
# Usage: ffi/install.sh PREFIX [--lib-dir DIR]
#   Without --lib-dir: `cargo build --release -p switchboard-ffi` (honours
#   CARGO_TARGET_DIR), then installs. With --lib-dir DIR: installs the
#   libswitchboard_ffi.a/.so already built in DIR (the tests use this).
#   DESTDIR, if set, is put before every installed path (packaging), not in the .pc.
set -euo pipefail

usage() { echo "usage: $0 PREFIX [--lib-dir DIR]" >&2; exit 2; }
[ $# -ge 1 ] || usage
prefix="$1"; shift
lib_dir=""
while [ $# -gt 0 ]; do
  case "$1" in
    --lib-dir) [ $# -ge 2 ] || usage; lib_dir="$2"; shift 2 ;;
    *) usage ;;
  esac
done
case "$prefix" in /*) ;; *) prefix="$(pwd)/$prefix" ;; esac

here="$(cd "$(dirname "$0")" && pwd)"
header="$here/include/switchboard.h"

# The version is the header's (the build refuses to compile if it drifts from Cargo.toml).
ver() { sed -n "s/^#define SWB_VERSION_$1 \([0-9][0-9]*\)$/\1/p" "$header"; }
major="$(ver MAJOR)"; minor="$(ver MINOR)"; patch="$(ver PATCH)"
[ -n "$major" ] && [ -n "$minor" ] && [ -n "$patch" ] || { echo "cannot read the version from $header" >&2; exit 1; }
version="$major.$minor.$patch"
if [ "$major" = 0 ]; then soname="libswitchboard.so.0.$minor"; else soname="libswitchboard.so.$major"; fi

if [ -z "$lib_dir" ]; then
  (cd "$here/.." && cargo build --release -p switchboard-ffi)
  target_dir="$(cd "$here/.." && cargo metadata --format-version 1 --no-deps |
    sed -n 's/.*"target_directory":"\([^"]*\)".*/\1/p')"
  lib_dir="$target_dir/release"
fi
for f in libswitchboard_ffi.a libswitchboard_ffi.so; do
  [ -f "$lib_dir/$f" ] || { echo "$lib_dir/$f not found" >&2; exit 1; }
done

dest="${DESTDIR:-}$prefix"
install -d "$dest/lib/pkgconfig" "$dest/include"
install -m 644 "$lib_dir/libswitchboard_ffi.a" "$dest/lib/libswitchboard.a"
install -m 755 "$lib_dir/libswitchboard_ffi.so" "$dest/lib/libswitchboard.so.$version"
ln -sfn "libswitchboard.so.$version" "$dest/lib/$soname"
ln -sfn "$soname" "$dest/lib/libswitchboard.so"
install -m 644 "$here/include/switchboard.h" "$here/include/switchboard.hpp" "$dest/include/"
# What a Rust static library needs from the system on Linux (for --static linking).
libs_private="-lpthread -ldl -lm -lrt -lutil -lgcc_s"
sed -e "s|@PREFIX@|$prefix|" -e "s|@VERSION@|$version|" -e "s|@LIBS_PRIVATE@|$libs_private|" \
  "$here/switchboard.pc.in" > "$dest/lib/pkgconfig/switchboard.pc"
echo "installed switchboard $version under $dest (soname $soname)"
