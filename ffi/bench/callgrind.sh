#!/usr/bin/env bash
# Instructions per message through the Rust API and through the C ABI (callgrind counts
# are stable on a busy machine where wall-clock times are not): runs the overhead bench
# (ffi/benches/overhead.rs) one path and one message at a time under callgrind, counting
# only inside its run_rust / run_ffi loops (10,000 messages each).
# Usage: ffi/bench/callgrind.sh     (honours CARGO_TARGET_DIR; needs valgrind)
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
cd "$here/.."
bin="$(cargo bench -p switchboard-ffi --bench overhead --no-run --message-format=json 2>/dev/null |
  sed -n 's/.*"executable":"\([^"]*overhead[^"]*\)".*/\1/p' | tail -1)"
[ -x "$bin" ] || { echo "cannot build the overhead bench" >&2; exit 1; }
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
names=("eth_getBalance request (115 B)" "notification (answer discarded)" "unknown method (-32601)"
       "parse error (-32700)" "batch of 10 requests (1.2 KB)")
count() { # count <path> <message index>: instructions per message
  SWB_BENCH_ONLY="$1" SWB_BENCH_MSG="$2" valgrind --tool=callgrind --quiet \
    --toggle-collect="*run_$1*" --callgrind-out-file="$tmp/cg.$1.$2" "$bin" >/dev/null 2>&1
  local total
  total="$(sed -n 's/^summary: \([0-9]*\).*/\1/p' "$tmp/cg.$1.$2")"
  echo $(( total / 10000 ))
}
printf '%-34s %12s %12s %12s\n' "message (instructions/message)" "Rust API" "C ABI" "overhead"
for i in 0 1 2 3 4; do
  r="$(count rust "$i")"; f="$(count ffi "$i")"
  printf '%-34s %12d %12d %12d\n' "${names[$i]}" "$r" "$f" "$((f - r))"
done
