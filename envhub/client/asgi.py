"""An ASGI app served in this process, without a socket: transports for both clients.

    with InProcess(create_app(settings)) as app:
        EnvClient("http://envhub", transport=app.transport())
        AsyncEnvClient("http://envhub", transport=app.async_transport())

The app runs, lifespan included (the hub's start and stop), on an event loop of its own in a
thread; each request is handed to `httpx.ASGITransport` on that loop and its answer read whole,
so a blocking client and async clients on any loop reach the same live sessions. HTTP only: the
WebSocket route needs a real server (`envhub.server.thread.serve_in_thread`).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

import httpx

T = TypeVar("T")
Message = dict[str, Any]


class InProcess:
    """An ASGI app running on its own loop in a daemon thread (a context manager)."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self._asgi = httpx.ASGITransport(app=app)
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="envhub-in-process", daemon=True)
        self._to_app: asyncio.Queue[Message] | None = None
        self._from_app: asyncio.Queue[Message] | None = None
        self._lifespan: asyncio.Task[None] | None = None

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run `coro` on the app's loop and wait for it (from any thread but the app's)."""
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result()

    async def run_async(self, coro: Coroutine[Any, Any, T]) -> T:
        """`run`, awaited from another event loop."""
        return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(coro, self._loop))

    def transport(self) -> httpx.BaseTransport:
        return _SyncTransport(self)

    def async_transport(self) -> httpx.AsyncBaseTransport:
        return _AsyncTransport(self)

    async def handle(self, request: httpx.Request) -> httpx.Response:
        """One request through the app, on its loop; the answer read whole."""
        request = httpx.Request(request.method, request.url, headers=request.headers, content=request.content)
        response = await self._asgi.handle_async_request(request)
        body = await response.aread()
        return httpx.Response(response.status_code, headers=response.headers, content=body)

    # -- lifespan (ASGI's own protocol, so any ASGI app starts and stops as a server would run it) ----
    async def _lifespan_event(self, event: str) -> None:
        assert self._to_app is not None and self._from_app is not None
        assert self._lifespan is not None
        await self._to_app.put({"type": f"lifespan.{event}"})
        answer = asyncio.ensure_future(self._from_app.get())
        await asyncio.wait({answer, self._lifespan}, return_when=asyncio.FIRST_COMPLETED)
        if not answer.done():  # the app ended its lifespan without a word: its exception says why
            answer.cancel()
            self._lifespan.result()
            raise RuntimeError(f"the app ended its lifespan during {event}")
        answer = answer.result()
        if answer["type"] != f"lifespan.{event}.complete":
            raise RuntimeError(f"the app's {event} failed: {answer.get('message', answer['type'])}")

    async def _start(self) -> None:
        self._to_app, self._from_app = asyncio.Queue(), asyncio.Queue()
        scope = {"type": "lifespan", "asgi": {"version": "3.0", "spec_version": "2.0"}, "state": {}}
        self._lifespan = asyncio.create_task(self.app(scope, self._to_app.get, self._from_app.put))
        await self._lifespan_event("startup")

    async def _stop(self) -> None:
        await self._lifespan_event("shutdown")
        assert self._lifespan is not None
        await self._lifespan

    def __enter__(self) -> InProcess:
        self._thread.start()
        try:
            self.run(self._start())
        except BaseException:
            self._end_loop()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        try:
            self.run(self._stop())
        finally:
            self._end_loop()

    def _end_loop(self) -> None:
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=30)
        self._loop.close()


class _SyncTransport(httpx.BaseTransport):
    def __init__(self, app: InProcess) -> None:
        self.app = app

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        request.read()
        return self.app.run(self.app.handle(request))


class _AsyncTransport(httpx.AsyncBaseTransport):
    def __init__(self, app: InProcess) -> None:
        self.app = app

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        await request.aread()
        return await self.app.run_async(self.app.handle(request))
