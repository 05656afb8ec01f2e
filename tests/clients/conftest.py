"""Shared fixtures for the real-client suites (MCP SDK, pygls, websockets, web3.py).

The binaries under test come from MCP_SERVER / LSP_SERVER / SWITCHBOARD_BIN
(run.sh sets them).
"""
import os
import re
import subprocess

import pytest


@pytest.fixture
def anyio_backend():
    # pygls is asyncio-only and the MCP SDK runs on it too.
    return "asyncio"


def _binary(var: str) -> str:
    path = os.environ.get(var)
    if not path:
        pytest.fail(f"{var} is not set (run tests/clients/run.sh)")
    if not os.access(path, os.X_OK):
        pytest.fail(f"{var}={path} is not an executable file")
    return path


@pytest.fixture
def mcp_server() -> str:
    return _binary("MCP_SERVER")


@pytest.fixture
def lsp_server() -> str:
    return _binary("LSP_SERVER")


@pytest.fixture
def switchboard_bin() -> str:
    return _binary("SWITCHBOARD_BIN")


@pytest.fixture
def switchboard_serve(switchboard_bin):
    """Starts `switchboard serve --listen 127.0.0.1:0 ARGS...` and returns its
    `http://HOST:PORT/` (read from its first line); stopped after the test."""
    procs = []

    def start(*args: str) -> str:
        proc = subprocess.Popen(
            [switchboard_bin, "serve", "--listen", "127.0.0.1:0", *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        procs.append(proc)
        line = proc.stdout.readline()
        m = re.match(r"switchboard listening on (http://[^/]+/)", line)
        assert m, f"unexpected first line {line!r}"
        return m.group(1)

    yield start
    for proc in procs:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
