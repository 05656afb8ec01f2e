#!/usr/bin/env bash
# Side-by-side duplex benchmark: switchboard's example servers vs rmcp and tower-lsp.
#   N=20000 ROUNDS=3 bash benches/duplex/run.sh        (from anywhere)
# Env: N (requests per throughput loop, default 20000), ROUNDS (default 3),
#      WINDOW (pipelined in-flight requests, default 32), PINGS (default 200), ASKS (default 2000),
#      ONLY=mcp|lsp to run one protocol, SKIP_BUILD=1 to reuse existing binaries,
#      MIMALLOC=1 to build the rmcp / tower-lsp servers with mimalloc (as switchboard's examples are).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
N="${N:-20000}"
ROUNDS="${ROUNDS:-3}"
WINDOW="${WINDOW:-32}"
PINGS="${PINGS:-200}"
ASKS="${ASKS:-2000}"
ONLY="${ONLY:-}"

if [[ -z "${SKIP_BUILD:-}" ]]; then
  echo "== building duplex-load, rmcp-server, towerlsp-server (release, own workspace)" >&2
  features=()
  [[ -n "${MIMALLOC:-}" ]] && features=(--features mimalloc)
  cargo build --release --manifest-path "$here/Cargo.toml" "${features[@]}" >&2
  echo "== building switchboard examples (release)" >&2
  (cd "$root" && cargo build --release -p switchboard-server --examples) >&2
fi

bin="$here/target/release"
sbex="$root/target/release/examples"
common=(--n "$N" --rounds "$ROUNDS" --window "$WINDOW")

for f in "$bin/duplex-load" "$bin/rmcp-server" "$bin/towerlsp-server"; do
  [[ -x "$f" ]] || { echo "missing $f" >&2; exit 1; }
done

status=0
if [[ -z "$ONLY" || "$ONLY" == mcp ]]; then
  [[ -x "$sbex/mcp-server" ]] || { echo "missing $sbex/mcp-server" >&2; exit 1; }
  echo
  echo "================ MCP over stdio (NDJSON) ================"
  # rmcp twice: with rmcp::transport::stdio() (what rmcp's examples use) and with
  # rmcp::transport::stdio_pipes() (its non-blocking FIFO transport, the faster one).
  "$bin/duplex-load" mcp "${common[@]}" --pings "$PINGS" --asks "$ASKS" \
    --server "switchboard=$sbex/mcp-server" \
    --server "rmcp=$bin/rmcp-server" \
    --server "rmcp-pipes=$bin/rmcp-server --pipes" || status=1
fi
if [[ -z "$ONLY" || "$ONLY" == lsp ]]; then
  [[ -x "$sbex/lsp-server" ]] || { echo "missing $sbex/lsp-server" >&2; exit 1; }
  echo
  echo "================ LSP over stdio (Content-Length) ================"
  "$bin/duplex-load" lsp "${common[@]}" \
    --server "switchboard=$sbex/lsp-server" \
    --server "tower-lsp=$bin/towerlsp-server" || status=1
fi
exit $status
