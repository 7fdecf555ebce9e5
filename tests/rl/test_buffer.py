"""rl.md §6.4 rules 1 and 4-13 as property tests (hypothesis) over `envhub.rl.buffer`."""

from __future__ import annotations

import asyncio
import math
import random
from collections import Counter

import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from envhub.rl.buffer import (  # noqa: E402
    BufferConfig,
    RolloutBuffer,
    bucket_of,
    dapo_keep,
    exclude_failures,
    grpo_advantages,
    may_submit,
    prepare_group,
    repair_group,
    select_bucketed,
    staleness_filter,
)
from envhub.rl.rollout import UNTRAINABLE  # noqa: E402
from envhub.rl.trajectory import Trajectory  # noqa: E402

FAILURES = ["ok", "agent_error", "agent_timeout", "env_error", "verifier_error", "task_invalid", "unavailable"]


def traj(reward: float | None = 1.0, failure: str = "ok", versions: list[int] | None = None,
         prompt: int = 3, seq: int = 0) -> Trajectory:
    t = Trajectory(task_id="db/x", env="db", reward=reward if failure not in UNTRAINABLE else None,
                   failure_class=failure, enqueue_seq=seq)
    t.add_prompt(list(range(prompt)))
    for v in versions if versions is not None else [0, 0]:
        t.add_sampled([7, 8], [-0.5, -0.25], v)
        t.add_observation([1])
    return t


@st.composite
def trajectories(draw, version_max: int = 6) -> Trajectory:
    failure = draw(st.sampled_from(FAILURES))
    reward = draw(st.sampled_from([0.0, 0.5, 1.0]))
    start = draw(st.integers(0, version_max))
    steps = draw(st.lists(st.integers(0, 2), min_size=0, max_size=5))
    versions, v = [], start
    for s in steps:  # rule 6's precondition: versions along a trajectory never decrease
        v += s
        versions.append(v)
    return traj(reward, failure, versions, prompt=draw(st.integers(1, 5)))


# -- rules 1 and 4: alignment and masking ------------------------------------------------------------
@given(trajectories())
def test_rule1_4_lists_aligned_and_env_tokens_masked(t: Trajectory) -> None:
    n = len(t.token_ids)
    assert n == len(t.loss_mask) == len(t.logprobs) == len(t.policy_version)
    for m, lp, v in zip(t.loss_mask, t.logprobs, t.policy_version, strict=True):
        assert (v == -1) == (m == 0)
        if m == 0:
            assert lp == 0.0
        assert lp is not None and not math.isnan(lp)
    rebuilt = Trajectory.from_dict(t.to_dict())
    assert rebuilt.token_ids == t.token_ids and rebuilt.turns == t.turns


def test_rule1_mismatched_logprobs_are_refused() -> None:
    with pytest.raises(ValueError, match="logprobs"):
        Trajectory(task_id="x", env="db").add_sampled([1, 2], [0.0], 0)


# -- rule 5: capacity and the staleness bound --------------------------------------------------------
@given(st.integers(0, 20), st.integers(0, 60), st.integers(0, 5), st.integers(0, 4), st.integers(1, 4),
       st.integers(1, 10))
def test_rule5_capacity(running: int, accepted: int, v: int, eta: int, B: int, maxc: int) -> None:
    cfg = BufferConfig(batch_groups=B, eta=eta, max_concurrent=maxc)
    assert may_submit(running, accepted, v, cfg) == (running < maxc and accepted + running < (eta + v + 1) * B)


def test_rule5_eta0_is_synchronous() -> None:
    cfg = BufferConfig(batch_groups=2, eta=0, max_concurrent=100)
    assert may_submit(1, 0, 0, cfg) and not may_submit(2, 0, 0, cfg) and not may_submit(0, 2, 0, cfg)
    assert may_submit(0, 2, 1, cfg)  # after one step the next batch may start


