"""A small async GRPO trainer in torch: an actor that rolls out groups with its own copy of the
weights, a learner that consumes the buffer, weights pushed to the actor by version.

The loss is the clipped token-level policy gradient (DAPO's asymmetric clip, token mean over the
batch) with the generation-time logprobs as the behaviour policy; stale tokens were already masked
by the buffer. η = 0 is synchronous: the actor starts a version's groups only after its weights.

Each rollout slot samples with a seed derived from (run seed, group sequence number, member), and
failed episodes are retried with that seed (`retries`): with η = 0 two runs from the same weights
and seed sample the same trajectories whether or not the environment failed on the way.

The training is a run on the hub (`/v1/runs`): every reset carries its id, and each step's figures
(`step_figures`: loss, valid, discarded and duplicated trajectories, the staleness histogram, faults
retried, trainer wait and CPU seconds) are reported to it, so the hub shows the run beside its episodes.
"""

from __future__ import annotations

import asyncio
import dataclasses
import itertools
import logging
import random
import time
import uuid
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from envhub.client import AsyncEnvClient
from envhub.errors import EnvhubError
from envhub.rl.buffer import Batch, BufferConfig, RolloutBuffer
from envhub.rl.codec import ChatCodec
from envhub.rl.policy import HFPolicy
from envhub.rl.prefix import forward_shared, plan_prefixes
from envhub.rl.rollout import RolloutConfig, derive_seed, rollout_group
from envhub.rl.trajectory import Trajectory

log = logging.getLogger("envhub.rl")


def _pad(rows: list[list[Any]], value: Any) -> list[list[Any]]:
    width = max(len(r) for r in rows)
    return [r + [value] * (width - len(r)) for r in rows]


def token_logprobs(model: Any, ids: list[list[int]], temperature: float = 1.0) -> Any:
    """Teacher-forced logprob of each token given its prefix (position 0 gets 0)."""
    import torch

    dev = next(model.parameters()).device
    x = torch.tensor(_pad(ids, 0), device=dev)
    att = torch.tensor(_pad([[1] * len(r) for r in ids], 0), device=dev)
    logits = model(input_ids=x, attention_mask=att).logits[:, :-1].float() / temperature
    lp = torch.log_softmax(logits, dim=-1).gather(-1, x[:, 1:].unsqueeze(-1)).squeeze(-1)
    return torch.nn.functional.pad(lp, (1, 0))


def sampled_logprobs(model: Any, trajectories: Sequence[Trajectory], temperature: float = 1.0) -> Any:
    """Teacher-forced logprob of every loss-masked token, trajectory by trajectory, in order (the
    order of `[lp for t in trajectories for lp, m in zip(t.logprobs, t.loss_mask) if m]`).

    Trajectories that share their prompt (a GRPO group's) forward it once, and the vocabulary
    projection runs over the scored tokens only: together most of a small model's training cost on
    CPU. The sampled tokens all come after `prompt_len`, so none is inside a shared prefix."""
    import torch

    dev = next(model.parameters()).device
    seqs = [t.token_ids for t in trajectories]
    plan = plan_prefixes([s[:t.prompt_len] for s, t in zip(seqs, trajectories, strict=True)],
                         list(range(len(seqs))))
    f = forward_shared(model, seqs, plan, 0, dev)
    row_of = {r: b for b, r in enumerate(f.order)}
    rows, cols, targets = [], [], []
    for r, t in enumerate(trajectories):
        for k in range(1, len(t.token_ids)):
            if t.loss_mask[k]:  # scored from the hidden state of the token before it
                assert k - 1 >= f.shared[r], "a sampled token inside a shared prefix"
                rows.append(row_of[r])
                cols.append(f.column(k - 1, len(t.token_ids)))
                targets.append(t.token_ids[k])
    hidden = f.hidden[torch.tensor(rows, device=dev), torch.tensor(cols, device=dev)]
    logits = model.get_output_embeddings()(hidden).float() / temperature
    return torch.log_softmax(logits, dim=-1).gather(-1, torch.tensor(targets, device=dev).unsqueeze(-1)).squeeze(-1)


