#!/usr/bin/env bash
# Load test (issue #7): `switchboard serve` against jsonrpsee's HTTP server with the
# same demo methods (src/bin/jsonrpsee_server.rs), driven over loopback by wrk from
# a second process, in the same run, rounds interleaved.
#
#   benches/load.sh            # the full run; writes benches/results/load.md
#   benches/load.sh smoke      # checks both servers answer correctly (a few
#                              # seconds after the build); no timing, no file
#   benches/load.sh profile    # where a request's CPU goes, per server and workload:
#                              # user-space instructions per request (callgrind,
#                              # counters zeroed after a warm-up, under the same wrk
#                              # load) and system calls per request (strace -c);
#                              # writes benches/results/load-profile.md
#
# What it does:
#  1. installs what it needs if missing (wrk, curl, jq, taskset: Debian packages) and
#     builds both servers in release (`cargo build --release`, honours
#     CARGO_TARGET_DIR);
#  2. starts each server pinned with `taskset` to core LOAD_SERVER_CPU with one tokio
#     worker thread (`--threads 1`; each process also has its main thread, asleep in
#     `block_on`, on the same core), listening on a free loopback port;
#  3. checks every workload once per server: curl gets status 200, a JSON content
#     type and the expected JSON (compared with jq, member order aside), then a short
#     wrk run with the same settings as the timed runs checks that every response is
#     status 200 with exactly the body curl got (load.lua's LOAD_EXPECT); this is
#     also the warm-up;
#  4. times LOAD_ROUNDS rounds; in each, every workload runs on each server for
#     LOAD_SECONDS (the order of the two servers alternates from round to round), so
#     drift of the machine hits both alike; wrk runs pinned to core LOAD_CLIENT_CPU,
#     one thread, LOAD_CONNS keep-alive connections; any wrk error or non-2xx status
#     fails the run;
#  5. reports the median over rounds of each figure and the ratio of medians, and the
#     per-round raw figures, to benches/results/load.md (LOAD_OUT) and stdout.
#
# Workloads (the body is POSTed with Content-Type: application/json):
#   single      {"jsonrpc":"2.0","method":"subtract","params":[42,23],"id":1}, one
#               request per connection at a time
#   batch10     a batch of 10 subtract calls ([42+i,23], id i: the dispatch benches'
#               batch), one request per connection at a time; calls/s = 10 x req/s
#   single_pN   single, N requests per write on each connection (HTTP/1.1
#               pipelining, N = LOAD_PIPELINE): cheaper for the client per request
#
# Latency: wrk's p50/p99 per request (time from writing the request to reading its
# whole response), closed loop. wrk 4.1 "corrects" its latency histogram for
# coordinated omission (samples over twice the mean interval per connection add
# synthetic samples), which mostly moves p99. With pipelining wrk records one
# sample per pipeline and its correction assumes one per request, so the pipelined
# rows report no latency.
#
# CPU: for each run, the server's CPU time (from /proc/PID/stat) and wrk's (bash's
# `time`) as a share of the run's wall time (1.00 = one core), and what everything
# else on the machine used, from /proc/stat: "other" at nice <= 0 (other people's
# builds: they compete with us as equals) and "niced" (a fuzzer at nice 10: it gets
# what we leave). A server near 1.00 is the bottleneck; wrk near 1.00 means the
# ratio measures the client. Before each round the script waits (up to
# LOAD_QUIET_WAIT s) until the rest of the machine uses under LOAD_QUIET_MAX cores.
#
# Scheduling: a request/response ping-pong sleeps and wakes once per round trip on
# each side, and the scheduler (EEVDF) lets a running task finish its slice before
# a woken one gets the core - even a nice 10 fuzzer. On this shared machine that
# left the servers a third of their core. LOAD_RT=1 runs both servers and wrk
# under SCHED_FIFO (chrt -f 1, needs root): woken at once, they get their cores as
# if the machine were idle, and everything else gets what they leave (at least 5%:
# the kernel's RT throttle) for the few minutes of the run.
#
# Settings (environment):
#   LOAD_SECONDS=5 LOAD_ROUNDS=5 LOAD_CONNS=16 LOAD_PIPELINE=10 (0: no pipelined row)
#   LOAD_SERVER_CPU=0 LOAD_CLIENT_CPU=1 LOAD_CHECK_SECONDS=1
#   LOAD_QUIET_MAX=0.3 LOAD_QUIET_WAIT=60 LOAD_RT=0
#   LOAD_WORKLOADS="single batch10 single_p10"   LOAD_OUT=benches/results/load.md
#   LOAD_FLOOR=0 (1: also the floor servers, see below)
#   LOAD_BASELINE=PATH: also the `switchboard` binary at PATH, as stack `baseline`
#               (e.g. a copy of target/release/switchboard built before a change):
#               before and after in the same interleaved rounds; LOAD_BASELINE_ARGS:
#               options it gets after `serve` (e.g. LOAD_BASELINE=target/release/switchboard
#               LOAD_BASELINE_ARGS=--http1-only: one binary, two configurations)
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
mode="${1:-full}"
case "$mode" in
    full | smoke | profile) ;;
    *) echo "usage: $0 [smoke|profile]" >&2; exit 2 ;;
