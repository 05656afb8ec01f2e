"""The `websockets` package (PyPI) against `switchboard serve` over WebSocket:
calls, a batch, a notification (no answer), invalid JSON (-32700), and
`eth_subscribe` `newHeads` until `eth_unsubscribe`, on the same listener and
endpoint as HTTP."""
import asyncio
import json
import re

import pytest
import websockets

pytestmark = pytest.mark.anyio


@pytest.fixture
def server(switchboard_serve):
    return switchboard_serve("--threads", "1").replace("http://", "ws://")


async def call(ws, msg):
    await ws.send(json.dumps(msg))
    return json.loads(await asyncio.wait_for(ws.recv(), 10))


async def test_calls(server):
    async with websockets.connect(server) as ws:
        r = await call(ws, {"jsonrpc": "2.0", "method": "subtract", "params": [42, 23], "id": 1})
        assert r == {"jsonrpc": "2.0", "result": 19, "id": 1}
        r = await call(ws, {"jsonrpc": "2.0", "method": "subtract",
                            "params": {"subtrahend": 23, "minuend": 42}, "id": "x"})
        assert r == {"jsonrpc": "2.0", "result": 19, "id": "x"}
        r = await call(ws, {"jsonrpc": "2.0", "method": "nope", "id": 3})
        assert r["error"]["code"] == -32601 and r["id"] == 3


async def test_batch(server):
    async with websockets.connect(server) as ws:
        r = await call(ws, [
            {"jsonrpc": "2.0", "method": "sum", "params": [1, 2, 4], "id": "1"},
            {"jsonrpc": "2.0", "method": "notify_hello", "params": [7]},
            {"jsonrpc": "2.0", "method": "subtract", "params": [42, 23], "id": "2"},
            {"foo": "boo"},
            {"jsonrpc": "2.0", "method": "get_data", "id": "9"},
        ])
        by_id = {x["id"]: x for x in r}
        assert len(r) == 4
        assert by_id["1"]["result"] == 7
        assert by_id["2"]["result"] == 19
        assert by_id["9"]["result"] == ["hello", 5]
        assert by_id[None]["error"]["code"] == -32600


async def test_notification_gets_no_answer(server):
    async with websockets.connect(server) as ws:
        await ws.send(json.dumps({"jsonrpc": "2.0", "method": "update", "params": [1, 2]}))
        # The next frame is the call's answer: the notification got none.
        r = await call(ws, {"jsonrpc": "2.0", "method": "get_data", "id": 5})
        assert r == {"jsonrpc": "2.0", "result": ["hello", 5], "id": 5}


async def test_invalid_json(server):
    async with websockets.connect(server) as ws:
        await ws.send('{"jsonrpc": "2.0", "method": "foobar, "params": "bar", "baz]')
        r = json.loads(await asyncio.wait_for(ws.recv(), 10))
        assert r["error"]["code"] == -32700 and r["id"] is None
        # The connection goes on.
        r = await call(ws, {"jsonrpc": "2.0", "method": "subtract", "params": [2, 1], "id": 2})
        assert r["result"] == 1


@pytest.fixture
def chain_server(switchboard_serve):
    # A block every 50 ms: several notifications within the test.
    return switchboard_serve("--heads-interval", "0.05").replace("http://", "ws://")


async def test_eth_subscribe_new_heads_then_unsubscribe(chain_server):
    async with websockets.connect(chain_server) as ws:
        r = await call(ws, {"jsonrpc": "2.0", "method": "eth_subscribe",
                            "params": ["newHeads"], "id": 1})
        sub = r["result"]
        assert re.fullmatch(r"0x[0-9a-f]{32}", sub), r
        heads = []
        while len(heads) < 3:
            n = json.loads(await asyncio.wait_for(ws.recv(), 10))
            assert n["method"] == "eth_subscription", n
            assert n["params"]["subscription"] == sub, n
            heads.append(n["params"]["result"])
        numbers = [int(h["number"], 16) for h in heads]
        assert numbers == list(range(numbers[0], numbers[0] + 3)), numbers
        await ws.send(json.dumps({"jsonrpc": "2.0", "method": "eth_unsubscribe",
                                  "params": [sub], "id": 2}))
        # Notifications already in flight may come first; then the answer, then none.
        while True:
            m = json.loads(await asyncio.wait_for(ws.recv(), 10))
            if m.get("id") == 2:
                assert m["result"] is True, m
                break
            assert m["method"] == "eth_subscription", m
        # Nothing after: a call's answer is the next frame, several blocks later.
        await asyncio.sleep(0.3)
        r = await call(ws, {"jsonrpc": "2.0", "method": "eth_blockNumber", "id": 3})
        assert r["id"] == 3 and int(r["result"], 16) >= numbers[-1] + 3, r
        r = await call(ws, {"jsonrpc": "2.0", "method": "eth_unsubscribe", "params": [sub], "id": 4})
        assert r["error"]["code"] == -32000, r
