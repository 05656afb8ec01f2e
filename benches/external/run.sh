#!/usr/bin/env bash
# switchboard side by side with JSON-RPC stacks outside Rust, in one run (issue #6):
# the whole committed corpus (benches/corpus/, 15 messages), request bytes in and
# response bytes out, in process, each stack in a small harness built here. Two
# measures: wall time (interleaved rounds, min and median ns per message) and
# instructions per message (callgrind, the difference of two message counts: start-up
# and set-up cancel out). benches/report.sh runs it as one of its steps.
#
#   stack                 harness                      how a message goes through
#   switchboard_rust      benches count (Rust)         Session::handle, the benches'
#                                                      router (demo + tools/call)
#   switchboard_c_abi     c_abi/ (C++ driver, C        swb_session_handle, the same
#                         callbacks)                   methods as C callbacks
#   libjson-rpc-cpp       jsonrpccpp/ (C++)            the protocol handler of an
#                                                      AbstractServer, in memory
#   go_jsonrpc2_conn      go/ (Go)                     a jsonrpc2.Conn on an in-memory
#                                                      ObjectStream (go/main.go says why)
#   go_jsonrpc2_codec     go/ (Go)                     its Request/Response types only:
#                                                      a lower bound, not a server
#   json-rpc-cxx          none                         skipped: not packaged, no download
# plus, from the same `count race` that times switchboard_rust (RUST_PEERS=1), its
# Rust peers (serde_json and sonic-rs hand-written, jsonrpsee, jsonrpsee's callback
# path, jsonrpc-core).
#
# Every harness first checks its answer to each message against switchboard's
# (`count answer`, compared as parsed JSON; error objects by code, as `count check`
# compares the Rust stacks': each library words its messages and data its own way) and
# refuses to time otherwise. A message a stack cannot answer as switchboard does is
# listed in na_why below with the reason; run.sh checks that it still fails on every
# run. Anything that cannot be installed is skipped with a message, and its rows in
# the TSV say why.
#
#   benches/external/run.sh               # install, build, check, time, count
#   ROUNDS=3 CALLGRIND=0 benches/external/run.sh
#
# Environment: ROUNDS (interleaved rounds, default 5), BLOCKS (~2 ms blocks per
# message per round in every harness and in `count race`, default 150), WORKLOADS
# (corpus file names, default all), RUST_PEERS (0: only switchboard from `count race`),
# CHECK_ONLY=1 (install, build and check, then stop; exits 1 if a harness's answers
# are wrong: a CI smoke test), CALLGRIND (0 to skip instruction counts), CG_SCALE
# (scales callgrind's message counts, default 1), JOBS (callgrind runs at a time,
# default 2), INSTR_RUST_PEERS=1 (count the Rust peers' instructions too;
# benches/callgrind.sh has them), NO_INSTALL=1 (skip apt-get), TSV (output, default
# benches/results/external.tsv), CARGO_TARGET_DIR.
set -euo pipefail

root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root"
here="$root/benches/external"
target="${CARGO_TARGET_DIR:-$root/target}"
out="$target/external"
ROUNDS="${ROUNDS:-5}"
BLOCKS="${BLOCKS:-150}"
CALLGRIND="${CALLGRIND:-1}"
CG_SCALE="${CG_SCALE:-1}"
JOBS="${JOBS:-2}"
tsv="${TSV:-$root/benches/results/external.tsv}"
work="$(mktemp -d "${TMPDIR:-/tmp}/switchboard-external.XXXXXX")"
trap 'rm -rf "$work"' EXIT
mkdir -p "$out" "$(dirname "$tsv")"
start=$SECONDS

skips=() # "stack<TAB>reason", reported in the TSV and again at the end
skip() {
    echo "skipped: $1: $2"
    skips+=("$1"$'\t'"$2")
}