esac

secs="${LOAD_SECONDS:-5}"
rounds="${LOAD_ROUNDS:-5}"
conns="${LOAD_CONNS:-16}"
pipeline="${LOAD_PIPELINE:-10}"
server_cpu="${LOAD_SERVER_CPU:-0}"
client_cpu="${LOAD_CLIENT_CPU:-1}"
check_secs="${LOAD_CHECK_SECONDS:-1}"
quiet_max="${LOAD_QUIET_MAX:-0.3}"
quiet_wait="${LOAD_QUIET_WAIT:-60}"
# LOAD_RT=1: both servers and wrk under SCHED_FIFO (priority 1), see the notes above.
sched=(env)
[[ "${LOAD_RT:-0}" == 1 ]] && sched=(chrt -f 1)
out_file="${LOAD_OUT:-benches/results/load.md}"
default_workloads="single batch10"
[[ "$pipeline" -gt 1 ]] && default_workloads+=" single_p$pipeline"
workloads="${LOAD_WORKLOADS:-$default_workloads}"
# switchboard and jsonrpsee always (the ratio is theirs); LOAD_FLOOR=1 adds the floor
# (src/bin/floor_server.rs): `floor` frames requests by Content-Length alone and
# answers with switchboard's Session, `floor_canned` copies the previous answer (no
# JSON-RPC work): what a request costs here when a server does nothing but the
# system calls the load forces.
stacks="switchboard jsonrpsee"
[[ "${LOAD_FLOOR:-0}" == 1 ]] && stacks+=" floor floor_canned"
[[ -n "${LOAD_BASELINE:-}" ]] && stacks+=" baseline"

# --- 1. tools and build ---------------------------------------------------------
who=load.sh; source "$root/benches/need.sh"
need wrk wrk
need curl curl
need jq jq
need taskset util-linux
if [[ "$mode" == profile ]]; then
    need valgrind valgrind
    need strace strace
fi

target="${CARGO_TARGET_DIR:-$root/target}"
cargo build --quiet --release -p switchboard-cli --bin switchboard \
    -p switchboard-benches --bin jsonrpsee_server --bin floor_server
declare -A cmd=(
    [switchboard]="$target/release/switchboard serve"
    [jsonrpsee]="$target/release/jsonrpsee_server"
    [floor]="$target/release/floor_server"
    [floor_canned]="$target/release/floor_server --canned"
    [baseline]="${LOAD_BASELINE:-} serve ${LOAD_BASELINE_ARGS:-}"
)

tmp="$(mktemp -d "${TMPDIR:-/tmp}/switchboard-load.XXXXXX")"
pids=()
cleanup() {
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
    for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
    rm -rf "$tmp"
}
trap cleanup EXIT

