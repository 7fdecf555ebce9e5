"""The compose pool's router (docker/router.py), without containers: what it answers on its own."""

from __future__ import annotations

import importlib.util
import json
import sys

import pytest
from aiohttp.test_utils import make_mocked_request

from envhub.config import REPO_ROOT


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
