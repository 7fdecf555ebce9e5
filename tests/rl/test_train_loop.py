"""`train_grpo` without a model: a policy whose answer is a function of its sampling seed and a
learner that records its batches. Slot seeds are deterministic, η = 0 samples every batch with the
latest weights, and a run with injected env faults and retries trains on what the clean run trained."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from envhub.client import AsyncEnvClient
from envhub.rl.buffer import BufferConfig
from envhub.rl.codec import ChatCodec, format_call
from envhub.rl.policy import Generation
from envhub.rl.rollout import RolloutConfig, derive_seed
from envhub.rl.trainer import TrainRun, train_grpo
from envhub.rl.trajectory import Trajectory
from envhub.server.thread import serve_in_thread
from tests.conftest import make_settings

TASKS = ["db/bank/ask-balance-001", "db/hr/ask-salary-001"]
ANSWERS = {"db/bank/ask-balance-001": "22806.26", "db/hr/ask-salary-001": "0"}
CFG = RolloutConfig(tools=["submit_answer"], max_turns=1, per_turn_tokens=128)


class SeededPolicy:
    """Right or wrong as the turn's seed says: what it samples depends on the seed alone."""

    engine = "seeded"
    temperature = 1.0

    def __init__(self, tok: Any) -> None:
        self.tok = tok
        self.version = 0
        self.generated_tokens = 0

    def push(self, _weights: Any, version: int) -> None:
        self.version = version

    async def generate(self, prompt_ids: list[int], max_tokens: int, seed: int | None = None) -> Generation:
        assert seed is not None
        answer = "22806.26" if seed % 3 else "wrong"
        ids = self.tok.encode(format_call("submit_answer", {"answer": answer}), add_special_tokens=False)
        ids.append(self.tok.eos_token_id)
        await asyncio.sleep(0.001 * (seed % 7))  # episodes finish out of order
        return Generation(ids, [-0.5] * len(ids), self.version, "stop")


class RecordingLearner:
    """Records each batch; its version moves before the trainer pushes weights to the actor (as
    GRPOLearner's does), with time in between in which the actor could start groups too early."""

    def __init__(self) -> None:
        self.version = 0
        self.batches: list[list[Trajectory]] = []

    def step(self, trajectories: list[Trajectory]) -> dict[str, float]:
        self.batches.append(list(trajectories))
        self.version += 1
        time.sleep(0.1)
        return {"loss": 0.0, "tokens": float(sum(t.n_sampled for t in trajectories))}

    def weights(self) -> dict[str, Any]:
        return {}


def train(tok: Any, url: str, retries: int) -> tuple[TrainRun, RecordingLearner]:
    learner = RecordingLearner()

    async def go() -> TrainRun:
        async with AsyncEnvClient(url, retries=0) as env:
            return await train_grpo(env, SeededPolicy(tok), learner, ChatCodec(tok), TASKS, steps=3,  # type: ignore[arg-type]
                                    buffer_cfg=BufferConfig(batch_groups=2, group_size=4, eta=0, max_concurrent=4,
                                                            dapo=False),
                                    rollout_cfg=CFG, seed=5, retries=retries)
    return asyncio.run(go()), learner


def slots(batch: list[Trajectory]) -> list[tuple[int, float | None]]:
    return sorted((t.sampling["seed"], t.reward) for t in batch if t.duplicate_of is None)


def test_eta0_fault_run_trains_on_the_clean_runs_trajectories(tokenizer) -> None:
    with serve_in_thread(make_settings(families=["db"])) as clean_server:
        clean, clean_learner = train(tokenizer, clean_server.url, retries=3)
    with serve_in_thread(make_settings(families=["db"], fault_rate=0.15, fault_seed=7)) as faulty_server:
        faulty, faulty_learner = train(tokenizer, faulty_server.url, retries=3)
        injected = sum(faulty_server.hub.manager.faults.injected.values())

    # slot seeds: (run seed, group sequence number, member); η = 0: every batch sampled by the latest weights
    for learner in (clean_learner, faulty_learner):
        for v, batch in enumerate(learner.batches):
            assert {pv for t in batch for pv in t.sampled_versions()} == {v}
    first = {t.sampling["seed"] for t in clean_learner.batches[0]}
    assert first == {derive_seed(5, seq, i) for seq in (1, 2) for i in range(4)}
    assert clean.retried == 0 and not clean.faults_seen and "dropped_stale" not in clean.stats

    # the fault run: every injected fault seen once, masked, and retried within the budget
    assert injected > 0 and sum(faulty.faults_seen.values()) == injected
    assert faulty.retried > 0 and faulty.recovered > 0
    assert all(t.reward is not None for b in faulty_learner.batches for t in b)
    still_failed = faulty.stats.get("masked_env_error", 0)
    assert faulty.retried == injected - still_failed
    if still_failed == 0:  # the usual case: the same trajectories, step by step
        for c, f in zip(clean_learner.batches, faulty_learner.batches, strict=True):
            assert slots(f) == slots(c)
    else:
        # A slot failed every retry (about one run in three here, more under load: which call a
        # fault hits depends on timing). Its group was repaired (a copy takes its place) or dropped,
        # and a dropped group's place went to the next group drawn, one the clean run never drew;
        # every other trajectory is one the clean run trained on.
        trained = {x for b in clean_learner.batches for x in slots(b)}
        new = [x for b in faulty_learner.batches for x in slots(b) if x not in trained]
        assert len(new) <= 4 * faulty.stats["groups_dropped"], (new, faulty.stats)
