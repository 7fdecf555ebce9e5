"""Capacity: a full server refuses a reset with 503 before taking any resource."""

import httpx

from envhub.server.thread import serve_in_thread
from tests.conftest import make_settings


def test_capacity_refuses_with_503_before_taking_resources():
    with serve_in_thread(make_settings(families=["echo"], max_sessions=1)) as server:
        http = httpx.Client(base_url=server.url)
        first = http.post("/v1/sessions", json={"env": "echo"})
        assert first.status_code == 201
        http.headers["Authorization"] = f"Bearer {first.json()['client_token']}"  # the session's owner from now on
        refused = http.post("/v1/sessions", json={"env": "echo"})
        assert refused.status_code == 503 and refused.headers["retry-after"] == "1"
        assert refused.json()["failure_class"] == "unavailable" and refused.json()["retryable"] is True
        assert http.get("/capacity").json() == {"protocol": "envhub/1", "max_sessions": 1, "active_sessions": 1,
                                                "free": 0}
        assert http.get("/ready").status_code == 503
        http.delete(f"/v1/sessions/{first.json()['session_id']}")
        assert http.post("/v1/sessions", json={"env": "echo"}).status_code == 201
