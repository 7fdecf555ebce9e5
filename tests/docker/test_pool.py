"""The compose pool through its single entry point (ENVHUB_TEST_DOCKER_URL, e.g. set by .ci/docker.sh).

A replica killed mid-episode must give `env_error` for its sessions while the pool keeps serving
new ones. The test kills a real replica container and starts it again afterwards.
"""

from __future__ import annotations

import os
import time

import httpx
import pytest

from tests.docker.conftest import docker

URL = os.environ.get("ENVHUB_TEST_DOCKER_URL")
PROJECT = os.environ.get("ENVHUB_TEST_COMPOSE_PROJECT", "envhub")
pytestmark = pytest.mark.skipif(not URL, reason="no pool: set ENVHUB_TEST_DOCKER_URL (see .ci/docker.sh)")

ACTION = {"tool": "bash", "arguments": {"command": "echo working > progress.txt"}}


def _replicas(service: str) -> dict[str, str]:
    """container id → IP of a compose service's replicas."""
    ids = docker("ps", "-q", "--filter", f"label=com.docker.compose.project={PROJECT}",
                 "--filter", f"label=com.docker.compose.service={service}").stdout.split()
    out = {}
    for cid in ids:
        ip = docker("inspect", "-f", "{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}", cid).stdout.strip()
        out[cid] = ip
    return out


# Sessions belong to their caller (docs/security.md): one client token for this module's calls.
AUTH = {"Authorization": "Bearer docker-pool-tests-client-token"}


def _owner(sid: str, replicas: dict[str, str]) -> str:
    for cid, ip in replicas.items():
        if httpx.get(f"http://{ip}:8000/v1/sessions/{sid}", headers=AUTH, timeout=5).status_code == 200:
            return cid
    raise AssertionError(f"no replica holds session {sid}")


def test_replica_killed_mid_episode() -> None:
    replicas = _replicas("terminal")
    if len(replicas) < 2:
        pytest.skip("needs at least two terminal replicas")
    with httpx.Client(base_url=URL, timeout=120, headers=AUTH) as http:
        created = http.post("/v1/sessions", json={"env": "terminal", "task_id": "terminal/count-error-lines"})
        assert created.status_code == 201, created.text
        sid = created.json()["session_id"]
        assert http.post(f"/v1/sessions/{sid}/step", json={"action": ACTION}).json()["failure"] == "ok"
        victim = _owner(sid, replicas)
        docker("kill", victim)
        try:
            step = http.post(f"/v1/sessions/{sid}/step", json={"action": ACTION})
            assert step.status_code == 502, step.text
            body = step.json()
            assert body["failure_class"] == "env_error" and body["retryable"] is True, body
            verdict = http.post(f"/v1/sessions/{sid}/verify")
            assert verdict.json()["failure_class"] == "env_error", verdict.text
            assert http.delete(f"/v1/sessions/{sid}").status_code == 204
            # The pool keeps serving: new sessions land on the live replica, every time.
            for _ in range(3):
                again = http.post("/v1/sessions", json={"env": "terminal", "task_id": "terminal/count-error-lines"})
                assert again.status_code == 201, again.text
                new = again.json()["session_id"]
                assert http.post(f"/v1/sessions/{new}/step", json={"action": ACTION}).json()["failure"] == "ok"
                http.delete(f"/v1/sessions/{new}")
        finally:
            docker("start", victim, check=False)
            deadline = time.monotonic() + 90
            while time.monotonic() < deadline:
                state = docker("inspect", "-f", "{{.State.Health.Status}}", victim, check=False).stdout.strip()
                if state == "healthy":
                    break
                time.sleep(2)


def test_full_family_is_refused_with_unavailable() -> None:
    """A replica at capacity gets no new sessions; with every echo replica full the entry point
    answers 503 `unavailable` with Retry-After, and frees up again when sessions close."""
    made: list[str] = []
    with httpx.Client(base_url=URL, timeout=30, headers=AUTH) as http:
        try:
            for _ in range(300):
                r = http.post("/v1/sessions", json={"env": "echo"})
                if r.status_code != 201:
                    break
                made.append(r.json()["session_id"])
            assert r.status_code == 503, r.text
            assert r.json()["failure_class"] == "unavailable" and r.headers.get("retry-after"), r.text
            assert made, "not even one session fitted"
        finally:
            for sid in made:
                http.delete(f"/v1/sessions/{sid}")
        time.sleep(2.5)  # the router re-reads /ready every second
        r = http.post("/v1/sessions", json={"env": "echo"})
        assert r.status_code == 201, r.text
        http.delete(f"/v1/sessions/{r.json()['session_id']}")


def test_replica_server_runs_unprivileged() -> None:
    """Replicas are not privileged containers, and the server in them holds no capability at all
    (the entry point needs CAP_SYS_ADMIN only to let bubblewrap mount /proc, then drops it)."""
    [cid, *_] = _replicas("terminal")
    assert docker("inspect", "-f", "{{.HostConfig.Privileged}}", cid).stdout.strip() == "false"
    status = dict(line.split(":", 1) for line in docker("exec", cid, "cat", "/proc/1/status").stdout.splitlines())
    assert status["Uid"].split()[0] == "10001"
    assert int(status["CapEff"], 16) == 0 and int(status["CapBnd"], 16) == 0 and status["NoNewPrivs"].strip() == "1"
