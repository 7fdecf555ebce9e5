"""Going on, in a task, with a coroutine whose first steps were taken by hand.

Two places take a coroutine's first step themselves, to spare the work a task or a timer costs for
the many calls that finish without waiting: `Deadlines.run` arms a time limit only for a coroutine
that waits, and the session socket (`native_ws`) answers a frame in its read callback and hands
an answer that waits to the connection's worker. Either then awaits `Resumed`.
"""

from __future__ import annotations

from collections.abc import Coroutine, Generator
from typing import Any


class Resumed:
    """Awaiting this goes on with `coro`, which ran until it waited on `waiting`: each value it waits
    on goes up to the task that runs us, and what the task sends or throws goes down to it.
    `thrown`: an exception to throw into `coro` first, in place of waiting (a cancellation that
    reached the task before it took `coro` over)."""

    __slots__ = ("coro", "waiting", "thrown")

    def __init__(self, coro: Coroutine[Any, Any, Any], waiting: Any, thrown: BaseException | None = None) -> None:
        self.coro, self.waiting, self.thrown = coro, waiting, thrown

    def __await__(self) -> Generator[Any, Any, Any]:
        coro, waiting, thrown = self.coro, self.waiting, self.thrown
        while True:
            try:
                if thrown is not None:  # a cancellation, or our closing: thrown where it waits
                    exc, thrown = thrown, None
                    waiting = coro.throw(exc)
                    continue
                try:
                    sent = yield waiting
                except BaseException as exc:
                    thrown = exc
                    continue
                waiting = coro.send(sent)
            except StopIteration as done:
                return done.value
