"""A minimal Docker Engine API client: HTTP over the engine's unix socket."""

from __future__ import annotations

import asyncio
import http.client
import json
import socket
from collections.abc import Sequence
from typing import Any

import aiohttp

from envhub.errors import EnvError, SandboxUnavailable, Unavailable
from envhub.sandbox.shell import Clip


class Engine:
    """A minimal Docker Engine API client; one aiohttp session per event loop."""

    def __init__(self, sock: str, timeout_s: float) -> None:
        self.sock = sock
        self.timeout_s = timeout_s
        self._sessions: dict[asyncio.AbstractEventLoop, aiohttp.ClientSession] = {}

    def _session(self) -> aiohttp.ClientSession:
        loop = asyncio.get_running_loop()
        s = self._sessions.get(loop)
        if s is None or s.closed:
            for old in [lp for lp in self._sessions if lp.is_closed()]:
                self._sessions.pop(old, None)
            s = aiohttp.ClientSession(connector=aiohttp.UnixConnector(path=self.sock))
            self._sessions[loop] = s
        return s

    async def call(self, method: str, path: str, *, body: Any = None, params: dict | None = None,
                   timeout_s: float | None = None, ok: Sequence[int] = (200, 201, 204, 304)) -> Any:
        """One API call; engine faults become `Unavailable`, our own bad requests `EnvError`."""
        try:
            async with self._session().request(
                    method, f"http://docker{path}", json=body, params=params,
                    timeout=aiohttp.ClientTimeout(total=timeout_s or self.timeout_s)) as r:
                raw = await r.read()
                status = r.status
        except (TimeoutError, aiohttp.ClientError, OSError) as e:
            raise Unavailable(f"the container engine is unreachable at {self.sock}: {e!r}", retry_after_s=2) from e
        data: Any = None
        if raw:
            try:
                data = json.loads(raw)
            except ValueError:
                data = raw
        if status in ok:
            return data
        message = data.get("message") if isinstance(data, dict) else str(data)[:300]
        if status >= 500 or status == 409:
            raise Unavailable(f"the container engine refused {method} {path}: {message}", retry_after_s=2,
                              status=status)
        if status == 404 and path.startswith("/containers/create"):
            raise SandboxUnavailable(f"sandbox image missing: {message}; build it (see docker/README.md)")
        raise EnvError(f"container engine answered {status} to {method} {path}: {message}", status=status)

    async def logs(self, cid: str, clip: Clip) -> None:
        """Demultiplex a non-TTY container's stdout+stderr into `clip`."""
        async with self._session().get(f"http://docker/containers/{cid}/logs",
                                       params={"stdout": "1", "stderr": "1"},
                                       timeout=aiohttp.ClientTimeout(total=self.timeout_s)) as r:
            buf = await r.read()
        i = 0
        while i + 8 <= len(buf):
            size = int.from_bytes(buf[i + 4:i + 8], "big")
            clip.add(buf[i + 8:i + 8 + size])
            i += 8 + size

    def ping(self) -> None:
        """Blocking liveness probe for the synchronous `check()`."""
        conn = _UnixHTTP(self.sock, timeout=5)
        try:
            conn.request("GET", "/_ping")
            r = conn.getresponse()
            if r.status != 200:
                raise SandboxUnavailable(f"the container engine at {self.sock} answered {r.status} to a ping")
        finally:
            conn.close()

    def image_exists(self, image: str) -> bool:
        conn = _UnixHTTP(self.sock, timeout=5)
        try:
            conn.request("GET", f"/images/{image}/json")
            r = conn.getresponse()
            r.read()
            return r.status == 200
        finally:
            conn.close()

    async def aclose(self) -> None:
        loop = asyncio.get_running_loop()
        s = self._sessions.pop(loop, None)
        if s is not None:
            await s.close()


class _UnixHTTP(http.client.HTTPConnection):
    def __init__(self, path: str, timeout: float) -> None:
        super().__init__("docker", timeout=timeout)
        self._path = path

    def connect(self) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(self.timeout)
        self.sock.connect(self._path)

