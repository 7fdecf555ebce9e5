"""The pool on a multi-node Ray cluster of containers (docker/ray/compose.yaml): a head and two
workers on one Docker network. A worker is killed mid-episode; a replica is added and removed.

Needs the cluster up (.ci/docker.sh's `ray` phase does it) and its entry point in
ENVHUB_TEST_RAY_URL (compose project in ENVHUB_TEST_RAY_PROJECT); skips without.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from websockets.sync.client import connect

from envhub.config import get_settings
from envhub.sandbox.base import SandboxSpec
from envhub.sandbox.local import LocalBackend
from tests.docker.conftest import docker

URL = os.environ.get("ENVHUB_TEST_RAY_URL")
PROJECT = os.environ.get("ENVHUB_TEST_RAY_PROJECT", "envhub-ray")
TOKEN = {"Authorization": "Bearer ray-multinode-test-client-token"}
pytestmark = pytest.mark.skipif(not URL, reason="no Ray pool: set ENVHUB_TEST_RAY_URL (see .ci/docker.sh)")


def wait_for(check, what: str, attempts: int = 300) -> None:
    """Poll until `check()` holds (a bounded number of tries, not a timed assertion)."""
    for _ in range(attempts):
        if check():
            return
        threading.Event().wait(0.5)
    raise AssertionError(f"never happened: {what}")


@pytest.fixture
def http() -> Iterator[httpx.Client]:
    # A generous client timeout: a call that hangs fails the test instead of blocking it.
    with httpx.Client(base_url=URL, headers=TOKEN, timeout=60) as c:
        yield c


def table(http: httpx.Client) -> list[dict]:
    return http.get("/ray/replicas").json()


def live(http: httpx.Client, family: str) -> list[dict]:
    return [r for r in table(http) if r["family"] == family and r["state"] == "live"]


def workers() -> dict[str, str]:
    """Worker container name → its address on the compose network."""
    names = docker("ps", "--filter", f"label=com.docker.compose.project={PROJECT}",
                   "--filter", "label=com.docker.compose.service=worker", "--format", "{{.Names}}").stdout.split()
    out = {}
    for name in names:
        nets = json.loads(docker("inspect", "--format", "{{json .NetworkSettings.Networks}}", name).stdout)
        out[name] = next(iter(nets.values()))["IPAddress"]
    return out


def host(url: str) -> str:
    return url.split("//", 1)[1].rsplit(":", 1)[0]


def test_worker_killed_mid_episode(http: httpx.Client) -> None:
    wait_for(lambda: len(workers()) >= 2 and live(http, "terminal"), "two workers and a terminal replica")
    r = http.post("/v1/sessions", json={"env": "terminal", "task_id": "terminal/count-error-lines"})
    assert r.status_code == 201, r.text
    sid = r.json()["session_id"]
    assert http.post(f"/v1/sessions/{sid}/step",
                     json={"action": {"tool": "bash", "arguments": {"command": "ls"}}}).status_code == 200
    wait_for(lambda: any(r["active"] for r in live(http, "terminal")), "the session counted on its replica")
    holder = next(r for r in live(http, "terminal") if r["active"])
    victim = next(name for name, ip in workers().items() if ip == host(holder["url"]))
    # A WebSocket session too: on a vanished node its connection must be told, not left hanging.
    ws = connect("ws" + URL[len("http"):] + "/v1/sessions/ws", additional_headers=TOKEN, open_timeout=60)
    ws.send(json.dumps({"op": "reset", "id": 1, "data": {"env": "terminal", "task_id": "terminal/count-error-lines"}}))
    assert json.loads(ws.recv(timeout=120))["ok"]
    only_replica = len(live(http, "terminal")) == 1  # then the connection is pinned to the victim
    docker("kill", victim)
    try:
        if only_replica:
            said = json.loads(ws.recv(timeout=30))  # TimeoutError: the connection hangs on a dead peer
            assert said["ok"] is False and said["error"]["code"] == "unavailable", said
        ws.close()
        gone = http.post(f"/v1/sessions/{sid}/step",
                         json={"action": {"tool": "bash", "arguments": {"command": "ls"}}})
        assert gone.status_code == 503, gone.text
        assert gone.json()["failure_class"] == "unavailable" and gone.json()["retryable"] is True
        # New sessions land on a replacement on the other worker.
        wait_for(lambda: any(host(r["url"]) != host(holder["url"]) for r in live(http, "terminal")),
                 "a terminal replica on the surviving worker")
        new = None
        for _ in range(20):  # the entry point routes to the replacement once its first probe answered
            new = http.post("/v1/sessions", json={"env": "terminal", "task_id": "terminal/count-error-lines"})
            if new.status_code == 201:
                break
            assert new.status_code == 503, new.text
            threading.Event().wait(0.5)
        assert new is not None and new.status_code == 201, new.text
        nid = new.json()["session_id"]
        assert http.post(f"/v1/sessions/{nid}/step",
                         json={"action": {"tool": "bash", "arguments": {"command": "ls"}}}).status_code == 200
        assert http.delete(f"/v1/sessions/{nid}").status_code == 204
        assert http.delete(f"/v1/sessions/{sid}").status_code == 204
    finally:
        docker("start", victim)  # its start loop rejoins the cluster


def test_replica_added_and_removed(http: httpx.Client) -> None:
    wait_for(lambda: live(http, "echo"), "an echo replica")
    before = len(live(http, "echo"))
    added = http.post("/ray/replicas", json={"env": "echo"})
    assert added.status_code == 201, added.text
    rid = added.json()["id"]
    assert len(live(http, "echo")) == before + 1
    sessions = [http.post("/v1/sessions", json={"env": "echo"}) for _ in range(2)]
    assert [s.status_code for s in sessions] == [201, 201]
    assert http.delete(f"/ray/replicas/{rid}").status_code == 202  # drains: no new sessions, ends when idle
    for s in sessions:
        assert http.delete(f"/v1/sessions/{s.json()['session_id']}").status_code == 204
    wait_for(lambda: next(r for r in table(http) if r["id"] == rid)["state"] == "dead", "the replica drained")
    assert http.delete(f"/ray/replicas/{rid}").status_code == 404


def test_host_server_spares_node_sandboxes(http: httpx.Client) -> None:
    """A root server on the host kills, at its first sandbox, the processes of sandbox uids no live
    server holds (a dead server's orphans). The host sees every node's processes, so the nodes must
    hold their uids in the host's lock folder, or their live sandboxes die (verifiers: exit -9)."""
    if os.geteuid() != 0:
        pytest.skip("only a root server gives sandboxes uids of their own (and sweeps them)")
    wait_for(lambda: live(http, "terminal"), "a terminal replica")
    r = http.post("/v1/sessions", json={"env": "terminal", "task_id": "terminal/count-error-lines"})
    assert r.status_code == 201, r.text
    sid = r.json()["session_id"]
    step = {"action": {"tool": "bash", "arguments": {"command": "echo al''ive"}}}
    assert "alive" in http.post(f"/v1/sessions/{sid}/step", json=step).text  # its shell is up
    state = Path(tempfile.mkdtemp(prefix="envhub-state-", dir="/var/tmp"))  # reachable by the sandbox uid
    try:
        state.chmod(0o755)
        backend = LocalBackend(get_settings().data_dir / "sandboxes")
        host_run = backend.run_once(SandboxSpec(template=state), ["true"], timeout_s=60)
        assert asyncio.run(host_run).exit_code == 0  # the host server's first sandbox: it swept
    finally:
        shutil.rmtree(state)
    after = http.post(f"/v1/sessions/{sid}/step", json=step)
    assert after.status_code == 200 and "alive" in after.text, after.text
    assert http.delete(f"/v1/sessions/{sid}").status_code == 204
