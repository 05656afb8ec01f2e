"""web3.py (the Ethereum Python client, from PyPI) against `switchboard serve`.

The demo server's synthetic chain answers what web3.py asks: `is_connected()`
sends `web3_clientVersion`; `eth.block_number` and `eth.chain_id` read
`eth_blockNumber` and `eth_chainId`; `net.version` reads `net_version`. Plain
HTTP cannot push, so `eth_subscribe` there is answered as geth answers it
(-32601 "Notifications not supported"). The binary comes from SWITCHBOARD_BIN.
"""
import json
import time
import urllib.request

import pytest
from web3 import HTTPProvider, Web3

# A block every 50 ms: eth_blockNumber visibly advances within the test.
HEADS_INTERVAL = "0.05"


@pytest.fixture
def server_url(switchboard_serve):
    return switchboard_serve("--heads-interval", HEADS_INTERVAL)


def test_is_connected(server_url):
    w3 = Web3(HTTPProvider(server_url))
    assert w3.is_connected() is True
    assert w3.client_version.startswith("switchboard/v")


def test_block_number_and_chain_id(server_url):
    w3 = Web3(HTTPProvider(server_url))
    assert w3.eth.chain_id == 1337
    assert w3.net.version == "1337"
    first = w3.eth.block_number
    assert isinstance(first, int) and first >= 0
    # The chain moves on (bounded wait, no timing assertion).
    deadline = time.monotonic() + 30
    while w3.eth.block_number <= first:
        assert time.monotonic() < deadline, "eth_blockNumber never advanced"
        time.sleep(0.01)


def test_subscribe_over_http_is_refused_as_geth_does(server_url):
    body = json.dumps(
        {"jsonrpc": "2.0", "method": "eth_subscribe", "params": ["newHeads"], "id": 1}
    ).encode()
    req = urllib.request.Request(
        server_url, data=body, headers={"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(req, timeout=10) as resp:
        answer = json.loads(resp.read())
    assert answer["id"] == 1
    assert answer["error"]["code"] == -32601
    assert answer["error"]["message"] == "Notifications not supported"
    # web3.py's provider sees the same error object.
    raw = Web3(HTTPProvider(server_url)).provider.make_request("eth_subscribe", ["newHeads"])
    assert raw["error"]["code"] == -32601


@pytest.mark.anyio
async def test_websocket_provider_subscribes_to_new_heads(server_url):
    """`AsyncWeb3(WebSocketProvider)`: `eth.subscribe("newHeads")` gets headers
    web3.py can read (its formatters parse every field), in block order."""
    from web3 import AsyncWeb3, WebSocketProvider

    ws_url = server_url.replace("http://", "ws://")
    async with AsyncWeb3(WebSocketProvider(ws_url)) as w3:
        assert await w3.is_connected()
        assert await w3.eth.chain_id == 1337
        sub_id = await w3.eth.subscribe("newHeads")
        heads = []
        async for payload in w3.socket.process_subscriptions():
            assert payload["subscription"] == sub_id
            heads.append(payload["result"])
            if len(heads) == 3:
                break
        numbers = [h["number"] for h in heads]
        assert numbers == sorted(numbers) and len(set(numbers)) == 3, numbers
        assert all(heads[i + 1]["parentHash"] == heads[i]["hash"] for i in range(2)), heads
        assert await w3.eth.unsubscribe(sub_id) is True
