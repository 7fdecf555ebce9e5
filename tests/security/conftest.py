"""Security fixtures: real servers (keys off and on), a raw WebSocket client that can send what
no well-behaved library would (binary, invalid UTF-8, bad fragments), and a log trap that
records every error or traceback the server logs."""

from __future__ import annotations

import base64
import logging
import os
import socket
from collections.abc import Iterator

import pytest

from envhub.server.auth import new_key
from tests.conftest import LiveServer, make_settings
from tests.store.conftest import data_dir, run_episode, verifier_site  # noqa: F401 - the store's fixtures, reused

SECRET, KEY = new_key("trainer", max_sessions=3)
ECHO_ONLY_SECRET, ECHO_ONLY = new_key("echo-only", families=["echo"])


class LogTrap(logging.Handler):
    """Every record at ERROR or with a traceback, from the server's loggers."""

    LOGGERS = ("uvicorn", "uvicorn.error", "envhub", "fastapi", "starlette")

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.bad: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        if record.levelno >= logging.ERROR or record.exc_info:
            self.bad.append(f"{record.name}: {record.getMessage()[:300]}")

    def __enter__(self) -> LogTrap:
        for name in self.LOGGERS:
            logging.getLogger(name).addHandler(self)
        return self

    def __exit__(self, *exc: object) -> None:
        for name in self.LOGGERS:
            logging.getLogger(name).removeHandler(self)


@pytest.fixture
def log_trap() -> Iterator[LogTrap]:
    with LogTrap() as trap:
        yield trap


@pytest.fixture(scope="session")
def open_server() -> Iterator[LiveServer]:
    """Keys off (loopback): sessions belong to client tokens."""
    with LiveServer(make_settings(families=["echo"], max_sessions=100_000, auth="off")) as server:
        yield server


@pytest.fixture(scope="session")
def keyed_server() -> Iterator[LiveServer]:
    """Keys on: a key with a quota of 3 sessions, and one limited to the echo family."""
    entries = ";".join([KEY.entry(), ECHO_ONLY.entry()])
    with LiveServer(make_settings(families=["echo", "terminal"], auth="on", api_keys=entries)) as server:
        yield server


def bearer(secret: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {secret}"}


class RawWs:
    """A minimal RFC 6455 client over a plain socket: frames exactly as given."""

    def __init__(self, port: int, path: str, headers: dict[str, str] | None = None, timeout: float = 30) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        key = base64.b64encode(os.urandom(16)).decode()
        extra = "".join(f"{k}: {v}\r\n" for k, v in (headers or {}).items())
        self.sock.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\n"
                          f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n"
                          f"{extra}\r\n".encode())
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = self.sock.recv(4096)
            if not chunk:
                break
            head += chunk
        self.status = int(head.split(b" ", 2)[1]) if head.startswith(b"HTTP/1.1 ") else 0
        self.handshake = head
        self._buf = head.split(b"\r\n\r\n", 1)[1] if b"\r\n\r\n" in head else b""

    def send(self, opcode: int, payload: bytes, fin: bool = True) -> None:
        mask = os.urandom(4)
        n = len(payload)
        head = bytes([(0x80 if fin else 0) | opcode])
        if n < 126:
            head += bytes([0x80 | n])
        elif n < 65536:
            head += bytes([0x80 | 126]) + n.to_bytes(2, "big")
        else:
            head += bytes([0x80 | 127]) + n.to_bytes(8, "big")
        masked = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
        try:
            self.sock.sendall(head + mask + masked)
        except OSError:
            pass  # the server closed already; recv() reports it

    def text(self, data: str | bytes) -> None:
        self.send(0x1, data.encode() if isinstance(data, str) else data)

    def _read(self, n: int) -> bytes | None:
        while len(self._buf) < n:
            try:
                chunk = self.sock.recv(65536)
            except OSError:
                return None
            if not chunk:
                return None
            self._buf += chunk
        out, self._buf = self._buf[:n], self._buf[n:]
        return out

    def recv(self) -> tuple[int, bytes] | None:
        """The next frame (opcode, payload), or None when the connection ended."""
        head = self._read(2)
        if head is None:
            return None
        n = head[1] & 0x7F
        if n == 126:
            n = int.from_bytes(self._read(2) or b"\0\0", "big")
        elif n == 127:
            n = int.from_bytes(self._read(8) or b"\0" * 8, "big")
        payload = self._read(n)
        return None if payload is None else (head[0] & 0x0F, payload)

    def close(self) -> None:
        self.sock.close()
