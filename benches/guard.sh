#!/usr/bin/env bash
# Regression guard: switchboard's instructions per message (callgrind) on the core of
# the corpus (benches/corpus/), against a committed baseline. Instruction counts do not
# care about machine load, so a 5% threshold is meaningful on a busy 2-core machine.
#
#   bash benches/guard.sh              # compare; exit 1 if a workload is >5% above baseline
#   bash benches/guard.sh --update     # measure and rewrite this backend's baseline rows
#   bash benches/guard.sh --update W.. # measure only workloads W.. and replace (or add)
#                                      # just their rows, every other row kept as it is
#   bash benches/guard.sh --self-test  # measure once; the check must fail against the
#                                      # baseline lowered by 10% and pass against itself
#
# Environment: BASELINE (default benches/results/baseline.tsv), THRESHOLD (percent,
# default 5), JOBS (parallel valgrind runs, default 2), CARGO_TARGET_DIR,
# SWITCHBOARD_REALWORLD (the real-world documents, default ../shared/data/realworld
# beside the checkout). Without those documents their rows are skipped, loudly; under
# CI=true their absence fails the guard (CI always has them).
#
# Counts depend on the SIMD backend and on the compiler, so the baseline records both
# with every row and only like is compared with like: for another backend or another
# rustc the guard says so loudly and passes (exit 0) without comparing; run --update
# to record a baseline for them. The backend is the one switchboard picks under
# valgrind (which is what is counted).
#
# The harness is the `guard` binary, built without the `peers` feature: only switchboard
# and its own dependencies compile (about a minute from scratch on 2 cores), and it runs
# exactly the code `count switchboard <workload> <N>` runs for the report.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
target="${CARGO_TARGET_DIR:-$root/target}"
baseline="${BASELINE:-$root/benches/results/baseline.tsv}"
threshold="${THRESHOLD:-5}"
jobs="${JOBS:-2}"
mode="${1:-check}"
case "$mode" in
    check|--update|--self-test) ;;
    *) echo "usage: benches/guard.sh [--update [WORKLOAD...]|--self-test]" >&2; exit 2 ;;
esac
shift || true
only="$*"
if [[ -n "$only" && "$mode" != --update ]]; then
    echo "usage: benches/guard.sh [--update [WORKLOAD...]|--self-test] (workloads only with --update)" >&2
    exit 2
fi

# The guarded workloads: request to response on every corpus file, and classification
# only (parse:) on the ones that exercise the scanner most, the generated shapes
# (token-dense, number-dense) and the three real-world documents.
workloads="
parse:eth_getBalance.json
parse:batch10_eth_getBalance.json
parse:params_4k.json
parse:params_64k.json
parse:parse_error.json
parse:tokens_4k.json
parse:tokens_64k.json
parse:numbers_64k.json
parse:realworld/twitter.json
parse:realworld/citm_catalog.json
parse:realworld/canada.json
subtract_positional.json
subtract_named.json
notification.json
eth_getBalance.json
mcp_tools_call.json
batch10_eth_getBalance.json
batch100_eth_getBalance.json
batch10_subtract.json
params_4k.json
params_64k.json
parse_error.json
invalid_request.json
tokens_4k.json
tokens_64k.json
numbers_64k.json
"
if [[ -n "$only" ]]; then
    for w in $only; do
        [[ $'\n'"$workloads" == *$'\n'"$w"$'\n'* ]] \
            || { echo "guard: $w is not a guarded workload" >&2; exit 2; }
    done
    workloads="$only"
fi

