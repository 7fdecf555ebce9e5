"""Rollouts over `AsyncEnvClient`: one episode → one token-exact `Trajectory`; a group of G.

Every server failure class is carried through: `env_error`, `verifier_error`, `task_invalid` and
`unavailable` end the episode with reward `None` (excluded from training, never a 0); one failed
rollout never aborts its group. A malformed tool call is the policy's: an `agent_error` turn fed
back to the model, and the episode goes on.

Sampling is seeded per episode: turn k of an episode with sampling seed s samples with
`derive_seed(s, k)`, so a re-run of a failed episode (`rollout_group(retries=...)`) samples what
the failed attempt would have, given the same weights. A group may share its first turns
(`rollout_group(branch_at=k)`): played once, then forked on the hub.
"""

from __future__ import annotations

import asyncio
import copy
import hashlib
import time
import uuid
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from typing import Any, TypeVar

import aiohttp

from envhub.client import AsyncEnvClient
from envhub.errors import AgentError, EnvhubError, FailureClass
from envhub.rl.codec import ChatCodec, parse_tool_call
from envhub.rl.policy import Policy
from envhub.rl.trajectory import Trajectory

T = TypeVar("T")
UNTRAINABLE = frozenset(c.value for c in FailureClass if not c.trainable)


def derive_seed(*parts: object) -> int:
    """A 63-bit seed from its parts (run seed, group, member, turn...), the same in every process."""
    digest = hashlib.blake2b("/".join(map(str, parts)).encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") >> 1


@dataclass
class RolloutConfig:
    max_turns: int = 8
    per_turn_tokens: int = 256  # rl.md rule 16: max_tokens = min(per_turn, budget - len(prompt))
    token_budget: int = 4096
    #: a call to one of these ends the episode (db's answers; the server leaves the session open)
    final_tools: Sequence[str] = ("submit_answer", "refuse")
    #: render only these tools (None = all the session's tools): shorter prompts for small models
    tools: Sequence[str] | None = None
    system: str | None = None
    harness: str | None = None
    lease_s: float | None = 600
    #: the training run the episodes belong to (`/v1/runs`): sent on every reset, kept with each episode
    run_id: str | None = None
    #: the share of a run's verified episodes whose final state the hub judges a second time before
    #: the session closes (`reverify_sampled`: seeded by the UTC day, the run and the session); the
    #: run's `verifier_disagreement` counts the verdicts that flipped. 0 turns it off; no run, none.
    reverify_rate: float = 0.05
    extra: dict[str, Any] = field(default_factory=dict)


def reverify_sampled(rate: float, run_id: str, session_id: str, day: date | None = None) -> bool:
    """Whether an episode of run `run_id` is in the day's re-verification sample: a fixed share
    `rate` of sessions, chosen by a hash of (UTC day, run, session), so any process reaches the same
    choice for the same episode on the same day."""
    if rate <= 0:
        return False
    day = day or datetime.now(UTC).date()
    return derive_seed("reverify", day.isoformat(), run_id, session_id) < rate * 2**63


def budget_for_turn(cfg: RolloutConfig, context_len: int) -> int:
    return min(cfg.per_turn_tokens, cfg.token_budget - context_len)


class _Episode:
    """One episode's session and trajectory as it is played: started by a reset (`start`) or a fork
    (`rollout_group(branch_at=...)`), played turn by turn (`play`), judged (`judge`), closed."""

    def __init__(self, env: AsyncEnvClient, policy: Policy, codec: ChatCodec, cfg: RolloutConfig,
                 traj: Trajectory) -> None:
        self.env, self.policy, self.codec, self.cfg, self.traj = env, policy, codec, cfg, traj
        self.session_id: str | None = None
        self.t_env = 0.0

    async def start(self, seed: int | None) -> None:
        cfg, traj = self.cfg, self.traj
        t0 = time.monotonic()
        created = await self.env.reset(traj.env, task_id=traj.task_id, seed=seed, harness=cfg.harness,
                                       lease_s=cfg.lease_s, policy_version=str(self.policy.version),
                                       run_id=cfg.run_id, **cfg.extra)
        self.t_env += time.monotonic() - t0
        self.session_id = created.session_id
        tools = [t.model_dump(by_alias=True) for t in created.tools]
        if cfg.tools is not None:
            tools = [t for t in tools if t["name"] in cfg.tools]
        traj.add_prompt(self.codec.initial(created.observation.text or created.task.prompt, tools, cfg.system))

    async def play(self, turns: range, sampling_seed: int | None) -> str | None:
        """Turns `turns` of the episode: how it finished, or None when it went on past them; an
        untrainable step (env_error & co) ends it here, its trajectory marked (`finish_reason` "error")."""
        cfg, traj, codec, policy = self.cfg, self.traj, self.codec, self.policy
        assert self.session_id is not None
        for turn in turns:
            max_tokens = budget_for_turn(cfg, len(traj.token_ids))
            if max_tokens <= 0:  # rule 16: end before the engine could refuse an overflowing request
                return "budget"
            t0 = time.monotonic()
            turn_seed = None if sampling_seed is None else derive_seed(sampling_seed, turn)
            gen = await policy.generate(traj.token_ids, max_tokens, seed=turn_seed)
            traj.gen_s += time.monotonic() - t0
            traj.num_turns += 1
            try:
                call = parse_tool_call(codec.decode(gen.token_ids))
            except AgentError as e:
                traj.add_sampled(gen.token_ids, gen.logprobs, gen.policy_version, failure="agent_error")
                traj.num_tool_errors += 1
                obs_text = f"error: {e.detail}"
                if gen.finish_reason == "length" and budget_for_turn(cfg, len(traj.token_ids)) <= 0:
                    return "length"
                _append_observation(traj, codec, gen.token_ids, obs_text)
                continue
            traj.add_sampled(gen.token_ids, gen.logprobs, gen.policy_version, tool=call.tool)
            t0 = time.monotonic()
            res = await self.env.step(self.session_id, call.tool, **call.arguments)
            self.t_env += time.monotonic() - t0
            if not res.trainable:  # env_error & co: the episode is not the policy's to be judged on
                traj.failure_class = res.failure.value
                traj.failure_detail = res.observation.text[:500]
                traj.finish_reason = "error"
                traj.retryable = res.retryable
                return "error"
            if res.failure != FailureClass.ok:
                traj.num_tool_errors += 1
                traj.turns[-1].failure = res.failure.value
            if call.tool in cfg.final_tools or res.done:
                # A budget cut (`truncated`) stops the episode without a terminal state: it is still
                # verified (the state so far is judged), but recorded as cut off, not as ended.
                # The turn is closed so the record renders as a whole conversation.
                traj.add_observation(codec.closing(gen.token_ids))
                return "stop" if call.tool in cfg.final_tools else "env_done" if res.terminated else "truncated"
            _append_observation(traj, codec, gen.token_ids, res.observation.text)
        return None

    async def judge(self, finish: str) -> None:
        """The verdict on the episode's final state (and, for a sampled episode, a second one)."""
        traj, env, cfg = self.traj, self.env, self.cfg
        assert self.session_id is not None
        traj.finish_reason = finish
        sampled = cfg.run_id is not None and reverify_sampled(cfg.reverify_rate, cfg.run_id, self.session_id)
        t0 = time.monotonic()
        verdict = await (env.verify(self.session_id, keep_state=True) if sampled else env.verify(self.session_id))
        self.t_env += time.monotonic() - t0
        traj.failure_class = verdict.failure_class.value
        traj.failure_detail = verdict.detail[:500]
        traj.passed = verdict.passed
        traj.checks = [c.model_dump() for c in verdict.checks]
        traj.reward = float(verdict.reward) if verdict.trainable else None
        traj.retryable = not verdict.trainable and verdict.retryable
        if sampled and verdict.trainable:
            try:  # not env time the policy's episode cost: left out of env_s
                traj.reverify_flipped = (await env.reverify(self.session_id)).flipped
            except EnvhubError:  # no state was kept (e.g. agent_timeout at export): the verdict stands
                pass

    async def close(self) -> None:
        self.traj.env_s = self.t_env
        if self.session_id is not None:
            try:
                await self.env.close_session(self.session_id)
            except Exception:  # noqa: BLE001 - the lease reaps it; the trajectory stands
                pass
            self.session_id = None


async def _guarded(episode: _Episode, body: Awaitable[T]) -> T | None:
    """`body`'s answer (a coroutine playing `episode`); a fault ends the trajectory with its class
    and answers None."""
    traj = episode.traj
    try:
        return await body
    except EnvhubError as e:  # a refused request (4xx, no failure class) is not the policy's and won't pass later
        _fail(traj, (e.failure_class or FailureClass.env_error).value, e.detail, e.retryable)
    except (TimeoutError, aiohttp.ClientError, OSError) as e:  # the policy backend's transport (the env
        # client's transport faults come as ConnectionFailed, an EnvhubError: above)
        _fail(traj, FailureClass.unavailable.value, f"{type(e).__name__}: {e}", True)
    except asyncio.CancelledError:
        raise
    except Exception as e:  # a policy backend fault: no policy output could have caused it
        _fail(traj, FailureClass.unavailable.value, f"rollout crashed: {type(e).__name__}: {e}", True)
    return None


def _trajectory(policy: Policy, cfg: RolloutConfig, task_id: str, seed: int | None, group_id: str,
                repeat_index: int, sampling_seed: int | None) -> Trajectory:
    return Trajectory(task_id=task_id, env=task_id.split("/", 1)[0], group_id=group_id, repeat_index=repeat_index,
                      episode_seed=seed, engine=getattr(policy, "engine", ""),
                      sampling={"per_turn_tokens": cfg.per_turn_tokens, "token_budget": cfg.token_budget,
                                "temperature": getattr(policy, "temperature", None), "seed": sampling_seed})


async def run_episode(env: AsyncEnvClient, policy: Policy, codec: ChatCodec, task_id: str, *,
                      cfg: RolloutConfig | None = None, seed: int | None = None, group_id: str = "",
                      repeat_index: int = 0, sampling_seed: int | None = None) -> Trajectory:
    """One episode. `seed` goes to the environment's reset; `sampling_seed` seeds the policy's
    sampling (turn k: `derive_seed(sampling_seed, k)`); None leaves sampling unseeded."""
    cfg = cfg or RolloutConfig()
    episode = _Episode(env, policy, codec, cfg,
                       _trajectory(policy, cfg, task_id, seed, group_id, repeat_index, sampling_seed))

    async def body() -> None:
        await episode.start(seed)
        finish = await episode.play(range(cfg.max_turns), sampling_seed)
        if finish != "error":
            await episode.judge(finish or "max_turns")

    try:
        await _guarded(episode, body())
    finally:
        await episode.close()
    return episode.traj


def _append_observation(traj: Trajectory, codec: ChatCodec, sampled: list[int], text: str) -> None:
    traj.add_observation(codec.closing(sampled) + codec.observation(text))


def _fail(traj: Trajectory, failure_class: str, detail: str, retryable: bool) -> None:
    traj.failure_class = failure_class
    traj.failure_detail = detail[:500]
    traj.finish_reason = "error"
    traj.retryable = retryable and failure_class in UNTRAINABLE
    if failure_class in UNTRAINABLE:
        traj.reward = None


async def rollout_group(env: AsyncEnvClient, policy: Policy, codec: ChatCodec, task_id: str, G: int, *,
                        cfg: RolloutConfig | None = None, seed: int | None = None,
                        sampling_seeds: Sequence[int] | None = None, retries: int = 0,
                        limit: asyncio.Semaphore | None = None, branch_at: int | None = None) -> list[Trajectory]:
    """G episodes of one task, concurrently (under `limit`, the concurrency cap); member i samples
    with `sampling_seeds[i]` (unseeded without them).

    An episode that ends in a fault no policy can cause and that may pass on a second try
    (`env_error`, `unavailable`, `verifier_error` as the server classes them retryable; not
    `task_invalid`, a refused request or the agent's own classes) is run again, with the same
    sampling seed, up to `retries` times: tinker-cookbook's RetryOnFailure (rl.md §2.4), so the
    buffer repairs or drops only what still failed. The failed attempts stay masked (no reward);
    their classes are listed in the returned trajectory's `retried_failures`.

    With `branch_at=k`, the first k turns are played once (sampled with a seed derived from the
    group's seeds), then the session is forked (`POST /v1/sessions/{id}/fork`) and member i plays on
    from turn k with its own seed: the G trajectories share the prefix token for token, each is
    judged on its whole path, and the buffer's advantages compare them within the group. A retried
    member forks the prefix again. A prefix that ends the episode before turn k leaves one
    trajectory, the group's only one. A family that cannot fork raises `NotSupported`."""
    if sampling_seeds is not None and len(sampling_seeds) != G:
        raise ValueError(f"{len(sampling_seeds)} sampling seeds for a group of {G}")
    cfg = cfg or RolloutConfig()
    group_id = uuid.uuid4().hex[:12]
    if branch_at is not None:
        return await _branched(env, policy, codec, task_id, G, cfg, seed, sampling_seeds, retries, limit,
                               group_id, branch_at)

    async def attempt(i: int) -> Trajectory:
        s = None if sampling_seeds is None else sampling_seeds[i]
        if limit is None:
            return await run_episode(env, policy, codec, task_id, cfg=cfg, seed=seed, group_id=group_id,
                                     repeat_index=i, sampling_seed=s)
        async with limit:
            return await run_episode(env, policy, codec, task_id, cfg=cfg, seed=seed, group_id=group_id,
                                     repeat_index=i, sampling_seed=s)

    return await _with_retries(attempt, G, retries)


async def _with_retries(attempt: Callable[[int], Awaitable[Trajectory]], G: int,
                        retries: int) -> list[Trajectory]:
    async def one(i: int) -> Trajectory:
        failed: list[str] = []
        while True:
            t = await attempt(i)
            if t.trainable or not t.retryable or len(failed) >= retries:
                t.retried_failures = failed
                return t
            failed.append(t.failure_class)

    return list(await asyncio.gather(*(one(i) for i in range(G))))


async def _branched(env: AsyncEnvClient, policy: Policy, codec: ChatCodec, task_id: str, G: int,
                    cfg: RolloutConfig, seed: int | None, sampling_seeds: Sequence[int] | None, retries: int,
                    limit: asyncio.Semaphore | None, group_id: str, branch_at: int) -> list[Trajectory]:
    prefix_seed = None if sampling_seeds is None else derive_seed("prefix", *sampling_seeds)
    prefix = _Episode(env, policy, codec, cfg, _trajectory(policy, cfg, task_id, seed, group_id, 0, prefix_seed))

    async def play_prefix() -> bool:
        """Whether the episode goes on past the branch point (else it ended there, judged, or failed)."""
        await prefix.start(seed)
        finish = await prefix.play(range(min(branch_at, cfg.max_turns)), prefix_seed)
        if finish not in (None, "error"):
            await prefix.judge(finish)
        return finish is None

    try:
        if not await _guarded(prefix, play_prefix()):  # a fault answers None
            return [prefix.traj]
        assert prefix.session_id is not None
        forked = await env.fork(prefix.session_id, G)  # NotSupported: the family cannot copy a live state
        spare = [f.session_id for f in forked]

        async def attempt(i: int) -> Trajectory:
            s = None if sampling_seeds is None else sampling_seeds[i]
            traj = copy.deepcopy(prefix.traj)
            traj.trajectory_id, traj.repeat_index, traj.branch_at = uuid.uuid4().hex[:16], i, branch_at
            traj.sampling = {**traj.sampling, "seed": s}
            if i:  # the prefix's costs are counted once, with member 0
                traj.gen_s = 0.0
            branch = _Episode(env, policy, codec, cfg, traj)
            if i == 0:
                branch.t_env = prefix.t_env

            async def play() -> None:
                branch.session_id = spare.pop() if spare else (await env.fork(prefix.session_id, 1))[0].session_id
                done = await branch.play(range(branch_at, cfg.max_turns), s)
                if done != "error":
                    await branch.judge(done or "max_turns")

            try:
                if limit is None:
                    await _guarded(branch, play())
                else:
                    async with limit:
                        await _guarded(branch, play())
            finally:
                await branch.close()
            return traj

        return await _with_retries(attempt, G, retries)
    finally:
        await prefix.close()
