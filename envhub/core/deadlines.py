"""Time limits on the session manager's awaits on environments (reset, step, close).

`asyncio.timeout` arms a timer on the event loop per call and cancels it after: about 5 µs, and a
reset+step pair took three, a sixth of envhub's own CPU per pair on echo (`benchmarks/protocol.py`).
These limits are long (15 s and more past a task's step limit) and need no precision, so a call here
only puts itself in a dict and takes itself out; one sweep every `period_s` cancels the tasks that
ran past their deadline, and their block raises `TimeoutError` as `asyncio.timeout`'s does (a
cancellation from elsewhere stays a cancellation). A limit is kept within `period_s`.

A block is a plain `with` inside a task: entering and leaving awaits nothing, and an `async with`
made two coroutines per block for nothing. `run` goes further for one coroutine: it arms the limit only
if the coroutine waits. One that finishes without waiting (echo's reset and step, most closes) could
not be cut anyway, since a cancellation lands only where a coroutine waits, and arming and clearing a
limit for it was about 2 µs, three times per reset+step pair.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Coroutine
from types import CoroutineType, TracebackType
from typing import Any, TypeVar

from envhub.core.resumed import Resumed

T = TypeVar("T")


class Deadlines:
    def __init__(self, period_s: float = 0.25) -> None:
        self.period_s = period_s
        self._live: dict[Limit, None] = {}
        self._sweeper: asyncio.Task[None] | None = None
        #: The loop the sweeper runs on: `current_task(loop)` skips the running-loop lookup, which
        #: costs a getpid system call in CPython 3.11 (three per reset+step pair).
        self._loop: asyncio.AbstractEventLoop | None = None

    def __call__(self, seconds: float) -> Limit:
        """`with deadlines(s):` the block (in a task), cut with `TimeoutError` once `s` seconds have passed."""
        return Limit(self, seconds)

    async def run(self, seconds: float, coro: Coroutine[Any, Any, T]) -> T:
        """`await coro` in a task, cut with `TimeoutError` once `seconds` have passed since this call.
        The coroutine runs here until it first waits; only then is the limit armed."""
        if type(coro) is not CoroutineType:  # e.g. a compiled coroutine: no first step to take here
            with self(seconds):
                return await coro
        started = time.monotonic()
        try:
            waiting = coro.send(None)
        except StopIteration as done:
            return done.value  # type: ignore[no-any-return]
        with Limit(self, seconds, started):
            return await Resumed(coro, waiting)

    async def start(self) -> None:
        self._start()

    def _start(self) -> None:
        if self._sweeper is None:
            self._loop = asyncio.get_running_loop()
            self._sweeper = self._loop.create_task(self._sweep_forever(), name="envhub-deadlines")

    async def stop(self) -> None:
        if self._sweeper is not None:
            self._sweeper.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._sweeper
            self._sweeper = self._loop = None

    def sweep(self) -> int:
        """Cancel the blocks past their deadline; how many."""
        now = time.monotonic()
        late = [limit for limit in self._live if limit.deadline <= now and not limit.expired]
        for limit in late:
            limit.expired = True
            limit.task.cancel()
        return len(late)

    async def _sweep_forever(self) -> None:
        while True:
            await asyncio.sleep(self.period_s)
            self.sweep()


class Limit:
    __slots__ = ("owner", "seconds", "deadline", "task", "cancelling", "expired")

    def __init__(self, owner: Deadlines, seconds: float, started: float | None = None) -> None:
        self.owner, self.seconds, self.expired = owner, seconds, False
        self.deadline = seconds + (time.monotonic() if started is None else started)

    def __enter__(self) -> Limit:
        owner = self.owner
        task = asyncio.current_task(owner._loop) if owner._loop is not None else None
        if task is None:  # not started yet, or another loop's: the plain lookup decides
            task = asyncio.current_task()
        if task is None:
            raise RuntimeError("a deadline is kept inside a task")
        if owner._sweeper is None:
            owner._start()  # on first use, so that no caller can forget it
        self.task, self.cancelling = task, task.cancelling()
        owner._live[self] = None
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        del self.owner._live[self]
        # As asyncio.timeout: our cancellation becomes TimeoutError, anyone else's stays what it is.
        if self.expired and self.task.uncancel() <= self.cancelling and exc_type is asyncio.CancelledError:
            raise TimeoutError(f"past its limit of {self.seconds:g}s") from exc
