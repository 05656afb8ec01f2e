"""Real-client tests for examples/mcp-server.

Two halves:
  * SDK tests drive the server with the official MCP Python SDK
    (`mcp.client.stdio.stdio_client` + `mcp.ClientSession`), exactly as users do.
  * Raw tests spawn the server with subprocess and speak NDJSON by hand, for the
    protocol corners the SDK never produces (unknown/repeated response ids,
    unanswered server requests, floods, malformed lines, version negotiation).

No test relies on a timing threshold to pass: ordering is checked by what
arrives first; timeouts only bound how long a test may wait.
"""
from __future__ import annotations

import json
import queue
import subprocess
import tempfile
import threading
import time
from contextlib import asynccontextmanager
from typing import Any

import anyio
import mcp.types as types
import pytest
from mcp import ClientSession, MCPError, StdioServerParameters
from mcp.client.stdio import stdio_client

LATEST = "2025-11-25"
TOOL_NAMES = {"add", "slow", "ask", "roots"}


# --------------------------------------------------------------------------
# JSON-RPC 2.0 validation, applied to every line the server writes
# --------------------------------------------------------------------------

def _is_id(v: Any) -> bool:
    return (isinstance(v, int) and not isinstance(v, bool)) or isinstance(v, str)


def check_jsonrpc(obj: Any) -> None:
    """Assert `obj` is one well-formed JSON-RPC 2.0 message (no batches)."""
    assert isinstance(obj, dict), f"not a JSON object: {obj!r}"
    assert obj.get("jsonrpc") == "2.0", f"jsonrpc must be '2.0': {obj!r}"
    if "method" in obj:
        assert isinstance(obj["method"], str), obj
        assert "result" not in obj and "error" not in obj, obj
        if "id" in obj:
            assert _is_id(obj["id"]), f"request id must be a string or integer: {obj!r}"
        if "params" in obj:
            assert isinstance(obj["params"], (dict, list)), obj
        assert set(obj) <= {"jsonrpc", "id", "method", "params"}, f"extra members: {obj!r}"
    else:
        assert "id" in obj, f"response without id: {obj!r}"
        assert obj["id"] is None or _is_id(obj["id"]), obj
        assert ("result" in obj) != ("error" in obj), f"exactly one of result/error: {obj!r}"
        if "error" in obj:
            err = obj["error"]
            assert isinstance(err, dict), obj
            assert isinstance(err.get("code"), int) and not isinstance(err.get("code"), bool), obj
            assert isinstance(err.get("message"), str), obj
        else:
            assert obj["id"] is not None, f"a result must carry the request's id: {obj!r}"
        assert set(obj) <= {"jsonrpc", "id", "result", "error"}, f"extra members: {obj!r}"


def tool_text(result: dict) -> str:
    content = result["content"]
    assert isinstance(content, list) and content, result
    assert all(c.get("type") == "text" for c in content), result
    return "".join(c["text"] for c in content)


# --------------------------------------------------------------------------
# Raw NDJSON client
# --------------------------------------------------------------------------

