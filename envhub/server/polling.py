"""Idle polling: after the server writes an answer, its event loop goes on polling its sockets for
a short window before it sleeps.

An RL loop sends its next frame soon after an answer (the step right after its reset, one tool call
after another): on one session, tens to a few hundred microseconds later. A server thread that
sleeps at once lets its CPU go idle, and on a virtual machine, where environment pools mostly run,
an idle vCPU halts: the hypervisor may give the core to another guest, the next frame must wake the
vCPU with an interrupt, and envhub's work on it then runs on cold caches. On the 2-core VM of
`benchmarks/README.md`, one session, that wake-up cost more than envhub's own work on a pair: polling
took the raw client from about 2,500 to 4,400 reset+step pairs/s.

Polling spends CPU, so the window adapts as Linux's guest halt polling does (cpuidle-haltpoll). A
frame that came within the window leaves it as it is; one that came after it, but within the
longest window, doubles it (polling longer would have caught it); one that came later halves it,
down to nothing. A server whose frames come far apart (an agent thinking between steps) stops
polling within a few frames; the next frame that comes soon after an answer starts it again.
`ENVHUB_POLL_US=0` turns it off. The REST routes and OpenEnv's poll the same way (`PolledApp`).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any


class IdlePoll:
    """One event loop's polling window, kicked by every answer written (`answered`) and adapted at
    every frame read (`came`). Used on the loop's thread only."""

    #: The window a frame that came soon after an answer starts polling again with, once it had stopped.
    START_S = 20e-6

    def __init__(self, max_s: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.max_s = max_s
        self.window = max_s  # 0: not polling
        self.last: float | None = None  # when the last answer was written
        self.polling = False
        self.loop: asyncio.AbstractEventLoop | None = None
        self.clock = clock

    def answered(self, loop: asyncio.AbstractEventLoop) -> None:
        """An answer was just written: poll until the window after it has passed."""
        if not self.max_s:
            return
        self.last = self.clock()
        if self.window and not self.polling:
            self.polling, self.loop = True, loop
            loop.call_soon(self._poll)

    def came(self) -> None:
        """A frame was read: adapt the window to how long after the last answer it came."""
        if self.last is None:
            return
        gap = self.clock() - self.last
        if gap <= self.window:
            return
        if gap <= self.max_s:
            self.window = min(self.max_s, max(2 * self.window, self.START_S))
        else:
            self.window /= 2
            if self.window < self.START_S:
                self.window = 0.0

    def _poll(self) -> None:
        # A callback that is ready makes the loop poll its sockets without blocking, then run it again.
        if self.last is not None and self.clock() - self.last < self.window:
            self.loop.call_soon(self._poll)  # type: ignore[union-attr]
        else:
            self.polling = False


class PolledApp:
    """The ASGI app as `envhub serve` serves it: every request (and every WebSocket message) read
    adapts `poll`, and every response finished (and every WebSocket message sent) kicks it, as the
    session socket does for its frames (`envhub.server.native_ws`)."""

    def __init__(self, app: Callable[..., Awaitable[None]], poll: IdlePoll) -> None:
        self.app, self.poll = app, poll

    async def __call__(self, scope: dict[str, Any], receive: Callable[[], Awaitable[dict[str, Any]]],
                       send: Callable[[dict[str, Any]], Awaitable[None]]) -> None:
        poll = self.poll
        if not poll.max_s or scope["type"] == "lifespan":
            return await self.app(scope, receive, send)
        loop = asyncio.get_running_loop()

        async def received() -> dict[str, Any]:
            message = await receive()
            if message["type"] == "websocket.receive":
                poll.came()
            return message

        async def sent(message: dict[str, Any]) -> None:
            await send(message)
            kind = message["type"]
            if kind == "websocket.send" or (kind == "http.response.body" and not message.get("more_body")):
                poll.answered(loop)

        if scope["type"] == "http":
            poll.came()
        await self.app(scope, received, sent)
