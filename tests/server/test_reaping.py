"""The reaper: a session idle past its lease is closed."""

import time

import httpx

from envhub.server.thread import serve_in_thread
from tests.conftest import make_settings


def test_idle_sessions_are_reaped():
    with serve_in_thread(make_settings(families=["echo"], reap_interval_s=0.2)) as server:
        http = httpx.Client(base_url=server.url, headers={"Authorization": "Bearer reaper-test-client-token"})
        sid = http.post("/v1/sessions", json={"env": "echo", "lease_s": 0.3}).json()["session_id"]
        assert http.get(f"/v1/sessions/{sid}").status_code == 200
        for _ in range(50):  # poll capacity: a GET on the session itself would renew its lease
            if http.get("/capacity").json()["active_sessions"] == 0:
                break
            time.sleep(0.1)
        assert http.get(f"/v1/sessions/{sid}").status_code == 404
