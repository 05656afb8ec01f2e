#!/usr/bin/env bash
# The C ABI under the memory checkers: every C test program (tests/c/test_*.c) and the
# C++ wrapper test, statically linked with libswitchboard, run
#   1. under AddressSanitizer + UndefinedBehaviorSanitizer (gcc -fsanitize=address,undefined,
#      the sanitizer runtimes linked statically and checked with nm), leaks included;
#   2. under valgrind memcheck: zero errors and zero leaks of any kind required.
#   3. the NDJSON example server under both, on a scripted session;
#   4. miri over the Rust unit tests of the exports, when a nightly with miri is installed;
#   5. the install story for real: ffi/install.sh (a release build) into a temporary
#      prefix with a multiarch LIBDIR, then a program built with `cc $(pkg-config --cflags
#      --libs switchboard)` and one fully static with `pkg-config --static`, the CMake
#      consumer project (ffi/tests/cmake-consumer) built against switchboard::switchboard
#      shared and static, and uninstall; a DESTDIR install and uninstall leaving nothing.
# Usage: ffi/check.sh            (from anywhere; honours CARGO_TARGET_DIR)
# Needs: gcc, g++, valgrind, nm, pkg-config, cmake. CI runs it from .ci/run.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here/.."

step() { printf '\n==> ffi/check.sh: %s\n' "$*"; }
fail() { echo "ffi/check.sh: FAILED: $*" >&2; exit 1; }

for tool in gcc g++ valgrind nm cargo pkg-config cmake; do
  command -v "$tool" >/dev/null || fail "$tool is not installed (apt-get install -y gcc g++ valgrind binutils pkg-config cmake)"
done

target_dir="$(cargo metadata --format-version 1 --no-deps |
  sed -n 's/.*"target_directory":"\([^"]*\)".*/\1/p')"
[ -n "$target_dir" ] || fail "cannot find the target directory"
out="$target_dir/ffi-check"
mkdir -p "$out"

step "build the static library (debug)"
cargo build -p switchboard-ffi --quiet
lib="$target_dir/debug/libswitchboard_ffi.a"
[ -f "$lib" ] || fail "$lib not built"
native=(-lpthread -ldl -lm -lrt -lutil)
strict=(-Wall -Wextra -Werror -pedantic -g -O1 -fno-omit-frame-pointer)

c_tests=(test_version.c test_session.c test_classifier.c test_errors.c test_threads.c test_params.c test_writer.c)
cpp_tests=(test_cpp.cpp)

