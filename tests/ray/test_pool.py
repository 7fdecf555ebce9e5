"""The pool on Ray, in one process: a local Ray cluster, real hub replicas as actors, the real entry point.

Skipped only when the `ray` extra is not installed (scripts/install-ray.sh; CI installs it).
The multi-node form (containers, a worker killed) is tests/docker/test_ray_pool.py.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator

import httpx
import pytest

ray = pytest.importorskip("ray")

from aiohttp import web  # noqa: E402
from websockets.sync.client import connect  # noqa: E402

from envhub.ray.cli import HEALTH_CHECK  # noqa: E402
from envhub.ray.entry import ROUTER, build_app  # noqa: E402
from envhub.ray.pool import PoolConfig, RayPool  # noqa: E402
from envhub.server.thread import free_port  # noqa: E402

TOKEN = {"Authorization": "Bearer ray-pool-test-client-token"}


class Entry:
    """The entry point served by aiohttp on its own loop in a thread."""

    def __init__(self, pool: RayPool) -> None:
        self.pool = pool
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.loop = asyncio.new_event_loop()
        self.runner = web.AppRunner(build_app(pool))
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)

    def __enter__(self) -> Entry:
        self.thread.start()
        asyncio.run_coroutine_threadsafe(self._start(), self.loop).result(timeout=300)
        return self

    async def _start(self) -> None:
        await self.runner.setup()
        await web.TCPSite(self.runner, "127.0.0.1", self.port).start()

    def __exit__(self, *exc: object) -> None:
        asyncio.run_coroutine_threadsafe(self.runner.cleanup(), self.loop).result(timeout=60)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(timeout=10)


@pytest.fixture(scope="module")
def entry() -> Iterator[Entry]:
    ray.init(num_cpus=2, object_store_memory=80 * 1024 * 1024, include_dashboard=False,
             _system_config=HEALTH_CHECK,
             log_to_driver=False)
    # echo: 1..2 replicas of 2 sessions (scales up when full, back down when idle);
    # terminal: a killed replica's sessions answer unavailable; the pool replaces it.
    config = PoolConfig(families=["echo", "terminal"], min_replicas=1, max_replicas=2, max_sessions=2,
                        downscale_after_s=1, resources={"echo": {"num_cpus": 0.1}, "terminal": {"num_cpus": 0.1}})
    try:
        with Entry(RayPool(config, tick_s=0.3)) as e:
            yield e
    finally:
        ray.shutdown()


@pytest.fixture
def http(entry: Entry) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=entry.url, headers=TOKEN, timeout=60) as c:
        yield c


def wait_for(check, what: str, attempts: int = 600) -> None:
    """Poll until `check()` holds (a bounded number of tries, not a timed assertion)."""
    for _ in range(attempts):
        if check():
            return
        threading.Event().wait(0.1)
    raise AssertionError(f"never happened: {what}")


def live(entry: Entry, family: str) -> list:
    return entry.pool.live(family)


def replicas(entry: Entry, family: str) -> int:
    """Replicas of `family` the pool holds, starting and draining ones included."""
    return sum(1 for s in entry.pool.slots.values() if s.family == family and s.state != "dead")


def owners(entry: Entry) -> dict[str, str]:
    """The entry point's table: session id → the replica holding it."""
    return entry.runner.app[ROUTER].owners


def seen(entry: Entry, family: str) -> list:
    """The replicas of `family` as the entry point routes to them (ready, free slots)."""
    return entry.runner.app[ROUTER].of(family)


def test_episode_and_affinity(entry: Entry, http: httpx.Client) -> None:
    """Each session's calls reach the replica that holds it: the table names the replica, which knows
    the session when asked directly, and a whole episode through the entry point earns its reward."""
    # The first test of the module: until the router has seen a replica ready, a reset is answered 503
    # (retryable), as it should be; CI's loaded machine met that once.
    wait_for(lambda: any(r.ready and r.free >= 2 for r in seen(entry, "echo")), "an echo replica ready")
    sids = []
    for _ in range(2):
        r = http.post("/v1/sessions", json={"env": "echo", "task_id": "echo/say-done"})
        assert r.status_code == 201, r.text
        sids.append(r.json()["session_id"])
    for sid in sids:
        assert httpx.get(f"{owners(entry)[sid]}/v1/sessions/{sid}", headers=TOKEN).status_code == 200
        step = http.post(f"/v1/sessions/{sid}/step",
                         json={"action": {"tool": "echo", "arguments": {"message": "done"}}})
        assert step.status_code == 200, step.text
        assert http.post(f"/v1/sessions/{sid}/verify").json()["reward"] == 1.0
    for sid in sids:
        assert http.delete(f"/v1/sessions/{sid}").status_code == 204


