"""Real-client tests for examples/lsp-server.

  * Client tests drive the server with pygls 2.x's `LanguageClient`, as editor
    tooling built on pygls does.
  * Raw tests spawn the server with subprocess and write Content-Length frames by
    hand for what pygls never sends (stray responses, garbage bodies, exit
    without shutdown).
"""
from __future__ import annotations

import asyncio
import json
import queue
import subprocess
import tempfile
import threading
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest
from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcException
from pygls.lsp.client import LanguageClient

CONFIG_ANSWER = [{"greeting": "hi"}]


# --------------------------------------------------------------------------
# pygls harness
# --------------------------------------------------------------------------

class Recorder:
    def __init__(self) -> None:
        self.config_requests: list[lsp.ConfigurationParams] = []
        self.logs: list[lsp.LogMessageParams] = []
        self.diagnostics: list[lsp.PublishDiagnosticsParams] = []
        self.changed = asyncio.Event()
        self.errors: list[Exception] = []
        self.stderr = bytearray()

    def poke(self) -> None:
        self.changed.set()

    async def wait_for(self, predicate, timeout: float = 10.0):
        """Wait until predicate() returns something truthy; return it."""
        with anyio.fail_after(timeout):
            while True:
                value = predicate()
                if value:
                    return value
                self.changed.clear()
                await self.changed.wait()


