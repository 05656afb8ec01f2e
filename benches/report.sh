#!/usr/bin/env bash
# One command for the whole benchmark report: every stack on the corpus
# (benches/corpus/), request to response and classify only, plus the scaling curves.
# Writes benches/results/REPORT.md, benches/results/report.svg (request to response) and
# report-parse.svg (classify), the raw measurements in benches/results/raw/, and the
# generated part of README.md's Benchmarks section.
#
#   bash benches/report.sh               # about 7 minutes on a shared 2-core machine
#   ROUNDS=1000 bash benches/report.sh   # a longer race (default 300 rounds of ~2 ms blocks)
#   README=0 bash benches/report.sh      # leave README.md alone
#
# Steps, in this order so that the wall-clock race runs alone: build; check every stack's
# answers (count check); race (count race, interleaved); allocations (allocs); instruction
# counts (callgrind.sh, two valgrind runs at a time: counts do not care about load);
# report.py turns it all into markdown and SVG. Installs valgrind and python3 if missing.
# Honours CARGO_TARGET_DIR.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
target="${CARGO_TARGET_DIR:-$root/target}"
rounds="${ROUNDS:-300}"
results="$root/benches/results"
raw="$results/raw"
start=$(date +%s)
step() { printf '==> [%4ss] %s\n' "$(( $(date +%s) - start ))" "$*" >&2; }

who=report; source "$root/benches/need.sh"
need valgrind valgrind
need python3 python3

load="$(cut -d' ' -f1-3 /proc/loadavg)"
step "build (release, line tables: the same build callgrind.sh uses)"
export CARGO_PROFILE_RELEASE_DEBUG="${CARGO_PROFILE_RELEASE_DEBUG:-line-tables-only}"
cargo build --quiet --release -p switchboard-benches --bin count --bin allocs
count="$target/release/count"
allocs="$target/release/allocs"
mkdir -p "$raw"
rm -f "$raw"/*.tsv "$raw"/meta.env

scaling_race="lookup_10 lookup_100 lookup_1000 lookup_10000 rpc_batch_1 rpc_batch_10 rpc_batch_100 rpc_batch_1000 parse_params_100 parse_params_1000 parse_params_10000 parse_params_100000 parse_params_1000000"

step "check every stack's answers on the corpus"
"$count" check --tsv >"$raw/checks.tsv"
awk -F'\t' 'NR > 1 && $5 != "ok" { printf "    n/a: %s on %s: %s\n", $4, $2, $6 }' "$raw/checks.tsv" >&2

step "race: corpus, request to response and classify ($rounds rounds)"
"$count" race --tsv --rounds "$rounds" corpus parse:corpus >"$raw/race.tsv"
step "race: scaling (lookups, batches, params sizes)"
"$count" race --tsv --rounds "$rounds" $scaling_race | tail -n +2 >>"$raw/race.tsv"
step "threads: one router, 1 and 2 threads"
"$count" threads --tsv --rounds "$rounds" eth_getBalance.json >"$raw/threads.tsv"

step "allocations per message"
"$allocs" --tsv 1000 corpus parse:corpus >"$raw/allocs.tsv"

step "instruction counts (callgrind, 2 at a time)"
cg() { # TSV file, then the environment for callgrind.sh
    local file="$1"
    shift
    : >"$file"
    env "$@" TSV="$file" bash benches/callgrind.sh >"$file.log" 2>&1 \
        || { echo "callgrind.sh failed:" >&2; cat "$file.log" >&2; return 1; }
}
cg "$raw/cg-rpc.part" WORKLOADS=corpus &
p1=$!
cg "$raw/cg-parse.part" WORKLOADS=parse:corpus &
p2=$!
wait $p1
wait $p2
cg "$raw/cg-lookup.part" WORKLOADS="lookup_10 lookup_100 lookup_1000 lookup_10000" &
p1=$!
cg "$raw/cg-scale.part" STACKS="switchboard serde_json sonic_rs simd_json_tape simd_json_serde" \
    WORKLOADS="rpc_batch_1 rpc_batch_10 rpc_batch_100 rpc_batch_1000 parse_params_100 parse_params_1000 parse_params_10000 parse_params_100000 parse_params_1000000" &
p2=$!
wait $p1
wait $p2
{
    printf 'family\tworkload\tbytes\tstack\tinstr\tnote\n'
    cat "$raw/cg-rpc.part" "$raw/cg-parse.part" "$raw/cg-lookup.part" "$raw/cg-scale.part"
} >"$raw/callgrind.tsv"
rm -f "$raw"/*.part "$raw"/*.part.log

cpu="$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)"
{
    echo "date=$(date -u '+%Y-%m-%d %H:%M UTC')"
    echo "cpu=${cpu:-$(uname -m)} ($(uname -m))"
    echo "cores=$(nproc)"
    echo "backend=$("$count" backends | sed -E 's/^switchboard=([^ ]+).*/\1/')"
    echo "sonic_rs=$("$count" backends 2>/dev/null | sed -E 's/.*sonic-rs=([^ ]+).*/\1/')"
    echo "rustc=$(rustc --version)"
    echo "load=$load"
    echo "rounds=$rounds"
    echo "command=${ROUNDS:+ROUNDS=$ROUNDS }bash benches/report.sh"
    echo "seconds=$(( $(date +%s) - start ))"
} >"$raw/meta.env"

step "writing benches/results/REPORT.md and the charts"
if [[ "${README:-1}" == 0 ]]; then
    python3 benches/report.py "$raw" "$results"
else
    python3 benches/report.py "$raw" "$results" README.md
fi
step "done: benches/results/REPORT.md"