# --- 2. servers -----------------------------------------------------------------
declare -A url pid
start() { # start STACK COMMAND...
    local name="$1"
    shift
    "${sched[@]}" taskset -c "$server_cpu" "$@" --listen 127.0.0.1:0 --threads 1 \
        >"$tmp/$name.out" 2>"$tmp/$name.err" &
    pid[$name]=$!
    pids+=("$!")
    for _ in $(seq 100); do
        url[$name]="$(grep -o 'http://[0-9.:]*/' "$tmp/$name.out" | head -n1 || true)"
        [[ -n "${url[$name]}" ]] && return
        kill -0 "${pid[$name]}" 2>/dev/null || break
        sleep 0.1
    done
    echo "load.sh: $name did not start:" >&2
    cat "$tmp/$name.out" "$tmp/$name.err" >&2
    exit 1
}
for stack in $stacks; do
    # shellcheck disable=SC2086 # the command and its arguments
    start "$stack" ${cmd[$stack]}
    echo "$stack: ${url[$stack]} (pid ${pid[$stack]}), on core $server_cpu"
done
echo "wrk on core $client_cpu"

# --- workloads ------------------------------------------------------------------
single='{"jsonrpc":"2.0","method":"subtract","params":[42,23],"id":1}'
batch="["
for i in $(seq 10); do
    [[ $i -gt 1 ]] && batch+=","
    batch+="{\"jsonrpc\":\"2.0\",\"method\":\"subtract\",\"params\":[$((42 + i)),23],\"id\":$i}"
done
batch+="]"
body_of() {
    case "$1" in
        single | single_p*) printf '%s' "$single" ;;
        batch10) printf '%s' "$batch" ;;
        *) echo "load.sh: unknown workload $1" >&2; exit 2 ;;
    esac
}
depth_of() { case "$1" in single_p*) echo "${1#single_p}" ;; *) echo 1 ;; esac; }
calls_of() { case "$1" in batch10) echo 10 ;; *) echo 1 ;; esac; }
# The expected answer, canonical: keys sorted, batch answers sorted by id.
canon() { jq -cS 'if type == "array" then sort_by(.id) else . end'; }
expected_of() {
    case "$1" in
        batch10) jq -cn '[range(1; 11) | {jsonrpc: "2.0", result: (19 + .), id: .}]' | canon ;;
        *) echo '{"jsonrpc":"2.0","result":19,"id":1}' | canon ;;
    esac
}

# wrk STACK WORKLOAD SECONDS [EXPECT]: one wrk run; prints load.lua's RESULT line
# followed by the client's user+system seconds.
run_wrk() {
    local stack="$1" w="$2" s="$3" expect="${4:-}"
    local TIMEFORMAT='%U %S'
    {
        time LOAD_BODY="$(body_of "$w")" LOAD_PIPELINE="$(depth_of "$w")" LOAD_EXPECT="$expect" \
            "${sched[@]}" taskset -c "$client_cpu" wrk -t1 -c"$conns" -d"${s}s" --timeout 10s --latency \
            -s benches/load.lua "${url[$stack]}" >"$tmp/wrk.out" 2>"$tmp/wrk.err"
    } 2>"$tmp/time"
    if ! grep -q '^RESULT ' "$tmp/wrk.out"; then
        echo "load.sh: wrk failed on $stack/$w:" >&2
        cat "$tmp/wrk.out" "$tmp/wrk.err" >&2
        exit 1
    fi
    echo "$(grep '^RESULT ' "$tmp/wrk.out") client_s=$(awk '{ print $1 + $2 }' "$tmp/time")"
}
field() { sed -n "s/.* $1=\([^ ]*\).*/\1/p" <<<"$2"; }

# --- 3. checks ------------------------------------------------------------------
for w in $workloads; do
    want="$(expected_of "$w")"
    for stack in $stacks; do
        body_of "$w" >"$tmp/req.json"
        meta="$(curl -sS -o "$tmp/resp" -w '%{http_code} %{content_type}' \
            -H 'Content-Type: application/json' --data-binary @"$tmp/req.json" "${url[$stack]}")"
        got="$(canon <"$tmp/resp" 2>/dev/null || echo "(not JSON) $(cat "$tmp/resp")")"
        if [[ "$meta" != "200 application/json"* || "$got" != "$want" ]]; then
            echo "load.sh: $stack answers $w wrongly: $meta $got (want 200 application/json $want)" >&2
            exit 1
        fi
        r="$(run_wrk "$stack" "$w" "$check_secs" "$(cat "$tmp/resp")")"
        if [[ "$(field errors "$r")" != 0 || "$(field bad "$r")" != 0 || "$(field requests "$r")" -lt 1 ]]; then
            echo "load.sh: $stack under wrk on $w: $r" >&2
            cat "$tmp/wrk.err" >&2
            exit 1
        fi
        echo "check $stack $w: ok ($(field requests "$r") responses, each 200 with the expected body)"
    done
