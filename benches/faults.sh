#!/usr/bin/env bash
# Fault suite (issue #23 item 2): hostile-peer scenarios against `switchboard serve` and
# jsonrpsee's HTTP server (and its WebSocket server for the WebSocket rows) side by side,
# loopback only; each row's normal-client p99 is checked against the unloaded one (at most
# 2x, no failure); writes benches/results/faults.md.
# About 10 minutes on 2 cores. Scale with FAULTS_SCALE (counts), FAULTS_HOLD (seconds an
# attack is held), FAULTS_STDIO_MB (the stdio stream); pass scenario names (e.g.
# `slowloris malformed`) or numbers to run only those. Not part of .ci/run.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -p switchboard-cli --bins
cargo build --release -p switchboard-benches --bins --features peers
# thousands of sockets per scenario
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
if [ "$(ulimit -n)" != unlimited ] && [ "$(ulimit -n)" -lt 12000 ]; then
    echo "faults.sh: ulimit -n is $(ulimit -n); the 5000-connection scenarios need ~12000" >&2
fi
exec python3 benches/faults.py "$@"