# ---- packages -----------------------------------------------------------------
echo "== packages"
have_cxx=0 have_jrc=0 have_valgrind=0 have_go=0
gopath=/usr/share/gocode
probe() {
    { command -v g++ >/dev/null && pkg-config --exists jsoncpp 2>/dev/null; } && have_cxx=1
    [[ -f /usr/include/jsonrpccpp/server.h ]] && have_jrc=1
    command -v valgrind >/dev/null && have_valgrind=1
    { command -v go >/dev/null && [[ -f $gopath/src/github.com/sourcegraph/jsonrpc2/jsonrpc2.go ]]; } && have_go=1
    return 0
}
probe
if [[ "$have_cxx$have_jrc$have_valgrind$have_go" == 1111 ]]; then
    echo "everything is installed"
elif [[ "${NO_INSTALL:-0}" == 1 ]]; then
    echo "NO_INSTALL=1: using what is installed"
elif [[ "$(id -u)" -ne 0 ]] && ! command -v sudo >/dev/null; then
    echo "warning: not root and no sudo: cannot install packages; using what is installed"
else
    sudo=() # as root apt-get runs directly, else through sudo (as benches/need.sh does)
    [[ "$(id -u)" -ne 0 ]] && sudo=(sudo)
    export DEBIAN_FRONTEND=noninteractive
    "${sudo[@]}" apt-get update -qq >"$work/apt.log" 2>&1 ||
        echo "warning: apt-get update failed; installing from the package lists already here"
    install() { # install PACKAGE...: 0 when all are there
        "${sudo[@]}" apt-get install -y -q -o DPkg::Lock::Timeout=300 "$@" >>"$work/apt.log" 2>&1 ||
            { tail -3 "$work/apt.log" >&2; return 1; }
    }
    install g++ pkg-config libjsoncpp-dev || echo "warning: cannot install g++/libjsoncpp-dev"
    install valgrind || echo "warning: cannot install valgrind"
    install libjsonrpccpp-dev || echo "warning: cannot install libjsonrpccpp-dev"
    install golang-go golang-github-sourcegraph-jsonrpc2-dev ||
        echo "warning: cannot install golang-go golang-github-sourcegraph-jsonrpc2-dev"
    probe
fi

stacks=(switchboard_rust)
if [[ $have_cxx == 1 ]]; then
    stacks+=(switchboard_c_abi)
    if [[ $have_jrc == 1 ]]; then
        stacks+=(libjson-rpc-cpp)
    else
        skip libjson-rpc-cpp "libjsonrpccpp-dev is not installed and could not be installed"
    fi
else
    skip switchboard_c_abi "g++ and libjsoncpp-dev (the C++ driver's JSON checks) are not installed and could not be installed"
    skip libjson-rpc-cpp "g++ and libjsoncpp-dev are not installed and could not be installed"
fi
if [[ $have_go == 1 ]]; then
    stacks+=(go_jsonrpc2_conn go_jsonrpc2_codec)
else
    skip go_jsonrpc2 "golang-go and golang-github-sourcegraph-jsonrpc2-dev are not installed and could not be installed"
fi
# json-rpc-cxx (github.com/jsonrpcx/json-rpc-cxx, header-only on nlohmann-json) is
# in no registry this machine reaches, and GitHub is not reachable: nothing to build.
cxx_found="$(apt-cache search --names-only 'json-rpc-cxx|jsonrpccxx' 2>/dev/null || true)"
skip json-rpc-cxx "not packaged for Debian and cannot be downloaded here${cxx_found:+ (apt-cache search found: $cxx_found; no harness is written for it yet)}"
if [[ $CALLGRIND == 1 && $have_valgrind == 0 ]]; then
    echo "skipped: instruction counts: valgrind is not installed and could not be installed"
    CALLGRIND=0
fi

