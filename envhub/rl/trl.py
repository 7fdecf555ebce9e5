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
                          rollout_func=make_rollout_func("http://127.0.0.1:8000", tokenizer, run_id=run),
                          callbacks=[EnvhubRunCallback("http://127.0.0.1:8000", run)])

`EnvhubRunCallback` (a `transformers.TrainerCallback`, made on first use so that importing this
module needs no transformers) reports what the trainer logs (loss, learning rate, reward, kl...)
as the run's step figures (`POST /v1/runs/{id}/steps`), so the run's page shows a TRL run's loss.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import logging
import math
import time
from collections.abc import Callable
from typing import Any

from envhub.client import AsyncEnvClient, EnvClient
from envhub.errors import EnvhubError
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
                      run_id: str | None = None, api_key: str | None = None,
                      branch_at: int | None = None) -> Callable[[list[Any], Any], dict]:
    """A TRL `rollout_func`. Without `policy`, the trainer's own model samples in-process
    (`HFPolicy`, version = the trainer's global step). `run_id`: the hub's run (`/v1/runs`, made
    with `EnvClient.create_run`) every reset names, so the hub computes its figures. `api_key` (else
    `ENVHUB_API_KEY`): the credential the episodes run as; a run counts only its creator's episodes,
    so give the one that created the run (without either, each call ran as a fresh random client).
    `branch_at=k`: each group plays its first k turns once and forks the session for its members
    (`rollout_group(branch_at=k)`). A group whose episode ended before turn k is its one trajectory,
    repeated to the group's size: TRL wants a completion per prompt, and equal rewards carry no advantage."""
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
            async with AsyncEnvClient(base_url, api_key=api_key) as env:
                groups = await asyncio.gather(*(rollout_group(env, pol, codec, task, n, cfg=cfg, limit=limit,
                                                              branch_at=branch_at) for task, n in runs))
            return [t for g, (_, n) in zip(groups, runs, strict=True) for t in (g if len(g) == n else [g[0]] * n)]

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


log = logging.getLogger("envhub.rl.trl")

#: TRL's log names → the run's step figure names (`envhub.rl.trainer.step_figures` uses the same:
#: `mean_reward`, `loss`, `kl`); any other number TRL logs keeps its own name.
FIGURE_NAMES = {"loss": "loss", "reward": "mean_reward", "reward_std": "reward_std", "kl": "kl",
                "learning_rate": "learning_rate", "grad_norm": "grad_norm", "entropy": "entropy",
                "epoch": "epoch", "num_tokens": "num_tokens", "frac_reward_zero_std": "frac_reward_zero_std"}
#: A step report holds at most this many figures (`RunStepReport`): the named ones first.
MAX_FIGURES = 64


def step_figures_of(logs: dict[str, Any]) -> dict[str, float]:
    """The numbers of one TRL log as step figures: renamed by `FIGURE_NAMES`, non-finite ones and
    non-numbers left out, eval logs (`eval_...`) too (not a training step's)."""
    out: dict[str, float] = {}
    for key, value in logs.items():
        if key.startswith("eval_") or isinstance(value, bool) or not isinstance(value, int | float):
            continue
        if math.isfinite(value):
            out[FIGURE_NAMES.get(key, key)] = float(value)
    return out


def __getattr__(name: str) -> Any:
    if name == "EnvhubRunCallback":
        return _callback_class()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@functools.cache
def _callback_class() -> type:
    from transformers import TrainerCallback

    class EnvhubRunCallback(TrainerCallback):
        """Reports each training log of a `transformers` / TRL trainer to an envhub run.

        `client_or_url`: an `EnvClient`, or the hub's URL (with `api_key`, else `ENVHUB_API_KEY`:
        the credential that created the run, since a run is its creator's). Each `on_log` becomes the
        step report of `state.global_step` (`policy_version`: that step, as `make_rollout_func`'s
        in-process policy names its episodes), with `cpu_s` (this process's CPU seconds since the
        last log) and, when the model is on a GPU, `gpu_s` (wall seconds since the last log). Logs of
        the same step (the closing `train_runtime` log, say) are merged into that step's figures, since
        a step reported again replaces them. A report the hub refuses is logged, never raised: the
        training goes on. Only the world's process zero reports."""

        def __init__(self, client_or_url: EnvClient | str, run_id: str, *, api_key: str | None = None) -> None:
            self.client = client_or_url if isinstance(client_or_url, EnvClient) else \
                EnvClient(client_or_url, api_key=api_key)
            self.run_id = run_id
            self.reported: dict[int, dict[str, float]] = {}
            self._cpu, self._wall = time.process_time(), time.monotonic()

        def on_log(self, args: Any, state: Any, control: Any, logs: dict[str, Any] | None = None,
                   **kwargs: Any) -> None:
            if not logs or not state.is_world_process_zero:
                return
            cpu, wall = time.process_time(), time.monotonic()
            spent = {"cpu_s": cpu - self._cpu}
            if _on_gpu(kwargs.get("model")):
                spent["gpu_s"] = wall - self._wall
            self._cpu, self._wall = cpu, wall
            step = int(state.global_step)
            figures = self.reported.setdefault(step, {})
            figures.update(step_figures_of(logs))
            for key, seconds in spent.items():
                figures[key] = round(figures.get(key, 0.0) + seconds, 6)
            named = [k for k in figures if k in FIGURE_NAMES.values() or k in ("cpu_s", "gpu_s")]
            kept = named + sorted(k for k in figures if k not in named)
            try:
                self.client.report_step(self.run_id, step, {k: figures[k] for k in kept[:MAX_FIGURES]},
                                        policy_version=str(step))
            except EnvhubError as e:
                log.warning("run %s: step %d not reported: %s", self.run_id, step, e)

    return EnvhubRunCallback


def _on_gpu(model: Any) -> bool:
    try:
        return next(model.parameters()).device.type == "cuda"
    except (AttributeError, StopIteration, TypeError):
        return False
