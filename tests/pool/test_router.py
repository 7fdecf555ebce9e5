"""The compose pool's router (docker/router.py), without containers: what it answers on its own."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import os
import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from aiohttp.test_utils import make_mocked_request

from envhub.config import REPO_ROOT, get_settings
from envhub.conformance import ConformanceSuite
from envhub.server.thread import serve_in_thread
from envhub.verify import runtime
from tests.conftest import make_settings


@pytest.fixture(scope="module")
def router():
    spec = importlib.util.spec_from_file_location("envhub_router_under_test", REPO_ROOT / "docker" / "router.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


async def test_a_served_family_without_a_ready_replica_is_503_unavailable(router):
    """A family the pool serves whose replicas are all gone for now (a node died, the replacement is
    starting) is a retryable 503, not another family's replica saying "unknown environment"."""
    r = router.Router({"terminal": [], "db": []})
    db = router.Replica(url="http://db-1:8000")
    db.families, db.ready = {"db"}, True
    r.replicas = {db.url: db}
    resp = await r.to_family(make_mocked_request("POST", "/v1/sessions"), "terminal", b"{}")
    assert resp.status == 503 and resp.headers["Retry-After"] == "1"
    body = json.loads(resp.text)
    assert body["code"] == "unavailable" and body["retryable"] is True


async def test_a_websocket_skips_a_replica_that_refuses_it(router, unused_tcp_port_factory):
    """A replica that died since the last probe refuses the connection: the WebSocket goes to the next
    ready one (as an HTTP call does), and only when none accepts is it told `unavailable`."""
    from aiohttp import web
    from aiohttp.test_utils import TestClient, TestServer

    async def upstream_ws(request: web.Request) -> web.WebSocketResponse:
        ws = web.WebSocketResponse()
        await ws.prepare(request)
        async for msg in ws:
            await ws.send_str(json.dumps({"ok": True, "echo": json.loads(msg.data)}))
        return ws

    live_app = web.Application()
    live_app.router.add_get("/v1/sessions/ws", upstream_ws)

    class Fixed(router.Router):
        async def refresh(self) -> None:  # the replicas below, as the last probe saw them
            pass

    async with TestServer(live_app) as live:
        dead = router.Replica(url=f"http://127.0.0.1:{unused_tcp_port_factory()}", families={"echo"},
                              ready=True, free=9)  # the best pick, and nothing listens there
        alive = router.Replica(url=str(live.make_url("")).rstrip("/"), families={"echo"}, ready=True, free=1)
        r = Fixed({"echo": []})
        r.replicas = {dead.url: dead, alive.url: alive}
        async with TestClient(TestServer(router.build_app(r))) as client:
            ws = await client.ws_connect("/v1/sessions/ws")
            await ws.send_str(json.dumps({"op": "reset", "id": 1, "data": {"env": "echo"}}))
            said = json.loads((await ws.receive()).data)
            assert said["ok"] is True and said["echo"]["id"] == 1, said
            assert dead.ready is False  # skipped until a probe sees it again
            await ws.close()

            alive.ready = False
            ws = await client.ws_connect("/v1/sessions/ws")
            dead.ready = True
            await ws.send_str(json.dumps({"op": "reset", "id": 2, "data": {"env": "echo"}}))
            said = json.loads((await ws.receive()).data)
            assert said["ok"] is False and said["error"]["code"] == "unavailable", said
            assert said["error"]["retryable"] is True
            await ws.close()


