"""The session WebSocket (`/v1/sessions/ws`) served natively, in front of the ASGI app.

The session socket carries every reset and step of an RL loop. Through uvicorn's WebSocket protocol
and the ASGI app, each frame paid for message dicts, queues, a task wake-up and a call through every
middleware, more than envhub's own work on it (`benchmarks/ws_floor.py`). Here picows parses frames
in C and each text frame goes to `SessionFrames.answer`, the same rules as the ASGI route (which
stays, for in-process clients: Starlette's TestClient, `envhub.client.asgi`), and the answer is
written straight to the socket. A frame with nothing ahead of it is answered in the read callback
itself, as the connection's worker task; only an answer that waits goes on in that task (see
`SessionSocket._answer_now`). After an answer the loop polls a while for the next frame before it
sleeps (`envhub.server.polling`).

`SessionSocketProtocol` is uvicorn's `ws` protocol class (`envhub.server.thread.uvicorn_config`). On
an upgrade request it reads the path and hands the connection to picows (the session route) or to
uvicorn's own WebSocket protocol (every other route, e.g. OpenEnv's `/ws`). What the ASGI route does
at the edges, this does too: a refused handshake is a 401 problem, a binary frame an error frame,
invalid UTF-8 a 1007 close, a message over the body limit a 1009 close, a protocol error a 1002
close, and the sessions a connection opened are closed when it drops.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
from asyncio.tasks import _enter_task, _leave_task  # what eager tasks (3.12+) run their first step with
from collections import deque
from collections.abc import Coroutine
from typing import Any

from picows import (
    WSAutoPingStrategy,
    WSCloseCode,
    WSListener,
    WSMsgType,
    WSUpgradeResponse,
    WSUpgradeResponseWithListener,
)
from picows.picows import WSProtocol
from uvicorn.config import WS_PROTOCOLS
from uvicorn.importer import import_from_string

from envhub.core.resumed import Resumed
from envhub.errors import Unauthorized
from envhub.server import frames
from envhub.server.polling import IdlePoll
from envhub.server.problems import respond
from envhub.server.routes.ws import SessionFrames

PATH = b"/v1/sessions/ws"
#: Frames read ahead of their answers before the socket stops reading (a client that never reads).
READ_AHEAD = 32
#: The most one read takes from the socket (see `_CappedReads`).
READ_CAP = 256 * 1024


class _QuietParserErrors(logging.LoggerAdapter):  # type: ignore[type-arg]
    """picows logs a client's malformed frame as an error; it is the client's fault, answered with a
    close code: one warning line, no traceback."""

    def log(self, level: int, msg: object, *args: Any, **kwargs: Any) -> None:
        kwargs.pop("exc_info", None)
        super().log(min(level, logging.WARNING), msg, *args, **kwargs)

    def exception(self, msg: object, *args: Any, **kwargs: Any) -> None:
        self.log(logging.WARNING, msg, *args)


LOG = _QuietParserErrors(logging.getLogger("envhub.ws"), {})


class SessionSocket(WSListener):
    """One native connection: frames in, answers out, in order."""

    def __init__(self, frames_: SessionFrames, connections: set[Any], tasks: set[asyncio.Task[None]],
                 poll: IdlePoll) -> None:
        self.frames = frames_
        self.poll = poll  # the server's: every answer written kicks it, every frame read adapts it
        self.connections = connections  # uvicorn's: asked to shut down with the server
        self.tasks = tasks  # uvicorn's: awaited at shutdown, so a dropped connection's sessions get closed
        self.transport: Any = None
        self.loop: asyncio.AbstractEventLoop | None = None
        self.queue: deque[str | bytes] = deque()  # frames read ahead of their answers (see `_enqueue`)
        self.worker: asyncio.Task[None] | None = None  # answers this connection's frames, one at a time
        self.context: contextvars.Context | None = None  # the worker's
        self.idle: asyncio.Future[None] | None = None  # pending while the worker has nothing to answer
        self.handed: tuple[Coroutine[Any, Any, None], Any] | None = None  # an answer begun here, that waits
        self.parts: list[bytes] | None = None  # a fragmented message so far
        self.parts_text = True
        self.parts_size = 0
        self.reading = True
        self.writable: asyncio.Future[None] | None = None
        self.gone = False

    # -- picows callbacks -----------------------------------------------------------------------------
    def on_ws_connected(self, transport: Any) -> None:
        self.transport = transport
        self.loop = asyncio.get_running_loop()  # once: each lookup costs a getpid call in CPython 3.11
        self.connections.add(self)

    def on_ws_frame(self, transport: Any, frame: Any) -> None:
        self.poll.came()
        kind = frame.msg_type
        if kind == WSMsgType.TEXT or kind == WSMsgType.BINARY:
            if self.parts is not None:
                return self._fail(WSCloseCode.PROTOCOL_ERROR, "a new message inside a fragmented one")
            if frame.fin:
                return self._message(frame.get_payload_as_bytes(), kind == WSMsgType.TEXT)
            self.parts, self.parts_text, self.parts_size = [], kind == WSMsgType.TEXT, 0
            self._part(frame)
        elif kind == WSMsgType.CONTINUATION:
            if self.parts is None:
                return self._fail(WSCloseCode.PROTOCOL_ERROR, "a continuation with nothing to continue")
            self._part(frame)
        elif kind == WSMsgType.PING:
            self.write(frame.get_payload_as_bytes(), opcode=0xA)
        elif kind == WSMsgType.CLOSE:
            code = frame.get_close_code().value if frame.payload_size >= 2 else 1000
            self.close(code if 1000 <= code < 5000 else 1002)

    def on_ws_disconnected(self, transport: Any) -> None:
        self.gone = True
        self.connections.discard(self)
        self.queue.clear()
        self.resume_writing()  # a worker waiting to write ends
        if self.worker is None:
            self._start()  # closes the sessions
        elif self.idle is not None and not self.idle.done():
            self.idle.set_result(None)  # the worker ends, closing them

    def pause_writing(self) -> None:
        if self.writable is None or self.writable.done():
            self.writable = (self.loop or asyncio.get_running_loop()).create_future()

    def resume_writing(self) -> None:
        if self.writable is not None and not self.writable.done():
            self.writable.set_result(None)
        self.writable = None

    def shutdown(self) -> None:
        """uvicorn's shutdown asks every connection to end."""
        self.close(WSCloseCode.SERVICE_RESTART.value)

    # -- messages -------------------------------------------------------------------------------------
    def _part(self, frame: Any) -> None:
        assert self.parts is not None
        payload = frame.get_payload_as_bytes()
        self.parts.append(payload)
        self.parts_size += len(payload)
        if self.parts_size > self.frames.limit:
            return self._fail(WSCloseCode.MESSAGE_TOO_BIG, "message over the body limit")
        if frame.fin:
            data, text = b"".join(self.parts), self.parts_text
            self.parts = None
            self._message(data, text)

    def _message(self, data: bytes, text: bool) -> None:
        if not text:
            return self._enqueue(SessionFrames.refuse(frames.binary_frame()).encode())
        try:
            decoded = data.decode()
        except UnicodeDecodeError:  # RFC 6455: a text frame must be UTF-8
            return self._fail(WSCloseCode.INVALID_TEXT, "invalid UTF-8 in a text frame")
        self._enqueue(decoded)

    def _enqueue(self, item: str | bytes) -> None:
        """Answer a text frame (str), or write an answer already made (bytes), in arrival order."""
        idle = self.idle
        if idle is not None and not idle.done() and self.writable is None and self._answer_now(item):
            return  # nothing was ahead of it: answered, or handed to the worker
        self.queue.append(item)
        if len(self.queue) >= READ_AHEAD and self.reading:
            self.reading = False
            self.transport.underlying_transport.pause_reading()
        if self.worker is None:
            self._start()
        elif idle is not None and not idle.done():
            idle.set_result(None)

    def _answer_now(self, item: str | bytes) -> bool:
        """Answer in this callback, as the worker would: its task and its context are the current
        ones, so whatever the answer takes from them (the task a time limit cancels, a context
        variable) is what it would take in the worker. Most answers finish without waiting (echo's,
        every refusal), and a task per frame cost more than envhub's own work on some. One that
        waits is handed to the worker, which goes on with it where it waits. False, with nothing
        done, when called inside a task (frames come in callbacks, but to be safe): queue it."""
        loop, worker, coro = self.loop, self.worker, self._answer(item)
        try:
            _enter_task(loop, worker)
        except RuntimeError:
            coro.close()
            return False
        try:
            waiting = self.context.run(coro.send, None)  # type: ignore[union-attr]
        except StopIteration:
            return True
        finally:
            _leave_task(loop, worker)
        self.handed = (coro, waiting)
        self.idle.set_result(None)  # type: ignore[union-attr]
        return True

    def _start(self) -> None:
        self.context = contextvars.copy_context()
        self.worker = task = (self.loop or asyncio.get_running_loop()).create_task(self._work(), context=self.context)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    async def _work(self) -> None:
        """Answer frames in order: those queued, and those begun in `_answer_now` that wait. Between
        them the worker waits on `idle`; it ends with the connection (or a cancellation: the next
        frame starts another)."""
        try:
            while not self.gone:
                if self.queue:
                    item = self.queue.popleft()
                    if not self.reading and len(self.queue) < READ_AHEAD // 4:
                        self.reading = True
                        self.transport.underlying_transport.resume_reading()
                    await self._answer(item)
                    continue
                self.idle = idle = (self.loop or asyncio.get_running_loop()).create_future()
                thrown = None
                try:
                    await idle
                except asyncio.CancelledError as exc:
                    if self.handed is None:
                        raise
                    thrown = exc  # meant for the answer handed over (e.g. its time limit): it gets it
                finally:
                    self.idle = None
                if self.handed is not None:
                    (coro, waiting), self.handed = self.handed, None
                    await Resumed(coro, waiting, thrown)
        finally:
            self.worker = self.idle = None
            if self.gone:
                await self.frames.close_all()

    async def _answer(self, item: str | bytes) -> None:
        answer = item if isinstance(item, bytes) else (await self.frames.answer(item)).encode()
        if self.writable is not None:
            await self.writable
        if not self.gone:
            self.write(answer)

    def write(self, payload: bytes, opcode: int = 0x1) -> None:
        """One unmasked frame (a text answer by default), through the transport's own write. picows's
        `send` writes to the socket itself whenever the transport reports nothing buffered, and under
        backpressure that let one frame's bytes cross another's (tests/server/test_native_ws.py): every
        frame, pongs and closes too, goes this way, in order."""
        n = len(payload)
        if n < 126:
            head = bytes((0x80 | opcode, n))
        elif n < 65536:
            head = bytes((0x80 | opcode, 126)) + n.to_bytes(2, "big")
        else:
            head = bytes((0x80 | opcode, 127)) + n.to_bytes(8, "big")
        self.transport.underlying_transport.write(head + payload)
        self.poll.answered(self.loop)  # type: ignore[arg-type]

    def close(self, code: int, why: bytes = b"") -> None:
        """A close frame after whatever is written already, then the end of the connection."""
        if not self.gone:
            self.write(code.to_bytes(2, "big") + why[:120], opcode=0x8)
            self.transport.disconnect()

    def _fail(self, code: WSCloseCode, why: str) -> None:
        LOG.info("closing a session socket (%s): %s", code.name, why)
        self.parts = None
        self.close(code.value, why.encode())


