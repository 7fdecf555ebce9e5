"""The session WebSocket served natively (`envhub.server.native_ws`) on a real server.

The frame rules themselves (error frames, 1007, the fuzzer) are played against both WebSocket
routes in `tests/security/test_protocol.py`; these tests hold what the native socket adds: it is
the one serving the session route, messages split into fragments are put together, pipelined
frames are answered in order (past the read-ahead, where it stops reading), an answer begun in the
read callback that waits goes on in the connection's worker as if it had begun there, and a dropped
connection closes its sessions."""

from __future__ import annotations

import asyncio
import contextvars
import json
import threading
import time
from collections.abc import Iterator

import pytest
from websockets.sync.client import connect

from envhub.core import sessions
from envhub.server.native_ws import READ_AHEAD, SessionSocket
from envhub.server.polling import IdlePoll
from envhub.server.thread import ThreadedServer, serve_in_thread
from environments.echo import EchoEnvironment
from tests.conftest import make_settings
from tests.security.conftest import RawWs

RESET = {"op": "reset", "data": {"env": "echo", "task_id": "echo/say-done"}}
LIMIT = 64 * 1024


@pytest.fixture(scope="module")
def server() -> Iterator[ThreadedServer]:
    with serve_in_thread(make_settings(families=["echo"], auth="off", max_body_bytes=LIMIT)) as live:
        yield live


def step(message: str, frame_id: int) -> dict:
    return {"op": "step", "id": frame_id, "data": {"action": {"tool": "echo", "arguments": {"message": message}}}}


def native_connections(server: ThreadedServer) -> list[SessionSocket]:
    return [c for c in server.server.server_state.connections if isinstance(c, SessionSocket)]


def test_the_session_route_is_native_and_the_others_are_not(server):
    """The session route is answered by `SessionSocket`; OpenEnv's `/ws` stays on uvicorn's protocol."""
    ws_url = server.url.replace("http", "ws")
    with connect(ws_url + "/v1/sessions/ws") as conn:
        conn.send(json.dumps(RESET))
        assert json.loads(conn.recv())["ok"] is True
        assert len(native_connections(server)) == 1
        with connect(ws_url + "/envs/echo/ws") as openenv:
            openenv.send(json.dumps({"type": "reset", "data": {}}))
            assert json.loads(openenv.recv())["type"] != "error"
            assert len(native_connections(server)) == 1
    deadline = time.monotonic() + 5
    while native_connections(server) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert native_connections(server) == []


def test_a_fragmented_message_is_put_together(server):
    """A text message sent as three fragments is answered as one frame."""
    ws = RawWs(server.port, "/v1/sessions/ws")
    payload = json.dumps(RESET).encode()
    ws.send(0x1, payload[:5], fin=False)
    ws.send(0x0, payload[5:20], fin=False)
    ws.send(0x0, payload[20:], fin=True)
    opcode, answer = ws.recv()
    assert opcode == 0x1 and json.loads(answer)["ok"] is True
    ws.close()


