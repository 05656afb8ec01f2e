#!/usr/bin/env bash
# CI for the fuzz targets: installs cargo-fuzz (and the nightly toolchain) if
# missing, builds every target, replays fuzz/regressions/, then runs each target for
# $FUZZ_SECONDS (default 30) on the committed seeds (fuzz/seeds/) plus the
# JSONTestSuite files when present. Any crash, leak, timeout or failed assertion
# fails the script, and the reproducer is left in fuzz/artifacts/<target>/.
#
# Usage (from anywhere): bash fuzz/ci.sh [target...]
# Environment: FUZZ_SECONDS (per target), SWITCHBOARD_JSONTESTSUITE (corpus folder).
# Budget: about 2 min of build plus 10 x 30 s on one core.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here"
secs="${FUZZ_SECONDS:-30}"

if ! rustup toolchain list | grep -q '^nightly'; then
  rustup toolchain install nightly --profile minimal
fi
if ! cargo +nightly fuzz --version >/dev/null 2>&1; then
  cargo install cargo-fuzz --locked
fi

targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  mapfile -t targets < <(cargo +nightly fuzz list)
fi

echo "fuzz/ci.sh: building ${#targets[@]} targets"
cargo +nightly fuzz build -O

suite="${SWITCHBOARD_JSONTESTSUITE:-$here/../../shared/data/jsontestsuite/test_parsing}"
[ -d "$suite/test_parsing" ] && suite="$suite/test_parsing"
extra=()
if [ -d "$suite" ]; then
  extra+=("$suite")
else
  echo "fuzz/ci.sh: JSONTestSuite not found at $suite; seeds only" >&2
fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
failed=()
for t in "${targets[@]}"; do
  # Every reproducer of a fixed bug replays on every target first (-runs=0: just the
  # given files). New inputs go to a scratch corpus, so the seeds stay untouched.
  mkdir -p "$work/$t"
  regressions=()
  [ -n "$(ls -A regressions 2>/dev/null | grep -v '\.md$' || true)" ] && regressions+=("$here/regressions")
  echo "==> $t: ${secs}s"
  if ! cargo +nightly fuzz run -O "$t" "$work/$t" "$here/seeds" "${extra[@]}" "${regressions[@]}" -- \
      -dict="$here/jsonrpc.dict" -max_total_time="$secs" -max_len=32768 \
      -rss_limit_mb=2048 -timeout=10 -print_final_stats=1 > "$work/$t.log" 2>&1; then
    failed+=("$t")
    tail -n 60 "$work/$t.log"
  fi
  grep -E '^(stat::number_of_executed_units|stat::average_exec_per_sec|#[0-9]+ *DONE)' "$work/$t.log" || true
done

if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz/ci.sh: FAILED: ${failed[*]} (reproducers in $here/artifacts/)" >&2
  exit 1
fi
echo "fuzz/ci.sh: all ${#targets[@]} targets ran ${secs}s each without a crash"
