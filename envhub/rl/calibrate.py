"""Calibration: pass@k of one policy per task, recorded as a run on the hub (`envhub calibrate`).

Each task is played k times by `rollout_group` (member i of task t samples with
`derive_seed(seed, t, i)`, so a calibration is reproducible given the weights), against any
`AsyncEnvClient`. The run's configuration says `kind: calibration` with the policy, k and the tasks;
every reset names the run, so the hub's registry reads each task's newest calibration from the
store (`envhub.store.calibrations.latest`) and the run page shows its figures. A task's files are never
touched. Faults no policy causes are re-run with the same seed up to `retries` times; what still
failed is counted as masked, apart from the judged episodes the figures count.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from envhub.client import AsyncEnvClient
from envhub.rl.codec import ChatCodec
from envhub.rl.policy import Policy
from envhub.rl.rollout import RolloutConfig, derive_seed, rollout_group
from envhub.rl.trajectory import Trajectory
from envhub.store.calibrations import KIND, Figures


@dataclass
class TaskCalibration:
    """One task's k episodes and their figures (`envhub.store.calibrations.Figures`)."""

    task_id: str
    figures: Figures
    retried: int  # failed attempts re-run (masked, each recorded as its own episode)
    masked_reasons: dict[str, int] = field(default_factory=dict)  # failure class → episodes still masked
    trajectories: list[Trajectory] = field(default_factory=list, repr=False)

    def as_dict(self) -> dict[str, Any]:
        return {"task_id": self.task_id, **self.figures.as_dict(), "retried": self.retried,
                "masked_reasons": self.masked_reasons}


def sampling_seeds(seed: int, task_id: str, k: int) -> list[int]:
    return [derive_seed("calibrate", seed, task_id, i) for i in range(k)]


def summarise(task_id: str, k: int, group: Sequence[Trajectory]) -> TaskCalibration:
    judged = [t for t in group if t.trainable and t.reward is not None]
    masked: dict[str, int] = {}
    for t in group:
        if not (t.trainable and t.reward is not None):
            masked[t.failure_class or "unverified"] = masked.get(t.failure_class or "unverified", 0) + 1
    figures = Figures(k=k, n=len(judged), passed=sum(1 for t in judged if t.passed),
                                  masked=len(group) - len(judged), reward_sum=sum(float(t.reward or 0) for t in judged))
    return TaskCalibration(task_id, figures, retried=sum(len(t.retried_failures) for t in group),
                           masked_reasons=masked, trajectories=list(group))


def run_config(policy: str, k: int, tasks: Sequence[str], *, seed: int, cfg: RolloutConfig,
               retries: int, extra: dict[str, Any] | None = None) -> dict[str, Any]:
    """The calibration run's configuration (`kind: calibration` is what the registry looks for)."""
    return {"kind": KIND, "policy": policy, "k": k, "tasks": list(tasks), "seed": seed,
            "retries": retries, "max_turns": cfg.max_turns, "per_turn_tokens": cfg.per_turn_tokens,
            "token_budget": cfg.token_budget, **(extra or {})}


async def calibrate(env: AsyncEnvClient, policy: Policy, codec: ChatCodec, task_ids: Sequence[str], *, k: int,
                    policy_name: str, run_id: str, cfg: RolloutConfig | None = None, seed: int = 0,
                    retries: int = 2, concurrency: int = 8, run_extra: dict[str, Any] | None = None,
                    on_task: Callable[[TaskCalibration], None] | None = None) -> list[TaskCalibration]:
    """Play each task k times as the run `run_id` (created here: a retried create is a no-op) and
    return each task's figures, in the order given; `on_task` hears of each as it finishes."""
    if k < 1:
        raise ValueError(f"k must be at least 1, not {k}")
    cfg = dataclasses.replace(cfg or RolloutConfig(), run_id=run_id)
    await env.create_run(run_id, run_config(policy_name, k, task_ids, seed=seed, cfg=cfg, retries=retries,
                                            extra=run_extra))
    limit = asyncio.Semaphore(concurrency)

    async def one(task_id: str) -> TaskCalibration:
        group = await rollout_group(env, policy, codec, task_id, k, cfg=cfg, sampling_seeds=sampling_seeds(
            seed, task_id, k), retries=retries, limit=limit)
        done = summarise(task_id, k, group)
        if on_task is not None:
            on_task(done)
        return done

    return list(await asyncio.gather(*(one(t) for t in task_ids)))
