#!/usr/bin/env bash
# Builds and installs the C ABI of switchboard under a prefix, or uninstalls it:
#   PREFIX/LIBDIR/libswitchboard.a
#   PREFIX/LIBDIR/libswitchboard.so.X.Y.Z, with the soname link (libswitchboard.so.0.MINOR
#     while the version is 0.x, libswitchboard.so.MAJOR after) and libswitchboard.so
#   PREFIX/include/switchboard.h, PREFIX/include/switchboard.hpp
#   PREFIX/LIBDIR/pkgconfig/switchboard.pc (-lswitchboard: the shared library, or the
#     archive in a fully -static link with --static), switchboard-static.pc (the archive
#     by its path, for a dynamic program that carries switchboard inside)
#   PREFIX/LIBDIR/cmake/switchboard/switchboardConfig.cmake, switchboardConfigVersion.cmake
# so that `cc app.c $(pkg-config --cflags --libs switchboard)` works with
# PKG_CONFIG_PATH=PREFIX/LIBDIR/pkgconfig, and `find_package(switchboard CONFIG REQUIRED)`
# with CMAKE_PREFIX_PATH=PREFIX (LD_LIBRARY_PATH=PREFIX/LIBDIR at run time unless it is a
# system library folder).
#
# Usage: ffi/install.sh [install|uninstall] [PREFIX] [--libdir DIR] [--from DIR]
#   PREFIX:   the prefix (or the PREFIX variable; default /usr/local).
#   --libdir: the library folder relative to PREFIX (or the LIBDIR variable; default lib),
#             e.g. lib/x86_64-linux-gnu (Debian multiarch) or lib64 (Fedora).
#   --from:   install the libswitchboard_ffi.a/.so already built in DIR (the tests use
#             this); without it, `cargo build --release -p switchboard-ffi` first
#             (honours CARGO_TARGET_DIR).
#   DESTDIR, if set, is put before every installed path (packaging), not in the .pc or the
#   CMake files. `uninstall` removes exactly the files `install` writes (same PREFIX, LIBDIR
#   and DESTDIR), then the folders that are left empty (up to PREFIX; with DESTDIR, up to
#   DESTDIR).
set -euo pipefail

usage() { echo "usage: $0 [install|uninstall] [PREFIX] [--libdir DIR] [--from DIR]" >&2; exit 2; }
action=install
case "${1:-}" in install | uninstall) action="$1"; shift ;; esac
prefix="${PREFIX:-/usr/local}"
libdir="${LIBDIR:-lib}"
from=""
while [ $# -gt 0 ]; do
  case "$1" in
    --libdir) [ $# -ge 2 ] || usage; libdir="$2"; shift 2 ;;
    --from) [ $# -ge 2 ] || usage; from="$2"; shift 2 ;;
    -*) usage ;;
    *) prefix="$1"; shift ;;
  esac
