#!/usr/bin/env bash
# switchboard side by side with JSON-RPC stacks outside Rust, in one run (issue #6,
# item 2): the same messages, request bytes in and response bytes out, in process,
# each stack in a small harness built here. Two measures: wall time (interleaved
# rounds, min and median ns per message) and instructions per message (callgrind,
# the difference of two message counts: start-up and set-up cancel out).
#
#   stack                 harness                      how a message goes through
#   switchboard_rust      benches count (Rust)         Session::handle, demo router
#   switchboard_c_abi     c_abi/ (C++ driver, C        swb_session_handle, demo methods
#                         callbacks)                   as C callbacks (demo_methods.c)
#   libjson-rpc-cpp       jsonrpccpp/ (C++)            the protocol handler of an
#                                                      AbstractServer, in memory
#   go_jsonrpc2_conn      go/ (Go)                     a jsonrpc2.Conn on an in-memory
#                                                      ObjectStream (go/main.go says why)
#   go_jsonrpc2_codec     go/ (Go)                     its Request/Response types only:
#                                                      a lower bound, not a server
#   json-rpc-cxx          none                         skipped: not packaged, no download
# plus, from the same `count race` that times switchboard_rust, its Rust peers
# (serde_json hand-written, jsonrpsee, jsonrpsee's callback path, jsonrpc-core).
#
# Every harness first checks its answer to each message against switchboard's own
# (the demo server's response, compared as parsed JSON) and refuses to time
# otherwise. Anything that cannot be installed is skipped with a message, and its
# rows in the TSV say why.
#
#   benches/external/run.sh               # install, build, check, time, count
#   ROUNDS=3 CALLGRIND=0 benches/external/run.sh
#
# Environment: ROUNDS (interleaved rounds, default 5), BLOCKS (~2 ms blocks per
# workload per round in the C++ and Go harnesses, default 150, as `count race`),
# CHECK_ONLY=1 (install, build and check, then stop; exits 1 if a harness's answers
# are wrong: a CI smoke test), CALLGRIND (0 to skip instruction counts), INSTR_RUST_PEERS=1 (count the Rust peers'
# instructions too, ~1 more minute; benches/callgrind.sh has them), NO_INSTALL=1 (skip
# apt-get), TSV (output, default benches/results/external.tsv), CARGO_TARGET_DIR.
set -euo pipefail

root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root"
here="$root/benches/external"
target="${CARGO_TARGET_DIR:-$root/target}"
out="$target/external"
ROUNDS="${ROUNDS:-5}"
BLOCKS="${BLOCKS:-150}"
CALLGRIND="${CALLGRIND:-1}"
tsv="${TSV:-$root/benches/results/external.tsv}"
work="$(mktemp -d "${TMPDIR:-/tmp}/switchboard-external.XXXXXX")"
trap 'rm -rf "$work"' EXIT
mkdir -p "$out" "$(dirname "$tsv")"
start=$SECONDS

workloads="eth_getBalance subtract batch10_subtract"
skips=() # "stack<TAB>reason", reported in the TSV and again at the end
skip() {
    echo "skipped: $1: $2"
    skips+=("$1"$'\t'"$2")
}

# ---- packages -----------------------------------------------------------------
echo "== packages"
if [[ "${NO_INSTALL:-0}" != 1 ]]; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >"$work/apt.log" 2>&1 ||
        echo "warning: apt-get update failed; installing from the package lists already here"
    install() { # install PACKAGE...: 0 when all are there
        apt-get install -y -q -o DPkg::Lock::Timeout=300 "$@" >>"$work/apt.log" 2>&1 ||
            { tail -3 "$work/apt.log" >&2; return 1; }
    }
    install g++ pkg-config libjsoncpp-dev || echo "warning: cannot install g++/libjsoncpp-dev"
    install valgrind || echo "warning: cannot install valgrind"
    install libjsonrpccpp-dev || echo "warning: cannot install libjsonrpccpp-dev"
    install golang-go golang-github-sourcegraph-jsonrpc2-dev ||
        echo "warning: cannot install golang-go golang-github-sourcegraph-jsonrpc2-dev"
else
    echo "NO_INSTALL=1: using what is installed"
