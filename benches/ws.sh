#!/usr/bin/env bash
# WebSocket load: `switchboard serve` against jsonrpsee's WebSocket server with the same demo
# methods (src/bin/jsonrpsee_server.rs --ws), driven by one client for both
# (src/bin/ws_load.rs: raw frames, N connections each keeping a window of messages in flight).
#
#   bash benches/ws.sh
#
# Environment: WS_ROUNDS (interleaved rounds, default 3), WS_SECONDS (per run, default 3),
# WS_CONNECTIONS (default 4), WS_WINDOW (default 32), WS_BATCH (calls per batch, default 10),
# WS_SERVER_CPU / WS_CLIENT_CPU (cores to pin to, default 0 and 1; taskset), WS_SUB_COUNT
# (notifications per subscription in the subscription rows, default 1000000000: the runs end
# at WS_SECONDS), WS_SUBS (subscribers in the 100-subscriber rows, default 100); WS_IDLE=N also
# measures each server's memory per idle connection with N open (benches/ws_idle.py, python3;
# raises the descriptor limit to N+100 if lower).
# Each server runs one tokio worker thread pinned to WS_SERVER_CPU; the client runs on
# WS_CLIENT_CPU. Prints, per workload, each server's median over the rounds and the ratio
# switchboard/jsonrpsee. The subscription rows (`switchboard serve --bench`'s and
# jsonrpsee_server's `bench_subscribe`: notifications as fast as the client reads, each
# server's sink waiting for room) count notifications/s delivered to 1 subscriber, to
# WS_SUBS subscribers on as many connections, and to WS_SUBS on one connection.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

rounds="${WS_ROUNDS:-3}"
seconds="${WS_SECONDS:-3}"
conns="${WS_CONNECTIONS:-4}"
window="${WS_WINDOW:-32}"
batch="${WS_BATCH:-10}"
sub_count="${WS_SUB_COUNT:-1000000000}"
nsubs="${WS_SUBS:-100}"
scpu="${WS_SERVER_CPU:-0}"
ccpu="${WS_CLIENT_CPU:-1}"
target="${CARGO_TARGET_DIR:-target}"

cargo build --release -q -p switchboard-cli --bin switchboard
cargo build --release -q -p switchboard-benches --bin jsonrpsee_server --bin ws_load
command -v taskset >/dev/null || { echo "ws.sh: taskset (util-linux) is needed" >&2; exit 1; }

pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; }
trap cleanup EXIT

# start NAME CMD...: runs CMD pinned, waits for its "listening on SCHEME://ADDR/" line.
start() {
    local name="$1"; shift
    local out; out="$(mktemp)"
    taskset -c "$scpu" "$@" >"$out" 2>/dev/null &
    pids+=($!)
    echo "$!" >"$out.pid"
    for _ in $(seq 100); do
        if grep -q "listening on" "$out"; then break; fi
        sleep 0.1
    done
    local addr; addr="$(grep -o 'listening on [a-z]*://[^/]*' "$out" | head -1 | sed 's|.*://||')"
    [ -n "$addr" ] || { echo "ws.sh: $name did not start" >&2; exit 1; }
    echo "$addr $(cat "$out.pid")"
}

if [ -n "${WS_IDLE:-}" ] && [ "$(ulimit -n)" -lt $((WS_IDLE + 100)) ]; then ulimit -n $((WS_IDLE + 100)); fi
read -r sb sb_pid <<<"$(start switchboard "$target/release/switchboard" serve --bench --listen 127.0.0.1:0 --threads 1)"
read -r js js_pid <<<"$(start jsonrpsee "$target/release/jsonrpsee_server" --listen 127.0.0.1:0 --threads 1 --ws)"

run() { # ADDR ARGS... -> calls/s
    taskset -c "$ccpu" "$target/release/ws_load" "$1" --connections "$conns" --window "$window" --seconds "$seconds" "${@:2}" | awk '{print $3}'
}
sub_run() { # ADDR ARGS... -> notifications/s
    taskset -c "$ccpu" "$target/release/ws_load" "$1" --subscribe "$sub_count" --seconds "$seconds" "${@:2}" | awk '{print $1}'
}
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

declare -A results
for r in $(seq "$rounds"); do
    for w in single batch; do
        args=(); [ "$w" = batch ] && args=(--batch "$batch")
        results[$w.switchboard]+="$(run "$sb" "${args[@]}") "
        results[$w.jsonrpsee]+="$(run "$js" "${args[@]}") "
    done
    for w in sub1 subconns subone; do
        case "$w" in
            sub1) args=() ;;
            subconns) args=(--connections "$nsubs") ;;
            subone) args=(--subscriptions "$nsubs") ;;
        esac
        results[$w.switchboard]+="$(sub_run "$sb" "${args[@]}") "
        results[$w.jsonrpsee]+="$(sub_run "$js" "${args[@]}") "
    done
done

echo "# WebSocket: switchboard serve vs jsonrpsee $(grep -A1 'name = "jsonrpsee-server"' Cargo.lock | sed -n 's/version = "\(.*\)"/\1/p')"
echo "# $conns connections x $window in flight, ${seconds}s per run, $rounds interleaved rounds, servers on core $scpu (1 thread), client on core $ccpu"
printf '%-28s %14s %14s %8s\n' workload switchboard jsonrpsee ratio
for w in single batch sub1 subconns subone; do
    s="$(echo "${results[$w.switchboard]}" | tr ' ' '\n' | grep . | median)"
    j="$(echo "${results[$w.jsonrpsee]}" | tr ' ' '\n' | grep . | median)"
    case "$w" in
        single) label="subtract, calls/s" ;;
        batch) label="batch of $batch, calls/s" ;;
        sub1) label="1 subscriber, notes/s" ;;
        subconns) label="$nsubs subs/$nsubs conns, notes/s" ;;
        subone) label="$nsubs subs/1 conn, notes/s" ;;
    esac
    printf '%-28s %14s %14s %7.2fx\n' "$label" "$s" "$j" "$(echo "$s / $j" | bc -l)"
    echo "  runs: switchboard ${results[$w.switchboard]}| jsonrpsee ${results[$w.jsonrpsee]}"
done
if [ -n "${WS_IDLE:-}" ]; then
    echo "memory per idle connection, $WS_IDLE open:"
    echo "  switchboard $(python3 benches/ws_idle.py "${sb%:*}" "${sb##*:}" "$WS_IDLE" "$sb_pid")"
    echo "  jsonrpsee   $(python3 benches/ws_idle.py "${js%:*}" "${js##*:}" "$WS_IDLE" "$js_pid")"
fi
