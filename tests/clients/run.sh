#!/usr/bin/env bash
# Real-client suites: drive examples/mcp-server with the official MCP Python SDK
# (over stdio, and over Streamable HTTP with `--http`), examples/lsp-server with
# pygls, and `switchboard serve` with the websockets package and web3.py, all
# installed from PyPI into a virtualenv.
#
#   tests/clients/run.sh [extra pytest args]
#
# Environment:
#   MCP_SERVER    mcp-server binary  (default target/release/examples/mcp-server)
#   LSP_SERVER    lsp-server binary  (default target/release/examples/lsp-server)
#   SWITCHBOARD_BIN switchboard binary (default target/release/switchboard)
#   CLIENTS_VENV  virtualenv to create or reuse (default target/clients-venv)
#   PYTHON        interpreter that creates the venv (default python3)
#   CI=true       a failed install is an error (exit 1), not a skip
#
# Build the binaries first: cargo build --release -p switchboard-cli -p switchboard-server --bins --examples
set -uo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
cd "$root" || exit 1

venv="${CLIENTS_VENV:-target/clients-venv}"
python="${PYTHON:-python3}"
requirements="$here/requirements.txt"

install_failed() {
    if [ "${CI:-}" = "true" ]; then
        echo "" >&2
        echo "########################################################################" >&2
        echo "## ERROR: tests/clients: $1" >&2
        echo "## The real-client suites (MCP SDK, pygls, websockets) cannot run." >&2
        echo "########################################################################" >&2
        exit 1
    fi
    echo "tests/clients: $1" >&2
    echo "SKIPPED: real-client suites (set CI=true to make this an error)"
    exit 0
}

# Create (or reuse) the venv; reinstall only when requirements.txt changed.
stamp="$venv/.requirements.sha256"
want="$(sha256sum "$requirements" | cut -d' ' -f1)"
if [ ! -x "$venv/bin/python" ]; then
    "$python" -m venv "$venv" || install_failed "could not create a virtualenv at $venv with $python -m venv"
fi
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$requirements" \
        || install_failed "pip install -r $requirements failed"
    echo "$want" > "$stamp"
fi
"$venv/bin/python" -c "import mcp, mcp.client.streamable_http, httpx2, pygls, lsprotocol, anyio, pytest, pytest_timeout, websockets, web3" \
    || install_failed "the installed client packages do not import"

abspath() { case "$1" in /*) echo "$1" ;; *) echo "$root/$1" ;; esac; }
export MCP_SERVER="$(abspath "${MCP_SERVER:-target/release/examples/mcp-server}")"
export LSP_SERVER="$(abspath "${LSP_SERVER:-target/release/examples/lsp-server}")"
export SWITCHBOARD_BIN="$(abspath "${SWITCHBOARD_BIN:-target/release/switchboard}")"
for bin in "$MCP_SERVER" "$LSP_SERVER" "$SWITCHBOARD_BIN"; do
    if [ ! -x "$bin" ]; then
        echo "ERROR: tests/clients: $bin is missing or not executable." >&2
        echo "Build it: cargo build --release -p switchboard-cli -p switchboard-server --bins --examples" >&2
        exit 1
    fi
done

# The venv python is not an interpreter the user's shell sets up; keep it from
# picking up stray site/config state.
export PYTHONDONTWRITEBYTECODE=1
unset PYTHONPATH

"$venv/bin/python" -m pytest \
    -c "$here/pytest.ini" --rootdir "$here" \
    -v \
    "$here/test_mcp.py" "$here/test_mcp_http.py" "$here/test_lsp.py" \
    "$here/test_ws.py" "$here/test_web3.py" \
    "$@"
status=$?
if [ "$status" -eq 5 ]; then
    echo "ERROR: tests/clients: pytest collected no tests" >&2
    exit 1
fi
exit "$status"