fi
have_cxx=1
{ command -v g++ >/dev/null && pkg-config --exists jsoncpp; } || have_cxx=0
have_valgrind=1
command -v valgrind >/dev/null || have_valgrind=0
gopath=/usr/share/gocode
have_go=1
{ command -v go >/dev/null && [[ -f $gopath/src/github.com/sourcegraph/jsonrpc2/jsonrpc2.go ]]; } || have_go=0

stacks=(switchboard_rust)
if [[ $have_cxx == 1 ]]; then
    stacks+=(switchboard_c_abi)
    if [[ -f /usr/include/jsonrpccpp/server.h ]]; then
        stacks+=(libjson-rpc-cpp)
    else
        skip libjson-rpc-cpp "libjsonrpccpp-dev is not installed and could not be installed"
    fi
else
    skip switchboard_c_abi "g++ and libjsoncpp-dev (the C++ driver's JSON checks) are not installed"
    skip libjson-rpc-cpp "g++ and libjsoncpp-dev are not installed"
fi
if [[ $have_go == 1 ]]; then
    stacks+=(go_jsonrpc2_conn go_jsonrpc2_codec)
else
    skip go_jsonrpc2 "golang-go and golang-github-sourcegraph-jsonrpc2-dev are not installed and could not be installed"
fi
# json-rpc-cxx (github.com/jsonrpcx/json-rpc-cxx, header-only on nlohmann-json) is
# in no registry this machine reaches, and GitHub is not reachable: nothing to build.
cxx_found="$(apt-cache search --names-only 'json-rpc-cxx|jsonrpccxx' 2>/dev/null || true)"
skip json-rpc-cxx "json-rpc-cxx is not packaged for Debian and cannot be downloaded here${cxx_found:+ (apt-cache search found: $cxx_found; no harness is written for it yet)}"
if [[ $CALLGRIND == 1 && $have_valgrind == 0 ]]; then
    echo "skipped: instruction counts: valgrind is not installed and could not be installed"
    CALLGRIND=0
fi

# ---- builds -------------------------------------------------------------------
echo "== builds"
cargo build --release --quiet -p switchboard-ffi --lib
cargo build --release --quiet -p switchboard-server --bin switchboard
cargo build --release --quiet -p switchboard-benches --bin count
count="$target/release/count"
server="$target/release/switchboard"
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
ref="$work/ref"
mkdir -p "$ref"
msg() { printf '%s' "$2" >"$ref/$1.req"; }
msg eth_getBalance '{"jsonrpc":"2.0","method":"eth_getBalance","params":["0xd8dA6BF26964aF9D7eEd9e03E53415D37aA96045","latest"],"id":1}'
msg subtract '{"jsonrpc":"2.0","method":"subtract","params":[42,23],"id":1}'
# benches/src/dispatch.rs's batch_of_subtract(10), so the Rust rows time the same bytes.
batch=""
for i in $(seq 1 10); do
    batch+="${batch:+,}{\"jsonrpc\":\"2.0\",\"method\":\"subtract\",\"params\":[$((42 + i)),23],\"id\":$i}"