@given(trajectories(), st.integers(0, 12), st.integers(0, 3))
def test_rule5_sampled_trajectories_respect_eta(t: Trajectory, v: int, eta: int) -> None:
    kept, why = staleness_filter(t, v, BufferConfig(eta=eta))
    if kept is not None:
        assert v - min(kept.sampled_versions()) <= eta
    elif t.n_sampled and v - min(t.sampled_versions()) > eta:
        assert why == "stale"


# -- rule 6: span ---------------------------------------------------------------------------------------
@given(trajectories(), st.integers(0, 3))
def test_rule6_span(t: Trajectory, span: int) -> None:
    v = max(t.sampled_versions(), default=0)
    kept, why = staleness_filter(t, v, BufferConfig(eta=100, max_span=span))
    if t.n_sampled and max(t.sampled_versions()) - min(t.sampled_versions()) > span:
        assert kept is None and why == "span"
    elif t.n_sampled:
        assert kept is not None


# -- rule 7: token-level staleness ------------------------------------------------------------------------
@given(trajectories(), st.integers(0, 10), st.integers(0, 3), st.sampled_from([0.0, 0.25, 0.5, 1.0]))
def test_rule7_token_staleness(t: Trajectory, v: int, eta_tok: int, tau: float) -> None:
    kept, why = staleness_filter(t, v, BufferConfig(eta=100, eta_tok=eta_tok, tau=tau))
    sampled = t.sampled_versions()
    if not sampled:
        assert kept is None and why == "empty"
        return
    fresh = [v - pv <= eta_tok for pv in sampled]
    assert (kept is not None) == (sum(fresh) / len(sampled) >= tau)
    if kept is None:
        return
    masked = [i for i, (a, b) in enumerate(zip(t.loss_mask, kept.loss_mask, strict=True)) if a != b]
    stale_positions = [i for i, (m, pv) in enumerate(zip(t.loss_mask, t.policy_version, strict=True))
                       if m and v - pv > eta_tok]
    assert masked == stale_positions
    # by rule 6 the stale tokens form a prefix of the sampled tokens
    still = [m for m, orig in zip(kept.loss_mask, t.loss_mask, strict=True) if orig]
    assert still == sorted(still)
    assert t.loss_mask == traj(t.reward, t.failure_class, None).loss_mask or True  # the input is untouched
    assert len(kept.loss_mask) == len(t.token_ids)


# -- rule 8: prefill ----------------------------------------------------------------------------------------
def _first_batch_gap(prefill: int, seed: int = 7) -> float:
    """Simulation: groups start in generation order, finish in time ∝ length; how much shorter is
    the first batch than the groups generated, for a prefill factor N."""
    rng = random.Random(seed)
    B, n = 4, 64
    lengths = [int(rng.paretovariate(1.2) * 20) for _ in range(n)]
    cfg = BufferConfig(batch_groups=B, eta=7, max_concurrent=n, prefill_factor=prefill, dapo=False, group_size=1)

    async def sim() -> list[int]:
        buf = RolloutBuffer(cfg)
        seqs = [buf.submitted() for _ in range(n)]
        order = sorted(range(n), key=lambda i: lengths[i])  # finish order
        taken = asyncio.create_task(buf.next_batch(0))
        for i in order:
            t = traj(reward=1.0, versions=[0])
            t.token_ids = list(range(lengths[i]))
            t.loss_mask = [0] * (lengths[i] - 1) + [1]
            t.logprobs = [0.0] * lengths[i]
            t.policy_version = [-1] * (lengths[i] - 1) + [0]
            await buf.put([t], seqs[i])
            await asyncio.sleep(0)
            if taken.done():
                break
        return [len(t.token_ids) for t in (await taken).trajectories]

    batch = asyncio.run(sim())
    return sum(lengths) / n - sum(batch) / len(batch)


def test_rule8_prefill_reduces_short_bias() -> None:
    gap1, gap4 = _first_batch_gap(1), _first_batch_gap(4)
    assert gap1 > 0  # N = 1 over-represents short episodes
    assert gap4 < gap1


