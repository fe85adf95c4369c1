#!/usr/bin/env python3
"""Raw loopback HTTP for the display tests: what a browser cannot send.

raw.py PORT send          stdin's bytes as one request; prints the status
                          line (or "closed"), then the body after a blank line
raw.py PORT slow          trickles a request head one byte every 0.5 s;
                          prints how many seconds until the server cut it
raw.py PORT cap N         holds N idle connections, then opens one more;
                          prints "refused" if that one is closed at once
raw.py PORT noread PID S  sends pipelined requests and never reads, for S
                          seconds; prints "dropped SECONDS" or "alive" and
                          the RSS of PID (KiB) before and after
"""
import socket
import sys
import time

port = int(sys.argv[1])
mode = sys.argv[2]


def conn():
    s = socket.create_connection(("127.0.0.1", port), timeout=5)
    return s


def read_all(s, limit=1 << 20):
    data = b""
    try:
        while len(data) < limit:
            b = s.recv(65536)
            if not b:
                break
            data += b
    except (socket.timeout, ConnectionResetError):
        pass
    return data


def rss(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return -1


def read_answer(s):
    """One answer: its head, then Content-Length bytes (no wait for close)."""
    data = b""
    try:
        while b"\r\n\r\n" not in data:
            b = s.recv(65536)
            if not b:
                return data
            data += b
        head, _, body = data.partition(b"\r\n\r\n")
        n = 0
        for line in head.split(b"\r\n")[1:]:
            k, _, v = line.partition(b":")
            if k.strip().lower() == b"content-length":
                n = int(v.strip())
        while len(body) < n:
            b = s.recv(65536)
            if not b:
                break
            body += b
        return head + b"\r\n\r\n" + body
    except (socket.timeout, ConnectionResetError):
        return data


if mode == "send":
    req = sys.stdin.buffer.read()
    s = conn()
    try:
        s.sendall(req)
    except (BrokenPipeError, ConnectionResetError):
        pass
    data = read_answer(s)
    if not data:
        print("closed")
    else:
        head, _, body = data.partition(b"\r\n\r\n")
        sys.stdout.write(head.decode("latin-1") + "\n\n" + body.decode("latin-1"))
elif mode == "slow":
    s = conn()
    t0 = time.monotonic()
    head = b"GET / HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nX-Slow: " % port + b"a" * 200
    try:
        for ch in head:
            s.sendall(bytes([ch]))
            time.sleep(0.5)
            s.settimeout(0.01)
            try:
                if s.recv(1) == b"":
                    break
            except socket.timeout:
                pass
            if time.monotonic() - t0 > 60:
                break
    except (BrokenPipeError, ConnectionResetError):
        pass
    print("%.1f" % (time.monotonic() - t0))
elif mode == "cap":
    n = int(sys.argv[3])
    held = [conn() for _ in range(n)]
    time.sleep(0.5)
    extra = conn()
    extra.settimeout(2)
    try:
        extra.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nConnection: close\r\n\r\n" % port)
        got = extra.recv(100)
    except (ConnectionResetError, BrokenPipeError):
        got = b""
    except socket.timeout:
        got = b"timeout"
    print("refused" if got == b"" else "served " + got[:20].decode("latin-1"))
    for h in held:
        h.close()
elif mode == "noread":
    pid, secs = int(sys.argv[3]), float(sys.argv[4])
    before = rss(pid)
    s = conn()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    req = b"GET / HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n\r\n" % port
    t0 = time.monotonic()
    dropped = None
    s.setblocking(False)
    while time.monotonic() - t0 < secs:
        try:
            s.send(req * 64)
        except BlockingIOError:
            time.sleep(0.05)
        except (BrokenPipeError, ConnectionResetError):
            dropped = time.monotonic() - t0
            break
    peak = rss(pid)
    print(("dropped %.1f" % dropped) if dropped is not None else "alive", before, peak)
else:
    sys.exit("raw.py: unknown mode " + mode)
