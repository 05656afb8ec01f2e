#!/usr/bin/env bash
# Instructions per message, measured with callgrind (stable on a noisy machine).
#
# For each stack and workload it runs the `count` harness (release build) for two
# message counts N1 < N2 and prints (Ir(N2) - Ir(N1)) / (N2 - N1): process
# start-up, set-up and first-message warm-up cancel out.
#
#   benches/callgrind.sh                    # the whole table: classify, rpc_*, lookup_*
#   STACKS="switchboard" WORKLOADS="eth_getBalance" benches/callgrind.sh
#   WORKLOADS="rpc_eth_getBalance rpc_subtract" benches/callgrind.sh
#       # request bytes to response bytes per dispatch stack; the ratio
#       # columns are each stack's count over switchboard's, serde_json's
#       # (hand-written server) and jsonrpsee_callback's
#   STACKS="switchboard switchboard_typed serde_json" WORKLOADS=corpus benches/callgrind.sh
#       # typed handlers (switchboard_typed, only when named) against the raw
#       # view and the hand-written serde_json server
#   WORKLOADS="lookup_10 lookup_1000" benches/callgrind.sh
#       # one method lookup (20-byte name among N), per table
#   WORKLOADS="corpus parse:corpus" benches/callgrind.sh
#       # every corpus file (benches/corpus/), request to response and classify only;
#       # single files as WORKLOADS="eth_getBalance.json parse:params_4k.json"
#   WORKLOADS="parse:realworld" benches/callgrind.sh
#       # the real-world documents (twitter, citm_catalog, canada; read from
#       # ../shared/data/realworld or $SWITCHBOARD_REALWORLD), classify only;
#       # single ones as WORKLOADS=parse:realworld/canada.json; validate:FILE (and
#       # validate:corpus, validate:realworld): the same messages, validation only
#   TSV=out.tsv WORKLOADS=corpus benches/callgrind.sh
#       # also append "family workload bytes stack instr note" rows to out.tsv
#   benches/callgrind.sh profile switchboard eth_getBalance
#       # instructions per message by source line (exclusive) of one
#       # stack on one workload, to find where the instructions go.
#   FEATURES=tracing benches/callgrind.sh
#       # the harness built with these features of switchboard-benches
#       # (`tracing`: the core's per-call events, as switchboard-server has them)
#
# A stack whose answer to a message differs from switchboard's is not counted: its row
# says n/a and why (`count` exits 3 for it). Honours CARGO_TARGET_DIR (default: the
# workspace's target/). Needs valgrind.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
target="${CARGO_TARGET_DIR:-$root/target}"
# Line tables only: same code as a plain release build, but callgrind can name lines.
export CARGO_PROFILE_RELEASE_DEBUG="${CARGO_PROFILE_RELEASE_DEBUG:-line-tables-only}"
cargo build --quiet --release -p switchboard-benches --bin count ${FEATURES:+--features "$FEATURES"}
bin="$target/release/count"
out="$(mktemp -d "${TMPDIR:-/tmp}/switchboard-callgrind.XXXXXX")"
trap 'rm -rf "$out"' EXIT

# Total instructions (Ir) of one run: `count STACK WORKLOAD N`; "n/a: reason" when the
# stack's answer differs from switchboard's.
ir() {
    local file="$out/$1.${2//\//_}.$3.out" rc=0
    valgrind --tool=callgrind --callgrind-out-file="$file" "$bin" "$1" "$2" "$3" \
        >/dev/null 2>"$file.log" || rc=$?
    if [[ $rc -eq 3 ]]; then
        grep -m1 '^n/a: ' "$file.log" || echo "n/a: (no reason given)"
        return 0
    elif [[ $rc -ne 0 ]]; then
        cat "$file.log" >&2
        return 1
    fi
    awk '/^(summary|totals):/ { print $2; exit }' "$file"
}

# N1 N2 for a workload ($1, of $2 bytes): fewer repetitions for the big ones (corpus
# files and scaling workloads by size).
counts() {
    if [[ "$1" == *.json || "$1" == rpc_batch_* || "$1" == parse_params_* ]]; then
        local b="${2:-0}"
        if (( b < 1000 )); then echo "100 2100"
        elif (( b < 8000 )); then echo "20 420"
        elif (( b < 32000 )); then echo "10 60"
        elif (( b < 200000 )); then echo "4 24"
        elif (( b < 1000000 )); then echo "2 7"
        else echo "1 3"
        fi
        return
    fi
    case "$1" in
        lookup_*) echo "10000 110000" ;;
        rpc_batch*) echo "200 2200" ;;
        rpc_*) echo "1000 11000" ;;
        batch*) echo "200 2200" ;;
        params_4k) echo "100 1100" ;;
        *_64k) echo "10 110" ;;
        *) echo "1000 11000" ;;
    esac
}