done
case "$prefix" in /*) ;; *) prefix="$(pwd)/$prefix" ;; esac
prefix="${prefix%/}"
# LIBDIR is relative to the prefix (an absolute one under it is made relative).
case "$libdir" in "$prefix"/*) libdir="${libdir#"$prefix"/}" ;; /*)
  echo "$0: LIBDIR $libdir is not under PREFIX $prefix" >&2; exit 2 ;; esac
libdir="${libdir%/}"
case "/$libdir/" in *"/../"* | *"/./"* | //) echo "$0: LIBDIR must be a plain relative path" >&2; exit 2 ;; esac

here="$(cd "$(dirname "$0")" && pwd)"
header="$here/include/switchboard.h"

# The version is the header's (the build refuses to compile if it drifts from Cargo.toml).
ver() { sed -n "s/^#define SWB_VERSION_$1 \([0-9][0-9]*\)$/\1/p" "$header"; }
major="$(ver MAJOR)"; minor="$(ver MINOR)"; patch="$(ver PATCH)"
[ -n "$major" ] && [ -n "$minor" ] && [ -n "$patch" ] || { echo "cannot read the version from $header" >&2; exit 1; }
version="$major.$minor.$patch"
if [ "$major" = 0 ]; then soname="libswitchboard.so.0.$minor"; else soname="libswitchboard.so.$major"; fi

dest="${DESTDIR:-}$prefix"
cmake_dir="$libdir/cmake/switchboard"
# Every file install writes, relative to the prefix (uninstall removes exactly these).
files=(
  "$libdir/libswitchboard.a" "$libdir/libswitchboard.so.$version" "$libdir/$soname"
  "$libdir/libswitchboard.so" include/switchboard.h include/switchboard.hpp
  "$libdir/pkgconfig/switchboard.pc" "$libdir/pkgconfig/switchboard-static.pc"
  "$cmake_dir/switchboardConfig.cmake"
  "$cmake_dir/switchboardConfigVersion.cmake"
)

if [ "$action" = uninstall ]; then
  for f in "${files[@]}"; do rm -f "$dest/$f"; done
  # The folders left empty, deepest first; with DESTDIR the prefix's own folders too.
  stop="$prefix"; [ -n "${DESTDIR:-}" ] && stop=""
  for d in "$cmake_dir" "$libdir/pkgconfig" include "$libdir"; do
    while [ "$d" != . ] && [ -d "$dest/$d" ] && rmdir "$dest/$d" 2>/dev/null; do d="$(dirname "$d")"; done
  done
  if [ -z "$stop" ]; then
    d="$prefix"
    while [ "$d" != / ] && rmdir "$DESTDIR$d" 2>/dev/null; do d="$(dirname "$d")"; done
  fi
  echo "uninstalled switchboard $version from $dest (libdir $libdir)"
  exit 0
fi

if [ -z "$from" ]; then
  (cd "$here/.." && cargo build --release -p switchboard-ffi)
  target_dir="$(cd "$here/.." && cargo metadata --format-version 1 --no-deps |
    sed -n 's/.*"target_directory":"\([^"]*\)".*/\1/p')"
  from="$target_dir/release"
fi
for f in libswitchboard_ffi.a libswitchboard_ffi.so; do
  [ -f "$from/$f" ] || { echo "$from/$f not found" >&2; exit 1; }
done

install -d "$dest/$libdir/pkgconfig" "$dest/$cmake_dir" "$dest/include"
install -m 644 "$from/libswitchboard_ffi.a" "$dest/$libdir/libswitchboard.a"
install -m 755 "$from/libswitchboard_ffi.so" "$dest/$libdir/libswitchboard.so.$version"
ln -sfn "libswitchboard.so.$version" "$dest/$libdir/$soname"
ln -sfn "$soname" "$dest/$libdir/libswitchboard.so"
install -m 644 "$here/include/switchboard.h" "$here/include/switchboard.hpp" "$dest/include/"
# What the Rust static library needs from the system on Linux (rustc's
# --print native-static-libs, less -lgcc_s and -lc: the compiler driver adds those, and
# -lgcc_s would break a fully -static link, where it uses libgcc_eh instead).
libs_private="-lpthread -ldl -lm -lrt -lutil"
subst() {
  sed -e "s|@PREFIX@|$prefix|g" -e "s|@LIBDIR@|$libdir|g" -e "s|@VERSION@|$version|g" \
    -e "s|@SONAME@|$soname|g" -e "s|@MAJOR@|$major|g" -e "s|@MINOR@|$minor|g" -e "s|@LIBS_PRIVATE@|$libs_private|g" -e "s|@UP@|$up|g" "$1"
}
# From the CMake folder back up to the prefix: the config finds the files relative to
# itself, so an installed tree can be moved (and DESTDIR staging needs nothing else).
up="$(echo "$cmake_dir" | sed -e 's|[^/][^/]*|..|g')"
subst "$here/switchboard.pc.in" > "$dest/$libdir/pkgconfig/switchboard.pc"
subst "$here/switchboard-static.pc.in" > "$dest/$libdir/pkgconfig/switchboard-static.pc"
subst "$here/cmake/switchboardConfig.cmake.in" > "$dest/$cmake_dir/switchboardConfig.cmake"
subst "$here/cmake/switchboardConfigVersion.cmake.in" > "$dest/$cmake_dir/switchboardConfigVersion.cmake"
chmod 644 "$dest/$libdir/pkgconfig"/switchboard*.pc "$dest/$cmake_dir"/*.cmake
echo "installed switchboard $version under $dest (libdir $libdir, soname $soname)"