# ---- builds -------------------------------------------------------------------
echo "== builds"
cargo build --release --quiet -p switchboard-ffi --lib
cargo build --release --quiet -p switchboard-benches --bin count
count="$target/release/count"
if [[ $have_cxx == 1 ]]; then
    jsoncpp="$(pkg-config --cflags jsoncpp)"
    gcc -std=c11 -O3 -Wall -Wextra -I ffi/include -c "$here/c_abi/demo_methods.c" -o "$out/demo_methods.o"
    # shellcheck disable=SC2086
    g++ -std=c++17 -O3 -DNDEBUG -Wall -Wextra -I ffi/include $jsoncpp "$here/c_abi/c_abi.cpp" \
        "$out/demo_methods.o" "$target/release/libswitchboard_ffi.a" $(pkg-config --libs jsoncpp) \
        -lpthread -ldl -lm -o "$out/c_abi"
    echo "built $out/c_abi"
    if [[ " ${stacks[*]} " == *" libjson-rpc-cpp "* ]]; then
        # shellcheck disable=SC2086
        g++ -std=c++17 -O3 -DNDEBUG -Wall -Wextra $jsoncpp "$here/jsonrpccpp/jsonrpccpp.cpp" \
            -ljsonrpccpp-server -ljsonrpccpp-common $(pkg-config --libs jsoncpp) -o "$out/jsonrpccpp"
        echo "built $out/jsonrpccpp"
    fi
fi
if [[ $have_go == 1 ]]; then
    # GOPATH mode on Debian's Go sources: no module download, no proxy.
    (cd "$here/go" && GO111MODULE=off GOPATH="$gopath" GOPROXY=off GOFLAGS= \
        go build -o "$out/go-harness" main.go)
    echo "built $out/go-harness ($(go version | cut -d' ' -f3), sourcegraph/jsonrpc2 $(dpkg-query -W -f='${Version}' golang-github-sourcegraph-jsonrpc2-dev 2>/dev/null || echo '?'))"
fi

# ---- the messages and switchboard's answers ---------------------------------------
# The whole committed corpus (benches/corpus/, its README says what each file is),
# request bytes as they are; switchboard's answer from `count answer` (the benches'
# router: the demo methods plus tools/call, as `count race` runs it).
ref="$work/ref"
mkdir -p "$ref"
if [[ -n ${WORKLOADS:-} ]]; then
    workloads="$WORKLOADS"
else
    workloads="$(cd benches/corpus && ls -- *.json | tr '\n' ' ')"
fi
for w in $workloads; do
    [[ -f benches/corpus/$w ]] || { echo "no benches/corpus/$w" >&2; exit 2; }
    cp "benches/corpus/$w" "$ref/$w.req"