done
if [[ "$mode" == smoke ]]; then
    echo "smoke: every server ($stacks) answers every workload correctly"
    exit 0
fi

# --- profile mode -------------------------------------------------------------------
if [[ "$mode" == profile ]]; then
    psecs="${LOAD_PROFILE_SECONDS:-5}"
    pout="${LOAD_PROFILE_OUT:-benches/results/load-profile.md}"
    {
        echo "# Where a request's CPU goes: switchboard serve vs jsonrpsee (issue #7)"
        echo
        echo "Generated by \`benches/load.sh profile\` ($(date -u '+%Y-%m-%d %H:%M UTC'), commit $(git rev-parse --short HEAD))."
        echo "Each server with \`--threads 1\`, driven by wrk ($conns keep-alive connections)."
        echo
        echo "- instr/req: user-space instructions per HTTP request (callgrind: the server"
        echo "  runs under valgrind, its counters are zeroed after a 2 s warm-up, then wrk"
        echo "  runs ${psecs} s; total instructions over the requests wrk completed). Kernel work"
        echo "  is not counted."
        echo "- syscalls/req: system calls per HTTP request over a ${psecs} s wrk run of the"
        echo "  native server (strace -c -f), with the main ones."
        echo
        echo "| stack | workload | instr/req | syscalls/req | writes/req | reads/req | epoll_wait/req |"
        echo "| --- | --- | ---: | ---: | ---: | ---: | ---: |"
    } >"$tmp/profile.md"
    for w in $workloads; do
        for stack in $stacks; do
            # Instructions: a server of its own under callgrind.
            # shellcheck disable=SC2046
            valgrind --tool=callgrind --callgrind-out-file="$tmp/cg.$stack.$w.%p" \
                ${cmd[$stack]} --listen 127.0.0.1:0 --threads 1 \
                >"$tmp/cg.out" 2>"$tmp/cg.err" &
            vpid=$!
            vurl=""
            for _ in $(seq 300); do
                vurl="$(grep -o 'http://[0-9.:]*/' "$tmp/cg.out" | head -n1 || true)"
                [[ -n "$vurl" ]] && break
                sleep 0.1
            done
            [[ -n "$vurl" ]] || { echo "load.sh: $stack did not start under valgrind" >&2; cat "$tmp/cg.err" >&2; exit 1; }
            saved="${url[$stack]}"
            url[$stack]="$vurl"
            run_wrk "$stack" "$w" 2 >/dev/null
            callgrind_control -z "$vpid" >/dev/null
            r="$(run_wrk "$stack" "$w" "$psecs")"
            callgrind_control -d "$vpid" >/dev/null
            kill "$vpid"
            wait "$vpid" 2>/dev/null || true
            url[$stack]="$saved"
            dump="$(ls "$tmp/cg.$stack.$w".*.1)" # the dump `-d` wrote (PID.1)
            ir="$(awk '/^(summary|totals):/ { print $2; exit }' "$dump")"
            instr="$(awk -v i="$ir" -v n="$(field requests "$r")" 'BEGIN { printf "%.0f", i / n }')"
            # System calls: strace on the native server.
            strace -c -f -p "${pid[$stack]}" -o "$tmp/strace.$stack.$w" 2>/dev/null &
            spid=$!
            sleep 0.5
            r="$(run_wrk "$stack" "$w" "$psecs")"
            kill -INT "$spid"
            wait "$spid" 2>/dev/null || true
            # strace -c columns: % time, seconds, usecs/call, calls, [errors], syscall.
            line="$(awk -v n="$(field requests "$r")" '
                $NF ~ /^(write|writev|sendto|sendmsg)$/ { wr += $4 }
                $NF ~ /^(read|readv|recvfrom|recvmsg)$/ { rd += $4 }
                $NF == "epoll_wait" { ep += $4 }
                $NF == "total" { tot = $4 }
                END { printf "%.2f | %.2f | %.2f | %.2f", tot / n, wr / n, rd / n, ep / n }
            ' "$tmp/strace.$stack.$w")"
            printf '| %s | %s | %s | %s |\n' "$stack" "$w" "$instr" "$line" >>"$tmp/profile.md"
            echo "profile $stack $w: $instr instr/req, syscalls/req $line"
        done
    done
    mkdir -p "$(dirname "$pout")"
    cp "$tmp/profile.md" "$pout"
    echo
    cat "$pout"
    exit 0
