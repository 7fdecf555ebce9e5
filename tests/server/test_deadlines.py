"""The session manager's time limits (`envhub.server.deadlines`): a block past its limit raises
TimeoutError, one in time does not, a cancellation from elsewhere stays a cancellation, and an
environment whose step never answers is graded env_error for its session only."""

from __future__ import annotations

import asyncio
import time

import pytest

from envhub.server import sessions
from envhub.server.deadlines import Deadlines
from envhub.spec import ResetRequest, StepRequest, ToolCall
from tests.conftest import make_settings, running_hub


@pytest.fixture
async def deadlines():
    d = Deadlines(period_s=0.05)
    yield d
    await d.stop()


async def test_a_block_past_its_limit_raises_timeout_error(deadlines):
    started = time.monotonic()
    with pytest.raises(TimeoutError):
        with deadlines(0.2):
            await asyncio.sleep(30)
    assert 0.2 <= time.monotonic() - started < 2
    assert not deadlines._live


async def test_a_block_in_time_ends_as_it_would_and_leaves_nothing(deadlines):
    with deadlines(5):
        await asyncio.sleep(0.01)
    assert not deadlines._live
    assert deadlines.sweep() == 0


async def test_a_cancellation_from_elsewhere_stays_a_cancellation(deadlines):
    async def guarded() -> None:
        with deadlines(30):
            await asyncio.sleep(30)

    task = asyncio.create_task(guarded())
    await asyncio.sleep(0.05)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert not deadlines._live


async def test_a_step_that_never_answers_is_env_error(monkeypatch):
    """An environment silent past the step limit and its grace: env_error, and the session is broken."""
    monkeypatch.setattr(sessions, "STEP_GRACE_S", 0.3 - 30)  # echo's step limit is 30 s: 0.3 s in all
    async with running_hub(make_settings(families=["echo"], store_enabled=False)) as hub:
        manager = hub.manager
        manager.deadlines.period_s = 0.05
        created = await manager.create(ResetRequest(env="echo", task_id="echo/say-done"))
        session = manager.sessions[created.session_id]

        async def never(call: ToolCall) -> None:
            await asyncio.sleep(3600)

        monkeypatch.setattr(session.env, "step", never)
        started = time.monotonic()
        step = StepRequest(action=ToolCall(tool="echo", arguments={"message": "x"}))
        result = await asyncio.wait_for(manager.step(created.session_id, step), 10)  # fails, never hangs
        assert time.monotonic() - started < 5
        assert result.failure.value == "env_error" and not result.trainable and result.retryable
        assert session.broken is not None
