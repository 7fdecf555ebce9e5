"""TRL adapter: a `rollout_func` for `GRPOTrainer` that runs envhub episodes.

The dataset's `prompt` column holds envhub task ids (`db/bank/ask-balance-001`). TRL 1.16's
sampler repeats each prompt `num_generations` times in a row, and the trainer expects one completion
per row it passed (more crashes its shuffle): consecutive equal prompts run as one GRPO group of
that size. Completions are token-exact: `prompt_ids`, `completion_ids` (the model's turns and the environment's
observations), `logprobs`, `env_mask` (1 = sampled by the model) and `envhub_reward`, which the
reward function `envhub_reward` passes through. Infrastructure faults get `None`, which TRL leaves
out of the group baseline (rl.md §1.1) — never a 0.

    trainer = GRPOTrainer(model=model, reward_funcs=envhub_reward, args=GRPOConfig(...),
                          train_dataset=Dataset.from_dict({"prompt": task_ids}),
                          processing_class=tokenizer,
                          rollout_func=make_rollout_func("http://127.0.0.1:8000", tokenizer))
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Callable
from typing import Any

from envhub.client import AsyncEnvClient
from envhub.rl.codec import ChatCodec
from envhub.rl.policy import HFPolicy, Policy
from envhub.rl.rollout import RolloutConfig, rollout_group
from envhub.rl.trajectory import Trajectory


def to_trl(trajectories: list[Trajectory], eos_id: int) -> dict[str, list[Any]]:
    """The rollout_func answer for trajectories (in order)."""
    out: dict[str, list[Any]] = {"prompt_ids": [], "completion_ids": [], "logprobs": [], "env_mask": [],
                                 "envhub_reward": [], "envhub_failure": []}
    for t in trajectories:
        p = t.prompt_len
        completion = t.token_ids[p:]
        logprobs, mask = t.logprobs[p:], t.loss_mask[p:]
        if not completion:  # the episode failed before the model spoke: one masked token keeps shapes valid
            completion, logprobs, mask = [eos_id], [0.0], [0]
        out["prompt_ids"].append(t.token_ids[:p] or [eos_id])
        out["completion_ids"].append(completion)
        out["logprobs"].append(logprobs)
        out["env_mask"].append(mask)
        out["envhub_reward"].append(t.reward)
        out["envhub_failure"].append(t.failure_class)
    return out


def envhub_reward(completions: list[Any], envhub_reward: list[float | None], **_: Any) -> list[float | None]:
    """The reward function to pass as `reward_funcs`: the verifier's reward, None for infra faults."""
    return list(envhub_reward)


def make_rollout_func(base_url: str, tokenizer: Any, *, cfg: RolloutConfig | None = None,
                      policy: Policy | None = None, concurrency: int = 16,
                      run_id: str | None = None) -> Callable[[list[Any], Any], dict]:
    """A TRL `rollout_func`. Without `policy`, the trainer's own model samples in-process
    (`HFPolicy`, version = the trainer's global step). `run_id`: the hub's run (`/v1/runs`, made
    with `EnvClient.create_run`) every reset names, so the hub computes its figures."""
    codec = ChatCodec(tokenizer)
    if run_id is not None:
        cfg = dataclasses.replace(cfg or RolloutConfig(), run_id=run_id)

    def rollout_func(prompts: list[Any], trainer: Any) -> dict[str, list[Any]]:
        runs: list[list[Any]] = []  # [task id, count] for each run of equal consecutive prompts
        for p in prompts:
            task = _task_id(p)
            if runs and runs[-1][0] == task:
                runs[-1][1] += 1
            else:
                runs.append([task, 1])
        pol = policy
        was_training = trainer.model.training
        if pol is None:
            pol = HFPolicy(trainer.model, tokenizer, temperature=trainer.temperature,
                           version=trainer.state.global_step)

        async def run() -> list[Trajectory]:
            limit = asyncio.Semaphore(concurrency)
            async with AsyncEnvClient(base_url) as env:
                groups = await asyncio.gather(*(rollout_group(env, pol, codec, task, n, cfg=cfg, limit=limit)
                                                for task, n in runs))
            return [t for g in groups for t in g]

        try:
            trajectories = asyncio.run(run())
        finally:
            trainer.model.train(was_training)
        return to_trl(trajectories, tokenizer.eos_token_id)

    return rollout_func


def _task_id(prompt: Any) -> str:
    if isinstance(prompt, str):
        return prompt.strip()
    if isinstance(prompt, list) and prompt and isinstance(prompt[-1], dict):  # a conversational row
        return str(prompt[-1].get("content", "")).strip()
    raise ValueError(f"a prompt must be an envhub task id, got {prompt!r:.80}")