# Instructions of one run (exclusive) per source line ("L file:line<TAB>Ir") and per
# function, inlined code included ("F name<TAB>Ir").
lines_of() {
    local file="$out/lines.$1.${2//\//_}.$3.out"
    valgrind --tool=callgrind --dump-instr=no --compress-strings=no --compress-pos=no \
        --callgrind-out-file="$file" "$bin" "$1" "$2" "$3" >/dev/null 2>"$file.log" \
        || { cat "$file.log" >&2; return 1; }
    awk '
        /^fl=/ { fl = substr($0, 4); cur = fl; next }
        /^(fi|fe)=/ { cur = substr($0, 4); next }
        /^fn=/ { cur = fl; fn = substr($0, 4); next }
        /^calls=/ { skip = 1; next }
        /^[0-9]/ {
            if (skip) { skip = 0; next }
            cost["L " cur ":" $1] += $2
            cost["F " fn] += $2
        }
        END { for (k in cost) print k "\t" cost[k] }
    ' "$file"
}

if [[ "${1:-}" == "profile" ]]; then
    stack="${2:?usage: callgrind.sh profile STACK WORKLOAD}"
    workload="${3:?usage: callgrind.sh profile STACK WORKLOAD}"
    read -r n1 n2 <<<"$(counts "$workload" "$("$bin" list | awk -v w="$workload" '$2 == w { print $3 }')")"
    lines_of "$stack" "$workload" "$n1" | sort >"$out/a"
    lines_of "$stack" "$workload" "$n2" | sort >"$out/b"
    join -t $'\t' -a 2 -e 0 -o 0,1.2,2.2 "$out/a" "$out/b" \
        | awk -F'\t' -v d="$((n2 - n1))" '{ v = ($3 - $2) / d; if (v >= 0.5) printf "%8.1f\t%s\n", v, $1 }' \
        | sort -rn >"$out/per"
    echo "== $stack on $workload: instructions per message by function, inlined code included"
    awk -F'\t' '$2 ~ /^F / && n++ < 20 { printf "%8s  %s\n", $1, substr($2, 3) }' "$out/per"
    echo "== by source line (top ${TOP:-40})"
    awk -F'\t' -v top="${TOP:-40}" '$2 ~ /^L / && n++ < top { print $1 "\t" substr($2, 3) }' "$out/per" >"$out/top"
    while IFS=$'\t' read -r v loc; do
        src="${loc%:*}"
        line="${loc##*:}"
        text=""
        if [[ -f "$src" && "$line" -gt 0 ]]; then
            text="$(sed -n "${line}p" "$src" | sed 's/^ *//' | cut -c1-70)"
        fi
        short="$(sed -E 's|^/rustc/[^/]*/library/|std:|; s|^.*/registry/src/[^/]*/||; s|^'"$root"'/||' <<<"$loc")"
        printf '%8s  %-48s %s\n' "$v" "$short" "$text"
    done <"$out/top"
    exit 0
fi

stacks_classify="switchboard serde_json serde_json_raw sonic_rs simd_json_tape simd_json_serde"
stacks_rpc="switchboard serde_json sonic_rs jsonrpsee_callback jsonrpsee jsonrpc_core"
# Counted only when STACKS names them: switchboard's typed handlers (`typed`,
# `typed_ref`, `typed_borrowed`) on the same methods, against the raw view and serde_json.
stacks_rpc_extra="switchboard_typed"
stacks_lookup="switchboard std_hashmap ahash_hashmap phf match"
workloads="${WORKLOADS:-eth_getBalance subtract_positional subtract_named batch10_eth_getBalance params_4k text_64k base64_64k rpc_eth_getBalance rpc_subtract rpc_batch10_subtract rpc_batch10_eth_getBalance lookup_10 lookup_100 lookup_1000 lookup_10000}"
# `corpus` and `parse:corpus` stand for every corpus file, in the corpus's order;
# `realworld` and `parse:realworld` for the real-world documents (`count list` names
# them where they can be read).
corpus_files="$("$bin" list | awk '$1 == "workload" && $2 ~ /^[^:/]*\.json$/ { print $2 }')"
realworld_files="$("$bin" list | awk '$1 == "workload" && $2 ~ /^realworld\/[^:]*\.json$/ { print $2 }')"
expanded=""
for w in $workloads; do
    case "$w" in
        corpus) expanded+=" $corpus_files" ;;
        parse:corpus|validate:corpus) for f in $corpus_files; do expanded+=" ${w%corpus}$f"; done ;;
        realworld|parse:realworld|validate:realworld)
            if [[ -z "$realworld_files" ]]; then
                echo "callgrind.sh: no real-world documents (../shared/data/realworld or \$SWITCHBOARD_REALWORLD)" >&2
                exit 1
            fi
            for f in $realworld_files; do expanded+=" ${w%realworld}$f"; done
            ;;
        *) expanded+=" $w" ;;
    esac
