"""Both clients against a live server (a socket): typed errors, concurrent async episodes, capacity refusals."""

import asyncio

import pytest

from envhub.client import AsyncEnvClient, EnvClient
from envhub.errors import NotFound, Unavailable
from envhub.server.thread import serve_in_thread
from tests.conftest import make_settings


def test_sync_client_raises_typed_errors(live_server):
    with EnvClient(live_server.url, retries=0) as client:
        with pytest.raises(NotFound):
            client.step("no-such-session", "echo", message="x")
        with pytest.raises(NotFound, match="did you mean"):
            client.reset("ecoh")


async def test_async_client_runs_episodes_concurrently(live_server):
    async with AsyncEnvClient(live_server.url) as client:
        async def episode(i: int) -> float:
            async with client.session("echo", task_id="echo/say-done") as s:
                step = await s.step("echo", message="done" if i % 2 == 0 else "nope")
                assert step.observation.text in ("done", "nope")
                return (await s.verify()).reward

        rewards = await asyncio.gather(*(episode(i) for i in range(8)))
        assert rewards == [1.0, 0.0] * 4
        with pytest.raises(NotFound):
            await client.state("missing")


def test_client_retries_capacity_refusals():
    with serve_in_thread(make_settings(families=["echo"], max_sessions=1)) as server:
        with EnvClient(server.url, retries=0) as client:
            held = client.reset("echo")
            with pytest.raises(Unavailable):
                client.reset("echo")
            client.close_session(held.session_id)
