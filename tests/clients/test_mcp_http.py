"""Real-client tests for `mcp-server --http` (MCP's Streamable HTTP transport).

The official MCP Python SDK's `streamable_http_client` + `ClientSession` drive the
server exactly as a remote MCP client does: initialize (a session id comes back),
tools list and call, a `slow` call whose progress notifications arrive on the
POST's SSE stream, `ask` (a sampling request sent to the client mid-call, the
client's answer POSTed back), and the session's end. Raw httpx requests check the
transport's corners the SDK never produces (no session, an unknown session, a
DELETE, a GET stream, bad media types).
"""
from __future__ import annotations

import json
import re
import subprocess
import threading
from contextlib import asynccontextmanager, contextmanager

import anyio
import httpx2 as httpx  # the HTTP client the MCP SDK itself uses
import mcp.types as types
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "raw", "version": "0"},
    },
}
ACCEPT = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


@contextmanager
def http_server(binary: str, *args: str):
    """`mcp-server --http 127.0.0.1:0`, its URL read from its first stderr line."""
    proc = subprocess.Popen(
        [binary, "--http", "127.0.0.1:0", *args],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        line = proc.stderr.readline()
        m = re.search(r"listening on (http://\S+)", line)
        assert m, f"no listening line from mcp-server: {line!r}"
        # Keep draining stderr so the server never blocks on a full pipe.
        threading.Thread(target=proc.stderr.read, daemon=True).start()
        yield m.group(1)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            raise
    assert proc.returncode in (0, -15), f"mcp-server exited {proc.returncode}"


@asynccontextmanager
async def sdk_session(url: str, sampling_callback=None):
    async with streamable_http_client(url) as (read, write):
        async with ClientSession(read, write, sampling_callback=sampling_callback) as session:
            with anyio.fail_after(10):
                init = await session.initialize()
            yield session, init


def _text(result: types.CallToolResult) -> str:
    return "".join(c.text for c in result.content if isinstance(c, types.TextContent))


@pytest.mark.anyio
async def test_http_sdk_initialize_list_and_call(mcp_server):
    with http_server(mcp_server) as url:
        async with sdk_session(url) as (session, init):
            assert init.server_info.name
            tools = await session.list_tools()
            assert {t.name for t in tools.tools} >= {"add", "slow", "ask", "roots"}
            result = await session.call_tool("add", {"a": 2, "b": 40})
            assert not result.is_error and _text(result) == "42"


@pytest.mark.anyio
async def test_http_sdk_slow_progress_on_the_stream(mcp_server):
    progress: list[float] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append(value)

    with http_server(mcp_server) as url:
        async with sdk_session(url) as (session, _):
            with anyio.fail_after(15):
                result = await session.call_tool("slow", {"ms": 650}, progress_callback=on_progress)
            assert not result.is_error, result
            assert len(progress) >= 2, progress
            assert progress == sorted(progress), progress


@pytest.mark.anyio
async def test_http_sdk_ask_round_trips_sampling(mcp_server):
    seen: list[types.CreateMessageRequestParams] = []

    async def sampling(context, params: types.CreateMessageRequestParams):
        seen.append(params)
        return types.CreateMessageResult(
            role="assistant",
            content=types.TextContent(type="text", text="forty-two"),
            model="test-model",
            stop_reason="endTurn",
        )

    with http_server(mcp_server) as url:
        async with sdk_session(url, sampling_callback=sampling) as (session, _):
            with anyio.fail_after(15):
                result = await session.call_tool("ask", {"question": "What is six times seven?"})
            assert not result.is_error, result
            assert _text(result) == "forty-two"
            assert len(seen) == 1


def _events(text: str) -> list[dict]:
    out = []
    for block in text.split("\n\n"):
        data = [l[len("data: "):] for l in block.split("\n") if l.startswith("data: ")]
        if data:
            out.append(json.loads("\n".join(data)))
    return out


def test_http_raw_sessions(mcp_server):
    with http_server(mcp_server) as url, httpx.Client(timeout=10) as c:
        # Not initialize, no session: 400.
        r = c.post(url, headers=ACCEPT, json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
        assert r.status_code == 400, r.text
        # An unknown session: 404, whatever the method.
        for method in ("post", "get", "delete"):
            h = dict(ACCEPT, **{"Mcp-Session-Id": "no-such-session"})
            kw = {"json": INIT} if method == "post" else {}
            r = getattr(c, method)(url, headers=h, **kw)
            assert r.status_code == 404, (method, r.status_code, r.text)
        # initialize: JSON, and the session id.
        r = c.post(url, headers=ACCEPT, json=INIT)
        assert r.status_code == 200, r.text
        assert r.headers["content-type"].startswith("application/json")
        sid = r.headers["mcp-session-id"]
        assert re.fullmatch(r"[\x21-\x7e]+", sid), sid
        assert r.json()["id"] == 1 and "result" in r.json()
        h = dict(ACCEPT, **{"Mcp-Session-Id": sid})
        # A notification: 202, no body.
        r = c.post(url, headers=h, json={"jsonrpc": "2.0", "method": "notifications/initialized"})
        assert r.status_code == 202 and r.content == b""
        # A call that reports progress: an event stream, the progress, then the answer.
        call = {
            "jsonrpc": "2.0",
            "id": "s1",
            "method": "tools/call",
            "params": {"name": "slow", "arguments": {"ms": 250}, "_meta": {"progressToken": "t"}},
        }
        r = c.post(url, headers=h, json=call)
        assert r.status_code == 200
        assert r.headers["content-type"].startswith("text/event-stream")
        ev = _events(r.text)
        assert ev[-1]["id"] == "s1" and "result" in ev[-1], ev
        assert all(e.get("method") == "notifications/progress" for e in ev[:-1]), ev
        assert len(ev) >= 2, ev
        # Invalid JSON in a session: the -32700 error object, as JSON.
        r = c.post(url, headers=h, content=b'{"jsonrpc":"2.0","method":"x",')
        assert r.status_code == 200 and r.json()["error"]["code"] == -32700
        # Wrong media type: 415; wrong method: 405; wrong path: 404.
        r = c.post(url, headers=dict(h, **{"Content-Type": "text/plain"}), content=b"{}")
        assert r.status_code == 415
        assert c.put(url, headers=h, content=b"{}").status_code == 405
        assert c.post(url.replace("/mcp", "/other"), headers=h, json=INIT).status_code == 404
        # A foreign Origin: 403.
        r = c.post(url, headers=dict(h, Origin="https://evil.example"), json=INIT)
        assert r.status_code == 403
        # DELETE ends the session; then it is unknown.
        assert c.delete(url, headers=h).status_code == 204
        r = c.post(url, headers=h, json={"jsonrpc": "2.0", "id": 2, "method": "ping"})
        assert r.status_code == 404


def test_http_raw_get_stream_carries_messages_no_post_carries(mcp_server):
    """A GET stream opens (event-stream, keep-alive comments aside) and ends with the session."""
    with http_server(mcp_server) as url, httpx.Client(timeout=10) as c:
        r = c.post(url, headers=ACCEPT, json=INIT)
        sid = r.headers["mcp-session-id"]
        h = dict(ACCEPT, **{"Mcp-Session-Id": sid})
        with c.stream("GET", url, headers={"Accept": "text/event-stream", "Mcp-Session-Id": sid}) as g:
            assert g.status_code == 200
            assert g.headers["content-type"].startswith("text/event-stream")
            # Ending the session ends the stream.
            assert httpx.delete(url, headers=h, timeout=10).status_code == 204
            rest = b"".join(g.iter_bytes())
            assert b"data:" not in rest, rest
        # GET without accepting an event stream: 406.
        r = c.post(url, headers=ACCEPT, json=INIT)
        sid = r.headers["mcp-session-id"]
        r = c.get(url, headers={"Accept": "application/json", "Mcp-Session-Id": sid})
        assert r.status_code == 406