def test_fragments_over_the_body_limit_close_with_1009(server):
    """Fragments that each fit but together pass the body limit end the connection with 1009."""
    ws = RawWs(server.port, "/v1/sessions/ws")
    chunk = b"x" * (LIMIT // 2)
    for _ in range(3):
        ws.send(0x1 if _ == 0 else 0x0, chunk, fin=False)
    closing = ws.recv()
    assert closing is not None and closing[0] == 0x8 and int.from_bytes(closing[1][:2], "big") == 1009
    ws.close()


def test_pipelined_frames_are_answered_in_order(server):
    """Frames sent without waiting (more than the read-ahead) are answered one each, in order."""
    n = READ_AHEAD * 3
    with connect(server.url.replace("http", "ws") + "/v1/sessions/ws") as conn:
        conn.send(json.dumps(RESET))
        for i in range(n):
            conn.send(json.dumps(step(f"m{i}", i)))
        assert json.loads(conn.recv())["ok"] is True
        answers = [json.loads(conn.recv()) for _ in range(n)]
    assert [a["id"] for a in answers] == list(range(n))
    assert [a["data"]["observation"]["text"] for a in answers] == [f"m{i}" for i in range(n)]
    assert [a["data"]["step"] for a in answers] == list(range(1, n + 1))


def test_a_dropped_connection_closes_its_sessions(server):
    """Sessions a native connection opened are closed when it drops without a close frame."""
    ws = RawWs(server.port, "/v1/sessions/ws")
    opened = set()
    for _ in range(3):
        ws.text(json.dumps(RESET))
        opened.add(json.loads(ws.recv()[1])["data"]["session_id"])
    assert opened <= set(server.hub.manager.sessions)
    ws.sock.close()  # no close frame
    deadline = time.monotonic() + 5
    while opened & set(server.hub.manager.sessions) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not opened & set(server.hub.manager.sessions)


def test_a_client_that_does_not_read_gets_every_answer_in_order(server, monkeypatch):
    """Answers past the socket's buffers pause the answering (and the reading) until the client
    reads; then every answer comes, whole and in order, and none is lost."""
    paused: list[int] = []
    queued: list[tuple[int, int]] = []  # frames read ahead, and bytes waiting to be written, at each frame
    original_pause, original_enqueue = SessionSocket.pause_writing, SessionSocket._enqueue
    monkeypatch.setattr(SessionSocket, "pause_writing", lambda self: (paused.append(1), original_pause(self)))

    def enqueue(self, item):
        original_enqueue(self, item)
        queued.append((len(self.queue), self.transport.underlying_transport.get_write_buffer_size()))

    monkeypatch.setattr(SessionSocket, "_enqueue", enqueue)
    # 40 MB of answers, more than the kernel's buffers took here, in frames small enough to be many:
    # frames crossing one another under backpressure showed at these sizes (see `SessionSocket.write`).
    n, text = 4000, "x" * 10000
    frames = []
    for i in range(n):
        if i % 150 == 0:  # a fresh episode now and then: echo's step budget is 200
            frames.append({**RESET, "id": f"reset {i}", "replace": True})
        frames.append(step(text, i))
    for _ in range(3):  # frames crossing is a race: three tries caught it most times
        ws = RawWs(server.port, "/v1/sessions/ws")
        sender = threading.Thread(target=lambda: [ws.text(json.dumps(f)) for f in frames])  # noqa: B023
        sender.start()
        time.sleep(0.5)  # the client reads nothing meanwhile
        try:
            answers = [json.loads(ws.recv()[1]) for _ in frames]
        finally:
            ws.close()  # a sender still sending (the answers stopped making sense) fails at once
            sender.join()
    assert paused, "the answers never outgrew the transport's buffer: the test did not test backpressure"
    # It stopped reading (past READ_AHEAD, plus the frames of the chunk being parsed)...
    assert max(q for q, _ in queued) < 4 * READ_AHEAD < len(frames)
    assert max(b for _, b in queued) < 2_000_000  # ...and writing, instead of holding the 40 MB
    assert [a["id"] for a in answers] == [f["id"] for f in frames]
    bad = [a for a in answers if not (a["ok"] and (a["op"] == "reset" or a["data"]["observation"]["text"] == text))]
    assert not bad, str(bad[0])[:400]


def test_a_ping_gets_its_pong_and_a_close_its_close(server):
    """A ping is answered with a pong carrying its payload; a close frame with the same code."""
    ws = RawWs(server.port, "/v1/sessions/ws")
    ws.send(0x9, b"are you there")
    assert ws.recv() == (0xA, b"are you there")
    ws.send(0x8, (1000).to_bytes(2, "big") + b"bye")
    opcode, payload = ws.recv()
    assert opcode == 0x8 and int.from_bytes(payload[:2], "big") == 1000
    assert ws.recv() is None  # and the connection ends
    ws.close()


WAITED: contextvars.ContextVar[str | None] = contextvars.ContextVar("waited", default=None)


@pytest.fixture
def waiting_echo(monkeypatch) -> list[tuple[str, object, object, str | None]]:
    """Echo's step, made to wait when its message starts with "wait" (and never to answer when it is
    "forever"): for each wait, the message, the task before and after it, and a context variable
    set before it and read after."""
    seen: list[tuple[str, object, object, str | None]] = []
    original = EchoEnvironment.step

    async def step(self, call):
        message = call.arguments["message"]
        if message == "forever":
            await asyncio.sleep(3600)
        if message.startswith("wait"):
            before = asyncio.current_task()
            WAITED.set(message)
            await asyncio.sleep(0.02)
            seen.append((message, before, asyncio.current_task(), WAITED.get()))
        return await original(self, call)

    monkeypatch.setattr(EchoEnvironment, "step", step)
    return seen


def test_an_answer_that_waits_goes_on_in_the_same_task_and_context(server, waiting_echo):
    """A frame answered in the read callback runs as the connection's worker: the task it sees before
    it waits is the one that goes on with it, and a context variable it set is still set after."""
    with connect(server.url.replace("http", "ws") + "/v1/sessions/ws") as conn:
        conn.send(json.dumps(RESET))
        assert json.loads(conn.recv())["ok"] is True
        for i in range(3):  # the worker is idle at each: every one begins in the callback
            conn.send(json.dumps(step(f"wait {i}", i)))
            assert json.loads(conn.recv())["data"]["observation"]["text"] == f"wait {i}"
    assert [m for m, *_ in waiting_echo] == ["wait 0", "wait 1", "wait 2"]
    for message, before, after, variable in waiting_echo:
        assert before is not None and before is after
        assert variable == message


def test_answers_that_wait_and_answers_that_do_not_keep_their_order(server, waiting_echo):
    """Frames sent together, the first waiting (handed to the worker) and the next not (queued behind
    it), are answered in the order they came."""
    with connect(server.url.replace("http", "ws") + "/v1/sessions/ws") as conn:
        conn.send(json.dumps(RESET))
        assert json.loads(conn.recv())["ok"] is True
        sent = []
        for burst in range(4):
            messages = [f"wait {burst}", f"now {burst}a", f"wait {burst}b", f"now {burst}c"]
            for m in messages:
                conn.send(json.dumps(step(m, len(sent))))
                sent.append(m)
            answers = [json.loads(conn.recv()) for _ in messages]
            assert [a["data"]["observation"]["text"] for a in answers] == messages
    assert len(waiting_echo) == 8


def test_a_time_limit_cuts_an_answer_begun_in_the_callback(server, waiting_echo, monkeypatch):
    """The time limit armed while an answer began in the read callback cancels the worker that goes
    on with it: the step is an environment fault for its limit, and the connection goes on."""
    monkeypatch.setattr(sessions, "STEP_GRACE_S", 0.3 - 30)  # echo's step limit is 30 s: 0.3 s in all
    monkeypatch.setattr(server.hub.manager.deadlines, "period_s", 0.05)
    with connect(server.url.replace("http", "ws") + "/v1/sessions/ws") as conn:
        conn.send(json.dumps(RESET))
        assert json.loads(conn.recv())["ok"] is True
        started = time.monotonic()
        conn.send(json.dumps(step("forever", 1)))
        answer = json.loads(conn.recv(timeout=10))["data"]
        assert time.monotonic() - started < 5
        assert answer["failure"] == "env_error" and "past its limit" in answer["observation"]["text"]
        conn.send(json.dumps({**RESET, "id": 2}))
        assert json.loads(conn.recv(timeout=10))["ok"] is True


class _Written:
    """A transport that keeps what is written (for `SessionSocket` without a server)."""

    def __init__(self) -> None:
        self.underlying_transport = self
        self.frames: list[bytes] = []

    def write(self, data: bytes) -> None:
        self.frames.append(data[2:])  # past a short frame's two-byte head

    def disconnect(self) -> None:
        pass


class _Frames:
    """Answers "wait" once `release` is done (or with "cancelled" on a cancellation), anything else at once."""

    def __init__(self) -> None:
        self.release: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    async def answer(self, text: str) -> str:
        if text != "wait":
            return text.upper()
        try:
            await self.release
        except asyncio.CancelledError:
            return "cancelled"
        return "released"

    async def close_all(self) -> None:
        pass


async def until(condition, seconds: float = 5) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "not within 5 s"
        await asyncio.sleep(0.001)


async def test_a_cancellation_that_meets_an_answer_being_handed_over_reaches_it():
    """An answer that waits is handed to the worker, which takes it over on its next step. Should the
    worker be cancelled before that step (a time limit that ran out during the answer's first step),
    the cancellation goes to the answer, which ends as it chooses; it is neither dropped nor left
    waiting."""
    frames, transport, tasks = _Frames(), _Written(), set()
    sock = SessionSocket(frames, set(), tasks, IdlePoll(0))  # type: ignore[arg-type]
    sock.on_ws_connected(transport)
    loop = asyncio.get_running_loop()

    def later(call, *args) -> None:  # frames arrive in the loop's callbacks, outside any task
        loop.call_soon(call, *args)

    later(sock._enqueue, "first")  # no worker yet: queued, and a worker started
    await until(lambda: sock.idle is not None)
    assert transport.frames == [b"FIRST"]
    handed = []
    later(sock._enqueue, "wait")  # the worker is idle: begun in this callback, and handed over
    later(lambda: (handed.append(sock.handed is not None), sock.worker.cancel()))  # before it takes it
    await until(lambda: len(transport.frames) >= 2)
    assert handed == [True]
    assert transport.frames == [b"FIRST", b"cancelled"]
    await until(lambda: sock.idle is not None)
    later(sock._enqueue, "after")
    await asyncio.sleep(0)
    assert transport.frames[-1] == b"AFTER"  # answered in the callback: the worker went on, idle again
    sock._enqueue("inside")  # inside a task (this test's), where it cannot begin: queued for the worker
    await until(lambda: transport.frames[-1] == b"INSIDE")
    sock.on_ws_disconnected(transport)
    await asyncio.wait_for(asyncio.gather(*tasks), 5)