done
# Not timed, only checked (on the stacks whose methods take them).
msg() { printf '%s' "$2" >"$ref/$1.req"; }
msg sum '{"jsonrpc":"2.0","method":"sum","params":[1,2,4],"id":"2"}'
msg get_data '{"jsonrpc":"2.0","method":"get_data","id":"9"}'
msg eth_getBalance_invalid '{"jsonrpc":"2.0","method":"eth_getBalance","params":["0xnothex","latest"],"id":4}'
msg tools_call_escaped '{"jsonrpc":"2.0","method":"tools/call","params":{"name":"a\u00e9b","arguments":{"x":[1,{"y":"]"}]}},"id":5}'
msg tools_call_invalid '{"jsonrpc":"2.0","method":"tools/call","params":{"name":"x","arguments":[]},"id":6}'
extras="sum get_data eth_getBalance_invalid tools_call_escaped tools_call_invalid"
# Checked on switchboard_c_abi only: edges of the demo's params reading that its C
# callbacks re-implement on the swb_value readers (escaped and repeated keys, numbers
# past int64 and past a double, integer overflow, a name that needs escaping).
msg c_subtract_escaped_key '{"jsonrpc":"2.0","method":"subtract","params":{"min\u0075end":5,"subtrahend":2},"id":7}'
msg c_subtract_repeated_key '{"jsonrpc":"2.0","method":"subtract","params":{"minuend":1,"subtrahend":2,"minuend":3},"id":8}'
msg c_subtract_numbers '{"jsonrpc":"2.0","method":"subtract","params":[1.0,9223372036854775808],"id":9}'
msg c_subtract_overflow '{"jsonrpc":"2.0","method":"subtract","params":[-9223372036854775808,1],"id":10}'
msg c_subtract_beyond_double '{"jsonrpc":"2.0","method":"subtract","params":[1e400,1],"id":11}'
msg c_sum_overflow '{"jsonrpc":"2.0","method":"sum","params":[9223372036854775807,1,-5],"id":12}'
msg c_eth_getBalance_three '{"jsonrpc":"2.0","method":"eth_getBalance","params":["0xd8dA6BF26964aF9D7eEd9e03E53415D37aA96045","latest",1],"id":13}'
msg c_tools_call_order '{"jsonrpc":"2.0","method":"tools/call","params":{"arguments":{"a":1,"b":[1,{"c":"}"}]},"meta":{},"name":"q\"z","name":1},"id":14}'
msg c_tools_call_array '{"jsonrpc":"2.0","method":"tools/call","params":{"name":"x","arguments":[1,2]},"id":15}'
c_extras="c_subtract_escaped_key c_subtract_repeated_key c_subtract_numbers c_subtract_overflow c_subtract_beyond_double c_sum_overflow c_eth_getBalance_three c_tools_call_order c_tools_call_array"
for f in "$ref"/*.req; do
    "$count" answer - <"$f" >"${f%.req}.resp"
done

# Why a stack cannot answer a message as switchboard does (empty: it can). run.sh
# checks each of these on every run: the stack must fail it (the harness's own
# words are added to the reason), and an answer it starts to get right stops the run.
na_why() { # na_why STACK WORKLOAD
    case "$1:$2" in
        go_jsonrpc2_*:batch*) echo "sourcegraph/jsonrpc2 0.1.0 has no batch support" ;;
        go_jsonrpc2_conn:parse_error.json) echo "sourcegraph/jsonrpc2 answers no parse error: its Conn closes the connection" ;;
        go_jsonrpc2_codec:parse_error.json) echo "sourcegraph/jsonrpc2 answers no parse error: its Request cannot decode the bytes" ;;
        go_jsonrpc2_conn:invalid_request.json) echo "sourcegraph/jsonrpc2 answers no invalid request: a non-string method fails to decode and its Conn closes the connection" ;;
        go_jsonrpc2_codec:invalid_request.json) echo "sourcegraph/jsonrpc2 answers no invalid request: a non-string method fails to decode into its Request" ;;
    esac
}
# What each stack is checked on: the timed workloads plus the extras its methods take.
checks_of() {
    case "$1" in
        switchboard_c_abi) echo "$(timed_of "$1") $extras $c_extras" ;;
        # Its errors carry no `data`: no invalid-params checks.
        libjson-rpc-cpp) echo "$(timed_of "$1") get_data" ;;
        go_jsonrpc2_*) echo "$(timed_of "$1") $extras" ;;
    esac
}
timed_of() { # the workloads the stack answers as switchboard does
    local w out=()
    for w in $workloads; do
        [[ -z "$(na_why "$1" "$w")" ]] && out+=("$w")
    done
    echo "${out[*]}"
}
harness_cmd() { # harness_cmd STACK: sets cmd to the stack's harness command
    case "$1" in
        switchboard_c_abi) cmd=("$out/c_abi") ;;
        libjson-rpc-cpp) cmd=("$out/jsonrpccpp") ;;
        go_jsonrpc2_conn) cmd=("$out/go-harness" conn) ;;
        go_jsonrpc2_codec) cmd=("$out/go-harness" codec) ;;
    esac
}
harness() { # harness STACK ARGS...: runs the stack's harness
    local s="$1"
    shift
    harness_cmd "$s"
    "${cmd[@]}" "$@"
}
declare -A note=()
note[switchboard_rust]="Session::handle, demo router + tools/call (benches count race / count)"
note[switchboard_c_abi]="swb_session_handle, demo methods + tools/call as C callbacks"
note[libjson-rpc-cpp]="libjson-rpc-cpp $(dpkg-query -W -f='${Version}' libjsonrpccpp-dev 2>/dev/null || echo '?'): AbstractServer's protocol handler, in memory"
note[go_jsonrpc2_conn]="jsonrpc2.Conn + HandlerWithError on an in-memory ObjectStream, GOMAXPROCS=1"
note[go_jsonrpc2_codec]="lower bound: jsonrpc2.Request/Response + encoding/json, no Conn"
note[serde_json]="Rust, hand-written on serde_json (benches count race)"
note[sonic_rs]="Rust, hand-written on sonic-rs (benches count race)"
note[jsonrpsee]="Rust, jsonrpsee RpcModule::raw_json_request (benches count race)"
note[jsonrpsee_callback]="Rust, jsonrpsee's method callback directly (benches count race)"
note[jsonrpc_core]="Rust, jsonrpc-core IoHandler (benches count race)"
declare -A na=() # "stack workload" -> why n/a

echo "== checks: each answer against switchboard's (parsed JSON)"
timed=(switchboard_rust)
refused=()
for s in "${stacks[@]:1}"; do
    echo "$s:"
    # shellcheck disable=SC2046
    if harness "$s" check "$ref" $(checks_of "$s"); then
        timed+=("$s")
    else
        skip "$s" "refused: its answers are not switchboard's (see above)"
        refused+=("$s")
        continue
    fi
    for w in $workloads; do
        why="$(na_why "$s" "$w")"
        [[ -z $why ]] && continue
        if harness "$s" check "$ref" "$w" >"$work/na.log" 2>&1; then
            echo "  $w: $s now answers it as switchboard does: update na_why in run.sh to time it" >&2
            exit 1
        fi
        # The harness's own words: the protocol error, or what it answered.
        said="$(grep -m1 -E 'protocol error|cannot decode|this stack:' "$work/na.log" |
            sed -E 's/^[0-9/]+ [0-9:]+ //; s/^[^ ]+\.json: //; s/^ *this stack: */it answered /; s/ of type struct \{.*/ of type struct {...}/' |
            cut -c1-200 || true)"
        na["$s $w"]="$why${said:+ ($said)}"
        echo "  $w: n/a: ${na["$s $w"]}"
    done