async def test_a_reset_skips_a_replica_that_hangs_up(router):
    """A replica being stopped accepts the connection and closes it without an answer: the reset goes
    to the next ready replica, never a 500 (the Ray pool's scale test met this while a replica died)."""
    from aiohttp import web
    from aiohttp.test_utils import TestServer

    async def hang_up(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.read(1)  # the request has arrived
        writer.close()

    async def created(request: web.Request) -> web.Response:
        return web.json_response({"session_id": "s1"}, status=201)

    live_app = web.Application()
    live_app.router.add_post("/v1/sessions", created)
    dying = await asyncio.start_server(hang_up, "127.0.0.1", 0)
    port = dying.sockets[0].getsockname()[1]
    try:
        async with TestServer(live_app) as live:
            gone = router.Replica(url=f"http://127.0.0.1:{port}", families={"echo"}, ready=True, free=9)
            alive = router.Replica(url=str(live.make_url("")).rstrip("/"), families={"echo"}, ready=True, free=1)

            class Fixed(router.Router):
                async def refresh(self) -> None:  # the replicas below, as the last probe saw them
                    pass

            r = Fixed({"echo": []})
            r.replicas = {gone.url: gone, alive.url: alive}
            await r.start(web.Application())
            try:
                resp = await r.to_family(make_mocked_request("POST", "/v1/sessions"), "echo", b"{}")
            finally:
                await r.stop(web.Application())
            assert resp.status == 201 and json.loads(resp.body)["session_id"] == "s1"
            assert gone.ready is False  # skipped until a probe sees it again
    finally:
        dying.close()
        await dying.wait_closed()


@pytest.fixture
def replica_dirs() -> Iterator[tuple[Path, Path]]:
    """Two data folders of replicas' own (each keeps its snapshots, as a container does), sharing the
    installed verifier site, under the suite's data folder (sandbox uids reach it)."""
    root = Path(tempfile.mkdtemp(prefix="pool-", dir=get_settings().data_dir))
    root.chmod(0o755)
    dirs = (root / "a", root / "b")
    for d in dirs:
        (d / "verifier").mkdir(mode=0o755, parents=True)
        os.symlink(runtime.site_dir(get_settings().data_dir).resolve(), runtime.site_dir(d))
    yield dirs
    shutil.rmtree(root, ignore_errors=True)


async def test_the_pool_keeps_the_whole_contract_with_two_replicas_of_a_family(router, replica_dirs) -> None:
    """Two echo replicas behind the router, each with its own data folder, and a terminal replica
    sharing the first's (as a Ray node's replicas do): the conformance suite passes through the router
    (fork and snapshot included). A snapshot stays on the replica that took it: it is listed once,
    started from and deleted through the router even when placement would pick the other echo
    replica and the terminal replica lists it too, and a fork's sessions are found beside their source."""
    from aiohttp.test_utils import TestServer

    with serve_in_thread(make_settings(families=["echo"], store_enabled=False, auth="off",
                                       data_dir=replica_dirs[0])) as a, \
            serve_in_thread(make_settings(families=["echo"], store_enabled=False, auth="off",
                                          data_dir=replica_dirs[1])) as b, \
            serve_in_thread(make_settings(families=["terminal"], store_enabled=False, auth="off",
                                          data_dir=replica_dirs[0])) as c:

        class Fixed(router.Router):
            async def refresh(self) -> None:  # the two replicas, ready, as the last probe saw them
                pass

        r = Fixed({"echo": [], "terminal": []})
        ra = router.Replica(url=a.url, families={"echo"}, ready=True, free=5)
        rb = router.Replica(url=b.url, families={"echo"}, ready=True, free=1)
        rc = router.Replica(url=c.url, families={"terminal"}, ready=True, free=5)
        r.replicas = {ra.url: ra, rb.url: rb, rc.url: rc}  # c answers after a: it must not become the holder
        async with TestServer(router.build_app(r)) as served:
            url = str(served.make_url("")).rstrip("/")
            outcomes = await asyncio.to_thread(ConformanceSuite(url).run)
            assert all(o.ok and o.applicable for o in outcomes), [o for o in outcomes if not o.ok or not o.applicable]
            assert {"fork", "snapshot"} <= {o.name for o in outcomes}

            me = {"Authorization": "Bearer pool-test-caller"}
            async with httpx.AsyncClient(base_url=url, headers=me, timeout=60) as http:
                sid = (await http.post("/v1/sessions", json={"env": "echo"})).json()["session_id"]
                assert r.owners[sid] == a.url  # the most free slots
                forked = (await http.post(f"/v1/sessions/{sid}/fork", json={"n": 2})).json()["sessions"]
                r.owners.clear()  # a restarted router finds them by asking
                for f in forked:
                    assert (await http.get(f"/v1/sessions/{f['session_id']}")).status_code == 200
                snap = (await http.post(f"/v1/sessions/{sid}/snapshot")).json()["snapshot_id"]
                ra.free, rb.free = 0, 9  # placement now prefers b, which does not keep the snapshot
                r.snapshots.clear()  # ... and the router has forgotten where it is
                listed = (await http.get("/v1/snapshots")).json()["snapshots"]
                assert [s["snapshot_id"] for s in listed] == [snap]
                started = await http.post("/v1/sessions", json={"env": "echo", "from_snapshot": snap})
                assert started.status_code == 201, started.text
                assert r.owners[started.json()["session_id"]] == a.url
                assert (await http.delete(f"/v1/snapshots/{snap}")).status_code == 204
                assert (await http.get("/v1/snapshots")).json()["snapshots"] == []
                gone = await http.post("/v1/sessions", json={"env": "echo", "from_snapshot": snap})
                assert gone.status_code == 404, gone.text