done
msg batch10_subtract "[$batch]"
# Not timed, only checked (on the stacks whose methods take them).
msg subtract_named '{"jsonrpc":"2.0","method":"subtract","params":{"subtrahend":23,"minuend":42},"id":3}'
msg sum '{"jsonrpc":"2.0","method":"sum","params":[1,2,4],"id":"2"}'
msg get_data '{"jsonrpc":"2.0","method":"get_data","id":"9"}'
msg notify_update '{"jsonrpc":"2.0","method":"update","params":[1,2,3,4,5]}'
msg eth_getBalance_invalid '{"jsonrpc":"2.0","method":"eth_getBalance","params":["0xnothex","latest"],"id":4}'
for f in "$ref"/*.req; do
    r="$({ cat "$f"; echo; } | "$server" serve --stdio)"
    printf '%s' "$r" >"${f%.req}.resp"
done
for w in $workloads; do
    b="$(wc -c <"$ref/$w.req")"
    cb="$("$count" list | awk -v w="rpc_$w" '$1 == "workload" && $2 == w { print $3 }')"
    [[ "$b" == "$cb" ]] || { echo "$w: $b bytes here, $cb in count: not the same message" >&2; exit 1; }
done

# What each stack is checked on and timed on.
checks_of() {
    case "$1" in
        switchboard_c_abi) echo "$workloads subtract_named sum get_data notify_update eth_getBalance_invalid" ;;
        libjson-rpc-cpp) echo "$workloads get_data notify_update" ;;
        go_jsonrpc2_*) echo "eth_getBalance subtract subtract_named sum get_data eth_getBalance_invalid" ;;
    esac
}
timed_of() {
    case "$1" in
        go_jsonrpc2_*) echo "eth_getBalance subtract" ;;
        *) echo "$workloads" ;;
    esac
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
note[switchboard_rust]="Session::handle, demo router (benches count race / count)"
note[switchboard_c_abi]="swb_session_handle, demo methods as C callbacks"
note[libjson-rpc-cpp]="libjson-rpc-cpp $(dpkg-query -W -f='${Version}' libjsonrpccpp-dev 2>/dev/null || echo '?'): AbstractServer's protocol handler, in memory"
note[go_jsonrpc2_conn]="jsonrpc2.Conn + HandlerWithError on an in-memory ObjectStream, GOMAXPROCS=1"
note[go_jsonrpc2_codec]="lower bound: jsonrpc2.Request/Response + encoding/json, no Conn"
note[serde_json]="Rust, hand-written on serde_json (benches count race)"
note[jsonrpsee]="Rust, jsonrpsee RpcModule::raw_json_request (benches count race)"
note[jsonrpsee_callback]="Rust, jsonrpsee's method callback directly (benches count race)"
note[jsonrpc_core]="Rust, jsonrpc-core IoHandler (benches count race)"

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
    fi
done
batch_na="n/a: sourcegraph/jsonrpc2 0.1.0 has no batch support"
if [[ " ${timed[*]} " == *" go_jsonrpc2_conn "* ]]; then
    echo "go_jsonrpc2_conn on a batch (expected to fail: $batch_na):"
    if harness go_jsonrpc2_conn check "$ref" batch10_subtract >"$work/go-batch.log" 2>&1; then
        echo "  it answered the batch: update run.sh to time it" >&2
        exit 1
    fi
    sed 's/^/  /' "$work/go-batch.log" | cut -c1-160
    batch_na+=": the array does not decode into its Request, and the Conn closes with a protocol error"
fi

if [[ ${CHECK_ONLY:-0} == 1 ]]; then
    ((${#refused[@]} == 0)) || { echo "CHECK_ONLY=1: refused: ${refused[*]}" >&2; exit 1; }
    echo "CHECK_ONLY=1: every harness that was built answers as switchboard does; nothing timed ($((SECONDS - start)) s)"
    exit 0
fi

# ---- wall time: interleaved rounds --------------------------------------------------
echo "== wall time: $ROUNDS interleaved rounds (load: $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) cores)"
samples="$work/samples" # stack workload min median, one line per round
: >"$samples"
for ((r = 0; r < ROUNDS; r++)); do
    n=${#timed[@]}
    for ((j = 0; j < n; j++)); do
        s="${timed[$(((j + r) % n))]}"
        if [[ $s == switchboard_rust ]]; then
            # All the Rust dispatch stacks, interleaved in ~2 ms blocks, 150 rounds.
            "$count" race rpc_eth_getBalance rpc_subtract rpc_batch10_subtract |
                awk '$1 ~ /^rpc_/ { s = ($3 == "switchboard") ? "switchboard_rust" : $3;
                                    print s, substr($1, 5), $4, $5 }' >>"$samples"
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
    echo "== instructions per message: callgrind, (Ir(N2) - Ir(N1)) / (N2 - N1)"
    echo "  switchboard's SIMD backend natively: $("$count" backends); under valgrind: $(valgrind --tool=none -q "$count" backends 2>/dev/null)"
    ir() { # ir FILE CMD...: total instructions of one run
        local f="$1"
        shift
        # Go's asynchronous preemption signals trip callgrind; they change no work done.
        GODEBUG=asyncpreemptoff=1 valgrind --tool=callgrind --callgrind-out-file="$f" "$@" >/dev/null 2>"$f.log" ||
            { tail -5 "$f.log" >&2; return 1; }
        awk '/^(summary|totals):/ { print $2; exit }' "$f"
    }
    counts() { # N1 N2 for a stack and workload: fewer for the slow stacks and batches
        case "$1:$2" in
            switchboard_*:batch* | serde_json:batch* | jsonrpsee*:batch* | jsonrpc_core:batch*) echo "200 2200" ;;
            switchboard_*:* | serde_json:* | jsonrpsee*:* | jsonrpc_core:*) echo "1000 11000" ;;
            libjson-rpc-cpp:batch*) echo "50 550" ;;
            go_*) echo "500 2500" ;;
            *) echo "500 5500" ;;
        esac
    }
    counted=("${timed[@]}")
    [[ ${INSTR_RUST_PEERS:-0} == 1 ]] && counted+=(serde_json jsonrpsee jsonrpsee_callback jsonrpc_core)
    for s in "${counted[@]}"; do
        for w in $(timed_of "$s"); do
            read -r n1 n2 <<<"$(counts "$s" "$w")"
            a="" b=""
            for n in "$n1" "$n2"; do
                if [[ $s == switchboard_rust ]]; then
                    v="$(ir "$work/cg.$s.$w.$n" "$count" switchboard "rpc_$w" "$n")" || v=""
                elif [[ $s != switchboard_* && $s != libjson-rpc-cpp && $s != go_* ]]; then
                    v="$(ir "$work/cg.$s.$w.$n" "$count" "$s" "rpc_$w" "$n")" || v=""
                else
                    harness_cmd "$s"
                    v="$(ir "$work/cg.$s.$w.$n" "${cmd[@]}" count "$ref" "$w" "$n")" || v=""
                fi
                if [[ -z $a ]]; then a="$v"; else b="$v"; fi
            done
            if [[ -n $a && -n $b ]]; then
                instr["$s $w"]=$(((b - a) / (n2 - n1)))
                printf '  %-20s %-18s N=%-5s %12s  N=%-5s %12s  -> %8s\n' "$s" "$w" "$n1" "$a" "$n2" "$b" "${instr["$s $w"]}"
            else
                echo "  $s $w: valgrind failed (see above); no count"
            fi
        done
    done
fi

# ---- results --------------------------------------------------------------------
{
    printf 'stack\tworkload\tbytes\tns_min\tns_median\tinstr_per_msg\tnote\n'
    for s in switchboard_rust switchboard_c_abi libjson-rpc-cpp go_jsonrpc2_conn go_jsonrpc2_codec serde_json jsonrpsee jsonrpsee_callback jsonrpc_core; do
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
            elif [[ $s == go_jsonrpc2_* && " ${timed[*]} " == *" $s "* && $w == batch* ]]; then
                printf '%s\t%s\t%s\tn/a\tn/a\tn/a\t%s\n' "$s" "$w" "$bytes" "$batch_na"
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
echo "   x c_abi / x rust: this stack's over switchboard's C ABI / Rust API (min ns; instructions)"
awk -F'\t' '
    NR == 1 { next }
    { rows[NR] = $0; if ($1 == "switchboard_c_abi") { cn[$2] = $4; ci[$2] = $6 }
      if ($1 == "switchboard_rust") { rn[$2] = $4; ri[$2] = $6 } }
    function ratio(a, b) { return (a + 0 > 0 && b + 0 > 0) ? sprintf("%.2f", a / b) : "-" }
    END {
        printf "%-20s %-17s %5s %10s %10s %9s | %7s %7s | %7s %7s\n", "stack", "workload", "bytes",
            "ns min", "ns median", "instr", "ns/cabi", "ns/rust", "in/cabi", "in/rust"
        for (i = 2; i <= NR; i++) {
            split(rows[i], f, "\t")
            if (f[4] == "skipped" || f[4] == "n/a") {
                printf "%-20s %-17s %5s %s\n", f[1], f[2], f[3], (f[4] == "n/a" ? "n/a" : "skipped")
                continue
            }
            printf "%-20s %-17s %5s %10.1f %10.1f %9s | %7s %7s | %7s %7s\n", f[1], f[2], f[3], f[4], f[5],
                (f[6] == "" ? "-" : f[6]), ratio(f[4], cn[f[2]]), ratio(f[4], rn[f[2]]),
                ratio(f[6], ci[f[2]]), ratio(f[6], ri[f[2]])
        }
    }' "$tsv"
if ((${#skips[@]} > 0)) || [[ " ${timed[*]} " == *" go_jsonrpc2_conn "* ]]; then
    echo
    for sk in "${skips[@]}"; do echo "skipped: ${sk/$'\t'/: }"; done
    [[ " ${timed[*]} " == *" go_jsonrpc2_conn "* ]] && echo "batch10_subtract on go_jsonrpc2_*: $batch_na"
fi
echo "done in $((SECONDS - start)) s"
