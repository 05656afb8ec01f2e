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
#   ROWS="parse:realworld tokens_64k.json" bash benches/report.sh
#       # only these rows (workloads or groups: corpus, parse:corpus, realworld,
#       # parse:realworld), measured now (check, race, allocations, instruction counts)
#       # and put in place of their old rows in benches/results/raw/; every other row is
#       # kept from the last full run, REPORT.md says which rows are newer, README.md is
#       # left alone (no scaling, threads or external steps)
#
# The classify family also runs the real-world documents (parse:realworld, read from
# ../shared/data/realworld beside the checkout or $SWITCHBOARD_REALWORLD; fewer
# messages for the allocation counts: they are 0.6-2.3 MB each).
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

# ROWS: measure only those rows, then merge them into the raw files of the last run.
# shellcheck disable=SC2086
if [[ -n "${ROWS:-}" ]]; then
    [[ -f "$raw/meta.env" && -f "$raw/race.tsv" ]] \
        || { echo "report: ROWS needs the raw files of a full run in $raw" >&2; exit 1; }
    new="$(mktemp -d "${TMPDIR:-/tmp}/switchboard-report.XXXXXX")"
    trap 'rm -rf "$new"' EXIT
    # shellcheck disable=SC2086
    {
        step "rows: $ROWS: check every stack's answers"
        "$count" check --tsv $ROWS >"$new/checks.tsv"
        awk -F'\t' 'NR > 1 && $5 != "ok" { printf "    n/a: %s on %s: %s\n", $4, $2, $6 }' "$new/checks.tsv" >&2
        step "rows: race ($rounds rounds)"
        "$count" race --tsv --rounds "$rounds" $ROWS >"$new/race.tsv"
        step "rows: allocations per message"
        small="" big=""
        for w in $ROWS; do
            case "$w" in validate:*) ;; *realworld*) big+=" $w" ;; *) small+=" $w" ;; esac
        done
        printf 'family\tworkload\tbytes\tstack\tallocs\treallocs\tfrees\tbytes_allocated\tnote\n' >"$new/allocs.tsv"
        [[ -z "$small" ]] || "$allocs" --tsv 1000 $small | tail -n +2 >>"$new/allocs.tsv"
        [[ -z "$big" ]] || "$allocs" --tsv 20 $big | tail -n +2 >>"$new/allocs.tsv"
        step "rows: instruction counts (callgrind)"
        : >"$new/cg.part"
        TSV="$new/cg.part" WORKLOADS="$ROWS" bash benches/callgrind.sh >"$new/cg.log" 2>&1 \
            || { echo "callgrind.sh failed:" >&2; cat "$new/cg.log" >&2; exit 1; }
        printf 'family\tworkload\tbytes\tstack\tinstr\tnote\n' >"$new/callgrind.tsv"
        cat "$new/cg.part" >>"$new/callgrind.tsv"
    }
    # The measured workloads replace their rows (column 2 is the workload in every file);
    # the new ones go after the rows of their family.
    tail -n +2 "$new/race.tsv" | cut -f2 | sort -u >"$new/names"
    for f in checks race allocs callgrind; do
        python3 - "$raw/$f.tsv" "$new/$f.tsv" "$new/names" <<'PY'
import sys
old_path, new_path, names_path = sys.argv[1:]
names = set(open(names_path).read().split())
old = open(old_path).read().splitlines()
new = open(new_path).read().splitlines()
header, rows = old[0], [r for r in old[1:] if r.split("\t")[1] not in names]
fresh = [r for r in new[1:] if r.strip()]
out = []
for fam in dict.fromkeys([r.split("\t")[0] for r in rows + fresh]):
    out += [r for r in rows if r.split("\t")[0] == fam]
    out += [r for r in fresh if r.split("\t")[0] == fam]
open(old_path, "w").write("\n".join([header] + out) + "\n")
PY
    done
    {
        grep -v '^rows_' "$raw/meta.env"
        # An earlier ROWS run's rows that this one did not measure again stay listed,
        # with their own date.
        prev_names="$(sed -n 's/^rows_names=//p' "$raw/meta.env")"
        if [[ -n "$prev_names" ]]; then
            kept="$(tr ' ' '\n' <<<"$prev_names" | grep -vxF -f "$new/names" | tr '\n' ' ' | sed 's/ $//' || true)"
            earlier="$(sed -n 's/^rows_earlier=//p' "$raw/meta.env")"
            [[ -z "$kept" ]] || earlier="${earlier:+$earlier; }$(sed -n 's/^rows_date=//p' "$raw/meta.env"): $kept"
            [[ -z "$earlier" ]] || echo "rows_earlier=$earlier"
        fi
        echo "rows_date=$(date -u '+%Y-%m-%d %H:%M UTC')"
        echo "rows_names=$(tr '\n' ' ' <"$new/names" | sed 's/ $//')"
        echo "rows_command=ROWS=\"$ROWS\"${ROUNDS:+ ROUNDS=$ROUNDS} bash benches/report.sh"
        echo "rows_load=$load"
        echo "rows_seconds=$(( $(date +%s) - start ))"
    } >"$new/meta.env"
    cp "$new/meta.env" "$raw/meta.env"
    step "writing benches/results/REPORT.md and the charts (README.md left alone)"
    python3 benches/report.py "$raw" "$results"
    step "done: benches/results/REPORT.md"
    exit 0
fi

rm -f "$raw"/*.tsv "$raw"/meta.env "$raw"/external.skipped

# Validation only (`validate:`) on the larger messages: serde_json's IgnoredAny beside
# the classify rows' request struct.
validate_rows="validate:params_4k.json validate:params_64k.json validate:tokens_4k.json validate:tokens_64k.json validate:numbers_64k.json validate:realworld"
scaling_race="lookup_10 lookup_100 lookup_1000 lookup_10000 rpc_batch_1 rpc_batch_10 rpc_batch_100 rpc_batch_1000 parse_params_100 parse_params_1000 parse_params_10000 parse_params_100000 parse_params_1000000"

step "check every stack's answers on the corpus"
"$count" check --tsv corpus parse:corpus parse:realworld $validate_rows >"$raw/checks.tsv"
awk -F'\t' 'NR > 1 && $5 != "ok" { printf "    n/a: %s on %s: %s\n", $4, $2, $6 }' "$raw/checks.tsv" >&2

step "race: corpus, request to response and classify ($rounds rounds)"
"$count" race --tsv --rounds "$rounds" corpus parse:corpus parse:realworld $validate_rows >"$raw/race.tsv"
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
"$allocs" --tsv 20 parse:realworld | tail -n +2 >>"$raw/allocs.tsv"

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
cg "$raw/cg-parse.part" WORKLOADS="parse:corpus parse:realworld $validate_rows" &
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
    echo "command=${ROUNDS:+ROUNDS=$ROUNDS }${EXTERNAL:+EXTERNAL=$EXTERNAL }bash benches/report.sh"
    echo "seconds=$(( $(date +%s) - start ))"
} >"$raw/meta.env"

step "writing benches/results/REPORT.md and the charts"
if [[ "${README:-1}" == 0 ]]; then
    python3 benches/report.py "$raw" "$results"
else
    python3 benches/report.py "$raw" "$results" README.md
fi
step "done: benches/results/REPORT.md"
