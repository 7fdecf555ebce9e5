"""envhub.rl records its training as a run on the hub (`/v1/runs`): rollouts name the run on every
reset, and `train_grpo` creates the run and reports each step's figures. A real db server and its
store; the model-free policy and learner of test_train_loop.py."""

from __future__ import annotations

import asyncio
import dataclasses
import time
import uuid
from typing import Any

from envhub.client import AsyncEnvClient, EnvClient
from envhub.rl.buffer import BufferConfig
from envhub.rl.codec import ChatCodec, format_call
from envhub.rl.rollout import rollout_group
from envhub.rl.trainer import TrainRun, train_grpo
from tests.rl.conftest import ScriptedPolicy
from tests.rl.test_train_loop import CFG, TASKS, RecordingLearner, SeededPolicy

TOKEN = "rl-runs-client-token-000000000001"  # the client token (the server runs without keys)


def _run_when_recorded(url: str, run_id: str, episodes: int, timeout_s: float = 20.0) -> dict[str, Any]:
    """The run once the store holds `episodes` of its episodes (the writer is asynchronous)."""
    deadline = time.monotonic() + timeout_s
    with EnvClient(url, api_key=TOKEN) as client:
        while True:
            run = client.get_run(run_id)
            ended = sum(n for cls, n in run["figures"]["failure_classes"].items() if cls != "unverified")
            if ended >= episodes or time.monotonic() > deadline:
                return run
            time.sleep(0.1)


def test_rollouts_name_their_run_on_every_reset(db_server, tokenizer) -> None:
    tok = tokenizer
    right, wrong = (tok.encode(format_call("submit_answer", {"answer": a}), add_special_tokens=False)
                    + [tok.eos_token_id] for a in ("22806.26", "0"))
    policy = ScriptedPolicy([right, wrong], tok.eos_token_id, version=3)
    run_id = f"rollouts-{uuid.uuid4().hex[:8]}"

    async def go() -> None:
        async with AsyncEnvClient(db_server.url, api_key=TOKEN, retries=0) as env:
            assert (await env.create_run(run_id, {"what": "two rollouts"}))["id"] == run_id
            cfg = dataclasses.replace(CFG, run_id=run_id)
            for _ in range(2):
                await rollout_group(env, policy, ChatCodec(tok), "db/bank/ask-balance-001", 1, cfg=cfg)
            assert [r["id"] for r in (await env.list_runs())["runs"]][0] == run_id

    asyncio.run(go())
    figures = _run_when_recorded(db_server.url, run_id, 2)["figures"]
    assert figures["episodes"] == 2 and figures["failure_classes"] == {"ok": 2}
    assert figures["reward_by_policy"] == [{"policy_version": "3", "n": 2, "mean": 0.5, "ci95": figures[
        "reward_by_policy"][0]["ci95"]}] and figures["reward_by_policy"][0]["ci95"] is not None


def test_the_trainer_records_its_run_and_reports_every_step(db_server, tokenizer) -> None:
    learner = RecordingLearner()

    async def go() -> TrainRun:
        async with AsyncEnvClient(db_server.url, api_key=TOKEN, retries=0) as env:
            policy: Any = SeededPolicy(tokenizer)  # a Policy without weights: no HFPolicy needed
            return await train_grpo(env, policy, learner, ChatCodec(tokenizer), TASKS,  # type: ignore[arg-type]
                                    steps=3, rollout_cfg=CFG, seed=5, run_config={"model": "seeded"},
                                    buffer_cfg=BufferConfig(batch_groups=2, group_size=4, eta=0, max_concurrent=4,
                                                            dapo=False))

    trained = asyncio.run(go())
    assert trained.run_id is not None
    run = _run_when_recorded(db_server.url, trained.run_id, trained.rollouts)
    assert run["config"]["model"] == "seeded" and run["config"]["buffer"]["group_size"] == 4
    assert [(s["step"], s["policy_version"]) for s in run["step_reports"]] == [(1, "1"), (2, "2"), (3, "3")]
    for report, batch in zip(run["step_reports"], learner.batches, strict=True):
        f = report["figures"]
        assert f["valid"] == len(batch) == 8 and f["discarded"] == 0 and f["duplicated"] == 0
        assert f["staleness"] == {"0": 8.0}  # η = 0: every trajectory sampled by the weights it trains
        assert f["cpu_s"] >= 0 and f["trainer_wait_s"] >= 0 and "gpu_s" not in f  # no GPU here
        assert f["mean_reward"] == sum(t.reward for t in batch) / 8
    figures = run["figures"]
    assert figures["episodes"] >= trained.rollouts  # groups cut off at the end may have started episodes too
    assert {r["policy_version"] for r in figures["reward_by_policy"]} <= {"0", "1", "2", "3"}
    assert figures["trainer"]["valid"] == 24 and figures["trainer"]["staleness"] == {"0": 24.0}
    assert figures["cpu_s_per_success"] is not None