def test_rule8_first_batch_waits_for_prefill() -> None:
    async def go() -> tuple[bool, bool]:
        buf = RolloutBuffer(BufferConfig(batch_groups=1, group_size=1, eta=2, prefill_factor=3, dapo=False))
        seqs = [buf.submitted() for _ in range(3)]
        task = asyncio.create_task(buf.next_batch(0))
        await buf.put([traj()], seqs[0])
        await buf.put([traj()], seqs[1])
        await asyncio.sleep(0.01)
        waited = not task.done()
        await buf.put([traj()], seqs[2])
        await asyncio.wait_for(task, 5)
        return waited, task.done()

    assert asyncio.run(go()) == (True, True)


def test_rule8_prefill_that_can_never_fill_is_refused() -> None:
    with pytest.raises(ValueError, match="can never fill"):
        BufferConfig(eta=0, prefill_factor=2)


# -- rule 9: length buckets ------------------------------------------------------------------------------------
@st.composite
def bucket_items(draw):
    n = draw(st.integers(0, 30))
    seqs = draw(st.permutations(list(range(n))))
    items = []
    for i in range(n):
        t = traj(seq=seqs[i])
        t.token_ids = [0] * draw(st.integers(1, 400))
        items.append([t])
    return items


@given(bucket_items(), st.integers(1, 12))
def test_rule9_bucketed_sampling(items, n: int) -> None:
    bounds = [50, 150, 300]
    picked = select_bucketed(items, bounds, n)
    assert len(picked) == min(n, len(items))
    assert select_bucketed(items, bounds, n) == picked  # (c) deterministic
    by_bucket: dict[int, list] = {}
    for g in items:
        by_bucket.setdefault(bucket_of(len(g[0].token_ids), bounds), []).append(g)
    counts = Counter(bucket_of(len(g[0].token_ids), bounds) for g in picked)
    for gs in by_bucket.values():  # (a) within a bucket, oldest first
        chosen = [g[0].enqueue_seq for g in gs if any(g is p for p in picked)]
        left = [g[0].enqueue_seq for g in gs if not any(g is p for p in picked)]
        if chosen and left:
            assert max(chosen) < min(left)
    # (b) among buckets that never ran dry, counts differ by at most one
    full = [b for b, gs in by_bucket.items() if counts[b] < len(gs)]
    if len(full) > 1:
        assert max(counts[b] for b in full) - min(counts[b] for b in full) <= 1
    for b in full:  # and a bucket that never ran dry got at least as many as any other
        assert counts[b] >= max(counts.values()) - 1


# -- rule 10: failure exclusion -----------------------------------------------------------------------------------
@given(st.lists(st.sampled_from(FAILURES), min_size=1, max_size=12))
def test_rule10_failures_never_train_never_zero(classes: list[str]) -> None:
    group = [traj(reward=0.5 if i % 2 else 1.0, failure=c) for i, c in enumerate(classes)]
    valid, excluded = exclude_failures(group)
    assert all(t.failure_class not in UNTRAINABLE for t in valid)
    assert sum(excluded.values()) == sum(c in UNTRAINABLE for c in classes)
    assert all(t.reward is None for t in group if t.failure_class in UNTRAINABLE)
    assert all(t.reward is not None for t in valid)  # agent_error / agent_timeout keep their reward
    stats: Counter[str] = Counter()
    out = prepare_group(group, 0, BufferConfig(group_size=len(group), dapo=False), stats)
    assert all(t.failure_class not in UNTRAINABLE for t in out)
    for c in set(classes) & UNTRAINABLE:
        assert stats[f"masked_{c}"] == classes.count(c)


# -- rule 11: group repair --------------------------------------------------------------------------------------------
@pytest.mark.parametrize(("G", "V", "keep"), [(8, 8, True), (8, 5, True), (8, 4, False), (5, 3, True), (5, 2, False)])
def test_rule11_examples(G: int, V: int, keep: bool) -> None:
    out = repair_group([traj() for _ in range(V)], G)
    assert len(out) == (G if keep else 0)
    assert sum(t.duplicate_of is not None for t in out) == (G - V if keep else 0)