def test_full_replicas_scale_up_then_503_then_scale_down(entry: Entry, http: httpx.Client) -> None:
    """A full replica is skipped; the pool adds one up to max; at max and full the entry point
    answers 503 + Retry-After; idle extra replicas are removed back down to min."""
    wait_for(lambda: replicas(entry, "echo") == 1 and any(r.ready and r.free == 2 for r in seen(entry, "echo")),
             "echo back at its minimum, idle")
    sids = []
    for _ in range(2):
        r = http.post("/v1/sessions", json={"env": "echo"})
        assert r.status_code == 201, r.text
        sids.append(r.json()["session_id"])
    wait_for(lambda: len(live(entry, "echo")) == 2, "a second echo replica (the first is full)")
    wait_for(lambda: any(r.ready and r.free == 2 for r in seen(entry, "echo")), "the new replica routed")
    for _ in range(2):
        r = http.post("/v1/sessions", json={"env": "echo"})
        assert r.status_code == 201, r.text
        sids.append(r.json()["session_id"])
    assert len({owners(entry)[s] for s in sids}) == 2  # the full replica was skipped
    wait_for(lambda: not any(r.ready for r in seen(entry, "echo")), "both replicas seen full")
    full = http.post("/v1/sessions", json={"env": "echo"})
    assert full.status_code == 503
    assert full.headers["Retry-After"] == "1"
    assert full.json()["failure_class"] == "unavailable"
    assert len(live(entry, "echo")) == 2  # never above max
    for sid in sids:
        assert http.delete(f"/v1/sessions/{sid}").status_code == 204
    wait_for(lambda: replicas(entry, "echo") == 1, "the idle extra replica removed")
    assert http.post("/v1/sessions", json={"env": "echo"}).status_code == 201


def test_replica_death_answers_unavailable_and_new_sessions_land_elsewhere(entry: Entry,
                                                                          http: httpx.Client) -> None:
    r = http.post("/v1/sessions", json={"env": "terminal", "task_id": "terminal/count-error-lines"})
    assert r.status_code == 201, r.text
    sid = r.json()["session_id"]
    assert http.post(f"/v1/sessions/{sid}/step",
                     json={"action": {"tool": "bash", "arguments": {"command": "echo hi"}}}).status_code == 200
    slot = entry.pool.by_url(owners(entry)[sid])
    ray.kill(slot.handle, no_restart=True)  # the replica's process ends, with its sessions
    # ray.kill returns before the process is gone: a call may still reach it until the pool sees it die.
    wait_for(lambda: slot.state == "dead", "the pool sees the replica die")
    gone = http.post(f"/v1/sessions/{sid}/step", json={"action": {"tool": "bash", "arguments": {"command": "ls"}}})
    assert gone.status_code == 503, gone.text
    assert gone.json()["failure_class"] == "unavailable" and gone.json()["retryable"] is True
    assert "gone" in gone.json()["detail"]
    assert http.post(f"/v1/sessions/{sid}/verify").status_code == 503  # still lost, never a verdict
    wait_for(lambda: any(r.ready and r.url != slot.url for r in seen(entry, "terminal")), "a replacement")
    new = http.post("/v1/sessions", json={"env": "terminal", "task_id": "terminal/count-error-lines"})
    assert new.status_code == 201, new.text
    assert owners(entry)[new.json()["session_id"]] != slot.url
    assert http.delete(f"/v1/sessions/{sid}").status_code == 204  # closing a lost session is fine
    assert http.delete(f"/v1/sessions/{new.json()['session_id']}").status_code == 204


def test_a_websocket_on_a_dead_replica_is_told_unavailable(entry: Entry, http: httpx.Client) -> None:
    """A WebSocket pinned to a replica that dies gets an `unavailable` frame within seconds (the pool
    watches its replicas), never a connection left hanging on a peer that vanished."""
    ws_url = "ws" + entry.url[len("http"):] + "/v1/sessions/ws"
    with connect(ws_url, additional_headers=TOKEN, open_timeout=60) as ws:
        ws.send(json.dumps({"op": "reset", "id": 1, "data": {"env": "terminal",
                                                              "task_id": "terminal/count-error-lines"}}))
        opened = json.loads(ws.recv(timeout=120))
        assert opened["ok"], opened
        for slot in entry.pool.live("terminal"):  # the connection is pinned to one of them
            ray.kill(slot.handle, no_restart=True)
        said = json.loads(ws.recv(timeout=30))  # TimeoutError here: the connection hangs
        assert said["ok"] is False and said["error"]["code"] == "unavailable", said
        assert said["error"]["retryable"] is True


def test_a_replica_whose_actor_dies_while_it_starts_is_placed_again(entry: Entry,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """Ray places actors on a killed node until its health check finds the node dead; such a
    replica dies before it serves. That says nothing about the next placement, so the pool places it
    again instead of giving up (the multi-node test added a replica right after killing a worker)."""
    real, killed = entry.pool._actor, []

    class FirstPlacementDies:
        def options(self, **opts):
            made = real.options(**opts)

            class Placed:
                def remote(self, *args):
                    handle = made.remote(*args)
                    if not killed:  # the first actor dies before it serves, as on a lost node
                        killed.append(handle)
                        ray.kill(handle, no_restart=True)
                    return handle
            return Placed()

    monkeypatch.setattr(entry.pool, "_actor", FirstPlacementDies())
    slot = asyncio.run_coroutine_threadsafe(entry.pool.add("echo"), entry.loop).result(timeout=300)
    assert killed, "the fault was not injected"
    assert slot.state == "live" and slot.handle is not killed[0], slot
    assert entry.pool.remove(slot.rid)
    wait_for(lambda: slot.state == "dead", "the extra replica drained")
