"""The load generator of `protocol.py`: N WebSocket sessions on raw sockets, one thread, no asyncio.

Each session sends a reset, waits for its answer, sends a step, waits, and counts a pair. The frames
are built once (masked with one key per message, which RFC 6455 allows a client to choose), and an
answer is read as bytes and only checked, never decoded: the client's own cost per pair is a few
system calls. With one session, a pair's latency is the client's work, both servers' wake-ups and the
server's work in turn, so the lighter the client, the closer a ratio of pairs/s comes to the ratio of
the servers' own latencies (a Python `websockets` client cost about as much per pair as a fast server).
"""

from __future__ import annotations

import base64
import os
import selectors
import socket
import time
from urllib.parse import urlsplit


def client_frame(payload: str | bytes, opcode: int = 0x1) -> bytes:
    """One masked client frame carrying `payload` (text is sent as UTF-8)."""
    payload = payload.encode() if isinstance(payload, str) else payload
    n = len(payload)
    if n < 126:
        head = bytes((0x80 | opcode, 0x80 | n))
    elif n < 65536:
        head = bytes((0x80 | opcode, 0x80 | 126)) + n.to_bytes(2, "big")
    else:
        head = bytes((0x80 | opcode, 0x80 | 127)) + n.to_bytes(8, "big")
    key = os.urandom(4)
    return head + key + bytes(b ^ key[i % 4] for i, b in enumerate(payload))


def handshake(url: str, headers: dict[str, str]) -> socket.socket:
    """A connected, upgraded socket (blocking while connecting, non-blocking after)."""
    parts = urlsplit(url)
    sock = socket.create_connection((parts.hostname, parts.port or 80))
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    key = base64.b64encode(os.urandom(16)).decode()
    lines = [f"GET {parts.path or '/'} HTTP/1.1", f"Host: {parts.netloc}", "Upgrade: websocket",
             "Connection: Upgrade", f"Sec-WebSocket-Key: {key}", "Sec-WebSocket-Version: 13",
             *(f"{k}: {v}" for k, v in headers.items())]
    sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode())
    reply = b""
    while b"\r\n\r\n" not in reply:
        chunk = sock.recv(4096)
        if not chunk:
            raise ConnectionError(f"{url}: connection closed during the handshake")
        reply += chunk
    head, rest = reply.split(b"\r\n\r\n", 1)
    if not head.startswith(b"HTTP/1.1 101"):
        raise ConnectionError(f"{url}: handshake refused: {head.splitlines()[0].decode()}")
    if rest:
        raise ConnectionError(f"{url}: the server sent a frame before the first request")
    sock.setblocking(False)
    return sock


class Session:
    """One connection's state: which message it waits for, and what it has read of it."""

    __slots__ = ("sock", "buf", "waiting_step", "started")

    def __init__(self, sock: socket.socket) -> None:
        self.sock, self.buf, self.waiting_step, self.started = sock, b"", False, 0.0

    def answers(self) -> list[bytes]:
        """The whole server frames read so far (server frames are never masked)."""
        out = []
        buf = self.buf
        while len(buf) >= 2:
            n, at = buf[1] & 0x7F, 2
            if n == 126:
                n, at = int.from_bytes(buf[2:4], "big"), 4
            elif n == 127:
                n, at = int.from_bytes(buf[2:10], "big"), 10
            if len(buf) < at + n:
                break
            if buf[0] & 0x0F != 0x1:
                raise ConnectionError(f"unexpected frame opcode {buf[0] & 0x0F}: {buf[at:at + n][:200]!r}")
            out.append(buf[at:at + n])
            buf = buf[at + n:]
        self.buf = buf
        return out


def run(url: str, sessions: int, seconds: float, reset: str, step: str, ok: bytes,
        headers: dict[str, str] | None = None, lat: list[float] | None = None) -> int:
    """Pairs completed by `sessions` sessions in `seconds`; each pair's latency is appended to `lat`.
    Every answer must contain `ok` (a cheap check that the server answered, not refused)."""
    reset_frame, step_frame = client_frame(reset), client_frame(step)
    lat = [] if lat is None else lat
    sel = selectors.DefaultSelector()
    conns = [Session(handshake(url, headers or {})) for _ in range(sessions)]
    pairs = 0
    now = time.perf_counter
    stop = now() + seconds
    for s in conns:
        sel.register(s.sock, selectors.EVENT_READ, s)
        s.started = now()
        s.sock.send(reset_frame)
    live = len(conns)
    try:
        while live:
            for key, _ in sel.select():
                s: Session = key.data
                chunk = s.sock.recv(262144)
                if not chunk:
                    raise ConnectionError(f"{url}: the server closed the connection")
                s.buf += chunk
                for answer in s.answers():
                    if ok not in answer:
                        raise RuntimeError(f"{url}: not an answer: {answer[:300]!r}")
                    if not s.waiting_step:
                        s.waiting_step = True
                        s.sock.send(step_frame)
                        continue
                    t = now()
                    lat.append(t - s.started)
                    pairs += 1
                    s.waiting_step = False
                    if t >= stop:
                        sel.unregister(s.sock)
                        live -= 1
                        continue
                    s.started = t
                    s.sock.send(reset_frame)
    finally:
        sel.close()
        for s in conns:
            try:
                s.sock.setblocking(True)
                s.sock.sendall(client_frame((1000).to_bytes(2, "big"), opcode=0x8))
            except OSError:
                pass
            s.sock.close()
    return pairs