def make_client(rec: Recorder) -> LanguageClient:
    client = LanguageClient("switchboard-client-tests", "1.0")

    @client.feature(lsp.WORKSPACE_CONFIGURATION)
    def configuration(params: lsp.ConfigurationParams):
        rec.config_requests.append(params)
        rec.poke()
        return CONFIG_ANSWER

    @client.feature(lsp.WINDOW_LOG_MESSAGE)
    def log_message(params: lsp.LogMessageParams):
        rec.logs.append(params)
        rec.poke()

    @client.feature(lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    def publish_diagnostics(params: lsp.PublishDiagnosticsParams):
        rec.diagnostics.append(params)
        rec.poke()

    def report_server_error(error, source):
        rec.errors.append(error)

    client.report_server_error = report_server_error  # type: ignore[method-assign]
    return client


def initialize_params() -> lsp.InitializeParams:
    return lsp.InitializeParams(
        process_id=None,
        root_uri=None,
        client_info=lsp.ClientInfo(name="pygls-test", version="1.0"),
        capabilities=lsp.ClientCapabilities(
            workspace=lsp.WorkspaceClientCapabilities(configuration=True),
            text_document=lsp.TextDocumentClientCapabilities(
                hover=lsp.HoverClientCapabilities(content_format=[lsp.MarkupKind.Markdown, lsp.MarkupKind.PlainText]),
                publish_diagnostics=lsp.PublishDiagnosticsClientCapabilities(),
            ),
        ),
    )


@asynccontextmanager
async def lsp_client(server: str, *args: str, initialized: bool = True):
    rec = Recorder()
    client = make_client(rec)
    await client.start_io(server, *args)
    proc = client._server
    assert proc is not None and proc.stderr is not None

    async def drain_stderr() -> None:  # pygls pipes stderr but never reads it
        while chunk := await proc.stderr.read(65536):
            rec.stderr.extend(chunk)

    drain = asyncio.ensure_future(drain_stderr())
    try:
        with anyio.fail_after(10):
            result = await client.initialize_async(initialize_params())
        if initialized:
            client.initialized(lsp.InitializedParams())
        yield client, result, rec
        assert not rec.errors, f"pygls reported server errors: {rec.errors!r}"
    finally:
        if proc.returncode is None:
            proc.kill()
        with anyio.move_on_after(5):
            await proc.wait()
        client._stop_event.set()
        with anyio.move_on_after(5):
            await asyncio.gather(*client._async_tasks, return_exceptions=True)
        drain.cancel()


def open_doc(client: LanguageClient, uri: str, text: str, version: int = 1) -> None:
    client.text_document_did_open(
        lsp.DidOpenTextDocumentParams(
            text_document=lsp.TextDocumentItem(uri=uri, language_id="plaintext", version=version, text=text)
        )
    )


def diags_for(rec: Recorder, uri: str, after: int = 0) -> list[lsp.PublishDiagnosticsParams]:
    return [d for d in rec.diagnostics[after:] if d.uri == uri]


def check_todo_diagnostics(diags: list[lsp.Diagnostic], text: str) -> None:
    lines = text.split("\n")
    expected = [(n, line.index("TODO")) for n, line in enumerate(lines) if "TODO" in line]
    got = sorted(diags, key=lambda d: d.range.start.line)
    assert [d.range.start.line for d in got] == [n for n, _ in expected], got
    for d, (n, col) in zip(got, expected):
        assert d.range.end.line == n, d
        # the range covers that line's TODO
        assert d.range.start.character <= col and d.range.end.character >= col + 4, (d, col)
        assert d.range.end.character <= len(lines[n]) + 1, d
        assert "TODO" in d.message, d


def hover_text(client: LanguageClient, hover: Any) -> str:
    assert hover is not None, "hover returned null"
    return json.dumps(client.protocol._converter.unstructure(hover.contents))


# --------------------------------------------------------------------------
# pygls tests
# --------------------------------------------------------------------------

@pytest.mark.anyio
async def test_initialize_capabilities(lsp_server):
    async with lsp_client(lsp_server, initialized=False) as (client, result, _rec):
        caps = result.capabilities
        sync = caps.text_document_sync
        if isinstance(sync, lsp.TextDocumentSyncOptions):
            assert sync.change == lsp.TextDocumentSyncKind.Full, sync
            assert sync.open_close is True, sync
        else:
            assert sync == lsp.TextDocumentSyncKind.Full, sync
        assert caps.hover_provider is True or isinstance(caps.hover_provider, lsp.HoverOptions), caps


@pytest.mark.anyio
async def test_configuration_requested_and_logged(lsp_server):
    async with lsp_client(lsp_server) as (client, _result, rec):
        await rec.wait_for(lambda: rec.config_requests)
        params = rec.config_requests[0]
        assert [item.section for item in params.items] == ["switchboard"]
        log = await rec.wait_for(lambda: [m for m in rec.logs if "hi" in m.message])
        assert "greeting" in log[0].message, log[0]
        assert len(rec.config_requests) == 1


@pytest.mark.anyio
async def test_diagnostics_on_open_and_change(lsp_server):
    uri = "file:///tmp/switchboard-test/notes.txt"
    text = "first TODO item\nnothing to see\n    and TODO: another one"
    async with lsp_client(lsp_server) as (client, _result, rec):
        open_doc(client, uri, text)
        published = await rec.wait_for(lambda: diags_for(rec, uri))
        assert len(published[0].diagnostics) == 2, published[0]
        check_todo_diagnostics(published[0].diagnostics, text)

        mark = len(rec.diagnostics)
        new_text = "clean\nstill clean\nTODO at the start\nx"
        client.text_document_did_change(
            lsp.DidChangeTextDocumentParams(
                text_document=lsp.VersionedTextDocumentIdentifier(uri=uri, version=2),
                content_changes=[lsp.TextDocumentContentChangeWholeDocument(text=new_text)],
            )
        )
        published = await rec.wait_for(lambda: diags_for(rec, uri, mark))
        assert len(published[0].diagnostics) == 1, published[0]
        check_todo_diagnostics(published[0].diagnostics, new_text)

        mark = len(rec.diagnostics)
        client.text_document_did_change(
            lsp.DidChangeTextDocumentParams(
                text_document=lsp.VersionedTextDocumentIdentifier(uri=uri, version=3),
                content_changes=[lsp.TextDocumentContentChangeWholeDocument(text="all done\n")],
            )
        )
        published = await rec.wait_for(lambda: diags_for(rec, uri, mark))
        assert len(published[0].diagnostics) == 0, published[0]


@pytest.mark.anyio
async def test_diagnostics_are_per_document(lsp_server):
    a, b = "file:///tmp/switchboard-test/a.txt", "file:///tmp/switchboard-test/b.txt"
    async with lsp_client(lsp_server) as (client, _result, rec):
        open_doc(client, a, "TODO a")
        open_doc(client, b, "b\nb\nb TODO\nTODO b")
        pa = await rec.wait_for(lambda: diags_for(rec, a))
        pb = await rec.wait_for(lambda: diags_for(rec, b))
        check_todo_diagnostics(pa[0].diagnostics, "TODO a")
        check_todo_diagnostics(pb[0].diagnostics, "b\nb\nb TODO\nTODO b")


@pytest.mark.anyio
async def test_hover_contains_word(lsp_server):
    uri = "file:///tmp/switchboard-test/hover.txt"
    text = "let alpha = 1;\n  foo_bar9.baz(omega)\n"
    async with lsp_client(lsp_server) as (client, _result, rec):
        open_doc(client, uri, text)
        await rec.wait_for(lambda: diags_for(rec, uri))

        async def hover(line: int, character: int) -> str:
            with anyio.fail_after(10):
                h = await client.text_document_hover_async(
                    lsp.HoverParams(
                        text_document=lsp.TextDocumentIdentifier(uri=uri),
                        position=lsp.Position(line=line, character=character),
                    )
                )
            return hover_text(client, h)

        got = await hover(0, 6)  # inside "alpha"
        assert "alpha" in got and "omega" not in got, got
        got = await hover(1, 5)  # inside "foo_bar9"
        assert "foo_bar9" in got and "foo_bar9.baz" not in got and "omega" not in got, got
        got = await hover(1, 16)  # inside "omega"
        assert "omega" in got and "baz" not in got, got


@pytest.mark.anyio
async def test_slow_cancelled_with_cancel_request(lsp_server):
    async with lsp_client(lsp_server) as (client, _result, rec):
        # pygls does not send $/cancelRequest when a request future is cancelled,
        # so the notification is sent explicitly, as editors do.
        fut = client.protocol.send_request_async("switchboard/slow", {"ms": 5000}, msg_id="slow-1")
        client.protocol.notify(lsp.CANCEL_REQUEST, lsp.CancelParams(id="slow-1"))
        with anyio.fail_after(3):  # well under the 5 s the request would take
            with pytest.raises(JsonRpcException) as info:
                await fut
        assert info.value.code == -32800, info.value

        # An uncancelled slow request completes with null.
        with anyio.fail_after(10):
            assert await client.protocol.send_request_async("switchboard/slow", {"ms": 200}) is None


@pytest.mark.anyio
async def test_slow_cancel_with_integer_id(lsp_server):
    async with lsp_client(lsp_server) as (client, _result, rec):
        fut = client.protocol.send_request_async("switchboard/slow", {"ms": 5000}, msg_id=77)
        client.protocol.notify(lsp.CANCEL_REQUEST, lsp.CancelParams(id=77))
        with anyio.fail_after(3):
            with pytest.raises(JsonRpcException) as info:
                await fut
        assert info.value.code == -32800, info.value


@pytest.mark.anyio
async def test_shutdown_then_exit(lsp_server):
    async with lsp_client(lsp_server) as (client, _result, rec):
        await rec.wait_for(lambda: rec.config_requests)
        with anyio.fail_after(10):
            assert await client.shutdown_async(None) is None
        client.exit(None)
        with anyio.fail_after(5):
            code = await client._server.wait()
        assert code == 0, bytes(rec.stderr).decode(errors="replace")


# --------------------------------------------------------------------------
# Raw Content-Length tests
# --------------------------------------------------------------------------

class RawLsp:
    def __init__(self, server: str, *args: str):
        self.stderr = tempfile.TemporaryFile()
        self.proc = subprocess.Popen([server, *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.stderr)
        self.messages: queue.Queue[Any] = queue.Queue()
        self._id = 0
        threading.Thread(target=self._reader, daemon=True).start()

    def _reader(self) -> None:
        out = self.proc.stdout
        assert out is not None
        try:
            while True:
                headers = {}
                while True:
                    line = out.readline()
                    if not line:
                        self.messages.put(None)
                        return
                    if line in (b"\r\n", b"\n"):
                        break
                    assert line.endswith(b"\r\n"), f"header line not CRLF-terminated: {line!r}"
                    key, _, value = line.decode("ascii").partition(":")
                    headers[key.strip().lower()] = value.strip()
                body = out.read(int(headers["content-length"]))
                self.messages.put(json.loads(body))
        except Exception as exc:  # surfaced by recv()
            self.messages.put(exc)

    def send_body(self, body: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.proc.stdin.flush()

    def send(self, obj: dict) -> None:
        self.send_body(json.dumps(obj).encode())

    def request(self, method: str, params: Any = None) -> int:
        self._id += 1
        msg = {"jsonrpc": "2.0", "id": self._id, "method": method}
        if params is not None:
            msg["params"] = params
        self.send(msg)
        return self._id

    def notify(self, method: str, params: Any = None) -> None:
        msg = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            msg["params"] = params
        self.send(msg)

    def recv(self, timeout: float = 10.0) -> dict:
        try:
            msg = self.messages.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError(f"no message within {timeout}s; stderr:\n{self.stderr_text()}") from None
        if isinstance(msg, Exception):
            raise AssertionError(f"unreadable frame from the server: {msg!r}")
        assert msg is not None, f"server closed stdout; stderr:\n{self.stderr_text()}"
        assert isinstance(msg, dict) and msg.get("jsonrpc") == "2.0", msg
        return msg

    def next_non_notification(self, timeout: float = 10.0) -> dict:
        """Next request or response from the server (log/diagnostic notifications skipped)."""
        while True:
            msg = self.recv(timeout)
            if "id" in msg:
                return msg

    def response(self, id: Any, timeout: float = 10.0) -> dict:
        msg = self.next_non_notification(timeout)
        assert "method" not in msg and msg.get("id") == id, f"expected the response to {id!r}, got {msg!r}"
        return msg

    def handshake(self) -> None:
        id = self.request("initialize", {"processId": None, "rootUri": None, "capabilities": {"workspace": {"configuration": True}}})
        assert "result" in self.response(id)
        self.notify("initialized", {})
        req = self.next_non_notification()
        assert req.get("method") == "workspace/configuration", req
        self.send({"jsonrpc": "2.0", "id": req["id"], "result": [{"greeting": "hi"}]})

    def stderr_text(self) -> str:
        self.stderr.seek(0)
        return self.stderr.read().decode(errors="replace")[-4000:]

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(5)
        self.stderr.close()


@pytest.fixture
def raw_lsp(lsp_server):
    servers: list[RawLsp] = []

    def start(*args: str) -> RawLsp:
        s = RawLsp(lsp_server, *args)
        servers.append(s)
        return s

    yield start
    for s in servers:
        s.kill()


def hover_request(s: RawLsp, uri: str) -> int:
    return s.request("textDocument/hover", {"textDocument": {"uri": uri}, "position": {"line": 0, "character": 1}})


def test_raw_unknown_response_id_ignored(raw_lsp):
    s = raw_lsp()
    s.handshake()
    uri = "file:///tmp/raw.txt"
    s.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "plaintext", "version": 1, "text": "word"}})
    s.send({"jsonrpc": "2.0", "id": "no-such-request", "result": [{"greeting": "stray"}]})
    s.send({"jsonrpc": "2.0", "id": 424242, "error": {"code": -32603, "message": "stray"}})
    id = hover_request(s, uri)
    msg = s.response(id)  # the stray responses produced nothing
    assert "word" in json.dumps(msg["result"]), msg


def test_raw_garbage_body_is_parse_error(raw_lsp):
    s = raw_lsp()
    s.handshake()
    s.send_body(b"{this is not json")
    msg = s.next_non_notification()
    assert "method" not in msg and msg.get("id") is None, msg
    assert msg["error"]["code"] == -32700, msg
    # the server survives
    id = s.request("shutdown")
    assert s.response(id)["result"] is None


def test_raw_exit_without_shutdown(raw_lsp):
    s = raw_lsp()
    s.handshake()
    s.notify("exit")
    try:
        code = s.proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        raise AssertionError("server did not exit on `exit` without `shutdown`") from None
    assert code in (0, 1), code  # LSP says 1 here


def test_raw_shutdown_exit_status_zero(raw_lsp):
    s = raw_lsp()
    s.handshake()
    id = s.request("shutdown")
    assert s.response(id)["result"] is None
    s.notify("exit")
    assert s.proc.wait(timeout=5) == 0
