"""Memory per idle WebSocket connection (benches/ws.sh with WS_IDLE=N): opens N
connections to HOST:PORT (the handshake only, then silence), then reads the
server's RSS (/proc/PID/status) before and after.

    python3 benches/ws_idle.py HOST PORT N PID
"""
import socket
import sys
import time

HANDSHAKE = (b"GET / HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
             b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")


def rss_kb(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise SystemExit(f"no VmRSS for pid {pid}")


def main():
    host, port, n, pid = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    before = rss_kb(pid)
    socks = []
    for _ in range(n):
        s = socket.create_connection((host, port))
        s.sendall(HANDSHAKE)
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = s.recv(4096)
            if not chunk:
                raise SystemExit("closed during the handshake")
            head += chunk
        if not head.startswith(b"HTTP/1.1 101"):
            raise SystemExit(f"not upgraded: {head[:40]!r}")
        socks.append(s)
    time.sleep(1)
    after = rss_kb(pid)
    print(f"{(after - before) * 1024 / n:.0f} bytes/connection ({n} open: RSS {before} -> {after} kB)")


main()
