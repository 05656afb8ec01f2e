#!/usr/bin/env bash
# One command for the whole benchmark report: every stack on the corpus
# (benches/corpus/), request to response and classify only, plus the scaling curves.
# Writes benches/results/REPORT.md, benches/results/report.svg (request to response),
# report-parse.svg (classify) and report-external.svg (the stacks outside Rust), the raw
# measurements in benches/results/raw/, and the generated part of README.md's Benchmarks
# section.
#
#   bash benches/report.sh               # about 11 minutes on a shared 2-core machine
#   ROUNDS=1000 bash benches/report.sh   # a longer race (default 300 rounds of ~2 ms blocks)
#   README=0 bash benches/report.sh      # leave README.md alone
#   EXTERNAL=0 bash benches/report.sh    # without the stacks outside Rust (about 7 minutes)
#   EXT_ROUNDS=5 bash benches/report.sh  # more rounds for them (EXT_BLOCKS: blocks per round, 150)
#
# Steps, in this order so that each wall-clock measurement runs alone: build; check every
# stack's answers (count check); race (count race, interleaved); threads; the stacks
# outside Rust (benches/external/run.sh: switchboard's C ABI, libjson-rpc-cpp, Go's
# sourcegraph/jsonrpc2, each in its own harness, with its own answer checks, EXT_ROUNDS
# interleaved rounds (default 3) and then its callgrind counts, two at a time; it installs
# its packages, and whatever cannot be installed or built is reported as skipped);
# allocations (allocs); instruction counts (callgrind.sh, two valgrind runs at a time:
# counts do not care about load); report.py turns it all into markdown and SVG. Installs
# valgrind and python3 if missing. Honours CARGO_TARGET_DIR.
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
rm -f "$raw"/*.tsv "$raw"/meta.env "$raw"/external.skipped

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

ext_rounds="${EXT_ROUNDS:-3}"
ext_blocks="${EXT_BLOCKS:-150}"
ext_log="$target/external/report-run.log"
ext_start=$(date +%s)
if [[ "${EXTERNAL:-1}" == 0 ]]; then
    step "outside Rust: skipped (EXTERNAL=0)"
    echo "EXTERNAL=0: not run" >"$raw/external.skipped"
else
    step "outside Rust: C ABI, libjson-rpc-cpp, Go (benches/external/run.sh, $ext_rounds rounds; log: $ext_log)"
    mkdir -p "$(dirname "$ext_log")"
    # Only switchboard from the Rust side (its peers are in the race above); callgrind on
    # half run.sh's default message counts (exact for the C and C++ harnesses, Go's
    # within a few percent), two at a time.
    ext_rc=0
    ROUNDS="$ext_rounds" BLOCKS="$ext_blocks" RUST_PEERS=0 CG_SCALE="${EXT_CG_SCALE:-0.5}" JOBS=2 TSV="$raw/external.tsv" \
        bash benches/external/run.sh >"$ext_log" 2>&1 || ext_rc=$?
    if [[ $ext_rc == 0 ]]; then
        cp "$raw/external.tsv" "$results/external.tsv"
        grep -E '^(skipped|n/a):' "$ext_log" | cut -c1-160 | sed 's/^/    /' >&2 || true
    else
        why="benches/external/run.sh failed (exit $ext_rc): $(grep -v '^ *$' "$ext_log" | tail -1 | cut -c1-200)"
        echo "    skipped: $why; the C ABI, C++ and Go columns are marked skipped (full log: $ext_log)" >&2
        rm -f "$raw/external.tsv"
        echo "$why" >"$raw/external.skipped"
    fi
fi
ext_seconds=$(( $(date +%s) - ext_start ))

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
    echo "ext_rounds=$ext_rounds"
    echo "ext_blocks=$ext_blocks"
    echo "ext_seconds=$ext_seconds"
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
