"""A small async GRPO trainer in torch: an actor that rolls out groups with its own copy of the
weights, a learner that consumes the buffer, weights pushed to the actor by version.

The loss is the clipped token-level policy gradient (DAPO's asymmetric clip, token mean over the
batch) with the generation-time logprobs as the behaviour policy; stale tokens were already masked
by the buffer. η = 0 is synchronous: the actor starts a version's groups only after its weights.

Each rollout slot samples with a seed derived from (run seed, group sequence number, member), and
failed episodes are retried with that seed (`retries`): with η = 0 two runs from the same weights
and seed sample the same trajectories whether or not the environment failed on the way.
"""

from __future__ import annotations

import asyncio
import itertools
import random
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from envhub.client import AsyncEnvClient
from envhub.rl.buffer import Batch, BufferConfig, RolloutBuffer
from envhub.rl.codec import ChatCodec
from envhub.rl.policy import HFPolicy
from envhub.rl.prefix import forward_shared, plan_prefixes
from envhub.rl.rollout import RolloutConfig, derive_seed, rollout_group
from envhub.rl.trajectory import Trajectory


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


async def train_grpo(env: AsyncEnvClient, policy: HFPolicy, learner: GRPOLearner, codec: ChatCodec,
                     tasks: Sequence[str], *, steps: int, buffer_cfg: BufferConfig,
                     rollout_cfg: RolloutConfig | None = None, seed: int = 0, retries: int = 0,
                     on_step: Callable[[StepReport], None] | None = None,
                     on_group: Callable[[list[Trajectory]], None] | None = None) -> TrainRun:
    """Actor and learner concurrently until `steps` optimiser steps; returns per-step reports.
    `retries`: re-runs of an episode whose env/verifier failed (`rollout_group`)."""
    buf = RolloutBuffer(buffer_cfg)
    run = TrainRun()
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

    actor_task = asyncio.create_task(actor())
    try:
        t_prev = time.monotonic()
        tok_prev = policy.generated_tokens
        for step in range(1, steps + 1):
            batch: Batch = await buf.next_batch(learner.version)
            metrics = await asyncio.to_thread(learner.step, batch.trajectories)
            policy.push(learner.weights(), learner.version)
            now = time.monotonic()
            metrics.update(batch.metrics)
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
    return run
