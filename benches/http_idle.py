"""Memory per idle HTTP connection: opens N connections to HOST:PORT, each making
one `subtract` call on keep-alive (MODE `call`, the default) or sending nothing
(MODE `none`), waits WAIT seconds, reads the server's RSS (/proc/PID/status),
then closes them all and reads it again WAIT seconds later.

    python3 benches/http_idle.py HOST PORT N PID [call|none]

Run it against servers started fresh and side by side, for example
`switchboard serve --threads 2` and `jsonrpsee_server --threads 2` (benches'
bin), with `ulimit -n` above N. Loopback only; every count bounded.
"""
import os
import socket
import sys
import time

BODY = b'{"jsonrpc":"2.0","method":"subtract","params":[42,23],"id":1}'
REQUEST = (b"POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
           b"Content-Length: %d\r\n\r\n%s" % (len(BODY), BODY))


def rss_kb(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise SystemExit(f"no VmRSS for pid {pid}")


def call(s):
    s.sendall(REQUEST)
    got = b""
    deadline = time.monotonic() + 10
    while not (b"\r\n\r\n" in got and got.rstrip().endswith(b"}")):
        if time.monotonic() > deadline:
            raise SystemExit(f"no answer: {got[:80]!r}")
        chunk = s.recv(4096)
        if not chunk:
            raise SystemExit("closed before the answer")
        got += chunk
    if not got.startswith(b"HTTP/1.1 200"):
        raise SystemExit(f"not 200: {got[:40]!r}")


def main():
    host, port, n, pid = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    mode = sys.argv[5] if len(sys.argv) > 5 else "call"
    if mode not in ("call", "none"):
        raise SystemExit("MODE is call or none")
    wait = float(os.environ.get("WAIT", "3"))
    before = rss_kb(pid)
    socks = []
    for _ in range(n):
        s = socket.create_connection((host, port), timeout=10)
        if mode == "call":
            call(s)
        socks.append(s)
    time.sleep(wait)
    during = rss_kb(pid)
    for s in socks:
        s.close()
    time.sleep(wait)
    after = rss_kb(pid)
    print(f"{mode}: {(during - before) * 1024 / n:.0f} bytes/connection "
          f"({n} open: RSS {before} -> {during} kB; {after} kB {wait:g} s after they closed)")


main()
