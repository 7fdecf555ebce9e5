"""The SkyRL-Gym adapter against the installed `skyrl_gym` and a real db server."""

from __future__ import annotations

import pytest

skyrl_gym = pytest.importorskip("skyrl_gym", reason="skyrl-gym is not installed")

from envhub.rl.codec import format_call  # noqa: E402
from envhub.rl.skyrl import EnvhubTextEnv, InfraFault, register  # noqa: E402
from envhub.server.thread import serve_in_thread
from tests.conftest import echo_with_step_budget, make_settings  # noqa: E402

TASK = "db/bank/ask-balance-001"


def make(url: str, task_id: str = TASK, **config) -> EnvhubTextEnv:
    register("envhub-test")
    return skyrl_gym.make("envhub-test", env_config={"base_url": url, "tools": ["search_accounts", "submit_answer"],
                                                     **config}, extras={"task_id": task_id})


def test_oracle_through_skyrl_gym(db_server) -> None:
    env = make(db_server.url)
    try:
        prompt, meta = env.init([])
        assert meta["task_id"] == TASK and "ACC-101961" in prompt[-1]["content"]
        assert "search_accounts" in prompt[0]["content"] and "deposit" not in prompt[0]["content"]
        bad = env.step("the balance is probably fine")
        assert bad["done"] is False and bad["observations"][0]["content"].startswith("error:")
        out = env.step(format_call("search_accounts", {"number": "ACC-101961"}))
        assert out["done"] is False and "22806.26" in out["observations"][0]["content"]
        final = env.step(format_call("submit_answer", {"answer": "22806.26"}))
        assert final["done"] is True and final["reward"] == 1.0
    finally:
        env.close()


def test_infra_fault_raises_instead_of_a_zero_reward() -> None:
    with serve_in_thread(make_settings(families=["db"], fault_rate=1.0, fault_ops=["verify"])) as server:
        env = make(server.url)
        try:
            env.init([])
            with pytest.raises(InfraFault) as info:
                env.step(format_call("submit_answer", {"answer": "1"}))
            assert info.value.failure_class == "env_error"
        finally:
            env.close()


def test_the_tasks_step_budget_ends_the_episode_as_truncated(tmp_path) -> None:
    """`BaseTextEnvStepOutput` has `done` only: the server's budget cut ends the episode with the
    verifier's reward, and the metadata says it was cut off (not a terminal state); a final tool does not."""
    settings = make_settings(families=["echo"], tasks_dir=echo_with_step_budget(tmp_path, 1), store_enabled=False)
    with serve_in_thread(settings) as server:
        for final_tools, truncated in ((["echo"], False), ([], True)):
            env = make(server.url, "echo/say-done", tools=["echo"], final_tools=final_tools)
            try:
                env.init([])
                first = env.step(format_call("echo", {"message": "done"}))
                out = first if first["done"] else env.step(format_call("echo", {"message": "again"}))
                assert out["done"] is True and out["reward"] == 1.0
                assert out["metadata"]["truncated"] is truncated, out
            finally:
                env.close()