done

if [[ ${CHECK_ONLY:-0} == 1 ]]; then
    ((${#refused[@]} == 0)) || { echo "CHECK_ONLY=1: refused: ${refused[*]}" >&2; exit 1; }
    echo "CHECK_ONLY=1: every harness that was built answers as switchboard does; nothing timed ($((SECONDS - start)) s)"
    exit 0
fi

# ---- wall time: interleaved rounds --------------------------------------------------
race_stacks=(--stacks switchboard)
[[ ${RUST_PEERS:-1} == 1 ]] && race_stacks=()
echo "== wall time: $ROUNDS interleaved rounds of $BLOCKS blocks per workload (load: $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) cores)"
samples="$work/samples" # stack workload min median, one line per round
: >"$samples"
for ((r = 0; r < ROUNDS; r++)); do
    n=${#timed[@]}
    for ((j = 0; j < n; j++)); do
        s="${timed[$(((j + r) % n))]}"
        if [[ $s == switchboard_rust ]]; then
            # switchboard (and with RUST_PEERS=1 the Rust peers, interleaved among
            # them) in ~2 ms blocks, BLOCKS rounds; a peer that is n/a says why.
            # shellcheck disable=SC2086
            "$count" race --tsv --rounds "$BLOCKS" "${race_stacks[@]}" $workloads >"$work/race.tsv"
            awk -F'\t' 'NR > 1 && $5 != "n/a" { s = ($4 == "switchboard") ? "switchboard_rust" : $4;
                                                print s, $2, $5, $6 }' "$work/race.tsv" >>"$samples"
            while IFS=$'\t' read -r _ w _ p _ _ why; do
                na["$p $w"]="$why"
            done < <(awk -F'\t' 'NR > 1 && $5 == "n/a"' "$work/race.tsv")
        else
            # shellcheck disable=SC2046
            harness "$s" time "$ref" "$BLOCKS" $(timed_of "$s") | awk -v s="$s" '{ print s, $1, $2, $3 }' >>"$samples"
        fi
    done
    echo "  round $((r + 1))/$ROUNDS done ($((SECONDS - start)) s)"
done
# min of the rounds' minima, median of the rounds' medians
awk '{ k = $1 " " $2; if (!(k in min) || $3 < min[k]) min[k] = $3; med[k] = med[k] " " $4 }
     END { for (k in min) print k, min[k], med[k] }' "$samples" |
    while read -r s w mn rest; do
        md="$(tr ' ' '\n' <<<"$rest" | sed '/^$/d' | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')"
        echo "$s $w $mn $md"
    done >"$work/wall"

# ---- instructions: callgrind ------------------------------------------------------
declare -A instr=()
if [[ $CALLGRIND == 1 ]]; then
    echo "== instructions per message: callgrind, (Ir(N2) - Ir(N1)) / (N2 - N1), $JOBS at a time"
    echo "  switchboard's SIMD backend natively: $("$count" backends); under valgrind: $(valgrind --tool=none -q "$count" backends 2>/dev/null)"
    ir() { # ir FILE CMD...: total instructions of one run
        local f="$1"
        shift
        # Go's asynchronous preemption signals trip callgrind; they change no work done.
        GODEBUG=asyncpreemptoff=1 valgrind --tool=callgrind --callgrind-out-file="$f" "$@" >/dev/null 2>"$f.log" ||
            { tail -5 "$f.log" >&2; return 1; }
        awk '/^(summary|totals):/ { print $2; exit }' "$f"
    }
    counts() { # counts STACK BYTES: N1 N2, fewer messages for big ones and slow stacks
        local budget dmax dmin d
        case "$1" in
            switchboard_* | serde_json | sonic_rs | jsonrpsee* | jsonrpc_core) budget=1200000 dmax=10000 dmin=20 ;;
            libjson-rpc-cpp) budget=600000 dmax=5000 dmin=20 ;;
            *) budget=240000 dmax=2000 dmin=20 ;;
        esac
        d=$(awk -v b="$budget" -v s="$CG_SCALE" -v n="$2" -v lo="$dmin" -v hi="$dmax" \
            'BEGIN { d = int(b * s / n); if (d > hi * s) d = int(hi * s); if (d < lo) d = lo; print d }')
        case "$1" in
            go_*) echo "$((d / 4 > 5 ? d / 4 : 5)) $((d / 4 > 5 ? d / 4 + d : 5 + d))" ;;
            *) echo "$((d / 10 > 2 ? d / 10 : 2)) $((d / 10 > 2 ? d / 10 + d : 2 + d))" ;;
        esac
    }
    one_count() { # one_count STACK WORKLOAD: writes "N1 IR1 N2 IR2" to $work/ir.STACK.WORKLOAD
        local s="$1" w="$2" n v line=""
        read -r n1 n2 <<<"$(counts "$s" "$(wc -c <"$ref/$w.req")")"
        for n in "$n1" "$n2"; do
            if [[ $s == switchboard_rust ]]; then
                v="$(ir "$work/cg.$s.$w.$n" "$count" switchboard "$w" "$n")" || v=""
            elif [[ $s != switchboard_* && $s != libjson-rpc-cpp && $s != go_* ]]; then
                v="$(ir "$work/cg.$s.$w.$n" "$count" "$s" "$w" "$n")" || v=""
            else
                harness_cmd "$s"
                v="$(ir "$work/cg.$s.$w.$n" "${cmd[@]}" count "$ref" "$w" "$n")" || v=""
            fi
            rm -f "$work/cg.$s.$w.$n"
            [[ -n $v ]] || { echo "  $s $w: valgrind failed (see above); no count" >&2; return 0; }
            line+="$n $v "
        done
        echo "$line" >"$work/ir.$s.$w"
    }
    counted=("${timed[@]}")
    [[ ${INSTR_RUST_PEERS:-0} == 1 ]] && counted+=(serde_json sonic_rs jsonrpsee jsonrpsee_callback jsonrpc_core)
    running=0
    for s in "${counted[@]}"; do
        for w in $workloads; do
            [[ -n ${na["$s $w"]:-} ]] && continue
            if ((running >= JOBS)); then
                wait -n || true
                running=$((running - 1))
            fi
            one_count "$s" "$w" &
            running=$((running + 1))
        done
    done
    wait
    for s in "${counted[@]}"; do
        for w in $workloads; do
            [[ -f $work/ir.$s.$w ]] || continue
            read -r n1 a n2 b <"$work/ir.$s.$w"
            instr["$s $w"]=$(((b - a) / (n2 - n1)))
            printf '  %-18s %-28s N=%-5s %12s  N=%-5s %12s  -> %8s\n' "$s" "$w" "$n1" "$a" "$n2" "$b" "${instr["$s $w"]}"
        done
    done
