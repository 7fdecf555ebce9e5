"""The rollout buffer: which finished groups a trainer step gets, and with which advantages.

Each rule of rl.md §6.4 is one small pure function here (property-tested in tests/rl/test_buffer.py);
`RolloutBuffer` composes them. The unit is a GRPO group (G trajectories of one task); B = groups
per batch; v = the trainer's version.

 5  capacity      submit iff running < max_concurrent and accepted + running < (eta + v + 1)·B;
                  at sampling, drop a trajectory whose oldest sampled token is older than v − eta
 6  span          drop a trajectory whose sampled versions span more than `max_span`
 7  token staleness  fresh iff v − version ≤ eta_tok; keep iff fresh fraction ≥ tau; mask the stale
 8  prefill       the first batch waits for N·B finished groups, later ones for B
 9  buckets       fill a batch in rounds, one group per non-empty length bucket, oldest first
10  failures      env_error / verifier_error / task_invalid / unavailable never train, never reward 0
11  repair        V valid of G: V = G as is; 2V > G → duplicate valid ones round-robin up to G;
                  otherwise drop the group ("mask": no duplicates, keep iff 2V > G and V ≥ 2)
12  DAPO          after repair, drop a group whose rewards are all equal
13  GRPO          advantages = (r − mean) / std over the kept members (they sum to 0)
"""

from __future__ import annotations

import asyncio
import copy
import math
import uuid
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal

from envhub.rl.rollout import UNTRAINABLE
from envhub.rl.trajectory import Trajectory

Group = list[Trajectory]


@dataclass
class BufferConfig:
    batch_groups: int = 4  # B
    group_size: int = 8  # G
    eta: int = 2  # max versions a trajectory's oldest sampled token may lag; 0 = synchronous
    max_concurrent: int = 8  # groups rolling out at once
    prefill_factor: int = 1  # N
    buckets: Sequence[int] = ()  # token-length boundaries b_0 < b_1 < ...
    eta_tok: int | None = None  # token-level freshness; defaults to eta
    tau: float = 0.0  # minimum fresh fraction (inclusive)
    max_span: int = 1 << 30
    repair: Literal["duplicate", "mask"] = "duplicate"
    dapo: bool = True
    std_norm: bool = True

    def __post_init__(self) -> None:
        if self.batch_groups < 1 or self.group_size < 1 or self.eta < 0 or self.prefill_factor < 1:
            raise ValueError("batch_groups, group_size and prefill_factor must be ≥ 1 and eta ≥ 0")
        if self.prefill_factor > self.eta + 1:  # capacity admits (eta + 1)·B groups before the first step
            raise ValueError(f"prefill_factor {self.prefill_factor} can never fill: at most eta + 1 = "
                             f"{self.eta + 1} batches are admitted before the first training step")
        if list(self.buckets) != sorted(set(self.buckets)):
            raise ValueError("buckets must be strictly increasing length boundaries")


# -- rule 5 -----------------------------------------------------------------------------------------
def may_submit(running: int, accepted: int, version: int, cfg: BufferConfig) -> bool:
    return running < cfg.max_concurrent and accepted + running < (cfg.eta + version + 1) * cfg.batch_groups


# -- rules 5, 6, 7: per trajectory, at sampling time ---------------------------------------------------
def staleness_filter(t: Trajectory, version: int, cfg: BufferConfig) -> tuple[Trajectory | None, str]:
    """(kept trajectory with its stale tokens masked, "") or (None, why it was dropped)."""
    sampled = t.sampled_versions()
    if not sampled:
        return None, "empty"
    if version - min(sampled) > cfg.eta:
        return None, "stale"
    if max(sampled) - min(sampled) > cfg.max_span:
        return None, "span"
    eta_tok = cfg.eta if cfg.eta_tok is None else cfg.eta_tok
    fresh = [version - pv <= eta_tok for pv in sampled]
    if sum(fresh) / len(sampled) < cfg.tau:
        return None, "stale_tokens"
    if all(fresh):
        return t, ""
    out = copy.copy(t)
    out.loss_mask = [m if (m == 0 or version - pv <= eta_tok) else 0
                     for m, pv in zip(t.loss_mask, t.policy_version, strict=True)]
    return out, ""


# -- rule 10 ----------------------------------------------------------------------------------------
def exclude_failures(group: Group) -> tuple[Group, Counter[str]]:
    excluded: Counter[str] = Counter()
    valid = []
    for t in group:
        if t.failure_class in UNTRAINABLE or t.reward is None:
            excluded[t.failure_class] += 1
        else:
            valid.append(t)
    return valid, excluded


# -- rule 11 ----------------------------------------------------------------------------------------
def repair_group(valid: Group, G: int, mode: str = "duplicate") -> Group:
    V = len(valid)
    if mode == "mask":  # no duplicates: the trainer's baseline is over the valid members only
        return list(valid) if 2 * V > G and V >= 2 else []
    if V == G:
        return list(valid)
    if 2 * V <= G:
        return []
    out = list(valid)
    for i in range(G - V):
        src = valid[i % V]
        dup = copy.copy(src)
        dup.trajectory_id = uuid.uuid4().hex[:16]
        dup.duplicate_of = src.trajectory_id
        out.append(dup)
    return out


