"""Idle polling (`envhub.server.polling`): after an answer the loop stays awake for a window that
adapts to how soon the next frame comes, and a served app kicks it on every route."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator

import httpx
import pytest
from websockets.sync.client import connect

from envhub.server.polling import IdlePoll
from envhub.server.thread import ThreadedServer, serve_in_thread
from tests.conftest import make_settings

US = 1e-6


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


class CountedPoll(IdlePoll):
    """Counts the loop turns it polled."""

    turns = 0

    def _poll(self) -> None:
        self.turns += 1
        super()._poll()


def frame_after(poll: IdlePoll, clock: Clock, loop: asyncio.AbstractEventLoop, gap_us: float) -> float:
    """An answer, then a frame `gap_us` later; the window after it, in µs."""
    poll.answered(loop)
    clock.now += gap_us * US
    poll.came()
    return round(poll.window / US, 3)


def test_the_window_keeps_doubles_and_halves_with_how_soon_frames_come():
    """Like Linux's guest halt polling: a frame within the window keeps it, one after it but within
    the longest window doubles it, one later halves it, down to nothing; and from nothing, a frame
    that comes soon starts it again."""
    clock, loop = Clock(), asyncio.new_event_loop()
    try:
        poll = IdlePoll(300 * US, clock)
        assert frame_after(poll, clock, loop, 100) == 300  # caught: kept
        assert [frame_after(poll, clock, loop, 5000) for _ in range(5)] == [150, 75, 37.5, 0, 0]
        poll.polling = False  # the loop never ran: what it scheduled is not this test's
        poll.answered(loop)
        assert poll.polling is False  # a window of nothing: no polling at all
        clock.now += 1
        grown = [frame_after(poll, clock, loop, 100) for _ in range(5)]
        assert grown == [20, 40, 80, 160, 160]  # from the start window, doubled until the frame falls in it
        assert frame_after(poll, clock, loop, 250) == 300  # doubled, but never past the longest
    finally:
        loop.close()


async def test_the_loop_polls_until_the_window_after_the_last_answer_has_passed():
    clock, loop = Clock(), asyncio.get_running_loop()
    poll = CountedPoll(300 * US, clock)
    poll.answered(loop)
    for _ in range(5):
        await asyncio.sleep(0)  # the loop turns while the clock stands: polling
    assert poll.polling and poll.turns >= 4
    clock.now += 200 * US
    poll.answered(loop)  # a second answer: the window runs from it, with the one poller
    clock.now += 200 * US
    await asyncio.sleep(0)
    assert poll.polling
    clock.now += 150 * US
    turns = poll.turns
    for _ in range(5):
        await asyncio.sleep(0)
    assert not poll.polling and poll.turns == turns + 1  # it saw the window pass, and stopped


def test_a_poll_of_nothing_never_polls():
    loop = asyncio.new_event_loop()
    try:
        poll = IdlePoll(0)
        poll.answered(loop)
        poll.came()
        assert poll.last is None and not poll.polling and poll.window == 0
    finally:
        loop.close()


@pytest.fixture(scope="module")
def server() -> Iterator[ThreadedServer]:
    with serve_in_thread(make_settings(families=["echo"], auth="off", poll_us=5000)) as live:
        yield live


def served_poll(server: ThreadedServer) -> IdlePoll:
    config = server.server.config
    assert config.ws.poll is config.app.poll  # one per server, for the session socket and the ASGI routes
    return config.app.poll


def wait_until_not_polling(poll: IdlePoll) -> None:
    deadline = time.monotonic() + 5
    while poll.polling:
        assert time.monotonic() < deadline, "still polling 5 s after the last answer"
        time.sleep(0.01)


@pytest.mark.parametrize("route", ["session socket", "REST", "OpenEnv's socket"])
def test_every_route_kicks_the_servers_poll_and_an_idle_server_stops_polling(server, route):
    poll = served_poll(server)
    wait_until_not_polling(poll)
    before = poll.last or 0.0
    ws_url = server.url.replace("http", "ws")
    if route == "session socket":
        with connect(ws_url + "/v1/sessions/ws") as conn:
            conn.send(json.dumps({"op": "reset", "data": {"env": "echo", "task_id": "echo/say-done"}}))
            assert json.loads(conn.recv())["ok"] is True
    elif route == "REST":
        assert httpx.get(server.url + "/health").status_code == 200
    else:
        with connect(ws_url + "/envs/echo/ws") as conn:
            conn.send(json.dumps({"type": "reset", "data": {}}))
            assert json.loads(conn.recv())["type"] != "error"
    assert poll.last is not None and poll.last > before
    wait_until_not_polling(poll)  # 5 ms after the last answer


def test_a_server_told_not_to_poll_does_not():
    with serve_in_thread(make_settings(families=["echo"], auth="off", poll_us=0)) as live:
        assert httpx.get(live.url + "/health").status_code == 200
        with connect(live.url.replace("http", "ws") + "/v1/sessions/ws") as conn:
            conn.send(json.dumps({"op": "reset", "data": {"env": "echo", "task_id": "echo/say-done"}}))
            assert json.loads(conn.recv())["ok"] is True
        poll = served_poll(live)
        assert poll.last is None and not poll.polling