fi

# ---- results --------------------------------------------------------------------
{
    printf 'stack\tworkload\tbytes\tns_min\tns_median\tinstr_per_msg\tnote\n'
    for s in switchboard_rust switchboard_c_abi libjson-rpc-cpp go_jsonrpc2_conn go_jsonrpc2_codec serde_json sonic_rs jsonrpsee jsonrpsee_callback jsonrpc_core; do
        for w in $workloads; do
            bytes="$(wc -c <"$ref/$w.req")"
            line="$(awk -v s="$s" -v w="$w" '$1 == s && $2 == w' "$work/wall")"
            if [[ -n $line ]]; then
                read -r _ _ mn md <<<"$line"
                i="${instr["$s $w"]:-}"
                n="${note[$s]}"
                [[ -z $i && $CALLGRIND == 1 && $s != switchboard_* && $s != libjson-rpc-cpp && $s != go_* ]] &&
                    n+="; instructions: benches/callgrind.sh"
                printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$s" "$w" "$bytes" "$mn" "$md" "${i:-}" "$n"
            elif [[ -n ${na["$s $w"]:-} ]]; then
                printf '%s\t%s\t%s\tn/a\tn/a\tn/a\t%s\n' "$s" "$w" "$bytes" "${na["$s $w"]//$'\t'/ }"
            fi
        done
    done
    for sk in "${skips[@]}"; do
        IFS=$'\t' read -r s why <<<"$sk"
        names="$s"
        [[ $s == go_jsonrpc2 ]] && names="go_jsonrpc2_conn go_jsonrpc2_codec"
        for s in $names; do
            for w in $workloads; do
                printf '%s\t%s\t%s\tskipped\tskipped\tskipped\t%s\n' "$s" "$w" "$(wc -c <"$ref/$w.req")" "$why"
            done
        done
    done
} >"$tsv"