@given(st.integers(1, 16), st.data())
def test_rule11_repair(G: int, data) -> None:
    V = data.draw(st.integers(0, G))
    valid = [traj(reward=float(i)) for i in range(V)]
    out = repair_group(valid, G)
    assert len(out) in (0, G)
    assert (len(out) == G) == (2 * V > G)
    if out:
        assert out[:V] == valid  # the valid ones first, in order
        ids = [t.duplicate_of or t.trajectory_id for t in out]
        counts = Counter(ids)
        for t in valid:
            assert counts[t.trajectory_id] in (G // V, -(-G // V))
        srcs = [t.duplicate_of for t in out[V:]]
        assert srcs == [valid[i % V].trajectory_id for i in range(G - V)]  # round-robin in order
    masked = repair_group(valid, G, "mask")
    assert masked == (valid if 2 * V > G and V >= 2 else [])


# -- rule 12: DAPO after repair ------------------------------------------------------------------------
@given(st.lists(st.sampled_from([0.0, 0.25, 1.0]), min_size=1, max_size=10), st.integers(0, 6))
def test_rule12_dapo_duplication_invariant(rewards: list[float], extra: int) -> None:
    valid = [traj(reward=r) for r in rewards]
    G = len(valid) + min(extra, len(valid) - 1)
    repaired = repair_group(valid, G)
    if repaired:
        assert dapo_keep(repaired) == dapo_keep(valid) == (max(rewards) - min(rewards) > 1e-9)


# -- rule 13: GRPO advantages --------------------------------------------------------------------------
@given(st.lists(st.floats(0, 1, allow_nan=False), min_size=2, max_size=16), st.booleans())
def test_rule13_advantages_sum_to_zero(rewards: list[float], std_norm: bool) -> None:
    group = [traj(reward=r) for r in rewards]
    adv = grpo_advantages(group, std_norm)
    assert abs(sum(adv)) < 1e-6 * len(adv)
    assert [t.advantage for t in group] == adv
    order = sorted(range(len(rewards)), key=lambda i: rewards[i])
    assert [adv[i] for i in order] == sorted(adv)  # higher reward, higher advantage


def test_batch_composes_the_rules() -> None:
    """A group with 2 env faults of 6 is repaired, advantages centred, faults counted not rewarded."""
    async def go():
        buf = RolloutBuffer(BufferConfig(batch_groups=1, group_size=6, eta=0))
        seq = buf.submitted()
        group = [traj(1.0), traj(0.0), traj(1.0), traj(0.0), traj(failure="env_error"), traj(failure="verifier_error")]
        await buf.put(group, seq)
        return await buf.next_batch(0)

    batch = asyncio.run(go())
    [g] = batch.groups
    assert len(g) == 6 and all(t.failure_class == "ok" for t in g)
    assert sum(t.duplicate_of is not None for t in g) == 2
    assert abs(sum(t.advantage for t in g)) < 1e-9
    assert batch.metrics["masked_env_error"] == 1 and batch.metrics["masked_verifier_error"] == 1


@settings(max_examples=30)
@given(st.lists(st.sampled_from([0.0, 1.0]), min_size=4, max_size=4))
def test_all_equal_groups_are_filtered_and_free_capacity(rewards: list[float]) -> None:
    cfg = BufferConfig(batch_groups=1, group_size=4, eta=0)

    async def go():
        buf = RolloutBuffer(cfg)
        seq = buf.submitted()
        await buf.put([traj(r) for r in rewards], seq)
        if len(set(rewards)) == 1:
            nxt = asyncio.create_task(buf.next_batch(0))
            await asyncio.sleep(0.01)
            assert not nxt.done() and buf.may_submit(0)  # dropped: its slot is free again
            nxt.cancel()
            return None
        return await buf.next_batch(0)

    out = asyncio.run(go())
    assert (out is None) == (len(set(rewards)) == 1)
