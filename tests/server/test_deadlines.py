"""The session manager's time limits (`envhub.core.deadlines`): a block past its limit raises
TimeoutError, one in time does not, a cancellation from elsewhere stays a cancellation, and an
environment whose step never answers is graded env_error for its session only."""

from __future__ import annotations

import asyncio
import time

import pytest

from envhub.core import sessions
from envhub.core.deadlines import Deadlines
from envhub.core import deadlines as deadlines_module
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


async def test_run_arms_no_limit_for_a_coroutine_that_never_waits(deadlines, monkeypatch):
    armed: list[float] = []
    real = deadlines_module.Limit.__enter__

    def spy(self):
        armed.append(self.seconds)
        return real(self)

    monkeypatch.setattr(deadlines_module.Limit, "__enter__", spy)

    async def at_once() -> int:
        return 7

    async def waits() -> int:
        await asyncio.sleep(0.01)
        return 8

    assert await deadlines.run(5, at_once()) == 7 and armed == []
    assert await deadlines.run(6, waits()) == 8 and armed == [6]
    assert not deadlines._live


async def test_run_cuts_a_coroutine_that_waits_too_long_counting_from_the_call(deadlines):
    async def busy_then_stuck() -> None:
        time.sleep(0.5)  # the part before its first wait: nothing can cut it, but it counts
        await asyncio.sleep(30)

    started = time.monotonic()
    with pytest.raises(TimeoutError):
        await deadlines.run(0.5, busy_then_stuck())
    assert 0.5 <= time.monotonic() - started < 0.9  # counted from its first wait, it would be 1 s
    assert not deadlines._live


async def test_run_passes_on_what_the_coroutine_raises_and_a_cancellation_from_elsewhere(deadlines):
    async def fails_after_waiting() -> None:
        await asyncio.sleep(0.01)
        raise ValueError("its own")

    with pytest.raises(ValueError, match="its own"):
        await deadlines.run(5, fails_after_waiting())
    cleaned: list[str] = []

    async def cleans_up() -> None:
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            await asyncio.sleep(0)  # its clean-up waits too, and must still run
            cleaned.append("cleaned up")
            raise

    task = asyncio.create_task(deadlines.run(30, cleans_up()))
    await asyncio.sleep(0.05)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert cleaned == ["cleaned up"] and not deadlines._live


async def test_run_closed_unfinished_closes_the_coroutine_it_runs(deadlines):
    cleaned: list[str] = []

    async def stuck() -> None:
        try:
            await asyncio.sleep(30)
        finally:
            cleaned.append("finally")

    inner = stuck()  # held here, so only the runner's closing can end it (not its collection)

    async def outer() -> None:
        await deadlines.run(30, inner)

    runner = outer()
    runner.send(None)  # runs until `stuck` waits (inside a task: this test's own)
    runner.close()
    assert cleaned == ["finally"]


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