class _CappedReads(asyncio.BufferedProtocol):
    """picows's protocol with each read capped at READ_CAP. picows doubles its read buffer whenever
    a read fills it, and a client that sends without reading filled each one from the kernel's
    socket buffer (tens of MB here): the buffer grew to match, and every frame of such a read was
    parsed at once, far past READ_AHEAD. Capped, a read holds a few hundred kB at most."""

    __slots__ = ("inner",)

    def __init__(self, inner: WSProtocol) -> None:
        self.inner = inner

    def get_buffer(self, sizehint: int) -> memoryview:
        return self.inner.get_buffer(sizehint)[:READ_CAP]

    def buffer_updated(self, nbytes: int) -> None:
        self.inner.buffer_updated(nbytes)

    def connection_lost(self, exc: Exception | None) -> None:
        self.inner.connection_lost(exc)

    def eof_received(self) -> bool | None:
        return self.inner.eof_received()

    def pause_writing(self) -> None:
        self.inner.pause_writing()

    def resume_writing(self) -> None:
        self.inner.resume_writing()


class SessionSocketProtocol(asyncio.Protocol):
    """uvicorn's `ws` protocol class: routes an upgraded connection by its path (see the module)."""

    app: Any = None  # bound by `for_app`
    poll: IdlePoll  # the server's, bound by `for_app`

    @classmethod
    def for_app(cls, app: Any, poll: IdlePoll) -> type[SessionSocketProtocol]:
        return type("SessionSocketProtocolForApp", (cls,), {"app": app, "poll": poll})

    def __init__(self, config: Any, server_state: Any, app_state: dict[str, Any], **kwargs: Any) -> None:
        self.config, self.server_state, self.app_state, self.kwargs = config, server_state, app_state, kwargs
        self.transport: asyncio.Transport | None = None
        self.inner: Any = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        if self.inner is None:  # the upgrade request, as uvicorn re-serialised it
            target = data.split(b" ", 2)[1] if data.count(b" ") >= 2 else b""
            if target.split(b"?", 1)[0] == PATH:
                native = self._native()
                native.connection_made(self.transport)
                self.inner = _CappedReads(native)
            else:
                self.inner = self._asgi()
                self.inner.connection_made(self.transport)
            # uvicorn sets this object as the transport's protocol after this call; hand over next turn.
            asyncio.get_running_loop().call_soon(self.transport.set_protocol, self.inner)  # type: ignore[union-attr]
        if isinstance(self.inner, asyncio.BufferedProtocol):
            view = memoryview(data)
            while view:
                buf = self.inner.get_buffer(len(view))
                n = min(len(buf), len(view))
                buf[:n] = view[:n]
                self.inner.buffer_updated(n)
                view = view[n:]
        else:
            self.inner.data_received(data)

    def connection_lost(self, exc: Exception | None) -> None:
        if self.inner is not None:
            self.inner.connection_lost(exc)

    def eof_received(self) -> bool | None:
        return self.inner.eof_received() if self.inner is not None else None

    def pause_writing(self) -> None:
        if self.inner is not None:
            self.inner.pause_writing()

    def resume_writing(self) -> None:
        if self.inner is not None:
            self.inner.resume_writing()

    def _asgi(self) -> asyncio.Protocol:
        cls = import_from_string(WS_PROTOCOLS["websockets-sansio"])
        return cls(config=self.config, server_state=self.server_state, app_state=self.app_state, **self.kwargs)

    def _native(self) -> WSProtocol:
        hub, access = self.app.state.hub, self.app.state.access
        limit = hub.settings.max_body_bytes
        connections, tasks, poll = self.server_state.connections, self.server_state.tasks, self.poll

        def listener(request: Any) -> Any:
            try:
                caller = access.caller(request.headers.get("authorization"))
            except Unauthorized as exc:
                denial = respond(exc)
                headers = [(k.decode(), v.decode()) for k, v in denial.raw_headers if k != b"content-length"]
                return WSUpgradeResponseWithListener(
                    WSUpgradeResponse.create_error_response(denial.status_code, bytes(denial.body), headers), None)
            return SessionSocket(SessionFrames(hub.manager, caller, limit), connections, tasks, poll)

        # host:port, path, server side, listener factory, logger, no disconnect on a listener's
        # exception (answers already catch them), no handshake timeout (uvicorn read the request),
        # no pings of our own, pings answered by the listener (`SessionSocket.write`), frame limit,
        # no extra headers, read buffer.
        return WSProtocol(None, None, False, listener, LOG, False, None, False, 20, 20,
                          WSAutoPingStrategy.PING_WHEN_IDLE, False, limit, None,
                          2048)
