"""The playground in a real browser: Debian's Chromium, headless, driven by
Playwright, on the page `switchboard serve --playground DIR` serves.

The in-page core (WebAssembly) must answer exactly what the native binary
(`switchboard respond`) answers, bad input included, and the "send to the
server" switch must show the server's HTTP status. tests/clients/playground.sh
builds the page (PLAYGROUND_DIR) and runs this file.
"""
import json
import os
import subprocess

import pytest
from playwright.sync_api import expect, sync_playwright

CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
EXAMPLES = json.load(open(os.path.join(ROOT, "playground", "site", "examples.json")))


@pytest.fixture(scope="module")
def site() -> str:
    path = os.environ.get("PLAYGROUND_DIR")
    if not path or not os.path.isfile(os.path.join(path, "index.html")):
        pytest.fail("PLAYGROUND_DIR is not a built playground (run tests/clients/playground.sh)")
    return path


@pytest.fixture(scope="module")
def browser():
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
        yield b
        b.close()


def open_page(browser, url):
    """A new page on `url`, the core loaded; `.errors` collects uncaught exceptions."""
    ctx = browser.new_context(viewport={"width": 1280, "height": 1000})
    pg = ctx.new_page()
    errors = []
    pg.on("pageerror", lambda e: errors.append(str(e)))
    pg.set_default_timeout(15_000)
    pg.goto(url)
    expect(pg.locator("body")).to_have_attribute("data-ready", "true")
    pg.errors = errors
    return pg


@pytest.fixture
def page(browser, site, switchboard_serve):
    pg = open_page(browser, switchboard_serve("--playground", site))
    yield pg
    assert not pg.errors, pg.errors
    pg.context.close()


def native(switchboard_bin: str, data: bytes) -> str:
    """`switchboard respond` on the same bytes: what the page must show."""
    out = subprocess.run([switchboard_bin, "respond"], input=data, capture_output=True, timeout=20)
    assert out.returncode == 0, out.stderr
    return out.stdout.decode("utf-8", "replace") if out.stdout else "no response (notification)"


def native_inspect(switchboard_bin: str, data: bytes) -> str:
    """`switchboard inspect` on the same bytes: exit code 0 when the message is
    valid JSON-RPC, 1 when the parser rejected it (2 would be a usage error)."""
    out = subprocess.run([switchboard_bin, "inspect"], input=data, capture_output=True, timeout=20)
    assert out.returncode in (0, 1), out.stderr
    return out.stdout.decode().rstrip("\n")


def send(page):
    """Clicks Send and waits for this send's answer to be on the page."""
    before = int(page.locator("body").get_attribute("data-sent") or 0)
    page.click("#send")
    expect(page.locator("body")).to_have_attribute("data-sent", str(before + 1))
    return page.locator("#response").text_content()


def test_builder_request_then_notification(page, switchboard_bin):
    page.select_option("#method", "subtract")
    page.check("#params-positional")
    page.check("#with-id")
    page.fill("#id-value", "7")
    msg = '{"jsonrpc":"2.0","method":"subtract","params":[42,23],"id":7}'
    assert page.input_value("#editor") == msg
    assert send(page) == '{"jsonrpc":"2.0","result":19,"id":7}'
    assert page.locator("#inspect").text_content() == native_inspect(switchboard_bin, msg.encode())
    # Named params.
    page.check("#params-named")
    assert json.loads(page.input_value("#editor"))["params"] == {"minuend": 42, "subtrahend": 23}
    assert send(page) == '{"jsonrpc":"2.0","result":19,"id":7}'
    # The id off: a notification, and silence.
    page.uncheck("#with-id")
    assert "id" not in json.loads(page.input_value("#editor"))
    assert send(page) == "no response (notification)"
    assert json.loads(page.locator("#inspect").text_content())["kind"] == "notification"
    # Another method from the list.
    page.check("#with-id")
    page.select_option("#method", "get_data")
    assert send(page) == '{"jsonrpc":"2.0","result":["hello",5],"id":7}'


def test_free_text_editor_invalid_json(page, switchboard_bin):
    text = '{"jsonrpc": "2.0", "method": "sum", "params": [1, 2'
    page.fill("#editor", text)
    got = send(page)
    assert got == native(switchboard_bin, text.encode())
    assert json.loads(got)["error"]["code"] == -32700
    assert json.loads(got)["id"] is None


@pytest.mark.parametrize("example", EXAMPLES["errors"], ids=lambda e: str(e["code"]))
def test_error_code_explorer(page, switchboard_bin, example):
    card = page.locator(f"#err{example['code']}")
    assert card.locator(".request").text_content() == example["request"]
    card.locator(".run").click()
    response = card.locator(".response")
    expect(response).not_to_be_empty()
    got = response.text_content()
    v = json.loads(got)
    assert v["error"]["code"] == example["code"], got
    assert got == native(switchboard_bin, example["request"].encode())
    if example["code"] in (-32700, -32600):
        assert v["id"] is None


def test_batch_example(page, switchboard_bin):
    page.click("#batch-run")
    expect(page.locator("#batch-response")).not_to_be_empty()
    got = page.locator("#batch-response").text_content()
    assert json.loads(got) == [
        {"jsonrpc": "2.0", "result": 7, "id": "1"},
        {"jsonrpc": "2.0", "result": 19, "id": "2"},
        {"jsonrpc": "2.0", "result": ["hello", 5], "id": "9"},
    ]
    assert got == native(switchboard_bin, EXAMPLES["batch"]["request"].encode())