done
workloads="$expanded"
list="$("$bin" list)"

echo "backends under valgrind: $(valgrind --tool=none -q "$bin" backends 2>/dev/null)"
echo "backends natively:       $("$bin" backends)"
header=""
for w in $workloads; do
    case "$w" in
        parse:*|validate:*) family=classify; family_stacks="$stacks_classify"; cols="/serde /simdtape /switchboard" ;;
        rpc_*|*.json) family=rpc; family_stacks="$stacks_rpc $stacks_rpc_extra"; cols="/serde /jsonrpsee_cb /switchboard" ;;
        lookup_*) family=lookup; family_stacks="$stacks_lookup"; cols="/std /ahash /switchboard" ;;
        *) family=classify; family_stacks="$stacks_classify"; cols="/serde /simdtape /switchboard" ;;
    esac
    # STACKS picks among the family's stacks (names of other families are skipped).
    stacks_all=""
    for s in ${STACKS:-${family_stacks% $stacks_rpc_extra}}; do
        [[ " $family_stacks " == *" $s "* ]] && stacks_all+=" $s"
    done
    if [[ "$header" != "$family" ]]; then
        header="$family"
        read -r c1 c2 c3 <<<"$cols"
        printf '\n%-34s %7s %-20s %10s %10s %9s %12s %12s\n' workload bytes stack "instr/msg" "instr/B" "$c1" "$c2" "$c3"
    fi
    bytes="$(awk -v w="$w" '$1 == "workload" && $2 == w { print $3 }' <<<"$list")"
    read -r n1 n2 <<<"$(counts "$w" "$bytes")"
    declare -A per=()
    declare -A why=()
    order=()
    for s in $stacks_all; do
        case "$family" in
            classify)
                # Validation compares serde_json with and without UTF-8 checks (`_raw`);
                # calls and batches compare simd-json's serde path instead.
                if [[ "$w" =~ ^(params_4k|text_64k|base64_64k)$ || "$w" == validate:* ]]; then
                    [[ "$s" == simd_json_serde ]] && continue
                elif [[ "$w" == parse:* ]]; then
                    # Corpus files: the five stacks that classify whole messages.
                    [[ "$s" == serde_json_raw ]] && continue
                else
                    [[ "$s" == serde_json_raw ]] && continue
                fi
                ;;
            lookup)
                [[ "$s" == match && "$w" != lookup_10 ]] && continue
                ;;
        esac
        a="$(ir "$s" "$w" "$n1")"
        order+=("$s")
        if [[ "$a" == n/a:* ]]; then
            why[$s]="${a#n/a: }"
            continue
        fi
        b="$(ir "$s" "$w" "$n2")"
        per[$s]=$(( (b - a) / (n2 - n1) ))
    done
    ratio() { # ratio of stack $1 against stack $2, if both ran
        if [[ -n "${per[$1]:-}" && -n "${per[$2]:-}" && "${per[$2]}" -gt 0 ]]; then
            awk -v p="${per[$1]}" -v q="${per[$2]}" 'BEGIN { printf "%.2f", p / q }'
        else
            echo "-"
        fi
    }
    for s in "${order[@]}"; do
        if [[ -n "${why[$s]:-}" ]]; then
            printf '%-34s %7s %-20s %10s %s\n' "$w" "$bytes" "$s" "n/a" "${why[$s]}"
            if [[ -n "${TSV:-}" ]]; then
                printf '%s\t%s\t%s\t%s\tn/a\t%s\n' "$family" "$w" "$bytes" "$s" "${why[$s]}" >>"$TSV"
            fi
            continue
        fi
        case "$family" in
            rpc) r1="$(ratio "$s" serde_json)"; r2="$(ratio "$s" jsonrpsee_callback)"; r3="$(ratio "$s" switchboard)" ;;
            lookup) r1="$(ratio "$s" std_hashmap)"; r2="$(ratio "$s" ahash_hashmap)"; r3="$(ratio "$s" switchboard)" ;;
            *) r1="$(ratio "$s" serde_json)"; r2="$(ratio "$s" simd_json_tape)"; r3="$(ratio "$s" switchboard)" ;;
        esac
        printf '%-34s %7s %-20s %10d %10s %9s %12s %12s\n' "$w" "$bytes" "$s" "${per[$s]}" \
            "$(awk -v p="${per[$s]}" -v n="$bytes" 'BEGIN { printf "%.2f", p / n }')" \
            "$r1" "$r2" "$r3"
        if [[ -n "${TSV:-}" ]]; then
            printf '%s\t%s\t%s\t%s\t%s\t\n' "$family" "$w" "$bytes" "$s" "${per[$s]}" >>"$TSV"
        fi
    done
    unset per why
done
