#!/usr/bin/env bash
# A long fuzzing campaign: runs each target for $CAMPAIGN_SECONDS (default 1200 = 20 min)
# one after the other on one core, growing the persistent corpus fuzz/corpus/<target>
# (gitignored), and prints one summary line per target: executions, exec/s, coverage
# (cov = edges, ft = features) at start and end, and whether it crashed.
#
# Usage: bash fuzz/campaign.sh [target...]   (all targets when none given)
# Output: fuzz/campaign-<target>.log (libFuzzer's own) and the summary on stdout.
# Crash reproducers land in fuzz/artifacts/<target>/; copy them to fuzz/regressions/
# and add a test, then `bash fuzz/ci.sh` replays them on every target.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here"
secs="${CAMPAIGN_SECONDS:-1200}"
targets=("$@")
[ ${#targets[@]} -eq 0 ] && mapfile -t targets < <(cargo +nightly fuzz list)
cargo +nightly fuzz build -O
suite="${SWITCHBOARD_JSONTESTSUITE:-$here/../../shared/data/jsontestsuite/test_parsing}"
extra=()
[ -d "$suite" ] && extra+=("$suite")
for t in "${targets[@]}"; do
  mkdir -p "corpus/$t"
  log="campaign-$t.log"
  start=$(date +%s)
  rc=0
  cargo +nightly fuzz run -O "$t" "corpus/$t" "$here/seeds" "${extra[@]}" -- \
    -dict="$here/jsonrpc.dict" -max_total_time="$secs" -max_len=32768 \
    -rss_limit_mb=2048 -timeout=10 -print_final_stats=1 > "$log" 2>&1 || rc=$?
  end=$(date +%s)
  inited=$(grep -m1 -E '^#[0-9]+[[:space:]]+INITED' "$log" | grep -oE 'cov: [0-9]+ ft: [0-9]+' || echo '?')
  done_=$(grep -E '^#[0-9]+[[:space:]]+DONE' "$log" | tail -1 | grep -oE 'cov: [0-9]+ ft: [0-9]+' || echo '?')
  execs=$(grep -oE 'stat::number_of_executed_units: [0-9]+' "$log" | grep -oE '[0-9]+$' || echo '?')
  rate=$(grep -oE 'stat::average_exec_per_sec: +[0-9]+' "$log" | grep -oE '[0-9]+$' || echo '?')
  files=$(ls "corpus/$t" | wc -l)
  verdict=$([ "$rc" -eq 0 ] && echo "no crash" || echo "FAILED rc=$rc (see $log, artifacts/$t)")
  echo "$t: $((end - start)) s, $execs execs, $rate exec/s, start [$inited] end [$done_], corpus $files files, $verdict"
done