class GRPOLearner:
    def __init__(self, model: Any, *, lr: float = 1e-5, clip_low: float = 0.2, clip_high: float = 0.28,
                 temperature: float = 1.0, micro_batch: int = 4, max_grad_norm: float = 1.0) -> None:
        import torch

        self.model = model.train()
        self.opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=lr, weight_decay=0.0)
        self.clip_low, self.clip_high = clip_low, clip_high
        self.temperature = temperature
        self.micro_batch = micro_batch
        self.max_grad_norm = max_grad_norm
        self.version = 0

    def step(self, trajectories: Sequence[Trajectory]) -> dict[str, float]:
        """One optimiser step over the batch; returns loss, clip fraction, tokens."""
        import torch

        n_tok = sum(sum(t.loss_mask) for t in trajectories)
        # a zero advantage contributes exactly zero gradient: skip its forward/backward pass
        trajs = [t for t in trajectories if sum(t.loss_mask) and t.advantage != 0.0]
        if not trajs:
            self.version += 1
            return {"loss": 0.0, "tokens": float(n_tok), "clip_frac": 0.0}
        dev = next(self.model.parameters()).device
        self.opt.zero_grad(set_to_none=True)
        total, clipped = 0.0, 0.0
        for i in range(0, len(trajs), self.micro_batch):
            mb = trajs[i:i + self.micro_batch]
            lp = sampled_logprobs(self.model, mb, self.temperature)  # the sampled tokens, flat
            old = torch.tensor([x for t in mb for x, m in zip(t.logprobs, t.loss_mask, strict=True) if m], device=dev)
            adv = torch.tensor([t.advantage for t in mb for m in t.loss_mask if m], device=dev)
            ratio = torch.exp(lp - old)
            surr = torch.minimum(ratio * adv, torch.clamp(ratio, 1 - self.clip_low, 1 + self.clip_high) * adv)
            loss = -surr.sum() / n_tok
            loss.backward()
            total += float(loss.detach())
            clipped += float(((ratio < 1 - self.clip_low) | (ratio > 1 + self.clip_high)).sum())
        torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.max_grad_norm)
        self.opt.step()
        self.version += 1
        return {"loss": total, "tokens": float(n_tok), "clip_frac": clipped / n_tok}

    def weights(self) -> dict[str, Any]:
        return {k: v.detach().clone() for k, v in self.model.state_dict().items()}


def sft_step(model: Any, opt: Any, trajectories: Sequence[Trajectory]) -> float:
    """One supervised step: mean negative logprob of the loss-masked tokens (oracle turns)."""
    import torch

    opt.zero_grad(set_to_none=True)
    loss = -sampled_logprobs(model, trajectories).mean()
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    opt.step()
    return float(loss.detach())


@dataclass
class StepReport:
    step: int
    version: int
    metrics: dict[str, float]
    wall_s: float
    trajectories: int
    tokens_per_s: float


@dataclass
class TrainRun:
    reports: list[StepReport] = field(default_factory=list)
    stats: Counter[str] = field(default_factory=Counter)  # the buffer's: masked_*, groups_repaired, ...
    rollouts: int = 0  # episodes handed to the buffer (one per slot, after its retries)
    #: every failed attempt by class, retried or not: each masked, none given a reward
    faults_seen: Counter[str] = field(default_factory=Counter)
    retried: int = 0  # failed attempts run again
    recovered: int = 0  # slots whose retry was judged (trainable) after failing
    run_id: str | None = None  # the hub's run (`/v1/runs`); None when the hub records none


def step_figures(batch: Batch, metrics: dict[str, float], *, wait_s: float, cpu_s: float,
                 gpu_s: float | None = None, retried: int = 0) -> dict[str, Any]:
    """What a trainer step reports to its run: the learner's and the buffer's numbers, and the
    trajectories trained (`valid`), left out (`discarded`: masked faults and stale ones), copied to
    repair a group (`duplicated`), how stale the trained ones were (versions behind the learner, a
    histogram), the groups repaired and dropped, the failed attempts retried since the last step,
    how long the learner waited for the batch and the CPU (and GPU) seconds the step took."""
    figures: dict[str, Any] = {k: float(v) for k, v in metrics.items() if isinstance(v, int | float)}
    trained = batch.trajectories
    staleness: Counter[str] = Counter(str(batch.version - min(t.sampled_versions())) for t in trained
                                      if t.sampled_versions())
    figures.update(valid=float(len(trained)), duplicated=float(sum(t.duplicate_of is not None for t in trained)),
                   discarded=float(sum(v for k, v in batch.metrics.items() if k.startswith(("masked_", "dropped_")))),
                   repaired=float(batch.metrics.get("groups_repaired", 0.0)),
                   dropped=float(batch.metrics.get("groups_dropped", 0.0)), retried=float(retried),
                   trainer_wait_s=round(wait_s, 6), cpu_s=round(cpu_s, 6),
                   staleness={k: float(v) for k, v in sorted(staleness.items())})
    if gpu_s is not None:
        figures["gpu_s"] = round(gpu_s, 6)
    return figures


async def _open_run(env: AsyncEnvClient, run_id: str, config: dict[str, Any]) -> str | None:
    try:
        return (await env.create_run(run_id, config))["id"]
    except EnvhubError as e:  # e.g. a hub without a store: train all the same, unrecorded
        log.warning("the hub records no run for this training (%s)", e.detail)
        return None