# -- rule 12 ----------------------------------------------------------------------------------------
def dapo_keep(group: Group) -> bool:
    rewards = [t.reward for t in group if t.reward is not None]
    return bool(rewards) and max(rewards) - min(rewards) > 1e-9


# -- rule 13 ----------------------------------------------------------------------------------------
def grpo_advantages(group: Group, std_norm: bool = True) -> list[float]:
    rewards = [float(t.reward) for t in group]  # type: ignore[arg-type]
    mean = sum(rewards) / len(rewards)
    adv = [r - mean for r in rewards]
    if std_norm and len(rewards) > 1:
        std = math.sqrt(sum(a * a for a in adv) / len(adv))
        if std > 1e-9:
            adv = [a / std for a in adv]
    for t, a in zip(group, adv, strict=True):
        t.advantage = a
    return adv


# -- rule 9 -----------------------------------------------------------------------------------------
def bucket_of(length: int, boundaries: Sequence[int]) -> int:
    return sum(1 for b in boundaries if length >= b)


def select_bucketed(items: Sequence[Group], boundaries: Sequence[int], n: int,
                    length: Callable[[Group], int] = lambda g: max(len(t.token_ids) for t in g)) -> list[Group]:
    """Up to n items: rounds over non-empty buckets in ascending order, the smallest `enqueue_seq`
    of each per round. Deterministic for a given buffer state."""
    buckets: dict[int, list[Group]] = {}
    for g in sorted(items, key=lambda g: g[0].enqueue_seq):
        buckets.setdefault(bucket_of(length(g), boundaries), []).append(g)
    order = sorted(buckets)
    picked: list[Group] = []
    while len(picked) < n and any(buckets[b] for b in order):
        for b in order:
            if buckets[b] and len(picked) < n:
                picked.append(buckets[b].pop(0))
    return picked


@dataclass
class Batch:
    version: int
    groups: list[Group]
    metrics: dict[str, float] = field(default_factory=dict)

    @property
    def trajectories(self) -> list[Trajectory]:
        return [t for g in self.groups for t in g]


def prepare_group(group: Group, version: int, cfg: BufferConfig, stats: Counter[str]) -> Group:
    """Rules 5-7 and 10-13 on one finished group; [] when it does not train."""
    valid, excluded = exclude_failures(group)
    for cls, n in excluded.items():
        stats[f"masked_{cls}"] += n
    kept = []
    for t in valid:
        t2, why = staleness_filter(t, version, cfg)
        if t2 is None:
            stats[f"dropped_{why}"] += 1
        else:
            kept.append(t2)
    repaired = repair_group(kept, cfg.group_size, cfg.repair)
    if not repaired:
        stats["groups_dropped"] += 1
        return []
    if len(kept) < cfg.group_size:
        stats["groups_repaired"] += 1
    if cfg.dapo and not dapo_keep(repaired):
        stats["groups_dapo_filtered"] += 1
        return []
    grpo_advantages(repaired, cfg.std_norm)
    return repaired


class RolloutBuffer:
    """Finished groups in, training batches out (rules 5-13)."""

    def __init__(self, cfg: BufferConfig) -> None:
        self.cfg = cfg
        self.ready: list[Group] = []
        self.running = 0
        self.accepted = 0
        self.batches_served = 0
        self.stats: Counter[str] = Counter()
        self._seq = 0
        self._cond = asyncio.Condition()

    def may_submit(self, version: int) -> bool:
        return may_submit(self.running, self.accepted, version, self.cfg)

    def submitted(self) -> int:
        """A group starts rolling out; returns its enqueue sequence number (generation order)."""
        self.running += 1
        self._seq += 1
        return self._seq

    async def put(self, group: Group, seq: int) -> None:
        for t in group:
            t.enqueue_seq = seq
        async with self._cond:
            self.running -= 1
            self.accepted += 1
            self.ready.append(group)
            self._cond.notify_all()

    async def cancelled(self) -> None:
        async with self._cond:
            self.running -= 1
            self._cond.notify_all()

    def _needed(self) -> int:
        return self.cfg.batch_groups * (self.cfg.prefill_factor if self.batches_served == 0 else 1)

    async def next_batch(self, version: int) -> Batch:
        stats: Counter[str] = Counter()
        out: list[Group] = []
        async with self._cond:
            await self._cond.wait_for(lambda: len(self.ready) >= self._needed())
            while len(out) < self.cfg.batch_groups:
                if not self.ready:
                    await self._cond.wait_for(lambda: bool(self.ready))
                for g in select_bucketed(self.ready, self.cfg.buckets, self.cfg.batch_groups - len(out)):
                    self.ready.remove(g)
                    prepared = prepare_group(g, version, self.cfg, stats)
                    if prepared:
                        out.append(prepared)
                    else:  # a rejected group frees its capacity (AReaL counts only accepted ones)
                        self.accepted -= 1
            self.batches_served += 1
        self.stats.update(stats)
        trajs = [t for g in out for t in g]
        m = {k: float(v) for k, v in stats.items()}
        m["groups"] = len(out)
        m["mean_reward"] = sum(t.reward or 0.0 for t in trajs) / max(1, len(trajs))
        return Batch(version, out, m)