echo
echo "== results ($tsv): ns per message (min of $ROUNDS rounds; median of the rounds' medians), instructions per message;"
echo "   ns/cabi, ns/rust, in/cabi, in/rust: this stack's over switchboard's C ABI / Rust API (min ns; instructions)"
awk -F'\t' '
    NR == 1 { next }
    { rows[NR] = $0; if ($1 == "switchboard_c_abi") { cn[$2] = $4; ci[$2] = $6 }
      if ($1 == "switchboard_rust") { rn[$2] = $4; ri[$2] = $6 } }
    function ratio(a, b) { return (a + 0 > 0 && b + 0 > 0) ? sprintf("%.2f", a / b) : "-" }
    END {
        printf "%-18s %-28s %5s %10s %10s %9s | %7s %7s | %7s %7s\n", "stack", "workload", "bytes",
            "ns min", "ns median", "instr", "ns/cabi", "ns/rust", "in/cabi", "in/rust"
        for (i = 2; i <= NR; i++) {
            split(rows[i], f, "\t")
            if (f[4] == "skipped" || f[4] == "n/a") {
                printf "%-18s %-28s %5s %s\n", f[1], f[2], f[3], (f[4] == "n/a" ? "n/a" : "skipped")
                continue
            }
            printf "%-18s %-28s %5s %10.1f %10.1f %9s | %7s %7s | %7s %7s\n", f[1], f[2], f[3], f[4], f[5],
                (f[6] == "" ? "-" : f[6]), ratio(f[4], cn[f[2]]), ratio(f[4], rn[f[2]]),
                ratio(f[6], ci[f[2]]), ratio(f[6], ri[f[2]])
        }
    }' "$tsv"
if ((${#skips[@]} > 0 || ${#na[@]} > 0)); then
    echo
    for sk in "${skips[@]}"; do echo "skipped: ${sk/$'\t'/: }"; done
    for k in "${!na[@]}"; do echo "n/a: ${k/ / on }: ${na[$k]}"; done | sort
fi
echo "done in $((SECONDS - start)) s"