# The real-world documents (not committed): beside the checkout, as the JSONTestSuite
# corpus is. The binary is told the same folder.
export SWITCHBOARD_REALWORLD="${SWITCHBOARD_REALWORLD:-$root/../shared/data/realworld}"
missing=""
for w in $workloads; do
    case "$w" in
        *realworld/*)
            f="${w#parse:}"
            [[ -f "$SWITCHBOARD_REALWORLD/${f#realworld/}" ]] || missing+=" $w"
            ;;
    esac
done
if [[ -n "$missing" ]]; then
    if [[ "${CI:-}" == true || "$mode" == --update ]]; then
        echo "guard: FAILED, the real-world documents are missing from $SWITCHBOARD_REALWORLD:$missing" >&2
        echo "guard: (they are shared/data/realworld beside the checkout; or set SWITCHBOARD_REALWORLD)" >&2
        exit 1
    fi
    printf '\n!!! guard: SKIPPED rows, no document in %s for:%s\n' "$SWITCHBOARD_REALWORLD" "$missing"
    echo "!!! (shared/data/realworld beside the checkout, or SWITCHBOARD_REALWORLD; CI=true fails without them)"
    kept=""
    for w in $workloads; do
        [[ " $missing " == *" $w "* ]] || kept+=" $w"
    done
    workloads="$kept"
fi

start=$(date +%s)
who=guard; source "$root/benches/need.sh"
need valgrind valgrind

# The same line tables as callgrind.sh (no effect on the code), so builds are shared.
export CARGO_PROFILE_RELEASE_DEBUG="${CARGO_PROFILE_RELEASE_DEBUG:-line-tables-only}"
cargo build --quiet --release -p switchboard-benches --no-default-features --bin guard
bin="$target/release/guard"
out="$(mktemp -d "${TMPDIR:-/tmp}/switchboard-guard.XXXXXX")"
trap 'rm -rf "$out"' EXIT

backend="$(valgrind --tool=none -q "$bin" backend)"
rustc_version="$(rustc --version)"

# N1 N2 for a workload, by size: (Ir(N2) - Ir(N1)) / (N2 - N1) is the per-message cost
# (the counts are exact, so a few messages do for the large ones: callgrind on the
# 2 MB documents is the guard's longest part).
counts() {
    local b f="${1#parse:}"
    case "$f" in
        realworld/*) b="$(wc -c <"$SWITCHBOARD_REALWORLD/${f#realworld/}")" ;;
        *) b="$(wc -c <"${SWITCHBOARD_CORPUS:-$root/benches/corpus}/$f")" ;;
    esac
    if (( b < 1000 )); then echo "100 2100"
    elif (( b < 8000 )); then echo "20 420"
    elif (( b < 32000 )); then echo "10 60"
    elif (( b < 200000 )); then echo "4 24"
    elif (( b < 1000000 )); then echo "2 7"
    else echo "1 3"
    fi
}

# Instructions per message of one workload, into $out/<index>.per.
measure_one() {
    local i="$1" w="$2" n1 n2 a b
    read -r n1 n2 <<<"$(counts "$w")"
    for n in "$n1" "$n2"; do
        if ! valgrind --tool=callgrind --callgrind-out-file="$out/$i.$n.out" "$bin" "$w" "$n" \
            >/dev/null 2>"$out/$i.$n.log"; then
            echo "guard: switchboard failed on $w:" >&2
            grep -v '^==' "$out/$i.$n.log" >&2 || true
            return 1
        fi
    done
    a="$(awk '/^(summary|totals):/ { print $2; exit }' "$out/$i.$n1.out")"
    b="$(awk '/^(summary|totals):/ { print $2; exit }' "$out/$i.$n2.out")"
    echo $(( (b - a) / (n2 - n1) )) >"$out/$i.per"
}

# Measures every workload ($jobs at a time) into $out/measured.tsv: workload<TAB>instr.
measure() {
    local i=0 pids=() w
    for w in $workloads; do
        measure_one "$i" "$w" &
        pids+=($!)
        i=$((i + 1))
        if (( ${#pids[@]} >= jobs )); then
            wait "${pids[0]}" || exit 1
            pids=("${pids[@]:1}")
        fi
    done
    for p in "${pids[@]}"; do wait "$p" || exit 1; done
    i=0
    : >"$out/measured.tsv"
    for w in $workloads; do
        printf '%s\t%s\n' "$w" "$(cat "$out/$i.per")" >>"$out/measured.tsv"
        i=$((i + 1))
    done
}

# Why baseline file $1 cannot be compared with this build (prints it loudly and
# returns 0), or returns 1 when it can.
skip_reason() {
    local file="$1" recorded
    if [[ ! -f "$file" ]]; then
        printf '\n!!! guard: SKIPPED: no baseline file %s (record one: bash benches/guard.sh --update)\n' "$file"
        return 0
    fi
    recorded="$(awk -F'\t' -v be="$backend" '!/^#/ && $1 == be { print $2; exit }' "$file")"
    if [[ -z "$recorded" ]]; then
        printf '\n!!! guard: SKIPPED: the baseline has no rows for the %s backend (it has: %s).\n' \
            "$backend" "$(awk -F'\t' '!/^#/ && $1 != "backend" { print $1 }' "$file" | sort -u | tr '\n' ' ')"
        echo "!!! Instruction counts differ between backends; record one with: bash benches/guard.sh --update"
        return 0
    fi
    if [[ "$recorded" != "$rustc_version" ]]; then
        printf '\n!!! guard: SKIPPED: the %s baseline was recorded with %s, this is %s.\n' \
            "$backend" "$recorded" "$rustc_version"
        echo "!!! Instruction counts change with the compiler; after checking, record anew with: bash benches/guard.sh --update"
        return 0
    fi
    return 1
}

# Compares $out/measured.tsv with baseline file $1 (of this backend and rustc); prints
# the table; returns 1 if a workload is more than $threshold% above its baseline.
compare() {
    local file="$1"
    awk -F'\t' -v be="$backend" -v th="$threshold" '
        FNR == NR { if ($0 !~ /^#/ && $1 == be) base[$3] = $4; next }
        {
            w = $1; now = $2
            if (!(w in base)) { printf "%-36s %10s %10d %8s  new (not in the baseline)\n", w, "-", now, "-"; next }
            ch = (now - base[w]) * 100.0 / base[w]
            st = "ok"
            if (ch > th) { st = "REGRESSION (> +" th "%)"; bad++ }
            else if (ch < -th) st = "better: consider --update"
            printf "%-36s %10d %10d %+7.1f%%  %s\n", w, base[w], now, ch, st
            seen[w] = 1
        }
        END {
            for (w in base) if (!(w in seen)) printf "%-36s %10d %10s %8s  not measured any more\n", w, base[w], "-", "-"
            exit (bad > 0)
        }
    ' "$file" "$out/measured.tsv"
}

print_header() {
    echo "switchboard instructions per message: backend $backend, $rustc_version"
    echo "baseline: ${baseline#"$root"/}, threshold +$threshold%"
    printf '%-36s %10s %10s %8s  %s\n' workload baseline now change status
}

# Writes the baseline: other backends' rows kept, this backend's replaced (with
# workloads named, only theirs: this backend's other rows kept in place, the new ones
# after them).
update() {
    local tmp="$out/new.tsv"
    if [[ -n "$only" && -f "$baseline" ]]; then
        recorded="$(awk -F'\t' -v be="$backend" '!/^#/ && $1 == be { print $2; exit }' "$baseline")"
        if [[ -n "$recorded" && "$recorded" != "$rustc_version" ]]; then
            echo "guard: the $backend rows were recorded with $recorded, this is $rustc_version:" >&2
            echo "guard: rows of two compilers would not compare; update them all (--update alone)" >&2
            exit 1
        fi
    fi
    {
        echo "# switchboard instructions per message (callgrind), written by: bash benches/guard.sh --update"
        echo "# Rows are compared only with runs of the same SIMD backend and rustc; last update $(date -u +%Y-%m-%d)."
        printf 'backend\trustc\tworkload\tinstr_per_msg\n'
        if [[ -f "$baseline" ]]; then
            if [[ -n "$only" ]]; then
                awk -F'\t' -v be="$backend" 'FNR == NR { m[$1] = 1; next }
                    !/^#/ && $1 != "backend" && !($1 == be && ($3 in m))' "$out/measured.tsv" "$baseline"
            else
                awk -F'\t' -v be="$backend" '!/^#/ && $1 != "backend" && $1 != be' "$baseline"
            fi
        fi
        awk -F'\t' -v be="$backend" -v rv="$rustc_version" '{ printf "%s\t%s\t%s\t%s\n", be, rv, $1, $2 }' \
            "$out/measured.tsv"
    } >"$tmp"
    mkdir -p "$(dirname "$baseline")"
    mv "$tmp" "$baseline"
    echo "guard: wrote ${baseline#"$root"/} for backend $backend ($rustc_version):"
    column -t -s $'\t' "$out/measured.tsv"
}

if [[ "$mode" == check ]] && skip_reason "$baseline"; then
    echo "guard: nothing compared (exit 0) after $(( $(date +%s) - start ))s"
    exit 0
fi
measure
case "$mode" in
    --update)
        update
        ;;
    --self-test)
        # The check must fail against the baseline lowered by 10%, and pass against a
        # baseline equal to this very measurement.
        awk -F'\t' -v be="$backend" -v rv="$rustc_version" \
            '{ printf "%s\t%s\t%s\t%d\n", be, rv, $1, $2 * 0.9 }' "$out/measured.tsv" >"$out/low.tsv"
        awk -F'\t' -v be="$backend" -v rv="$rustc_version" \
            '{ printf "%s\t%s\t%s\t%d\n", be, rv, $1, $2 }' "$out/measured.tsv" >"$out/same.tsv"
        print_header
        if compare "$out/low.tsv"; then
            echo "guard self-test: FAILED, a baseline 10% lower did not fail the check" >&2
            exit 1
        fi
        if ! compare "$out/same.tsv" >/dev/null; then
            echo "guard self-test: FAILED, the measurement does not pass against itself" >&2
            exit 1
        fi
        echo "guard self-test: ok (fails against -10%, passes against itself) in $(( $(date +%s) - start ))s"
        ;;
    check)
        print_header
        if compare "$baseline"; then
            echo "guard: ok in $(( $(date +%s) - start ))s"
        else
            echo "guard: FAILED, instructions per message went up by more than $threshold% (see above)." >&2
            echo "guard: if that is intended (say, a feature that costs), run: bash benches/guard.sh --update" >&2
            exit 1
        fi
        ;;
esac