fi

# --- 4. timed rounds ------------------------------------------------------------
cpu_ticks() { awk '{ print $14 + $15, $15 }' "/proc/$1/stat"; } # user+system, system
busy_ticks() { # busy jiffies of all cores at nice <= 0 (user system irq softirq), then niced (nice)
    awk '/^cpu[0-9]/ { s += $2 + $4 + $7 + $8; n += $3 } END { print s, n }' /proc/stat
}
# Waits (up to LOAD_QUIET_WAIT seconds) until the rest of the machine uses less than
# LOAD_QUIET_MAX cores over one second, niced work included: even at nice 10 a
# busy process delays every wake-up of a request/response ping-pong.
busy_rounds=0
wait_quiet() {
    local waited=0 a an b bn
    while :; do
        read -r a an <<<"$(busy_ticks)"
        sleep 1
        read -r b bn <<<"$(busy_ticks)"
        if awk -v d=$((b - a + bn - an)) -v hz="$hz" -v m="$quiet_max" 'BEGIN { exit !(d / hz < m) }'; then
            return
        fi
        waited=$((waited + 1))
        if [[ $waited -ge $quiet_wait ]]; then
            echo "load.sh: the machine is still busy after ${quiet_wait}s; going on" >&2
            busy_rounds=$((busy_rounds + 1))
            return
        fi
    done
}
hz="$(getconf CLK_TCK)"
raw="$tmp/raw.tsv"
printf 'round\tstack\tworkload\treq_s\tp50_us\tp99_us\tserver_cpu\tclient_cpu\tother_cpu\tniced_cpu\tserver_us_per_req\tserver_sys_share\n' >"$raw"
load_before="$(cut -d' ' -f1-3 /proc/loadavg)"
for round in $(seq "$rounds"); do
    wait_quiet
    order="$stacks"
    (( round % 2 == 0 )) && order="$(tr ' ' '\n' <<<"$stacks" | tac | tr '\n' ' ')"
    for w in $workloads; do
        for stack in $order; do
            read -r s0 k0 <<<"$(cpu_ticks "${pid[$stack]}")"
            read -r b0 n0 <<<"$(busy_ticks)"
            r="$(run_wrk "$stack" "$w" "$secs")"
            read -r s1 k1 <<<"$(cpu_ticks "${pid[$stack]}")"
            read -r b1 n1 <<<"$(busy_ticks)"
            if [[ "$(field errors "$r")" != 0 ]]; then
                echo "load.sh: $stack on $w: wrk saw errors or non-2xx statuses: $r" >&2
                exit 1
            fi
            wall="$(field seconds "$r")"
            line="$(awk -v n="$(field requests "$r")" -v t="$wall" -v p50="$(field p50_us "$r")" \
                -v p99="$(field p99_us "$r")" -v s=$((s1 - s0)) -v b=$((b1 - b0)) \
                -v nc=$((n1 - n0)) -v k=$((k1 - k0)) -v c="$(field client_s "$r")" -v hz="$hz" 'BEGIN {
                    srv = s / hz / t; cli = c / t; oth = (b / hz - s / hz - c) / t
                    if (oth < 0) oth = 0
                    printf "%.0f\t%d\t%d\t%.2f\t%.2f\t%.2f\t%.2f\t%.2f\t%.2f", n / t, p50, p99, srv, cli,
                        oth, nc / hz / t, s / hz / n * 1e6, (s > 0 ? k / s : 0)
                }')"
            printf '%s\t%s\t%s\t%s\n' "$round" "$stack" "$w" "$line" >>"$raw"
            printf 'round %s %-11s %-10s %s\n' "$round" "$stack" "$w" "$(tr '\t' ' ' <<<"$line")"
        done
    done
