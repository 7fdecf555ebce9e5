"""The session WebSocket served natively (`envhub.server.native_ws`) on a real server.

The frame rules themselves (error frames, 1007, the fuzzer) are played against both WebSocket
routes in `tests/security/test_protocol.py`; these tests hold what the native socket adds: it is
the one serving the session route, messages split into fragments are put together, pipelined
frames are answered in order (past the read-ahead, where it stops reading), and a dropped
connection closes its sessions."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator

import pytest
from websockets.sync.client import connect

from envhub.server.native_ws import READ_AHEAD, SessionSocket
from envhub.server.thread import ThreadedServer, serve_in_thread
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
    before = server.hub.manager.active
    ws = RawWs(server.port, "/v1/sessions/ws")
    for _ in range(3):
        ws.text(json.dumps(RESET))
        assert json.loads(ws.recv()[1])["ok"] is True
    assert server.hub.manager.active == before + 3
    ws.sock.close()  # no close frame
    deadline = time.monotonic() + 5
    while server.hub.manager.active > before and time.monotonic() < deadline:
        time.sleep(0.02)
    assert server.hub.manager.active == before
