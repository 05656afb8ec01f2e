#!/usr/bin/env bash
# The C ABI under the memory checkers: every C test program (tests/c/test_*.c) and the
# C++ wrapper test, statically linked with libswitchboard, run
#   1. under AddressSanitizer + UndefinedBehaviorSanitizer (gcc -fsanitize=address,undefined,
#      the sanitizer runtimes linked statically and checked with nm), leaks included;
#   2. under valgrind memcheck: zero errors and zero leaks of any kind required.
# Usage: ffi/check.sh            (from anywhere; honours CARGO_TARGET_DIR)
# Needs: gcc, g++, valgrind, nm. CI runs it from .ci/run.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here/.."

step() { printf '\n==> ffi/check.sh: %s\n' "$*"; }
fail() { echo "ffi/check.sh: FAILED: $*" >&2; exit 1; }

for tool in gcc g++ valgrind nm cargo; do
  command -v "$tool" >/dev/null || fail "$tool is not installed (apt-get install -y gcc g++ valgrind binutils)"
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

c_tests=(test_version.c test_session.c test_classifier.c test_errors.c test_threads.c)
cpp_tests=(test_cpp.cpp)

build() { # build <mode> <source>: compiles into $out/<mode>/<name>
  local mode="$1" src="$2" name compiler std
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
    -I ffi/include -I ffi/tests/c "ffi/tests/c/$src" "$lib" "${native[@]}" \
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

step "all memory checks passed"