build() { # build <mode> <source>: compiles into $out/<mode>/<name>
  local mode="$1" src="$2" name compiler std dir=ffi/tests/c
  case "$src" in examples/*) dir=ffi; ;; esac
  name="$(basename "${src%.*}")"
  case "$src" in
    *.cpp) compiler=g++; std=-std=c++17 ;;
    *) compiler=gcc; std=-std=c99 ;;
  esac
  local flags=()
  if [ "$mode" = asan ]; then
    flags=(-fsanitize=address,undefined -fno-sanitize-recover=all -static-libasan -static-libubsan)
  fi
  mkdir -p "$out/$mode"
  "$compiler" "$std" "${strict[@]}" "${flags[@]}" -D_POSIX_C_SOURCE=200809L -pthread \
    -I ffi/include -I ffi/tests/c -I ffi/examples "$dir/$src" "$lib" "${native[@]}" \
    -o "$out/$mode/$name"
  echo "$out/$mode/$name"
}

step "AddressSanitizer + UndefinedBehaviorSanitizer"
for src in "${c_tests[@]}" "${cpp_tests[@]}"; do
  bin="$(build asan "$src")"
  # The sanitizer runtimes must really be in the binary (defined, not just referenced).
  nm "$bin" > "$bin.nm"
  grep -Eq ' [TtWw] __asan_init$' "$bin.nm" || fail "$bin: ASan runtime not linked"
  grep -Eq ' [TtWw] __ubsan_handle_' "$bin.nm" || fail "$bin: UBSan runtime not linked"
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:halt_on_error=1:exitcode=86 \
  UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
  LSAN_OPTIONS=exitcode=87 \
    "$bin" > "$bin.log" 2>&1 || { cat "$bin.log"; fail "$src under ASan/UBSan"; }
  grep -q "checks passed" "$bin.log" || { cat "$bin.log"; fail "$src printed no pass line"; }
  echo "asan+ubsan ok: $src ($(grep 'checks passed' "$bin.log"))"
done

step "valgrind memcheck"
for src in "${c_tests[@]}" "${cpp_tests[@]}"; do
  bin="$(build valgrind "$src")"
  SWB_THREAD_MESSAGES=1000 valgrind --quiet --error-exitcode=99 --leak-check=full \
    --show-leak-kinds=all --errors-for-leak-kinds=all --track-origins=yes \
    --log-file="$bin.valgrind" "$bin" > "$bin.log" 2>&1 ||
    { cat "$bin.log" "$bin.valgrind"; fail "$src under valgrind"; }
  if [ -s "$bin.valgrind" ]; then cat "$bin.valgrind"; fail "$src: valgrind reported something"; fi
  grep -q "checks passed" "$bin.log" || { cat "$bin.log"; fail "$src printed no pass line"; }
  echo "valgrind ok: $src ($(grep 'checks passed' "$bin.log"))"
done

step "the NDJSON example server under ASan+UBSan and valgrind"
ndjson_input='{"jsonrpc":"2.0","method":"subtract","params":[42,23],"id":1}

{"jsonrpc":"2.0","method":"update","params":[1]}
[{"jsonrpc":"2.0","method":"hello","id":2},{"jsonrpc":"2.0","method":"echo","params":{"a":[1]},"id":3},5]
{"jsonrpc":"2.0","method":"fail","id":4}
{"jsonrpc": "2.0", "method": "foobar, "params": "bar", "baz]
[]'
ndjson_expected='{"jsonrpc":"2.0","result":19,"id":1}
[{"jsonrpc":"2.0","result":"hello, world","id":2},{"jsonrpc":"2.0","result":{"a":[1]},"id":3},{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid Request","data":{"reason":"must be an object"}},"id":null}]
{"jsonrpc":"2.0","error":{"code":1001,"message":"insufficient funds","data":{"balance":0}},"id":4}
{"jsonrpc":"2.0","error":{"code":-32700,"message":"Parse error","data":{"reason":"unexpected byte","offset":39}},"id":null}
{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid Request","data":{"reason":"empty batch"}},"id":null}'
bin="$(build asan examples/ndjson_server.c)"
got="$(printf '%s\n' "$ndjson_input" | ASAN_OPTIONS=detect_leaks=1:halt_on_error=1 UBSAN_OPTIONS=halt_on_error=1 "$bin" 2>/dev/null)" ||
  fail "ndjson_server under ASan/UBSan"
[ "$got" = "$ndjson_expected" ] || { printf 'got:\n%s\nexpected:\n%s\n' "$got" "$ndjson_expected"; fail "ndjson_server output (asan)"; }
echo "asan+ubsan ok: examples/ndjson_server.c"
bin="$(build valgrind examples/ndjson_server.c)"
got="$(printf '%s\n' "$ndjson_input" | valgrind --quiet --error-exitcode=99 --leak-check=full \
  --show-leak-kinds=all --errors-for-leak-kinds=all --log-file="$bin.valgrind" "$bin" 2>/dev/null)" ||
  { cat "$bin.valgrind"; fail "ndjson_server under valgrind"; }
[ -s "$bin.valgrind" ] && { cat "$bin.valgrind"; fail "ndjson_server: valgrind reported something"; }
[ "$got" = "$ndjson_expected" ] || { printf 'got:\n%s\n' "$got"; fail "ndjson_server output (valgrind)"; }
echo "valgrind ok: examples/ndjson_server.c"

step "install.sh (release build): pkg-config (shared, --static), the CMake package, DESTDIR, uninstall"
libdir=lib/x86_64-linux-gnu
prefix="$out/prefix"
rm -rf "$prefix"
bash ffi/install.sh "$prefix" --libdir "$libdir"
cat > "$out/pkgconfig_hello.c" <<'C'
#include <stdio.h>
#include <string.h>
#include <switchboard.h>
int main(void) {
  swb_router_builder *b; const swb_router *r; swb_session *s; const uint8_t *o; size_t n;
  const char *m = "{\"jsonrpc\":\"2.0\",\"method\":\"rpc.discover\",\"id\":1}";
  if (strcmp(swb_version(), SWB_VERSION)) return 3;
  if (swb_router_builder_new(&b) || swb_router_builder_build(b, &r) || swb_session_new(r, &s) ||
      swb_session_handle(s, (const uint8_t *)m, strlen(m), &o, &n)) return 2;
  printf("%.*s\n", (int)n, (const char *)o);
  swb_session_free(s); swb_router_free(r);
  return 0;
}
C
export PKG_CONFIG_PATH="$prefix/$libdir/pkgconfig"
cc -std=c99 -Wall -Wextra -Werror -pedantic "$out/pkgconfig_hello.c" \
  $(pkg-config --cflags --libs switchboard) -o "$out/pkgconfig_hello"
got="$(LD_LIBRARY_PATH="$prefix/$libdir" "$out/pkgconfig_hello")" || fail "the pkg-config program"
case "$got" in '{"jsonrpc":"2.0","result":{'*'"openrpc"'*) ;; *) fail "pkg-config program printed: $got" ;; esac
deps="$(LD_LIBRARY_PATH="$prefix/$libdir" ldd "$out/pkgconfig_hello")"
case "$deps" in *libswitchboard.so*) ;; *) fail "the pkg-config program does not use the shared library: $deps" ;; esac
# --static: a fully static program can only take libswitchboard.a, and links with the
# .pc's Libs.private alone.
cc -std=c99 -Wall -Wextra -Werror -pedantic "$out/pkgconfig_hello.c" -static \
  $(pkg-config --static --cflags --libs switchboard) -o "$out/pkgconfig_hello_static" 2>"$out/static-link.log" ||
  { cat "$out/static-link.log"; fail "pkg-config --static link"; }
got="$("$out/pkgconfig_hello_static")" || fail "the static pkg-config program"
case "$got" in '{"jsonrpc":"2.0","result":{'*) ;; *) fail "static program printed: $got" ;; esac
deps="$(LC_ALL=C ldd "$out/pkgconfig_hello_static" 2>&1 || true)"  # ldd exits 1 here
case "$deps" in *"not a dynamic executable"*) ;; *) fail "pkg-config --static did not link statically: $deps" ;; esac
# switchboard-static: the archive inside an otherwise dynamic program (no LD_LIBRARY_PATH).
cc -std=c99 -Wall -Wextra -Werror -pedantic "$out/pkgconfig_hello.c" \
  $(pkg-config --cflags --libs switchboard-static) -o "$out/pkgconfig_hello_archive"
got="$("$out/pkgconfig_hello_archive")" || fail "the switchboard-static program"
case "$got" in '{"jsonrpc":"2.0","result":{'*) ;; *) fail "switchboard-static program printed: $got" ;; esac
deps="$(ldd "$out/pkgconfig_hello_archive")"
case "$deps" in *libswitchboard*) fail "switchboard-static linked the shared library: $deps" ;; esac
unset PKG_CONFIG_PATH
echo "pkg-config ok: $(PKG_CONFIG_PATH="$prefix/$libdir/pkgconfig" pkg-config --modversion switchboard), shared, --static and switchboard-static"

command -v cmake >/dev/null || fail "cmake is not installed (apt-get install -y cmake)"
for variant in shared static; do
  build="$out/cmake-$variant"
  rm -rf "$build"
  flags=(); [ "$variant" = static ] && flags=(-DSWITCHBOARD_USE_STATIC=ON)
  cmake -S ffi/tests/cmake-consumer -B "$build" -DCMAKE_PREFIX_PATH="$prefix" "${flags[@]}" \
    > "$build.log" 2>&1 || { cat "$build.log"; fail "cmake configure ($variant)"; }
  cmake --build "$build" >> "$build.log" 2>&1 || { cat "$build.log"; fail "cmake build ($variant)"; }
  for bin in consumer_c consumer_cpp; do
    "$build/$bin" || fail "$bin ($variant)"
    deps="$(ldd "$build/$bin")"
    case "$deps" in *libswitchboard*) linked=shared ;; *) linked=static ;; esac
    [ "$linked" = "$variant" ] || fail "$bin: switchboard::switchboard linked the $linked library, not the $variant one"
  done
done
echo "cmake ok: find_package(switchboard CONFIG), switchboard::switchboard shared and static"
bash ffi/install.sh uninstall "$prefix" --libdir "$libdir"
left="$(find "$prefix" -mindepth 1)"; [ -z "$left" ] || fail "uninstall left: $left"

stage="$out/stage"
rm -rf "$stage"
DESTDIR="$stage" bash ffi/install.sh /usr --libdir lib64 --from "$target_dir/release"
grep -qx "prefix=/usr" "$stage/usr/lib64/pkgconfig/switchboard.pc" || fail "DESTDIR leaked into the .pc"
DESTDIR="$stage" bash ffi/install.sh uninstall /usr --libdir lib64
left="$(find "$stage" -mindepth 1)"; [ -z "$left" ] || fail "DESTDIR uninstall left: $left"
echo "install/uninstall ok: PREFIX, LIBDIR (multiarch, lib64), DESTDIR; nothing left behind"

step "miri over the ffi unit tests (Stacked Borrows, then Tree Borrows)"
if cargo +nightly miri --version >/dev/null 2>&1; then
  for model in "" "-Zmiri-tree-borrows"; do
    CARGO_TARGET_DIR="$target_dir/miri" RUSTFLAGS="--cfg switchboard_disable_simd" \
      MIRIFLAGS="$model" cargo +nightly miri test -p switchboard-ffi --lib --quiet ||
      fail "miri $model"
  done
else
  echo "!!! SKIPPED: miri is not installed (rustup +nightly component add miri) !!!"
fi

step "all checks passed"