class RawMcp:
    """The server as a subprocess, spoken to line by line."""

    def __init__(self, server: str, *args: str):
        self.stderr = tempfile.TemporaryFile()
        self.proc = subprocess.Popen(
            [server, *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.stderr,
        )
        self.lines: queue.Queue[bytes | None] = queue.Queue()
        self.seen: list[dict] = []
        self._next_id = 100
        threading.Thread(target=self._reader, daemon=True).start()

    def _reader(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line)
        self.lines.put(None)

    def stderr_text(self) -> str:
        self.stderr.seek(0)
        return self.stderr.read().decode(errors="replace")[-4000:]

    # -- writing
    def send_line(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data if data.endswith(b"\n") else data + b"\n")
        self.proc.stdin.flush()

    def send(self, obj: dict) -> None:
        self.send_line(json.dumps(obj).encode())

    def new_id(self) -> int:
        self._next_id += 1
        return self._next_id

    def request(self, method: str, params: dict | None = None, id: Any = None) -> Any:
        id = self.new_id() if id is None else id
        msg: dict[str, Any] = {"jsonrpc": "2.0", "id": id, "method": method}
        if params is not None:
            msg["params"] = params
        self.send(msg)
        return id

    def notify(self, method: str, params: dict | None = None) -> None:
        msg: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            msg["params"] = params
        self.send(msg)

    def close_stdin(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()

    # -- reading
    def recv(self, timeout: float = 10.0) -> dict:
        try:
            line = self.lines.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError(
                f"no message from the server within {timeout}s; stderr:\n{self.stderr_text()}"
            ) from None
        if line is None:
            self.lines.put(None)  # stay at EOF
            raise AssertionError(f"server closed stdout; stderr:\n{self.stderr_text()}")
        assert line.endswith(b"\n"), f"unterminated line: {line!r}"
        try:
            obj = json.loads(line)
        except ValueError:
            raise AssertionError(f"server wrote a line that is not one JSON value: {line!r}") from None
        check_jsonrpc(obj)
        self.seen.append(obj)
        return obj

    def recv_skip_progress(self, timeout: float = 10.0) -> dict:
        while True:
            msg = self.recv(timeout)
            if msg.get("method") != "notifications/progress":
                return msg

    def response(self, id: Any, timeout: float = 10.0) -> dict:
        """The next message, which must be the response to `id`."""
        msg = self.recv(timeout)
        assert "method" not in msg and msg.get("id") == id, (
            f"expected the response to id {id!r} next, got {msg!r}"
        )
        return msg

    def result(self, id: Any, timeout: float = 10.0) -> Any:
        msg = self.response(id, timeout)
        assert "result" in msg, f"error response to {id!r}: {msg!r}"
        return msg["result"]

    def ping(self, timeout: float = 10.0) -> None:
        """Ping, and require that the very next line is the ping's answer."""
        id = self.request("ping")
        assert self.result(id, timeout) == {}

    # -- lifecycle
    def initialize(self, version: str = LATEST) -> dict:
        id = self.request(
            "initialize",
            {
                "protocolVersion": version,
                "capabilities": {"sampling": {}, "roots": {"listChanged": True}},
                "clientInfo": {"name": "raw-test", "version": "0.0.1"},
            },
        )
        result = self.result(id)
        self.notify("notifications/initialized")
        return result

    def call(self, name: str, arguments: dict, meta: dict | None = None, id: Any = None) -> Any:
        params: dict[str, Any] = {"name": name, "arguments": arguments}
        if meta is not None:
            params["_meta"] = meta
        return self.request("tools/call", params, id=id)

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(5)
        self.stderr.close()


@pytest.fixture
def raw(mcp_server):
    servers: list[RawMcp] = []

    def start(*args: str) -> RawMcp:
        s = RawMcp(mcp_server, *args)
        servers.append(s)
        return s

    yield start
    for s in servers:
        s.kill()


# --------------------------------------------------------------------------
# SDK harness: stdio_client + ClientSession, with a tap on both directions
# --------------------------------------------------------------------------

class Tap:
    def __init__(self) -> None:
        self.incoming: list[dict] = []
        self.outgoing: list[dict] = []
        self.errors: list[Exception] = []


def _dump(item: Any) -> dict:
    return item.message.model_dump(by_alias=True, mode="json", exclude_unset=True)


@asynccontextmanager
async def sdk_session(server: str, *args: str, sampling_callback=None, list_roots_callback=None):
    tap = Tap()
    errlog = tempfile.TemporaryFile(mode="w+")
    params = StdioServerParameters(command=server, args=list(args))
    async with stdio_client(params, errlog=errlog) as (read, write):
        in_send, in_recv = anyio.create_memory_object_stream(0)
        out_send, out_recv = anyio.create_memory_object_stream(0)

        closed = (anyio.BrokenResourceError, anyio.ClosedResourceError)

        async def pump_in() -> None:
            forward = True
            async with in_send:
                async for item in read:
                    if isinstance(item, Exception):
                        tap.errors.append(item)
                    else:
                        obj = _dump(item)
                        check_jsonrpc(obj)
                        tap.incoming.append(obj)
                    if forward:
                        try:
                            await in_send.send(item)
                        except closed:  # the session has exited; keep recording only
                            forward = False

        async def pump_out() -> None:
            async with out_recv:
                async for item in out_recv:
                    tap.outgoing.append(_dump(item))
                    try:
                        await write.send(item)
                    except closed:
                        return

        async def on_message(message: Any) -> None:
            if isinstance(message, Exception):
                tap.errors.append(message)

        async with anyio.create_task_group() as tg:
            tg.start_soon(pump_in)
            tg.start_soon(pump_out)
            async with ClientSession(
                in_recv,
                out_send,
                sampling_callback=sampling_callback,
                list_roots_callback=list_roots_callback,
                message_handler=on_message,
            ) as session:
                with anyio.fail_after(10):
                    init = await session.initialize()
                yield session, init, tap
            tg.cancel_scope.cancel()
    assert not tap.errors, f"transport/parse errors from the server: {tap.errors!r}"
    errlog.close()


def _text(result: types.CallToolResult) -> str:
    assert result.content, result
    parts = []
    for c in result.content:
        assert isinstance(c, types.TextContent), f"expected text content, got {c!r}"
        parts.append(c.text)
    return "".join(parts)


# --------------------------------------------------------------------------
# SDK tests
# --------------------------------------------------------------------------

@pytest.mark.anyio
async def test_sdk_initialize_negotiates(mcp_server):
    async with sdk_session(mcp_server) as (session, init, tap):
        sent = next(m for m in tap.outgoing if m.get("method") == "initialize")
        asked = sent["params"]["protocolVersion"]
        assert asked in ("2025-06-18", "2025-11-25")
        assert init.protocol_version == asked
        assert init.capabilities.tools is not None
        assert init.capabilities.tools.list_changed is True
        assert init.capabilities.logging is not None
        assert init.server_info.name
        with anyio.fail_after(5):
            await session.send_ping()
        # The SDK sends notifications/initialized right after the result.
        assert any(m.get("method") == "notifications/initialized" for m in tap.outgoing)


@pytest.mark.anyio
async def test_sdk_tools_list(mcp_server):
    async with sdk_session(mcp_server) as (session, _, _tap):
        with anyio.fail_after(10):
            listed = await session.list_tools()
        by_name = {t.name: t for t in listed.tools}
        assert set(by_name) == TOOL_NAMES
        expected_props = {"add": {"a", "b"}, "slow": {"ms"}, "ask": {"question"}, "roots": set()}
        for name, props in expected_props.items():
            schema = by_name[name].input_schema
            schema = schema if isinstance(schema, dict) else schema.model_dump(by_alias=True, exclude_none=True)
            assert schema.get("type") == "object", (name, schema)
            assert props <= set(schema.get("properties") or {}), (name, schema)


@pytest.mark.anyio
@pytest.mark.parametrize("a,b,expected", [(2, 3, 5), (-7, 10, 3), (1.5, 2.25, 3.75)])
async def test_sdk_add(mcp_server, a, b, expected):
    async with sdk_session(mcp_server) as (session, _, _tap):
        with anyio.fail_after(10):
            result = await session.call_tool("add", {"a": a, "b": b})
        assert not result.is_error
        assert json.loads(_text(result)) == expected


@pytest.mark.anyio
async def test_sdk_logging_set_level(mcp_server):
    async with sdk_session(mcp_server) as (session, _, _tap):
        with anyio.fail_after(10):
            await session.set_logging_level("debug")
            await session.send_ping()


@pytest.mark.anyio
async def test_sdk_unknown_tool_is_answered(mcp_server):
    async with sdk_session(mcp_server) as (session, _, _tap):
        with anyio.fail_after(10):
            try:
                result = await session.call_tool("no_such_tool", {})
            except MCPError:
                pass  # a JSON-RPC error is fine
            else:
                assert result.is_error is True, result


@pytest.mark.anyio
async def test_sdk_slow_reports_progress(mcp_server):
    progress: list[float] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append(value)

    async with sdk_session(mcp_server) as (session, _, tap):
        with anyio.fail_after(15):
            result = await session.call_tool("slow", {"ms": 650}, progress_callback=on_progress)
        assert not result.is_error
        assert len(progress) >= 2, progress
        assert progress == sorted(progress) and len(set(progress)) == len(progress), (
            f"progress must strictly increase: {progress}"
        )
        call = next(m for m in tap.outgoing if m.get("method") == "tools/call")
        token = call["params"]["_meta"]["progressToken"]
        notes = [m for m in tap.incoming if m.get("method") == "notifications/progress"]
        assert notes and all(n["params"]["progressToken"] == token for n in notes)


@pytest.mark.anyio
async def test_sdk_ping_answered_while_slow_runs(mcp_server):
    order: list[str] = []
    running = anyio.Event()

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        running.set()

    async with sdk_session(mcp_server) as (session, _, tap):
        async with anyio.create_task_group() as tg:

            async def run_slow() -> None:
                await session.call_tool("slow", {"ms": 3000}, progress_callback=on_progress)
                order.append("slow")

            tg.start_soon(run_slow)
            with anyio.fail_after(10):
                await running.wait()  # slow is executing on the server now
                await session.send_ping()
            order.append("ping")
            # Judge by the wire, not by task wake-up order (the SDK follows a first
            # tools/call with a tools/list of its own before call_tool returns).
            slow_id = next(m["id"] for m in tap.outgoing if m.get("method") == "tools/call")
            slow_answer = [m for m in tap.incoming if "method" not in m and m.get("id") == slow_id]
            assert slow_answer == [] and order == ["ping"], (
                f"ping was not answered while slow ran: {order} {slow_answer}"
            )
            tg.cancel_scope.cancel()
        with anyio.fail_after(5):
            await session.send_ping()


@pytest.mark.anyio
async def test_sdk_cancel_slow(mcp_server):
    running = anyio.Event()

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        running.set()

    async with sdk_session(mcp_server) as (session, _, tap):
        outcome: list[str] = []
        started = time.monotonic()
        async with anyio.create_task_group() as tg:

            async def run_slow() -> None:
                await session.call_tool("slow", {"ms": 1500}, progress_callback=on_progress)
                outcome.append("finished")

            tg.start_soon(run_slow)
            with anyio.fail_after(10):
                await running.wait()
            tg.cancel_scope.cancel()  # the SDK sends notifications/cancelled
        assert outcome == []
        call = next(m for m in tap.outgoing if m.get("method") == "tools/call")
        slow_id = call["id"]
        cancels = [m for m in tap.outgoing if m.get("method") == "notifications/cancelled"]
        assert cancels and cancels[0]["params"]["requestId"] == slow_id, tap.outgoing

        with anyio.fail_after(5):
            await session.send_ping()
        mark = len(tap.incoming)
        # Wait until well past the moment slow would have finished, then ping again.
        await anyio.sleep(max(0.0, 1.5 + 0.7 - (time.monotonic() - started)))
        with anyio.fail_after(5):
            await session.send_ping()
        answered = [m for m in tap.incoming if "method" not in m and m.get("id") == slow_id]
        assert answered == [], f"a cancelled request must get no answer: {answered}"
        late_progress = [
            m for m in tap.incoming[mark:]
            if m.get("method") == "notifications/progress"
            and m["params"].get("progressToken") == call["params"]["_meta"]["progressToken"]
        ]
        # One progress line racing the cancel is tolerable; a slow that kept running is not.
        assert len(late_progress) <= 1, f"progress kept coming after cancellation: {late_progress}"


@pytest.mark.anyio
async def test_sdk_ask_uses_sampling(mcp_server):
    seen: list[types.CreateMessageRequestParams] = []

    async def sampling(context, params: types.CreateMessageRequestParams):
        seen.append(params)
        return types.CreateMessageResult(
            role="assistant",
            content=types.TextContent(type="text", text="forty-two"),
            model="test-model",
            stop_reason="endTurn",
        )

    async with sdk_session(mcp_server, sampling_callback=sampling) as (session, _, _tap):
        with anyio.fail_after(15):
            result = await session.call_tool("ask", {"question": "What is six times seven?"})
        assert not result.is_error, result
        assert _text(result) == "forty-two"
        assert len(seen) == 1
        params = seen[0]
        assert params.max_tokens > 0
        assert len(params.messages) == 1
        msg = params.messages[0]
        assert msg.role == "user"
        content = msg.content if isinstance(msg.content, list) else [msg.content]
        texts = [c.text for c in content if isinstance(c, types.TextContent)]
        assert texts == ["What is six times seven?"], content


@pytest.mark.anyio
async def test_sdk_roots(mcp_server):
    calls: list[int] = []

    async def list_roots(context):
        calls.append(1)
        return types.ListRootsResult(
            roots=[
                types.Root(uri="file:///tmp/project-a", name="a"),
                types.Root(uri="file:///tmp/project-b", name="b"),
            ]
        )

    async with sdk_session(mcp_server, list_roots_callback=list_roots) as (session, _, _tap):
        with anyio.fail_after(15):
            result = await session.call_tool("roots", {})
        assert not result.is_error, result
        assert _text(result).strip() == "2"
        assert calls == [1]


# --------------------------------------------------------------------------
# Raw-protocol tests
# --------------------------------------------------------------------------

@pytest.mark.parametrize(
    "asked,answered",
    [
        ("2025-06-18", "2025-06-18"),
        ("2025-11-25", "2025-11-25"),
        ("2024-11-05", LATEST),  # a real version the server does not support
        ("1999-01-01", LATEST),  # an unknown one
    ],
)
def test_raw_version_negotiation(raw, asked, answered):
    s = raw()
    result = s.initialize(asked)
    assert result["protocolVersion"] == answered
    assert result["capabilities"]["tools"]["listChanged"] is True
    assert isinstance(result["capabilities"]["logging"], dict)
    info = result["serverInfo"]
    assert isinstance(info["name"], str) and info["name"]
    assert isinstance(info["version"], str)
    s.ping()


def test_raw_ids_echoed_verbatim(raw):
    s = raw()
    s.initialize()
    for id in ("abc", 0, 7, "7", 2**53 - 1):
        got = s.request("ping", id=id)
        assert got == id
        msg = s.response(id)
        assert type(msg["id"]) is type(id) and msg["id"] == id, msg
    # params-less and empty-params requests alike
    id = s.request("ping", {})
    assert s.result(id) == {}


def test_raw_unknown_method_is_method_not_found(raw):
    s = raw()
    s.initialize()
    id = s.request("no/such/method", {})
    msg = s.response(id)
    assert msg["error"]["code"] == -32601, msg
    s.ping()


def test_raw_add(raw):
    s = raw()
    s.initialize()
    id = s.call("add", {"a": 2, "b": 3})
    result = s.result(id)
    assert result.get("isError") in (None, False), result
    assert tool_text(result) == "5"  # the JSON number of a+b: an integer sum is not "5.0"
    id = s.call("add", {"a": 0.5, "b": 0.25})
    assert json.loads(tool_text(s.result(id))) == 0.75


def test_raw_progress_with_string_token(raw):
    s = raw()
    s.initialize()
    id = s.call("slow", {"ms": 550}, meta={"progressToken": "tok-A"})
    notes = []
    while True:
        msg = s.recv(10)
        if msg.get("method") == "notifications/progress":
            notes.append(msg["params"])
            continue
        assert msg.get("id") == id and "result" in msg, msg
        break
    assert len(notes) >= 2, notes
    assert all(n["progressToken"] == "tok-A" for n in notes), notes
    values = [n["progress"] for n in notes]
    assert values == sorted(values) and len(set(values)) == len(values), values


def test_raw_no_progress_without_token(raw):
    s = raw()
    s.initialize()
    id = s.call("slow", {"ms": 350})
    msg = s.recv(10)
    assert msg.get("id") == id and "result" in msg, f"expected only the result, got {msg!r}"
    s.ping()


def test_raw_ping_answered_while_slow_runs(raw):
    s = raw()
    s.initialize()
    slow = s.call("slow", {"ms": 3000}, meta={"progressToken": 1})
    first = s.recv(10)
    assert first.get("method") == "notifications/progress", first  # slow is running
    ping = s.request("ping")
    msg = s.recv_skip_progress(10)
    assert msg.get("id") == ping and msg.get("result") == {}, (
        f"ping must be answered before slow finishes, got {msg!r}"
    )
    s.notify("notifications/cancelled", {"requestId": slow, "reason": "test over"})
    ping = s.request("ping")
    msg = s.recv_skip_progress(10)  # a progress line may already be in flight
    assert msg.get("id") == ping and msg.get("result") == {}, msg


def test_raw_cancel_slow_gets_no_answer(raw):
    s = raw()
    s.initialize()
    started = time.monotonic()
    slow = s.call("slow", {"ms": 1000}, meta={"progressToken": "c"})
    assert s.recv(10).get("method") == "notifications/progress"
    s.notify("notifications/cancelled", {"requestId": slow, "reason": "user"})
    ping = s.request("ping")
    msg = s.recv_skip_progress(10)  # progress written before the cancel landed is fine
    assert msg.get("id") == ping and msg.get("result") == {}, msg
    mark = len(s.seen)
    time.sleep(max(0.0, 1.0 + 0.6 - (time.monotonic() - started)))
    ping = s.request("ping")
    msg = s.recv_skip_progress(10)
    assert msg.get("id") == ping and msg.get("result") == {}, f"no answer for the cancelled request: {msg!r}"
    assert not [m for m in s.seen if "method" not in m and m.get("id") == slow]
    # One progress line racing the cancel is tolerable; a slow that kept running is not.
    late = [m for m in s.seen[mark:] if m.get("method") == "notifications/progress"]
    assert len(late) <= 1, f"progress kept coming after the cancel: {late}"


def test_raw_unknown_and_repeated_response_ids_are_ignored(raw):
    s = raw()
    s.initialize()
    # A response to nothing the server asked.
    s.send({"jsonrpc": "2.0", "id": 987654, "result": {}})
    s.ping()
    s.send({"jsonrpc": "2.0", "id": "never-sent", "error": {"code": -32000, "message": "x"}})
    s.ping()
    # A real exchange, then the same answer again.
    call = s.call("roots", {})
    req = s.recv(10)
    assert req.get("method") == "roots/list" and "id" in req, req
    answer = {"jsonrpc": "2.0", "id": req["id"], "result": {"roots": [{"uri": "file:///r1"}]}}
    s.send(answer)
    assert tool_text(s.result(call)).strip() == "1"
    s.send(answer)  # repeated id
    s.ping()
    s.send({"jsonrpc": "2.0", "id": req["id"], "result": {"roots": []}})  # and once more, different
    s.ping()
    # The server still works normally afterwards.
    call = s.call("add", {"a": 1, "b": 1})
    assert json.loads(tool_text(s.result(call))) == 2


def test_raw_ask_round_trip(raw):
    s = raw("--request-timeout-ms", "5000")
    s.initialize()
    call = s.call("ask", {"question": "ping pong?"})
    req = s.recv(10)
    assert req.get("method") == "sampling/createMessage" and _is_id(req.get("id")), req
    params = req["params"]
    assert isinstance(params["maxTokens"], int) and params["maxTokens"] > 0
    assert len(params["messages"]) == 1 and params["messages"][0]["role"] == "user"
    content = params["messages"][0]["content"]
    content = content if isinstance(content, list) else [content]
    assert [c["text"] for c in content if c.get("type") == "text"] == ["ping pong?"]
    s.send({
        "jsonrpc": "2.0",
        "id": req["id"],
        "result": {"role": "assistant", "content": {"type": "text", "text": "pong!"}, "model": "m"},
    })
    result = s.result(call)
    assert result.get("isError") in (None, False), result
    assert tool_text(result) == "pong!"


def test_raw_unanswered_sampling_times_out(raw):
    s = raw("--request-timeout-ms", "500")
    s.initialize()
    call = s.call("ask", {"question": "anyone there?"})
    req = s.recv(10)
    assert req.get("method") == "sampling/createMessage", req
    # Do not answer. The tool call must still end, with an error.
    msg = s.response(call, timeout=10)
    if "error" in msg:
        assert msg["error"]["code"] != 0
    else:
        result = msg["result"]
        assert result.get("isError") is True, result
        assert "time" in tool_text(result).lower(), result
    s.ping()
    # A late answer to the timed-out request is ignored.
    s.send({
        "jsonrpc": "2.0",
        "id": req["id"],
        "result": {"role": "assistant", "content": {"type": "text", "text": "late"}, "model": "m"},
    })
    s.ping()


def test_raw_cancel_unknown_or_finished_request_has_no_effect(raw):
    s = raw()
    s.initialize()
    s.notify("notifications/cancelled", {"requestId": 424242, "reason": "unknown"})
    s.ping()
    s.notify("notifications/cancelled", {"requestId": "no-such-id"})
    s.ping()
    call = s.call("add", {"a": 20, "b": 22})
    assert json.loads(tool_text(s.result(call))) == 42
    s.notify("notifications/cancelled", {"requestId": call, "reason": "too late"})
    s.ping()
    call = s.call("add", {"a": 1, "b": 2})
    assert json.loads(tool_text(s.result(call))) == 3


def test_raw_notification_flood(raw):
    s = raw()
    s.initialize()
    lines = []
    for i in range(10_000):
        method = "notifications/initialized" if i % 2 else "notifications/roots/list_changed"
        lines.append(json.dumps({"jsonrpc": "2.0", "method": method}))
    s.send_line(("\n".join(lines) + "\n").encode())
    s.ping(timeout=30)  # nothing written for the 10 000 notifications
    call = s.call("add", {"a": 4, "b": 5})
    assert json.loads(tool_text(s.result(call))) == 9


@pytest.mark.parametrize("pending", ["ask", "slow"])
def test_raw_stdin_close_exits_promptly(raw, pending):
    s = raw()
    s.initialize()
    if pending == "ask":
        s.call("ask", {"question": "never answered"})
        assert s.recv(10).get("method") == "sampling/createMessage"
    else:
        s.call("slow", {"ms": 60_000}, meta={"progressToken": 5})
        assert s.recv(10).get("method") == "notifications/progress"
    s.close_stdin()
    try:
        code = s.proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        raise AssertionError(f"server still running 5 s after stdin closed; stderr:\n{s.stderr_text()}")
    assert code == 0, f"exit status {code}; stderr:\n{s.stderr_text()}"


def test_raw_stdin_close_when_idle_exits_zero(raw):
    s = raw()
    s.initialize()
    s.ping()
    s.close_stdin()
    assert s.proc.wait(timeout=5) == 0


@pytest.mark.parametrize("line", [b"{not json", b'{"jsonrpc": "2.0", "id": 1, "method": "ping"', b"\xff\xfe garbage"])
def test_raw_malformed_line_is_parse_error(raw, line):
    s = raw()
    s.initialize()
    s.send_line(line)
    msg = s.recv(10)
    assert "method" not in msg and msg["id"] is None, msg
    assert msg["error"]["code"] == -32700, msg
    s.ping()  # and the server carries on


def test_raw_every_line_is_jsonrpc(raw):
    """A busy session; afterwards every line on stdout, to EOF, is one JSON-RPC 2.0 object."""
    s = raw("--request-timeout-ms", "3000")
    s.initialize("2025-06-18")
    ids = [
        s.request("tools/list"),
        s.call("add", {"a": 1, "b": 2}),
        s.call("slow", {"ms": 250}, meta={"progressToken": "p"}),
        s.request("logging/setLevel", {"level": "info"}),
        s.request("no/such/method"),
        s.call("roots", {}),
        s.call("ask", {"question": "q"}),
    ]
    s.send_line(b"[1,")
    answered: set[Any] = set()
    deadline = time.monotonic() + 20
    while not set(ids) <= answered and time.monotonic() < deadline:
        msg = s.recv(10)
        if msg.get("method") == "roots/list":
            s.send({"jsonrpc": "2.0", "id": msg["id"], "result": {"roots": []}})
        elif msg.get("method") == "sampling/createMessage":
            s.send({"jsonrpc": "2.0", "id": msg["id"],
                    "result": {"role": "assistant", "content": {"type": "text", "text": "a"}, "model": "m"}})
        elif "method" not in msg:
            assert msg["id"] not in answered, f"answered twice: {msg!r}"
            answered.add(msg["id"])
    assert set(ids) <= answered, (ids, s.seen)
    assert None in answered  # the parse error for "[1,"
    s.close_stdin()
    while True:  # drain to EOF; recv() validates each line
        try:
            s.recv(10)
        except AssertionError as e:
            if "closed stdout" in str(e):
                break
            raise
    assert s.proc.wait(timeout=5) == 0