async def train_grpo(env: AsyncEnvClient, policy: HFPolicy, learner: GRPOLearner, codec: ChatCodec,
                     tasks: Sequence[str], *, steps: int, buffer_cfg: BufferConfig,
                     rollout_cfg: RolloutConfig | None = None, seed: int = 0, retries: int = 0,
                     on_step: Callable[[StepReport], None] | None = None,
                     on_group: Callable[[list[Trajectory]], None] | None = None,
                     run_id: str | None = None, run_config: dict[str, Any] | None = None) -> TrainRun:
    """Actor and learner concurrently until `steps` optimiser steps; returns per-step reports.
    `retries`: re-runs of an episode whose env/verifier failed (`rollout_group`). The training is
    recorded as the hub's run `run_id` (a fresh id when None) with `run_config` beside the buffer's
    and the run's own settings: its resets carry the id, and each step's `step_figures` are reported."""
    buf = RolloutBuffer(buffer_cfg)
    run = TrainRun()
    config = {"tasks": list(tasks), "steps": steps, "seed": seed, "retries": retries,
              "buffer": _plain(dataclasses.asdict(buffer_cfg)), **(run_config or {})}
    run.run_id = await _open_run(env, run_id or uuid.uuid4().hex, config)
    if run.run_id is not None:
        rollout_cfg = dataclasses.replace(rollout_cfg or RolloutConfig(), run_id=run.run_id)
    rng = random.Random(seed)
    order = list(tasks)
    task_iter = itertools.cycle(rng.sample(order, len(order)))
    stop = asyncio.Event()
    inflight: set[asyncio.Task[None]] = set()

    async def one_group(task_id: str, seq: int) -> None:
        try:
            seeds = [derive_seed(seed, seq, i) for i in range(buffer_cfg.group_size)]
            group = await rollout_group(env, policy, codec, task_id, buffer_cfg.group_size, cfg=rollout_cfg,
                                        sampling_seeds=seeds, retries=retries)
        except BaseException:
            await buf.cancelled()
            raise
        run.rollouts += len(group)
        for t in group:
            run.faults_seen.update(t.retried_failures)
            run.retried += len(t.retried_failures)
            run.recovered += bool(t.retried_failures) and t.trainable
            if not t.trainable:
                run.faults_seen[t.failure_class] += 1
        if on_group is not None:
            on_group(group)
        await buf.put(group, seq)

    async def actor() -> None:
        while not stop.is_set():
            # the version the actor's weights have: the learner's counter moves before `push` lands, and
            # a group started in between would sample with the old weights (η = 0 would not hold)
            if buf.may_submit(policy.version):
                task = asyncio.create_task(one_group(next(task_iter), buf.submitted()))
                inflight.add(task)
                task.add_done_callback(inflight.discard)
            else:
                await asyncio.sleep(0.02)

    reporting: list[asyncio.Task[None]] = []  # step reports on their way to the hub
    actor_task = asyncio.create_task(actor())
    try:
        t_prev = time.monotonic()
        tok_prev = policy.generated_tokens
        retried_prev = 0
        for step in range(1, steps + 1):
            t_wait = time.monotonic()
            batch: Batch = await buf.next_batch(learner.version)
            t_learn, cpu0 = time.monotonic(), time.process_time()
            metrics = await asyncio.to_thread(learner.step, batch.trajectories)
            learn_s, cpu_s = time.monotonic() - t_learn, time.process_time() - cpu0
            policy.push(learner.weights(), learner.version)
            now = time.monotonic()
            metrics.update(batch.metrics)
            if run.run_id is not None:  # sent beside the training: the learner never waits on the hub
                figures = step_figures(batch, metrics, wait_s=t_learn - t_wait, cpu_s=cpu_s, retried=run.retried -
                                       retried_prev, gpu_s=learn_s if _on_gpu(learner) else None)
                retried_prev = run.retried
                reporting.append(asyncio.create_task(_report(env, run.run_id, step, figures, learner.version)))
            rep = StepReport(step, learner.version, metrics, now - t_prev, len(batch.trajectories),
                             (policy.generated_tokens - tok_prev) / max(1e-9, now - t_prev))
            t_prev, tok_prev = now, policy.generated_tokens
            run.reports.append(rep)
            if on_step is not None:
                on_step(rep)
    finally:
        stop.set()
        actor_task.cancel()
        for t in list(inflight):
            t.cancel()
        await asyncio.gather(actor_task, *inflight, return_exceptions=True)
        run.stats = buf.stats
        await asyncio.gather(*reporting, return_exceptions=True)  # each logs its own failure
    return run


async def _report(env: AsyncEnvClient, run_id: str, step: int, figures: dict[str, Any], version: int) -> None:
    try:
        await env.report_step(run_id, step, figures, policy_version=str(version))
    except Exception as e:  # noqa: BLE001 - the run's record is the hub's concern; training goes on
        log.warning("step %d of run %s not recorded: %s", step, run_id, getattr(e, "detail", e))


def _on_gpu(learner: Any) -> bool:
    model = getattr(learner, "model", None)
    try:
        return model is not None and next(model.parameters()).device.type == "cuda"
    except (AttributeError, StopIteration, TypeError):
        return False


def _plain(value: Any) -> Any:
    """`value` as JSON (a config's tuples as lists)."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value