def test_send_to_the_server(page):
    page.check("#to-server")
    page.select_option("#method", "subtract")
    page.check("#with-id")
    page.fill("#id-value", "1")
    assert send(page) == '{"jsonrpc":"2.0","result":19,"id":1}'
    assert page.locator("#status").text_content() == "HTTP 200"
    assert "server" in page.locator("#where").text_content()
    page.uncheck("#with-id")
    assert send(page) == "no response (notification)"
    assert page.locator("#status").text_content() == "HTTP 204"
    # An error code through the server: HTTP 200 with the error object.
    page.locator("#err-32601 .run").click()
    expect(page.locator("#err-32601 .status")).to_have_text("HTTP 200")
    assert json.loads(page.locator("#err-32601 .response").text_content())["error"]["code"] == -32601


def test_send_to_the_server_over_its_size_limit(browser, site, switchboard_serve):
    """A body over the server's --max-message-bytes: HTTP 413, shown as such."""
    limit = 1024
    pg = open_page(browser, switchboard_serve("--playground", site, "--max-message-bytes", str(limit)))
    try:
        pg.check("#to-server")
        body = '{"jsonrpc":"2.0","method":"sum","params":[' + "1," * limit + '1],"id":1}'
        assert len(body) > limit
        pg.fill("#editor", body)
        # The server's own words, as it sends them (text, not JSON-RPC).
        assert send(pg).strip() == "body larger than max_message_bytes"
        assert pg.locator("#status").text_content() == "HTTP 413"
        assert "server" in pg.locator("#where").text_content()
        # Under the limit, the same server answers.
        pg.fill("#editor", '{"jsonrpc":"2.0","method":"sum","params":[1,2],"id":2}')
        assert send(pg) == '{"jsonrpc":"2.0","result":3,"id":2}'
        assert pg.locator("#status").text_content() == "HTTP 200"
        assert not pg.errors, pg.errors
    finally:
        pg.context.close()


def test_bad_input_matches_the_native_core(page, switchboard_bin):
    # A megabyte of text.
    page.click("#fill-big")
    big = page.input_value("#editor").encode()
    assert len(big) == 1 << 20
    assert send(page) == native(switchboard_bin, big)
    # 100 000 nested [: the depth limit, not a hang or a crash.
    page.click("#fill-deep")
    deep = b"[" * 100_000
    got = send(page)
    assert got == native(switchboard_bin, deep)
    assert json.loads(got)["error"]["code"] == -32700
    # Invalid UTF-8, as \xNN escapes read as raw bytes.
    page.click("#fill-utf8")
    raw = b'{"jsonrpc": "2.0", "method": "sub\xfftract", "params": [42, 23], "id": 1}'
    got = send(page)
    assert got == native(switchboard_bin, raw)
    assert json.loads(got)["error"]["code"] in (-32700, -32600)
    assert page.locator("#inspect").text_content() == native_inspect(switchboard_bin, raw)
    # The same bytes from a file.
    page.set_input_files("#file", files=[{"name": "bad.json", "mimeType": "application/json", "buffer": raw}])
    assert send(page) == native(switchboard_bin, raw)
    # Over the message size limit (8 MiB by default): the core's own limit.
    page.set_input_files("#file", files=[])
    huge = b"[" + b"1," * (4 << 20) + b"1]"
    page.set_input_files("#file", files=[{"name": "huge.json", "mimeType": "application/json", "buffer": huge}])
    got = send(page)
    assert got == native(switchboard_bin, huge)
    error = json.loads(got)["error"]
    assert error["code"] == -32600, got
    assert error["data"]["limit"] == 8 << 20, got
    assert len(huge) > error["data"]["limit"]
    # The page still answers afterwards.
    page.set_input_files("#file", files=[])
    page.fill("#editor", '{"jsonrpc":"2.0","method":"sum","params":[1,2,4],"id":3}')
    assert send(page) == '{"jsonrpc":"2.0","result":7,"id":3}'


def test_megabytes_of_text_before_a_raw_byte(page, switchboard_bin):
    """Raw-bytes mode on 2 MB of text and then `\\xff`: one invalid byte after
    more characters than a call takes as arguments. The native core's error, no
    exception, and the page answers afterwards."""
    n = 2 << 20
    page.evaluate("n => { document.getElementById('editor').value = 'x'.repeat(n) + '\\\\xff'; }", n)
    page.check("#raw-bytes")
    data = b"x" * n + b"\xff"
    got = send(page)
    assert not got.startswith("failed"), got[:200]
    assert got == native(switchboard_bin, data)
    assert json.loads(got)["error"]["code"] == -32700
    assert page.locator("#inspect").text_content() == native_inspect(switchboard_bin, data)
    # Still working: a request in the same mode (`\\x75` is a `u` of the method name).
    page.fill("#editor", '{"jsonrpc":"2.0","method":"s\\x75m","params":[1,2],"id":4}')
    assert send(page) == '{"jsonrpc":"2.0","result":3,"id":4}'
    page.uncheck("#raw-bytes")
    page.fill("#editor", '{"jsonrpc":"2.0","method":"sum","params":[1,2,4],"id":3}')
    assert send(page) == '{"jsonrpc":"2.0","result":7,"id":3}'


def test_screenshot(page):
    page.click("#batch-run")
    for ex in EXAMPLES["errors"]:
        page.locator(f"#err{ex['code']} .run").click()
    page.select_option("#method", "subtract")
    send(page)
    # Every answer on the page before the picture: the batch and each card.
    expect(page.locator("#batch-response")).not_to_be_empty()
    for ex in EXAMPLES["errors"]:
        expect(page.locator(f"#err{ex['code']} .response")).not_to_be_empty()
    out = os.environ.get("PLAYGROUND_SCREENSHOT", os.path.join(ROOT, "target", "playground-screenshot.png"))
    page.screenshot(path=out, full_page=True)
    assert os.path.getsize(out) > 10_000
