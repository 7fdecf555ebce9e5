"""The benchmark's raw-socket load generator (`benchmarks/loadgen.py`) against a real server: it counts
only answered pairs, and an error answer stops it rather than counting as a pair."""

from __future__ import annotations

import importlib.util
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from envhub.core import metrics
from envhub.server.thread import ThreadedServer, serve_in_thread
from tests.conftest import make_settings
from tests.security.conftest import KEY, SECRET, bearer

_SPEC = importlib.util.spec_from_file_location("loadgen", Path(__file__).parents[2] / "benchmarks" / "loadgen.py")
assert _SPEC is not None and _SPEC.loader is not None
loadgen = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(loadgen)

RESET = json.dumps({"op": "reset", "replace": True, "data": {"env": "echo", "task_id": "echo/say-done"}})
STEP = json.dumps({"op": "step", "data": {"action": {"tool": "echo", "arguments": {"message": "hi" * 100}}}})


@pytest.fixture(scope="module")
def server() -> Iterator[ThreadedServer]:
    with serve_in_thread(make_settings(families=["echo"], auth="off")) as live:
        yield live


def test_every_pair_counted_was_answered(server):
    url = server.url.replace("http", "ws") + "/v1/sessions/ws"
    served = metrics.STEPS.labels("echo", "ok")
    before = served.value
    lat: list[float] = []
    pairs = loadgen.run(url, 3, 0.3, RESET, STEP, b'"ok":true', lat=lat)
    assert pairs > 0 and len(lat) == pairs and all(0 < x < 5 for x in lat)
    assert served.value - before == pairs  # a session stops after a step's answer, never with one in flight


def test_an_error_answer_stops_the_load(server):
    url = server.url.replace("http", "ws") + "/v1/sessions/ws"
    unknown = json.dumps({"op": "reset", "data": {"env": "no-such-env"}})
    with pytest.raises(RuntimeError, match="not an answer"):
        loadgen.run(url, 1, 0.3, unknown, STEP, b'"ok":true')


def test_a_refused_handshake_is_an_error():
    with serve_in_thread(make_settings(families=["echo"], auth="on", api_keys=KEY.entry())) as live:
        url = live.url.replace("http", "ws") + "/v1/sessions/ws"
        with pytest.raises(ConnectionError, match="handshake refused: HTTP/1.1 401"):
            loadgen.run(url, 1, 0.1, RESET, STEP, b'"ok":true')
        assert loadgen.run(url, 1, 0.1, RESET, STEP, b'"ok":true', headers=bearer(SECRET)) > 0