done
load_after="$(cut -d' ' -f1-3 /proc/loadavg)"

# --- 5. report ------------------------------------------------------------------
median() { # median of the numbers on stdin
    sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
col() { # col STACK WORKLOAD COLUMN: that column's values over rounds
    awk -F'\t' -v s="$1" -v w="$2" -v c="$3" 'NR > 1 && $2 == s && $3 == w { print $c }' "$raw"
}
cpu_model="$(awk -F': *' '/^model name/ { print $2; exit }' /proc/cpuinfo)"
lock_version() { awk -v n="$1" '$0 == "name = \"" n "\"" { getline; gsub(/version = |"/, ""); print; exit }' Cargo.lock; }
{
    echo "# Load test: switchboard serve vs jsonrpsee over HTTP (issue #7)"
    echo
    echo "Generated by \`benches/load.sh\` ($(date -u '+%Y-%m-%d %H:%M UTC'), commit $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- server benches/src benches/load.sh benches/load.lua 2>/dev/null || echo ', with uncommitted changes'))."
    echo
    echo "- Machine: $(nproc) cores ($cpu_model), Linux $(uname -r); a VM whose cores are shared"
    echo "  with other work (a fuzzer at nice 10, other people's builds); load average"
    echo "  $load_before before the run, $load_after after. \"other\" is the CPU the rest of"
    echo "  the machine used at nice <= 0 during each run, \"niced\" what niced processes (the"
    echo "  fuzzer) used, both cores together. $busy_rounds of $rounds round(s) started while the"
    echo "  rest of the machine used more than $quiet_max cores (after waiting ${quiet_wait} s)."
    echo "- Cores: each server on core $server_cpu (\`taskset\`, \`--threads 1\`: one tokio worker;"
    echo "  the idle peer server sleeps on the same core), wrk on core $client_cpu (one thread)."
    if [[ "${LOAD_RT:-0}" == 1 ]]; then
        echo "  Servers and wrk ran under SCHED_FIFO (\`chrt -f 1\`): the rest of the machine got"
        echo "  what they left (see load.sh's notes)."
    else
        echo "  Ordinary scheduling (SCHED_OTHER, nice 0), sharing the cores with the rest."
    fi
    echo "- Client: $(wrk -v 2>&1 | head -n1 | awk '{ print $1, $2 }'), $conns keep-alive connections, Lua script benches/load.lua;"
    echo "  rounds: $rounds x $secs s per server and workload, interleaved; figures are medians over rounds."
    echo "- Servers: switchboard (hyper $(lock_version hyper)) and jsonrpsee $(lock_version jsonrpsee-server)"
    echo "  (HTTP only, same demo methods, mimalloc in both); both release builds."
    if [[ "$stacks" == *floor* ]]; then
        echo "- The floor (\`LOAD_FLOOR=1\`, benches/src/bin/floor_server.rs, same runtime and"
        echo "  core): \`floor\` frames each request by its Content-Length alone (no other HTTP"
        echo "  checks) and answers with switchboard's Session; \`floor_canned\` copies the"
        echo "  previous answer (no JSON-RPC work). Not servers to use: what a request costs"
        echo "  on this machine when a server does little more than the system calls the"
        echo "  load forces (one read and one write per request without pipelining)."
    fi
    if [[ -n "${LOAD_BASELINE:-}" ]]; then
        echo "- \`baseline\`: \`$LOAD_BASELINE serve ${LOAD_BASELINE_ARGS:-}\`, same settings otherwise."
    fi
    echo "- Command: \`LOAD_FLOOR=${LOAD_FLOOR:-0} LOAD_RT=${LOAD_RT:-0} LOAD_SECONDS=$secs LOAD_ROUNDS=$rounds LOAD_CONNS=$conns LOAD_PIPELINE=$pipeline benches/load.sh\`"
    echo
    echo "req/s = HTTP requests per second; calls/s = JSON-RPC calls per second (10 per batch)."
    echo "Latency: wrk's per-request p50/p99 (closed loop; wrk 4.1 adds coordinated-omission"
    echo "samples, which mostly moves p99); none for pipelined rows (see load.sh). CPU: share"
    echo "of one core over the run's wall time (100% = the core was all ours). Server us/req:"
    echo "the server's CPU time (user + kernel) per HTTP request, and the kernel's share of"
    echo "it: the efficiency figure that holds when the machine did not leave the server a"
    echo "whole core. Ratios: switchboard's median over jsonrpsee's, req/s (per-round range"
    echo "in brackets) and server CPU per request (jsonrpsee's over switchboard's)."
    echo
    echo "Where the time goes: \`benches/load.sh profile\` (results/load-profile.md) counts each"
    echo "server's user-space instructions and system calls per request. Both make the same"
    echo "system calls (one read and one write per request without pipelining); the kernel"
    echo "share in the server us/req column is that work, the same for both, so it caps the"
    echo "ratio of totals below the ratio of user-space costs. When wrk's CPU is near its"
    echo "cap as well, the req/s ratio is partly the client's; the CPU/req ratio is not."
    echo
    echo "| stack | workload | req/s | calls/s | p50 | p99 | server CPU | server us/req (kernel) | wrk CPU | other / niced CPU | req/s ratio | CPU/req ratio |"
    echo "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | ---: |"
    pct() { median | awk '{ printf "%.0f%%", $1 * 100 }'; }
    for w in $workloads; do
        calls="$(calls_of "$w")"
        js="$(col jsonrpsee "$w" 4 | median)"
        js_us="$(col jsonrpsee "$w" 11 | median)"
        for stack in $stacks; do
            rps="$(col "$stack" "$w" 4 | median)"
            us="$(col "$stack" "$w" 11 | median)"
            if [[ "$w" == single_p* ]]; then
                p50="-"; p99="-"
            else
                p50="$(col "$stack" "$w" 5 | median | awk '{ printf "%.0f us", $1 }')"
                p99="$(col "$stack" "$w" 6 | median | awk '{ printf "%.0f us", $1 }')"
            fi
            ratio="1.00"
            cpu_ratio="1.00"
            if [[ "$stack" != jsonrpsee ]]; then
                range="$(paste <(col "$stack" "$w" 4) <(col jsonrpsee "$w" 4) \
                    | awk '{ r = $1 / $2; if (NR == 1 || r < lo) lo = r; if (NR == 1 || r > hi) hi = r }
                           END { printf "%.2f-%.2f", lo, hi }')"
                ratio="$(awk -v a="$rps" -v b="$js" 'BEGIN { printf "**%.2f**", a / b }') ($range)"
                cpu_ratio="$(awk -v a="$us" -v b="$js_us" 'BEGIN { printf "**%.2f**", b / a }')"
            fi
            printf '| %s | %s | %.0f | %.0f | %s | %s | %s | %.1f (%s) | %s | %s / %s | %s | %s |\n' \
                "$stack" "$w" "$rps" "$(awk -v a="$rps" -v c="$calls" 'BEGIN { print a * c }')" \
                "$p50" "$p99" "$(col "$stack" "$w" 7 | pct)" \
                "$us" "$(col "$stack" "$w" 12 | pct)" "$(col "$stack" "$w" 8 | pct)" \
                "$(col "$stack" "$w" 9 | pct)" "$(col "$stack" "$w" 10 | pct)" "$ratio" "$cpu_ratio"
        done
    done
    echo
    echo "<details><summary>Every run (CPU as a fraction of one core)</summary>"
    echo
    echo "| round | stack | workload | req/s | p50 us | p99 us | server CPU | wrk CPU | other CPU | niced CPU | server us/req | kernel share |"
    echo "| ---: | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
    awk -F'\t' 'NR > 1 { line = $1; for (i = 2; i <= 12; i++) line = line " | " $i; print "| " line " |" }' "$raw"
    echo
    echo "</details>"
} >"$tmp/report.md"
mkdir -p "$(dirname "$out_file")"
cp "$tmp/report.md" "$out_file"
echo
cat "$out_file"
