"""Shared fixtures for the real-client suites (MCP SDK and pygls).

The binaries under test come from MCP_SERVER / LSP_SERVER (run.sh sets them).
"""
import os

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
