"""Branched rollouts (`rollout_group(branch_at=k)`): the prefix is played once, then the session is
forked and each member plays on from turn k. Against a real terminal server: the members share the
prefix token for token, and each is judged on its own path (one right, one wrong)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest

from envhub.client import AsyncEnvClient
from envhub.errors import NotSupported
from envhub.rl.codec import ChatCodec, format_call
from envhub.rl.policy import Generation
from envhub.rl.rollout import RolloutConfig, derive_seed, rollout_group, run_episode
from envhub.server.thread import ThreadedServer, serve_in_thread
from tests.conftest import make_settings
from tests.rl.chatml import ChatMLTokenizer

TASK = "terminal/count-error-lines"
RIGHT = "cd /workspace && awk '$3 == \"ERROR\"' logs/app.log | wc -l > error_count.txt"
WRONG = "cd /workspace && echo 0 > error_count.txt"
PREFIX = "cd /workspace && ls logs"
SEEDS = [11, 12]
CFG = RolloutConfig(max_turns=2, per_turn_tokens=256, token_budget=8192, tools=["bash"])


class SeedScriptPolicy:
    """A `Policy` whose output is chosen by the turn's sampling seed (members run concurrently, so
    the order of calls says nothing); it records each prompt it was given, by seed."""

    engine = "scripted"
    version = 1

    def __init__(self, tok: ChatMLTokenizer, by_seed: dict[int, str]) -> None:
        self.tok, self.by_seed = tok, by_seed
        self.prompts: dict[int, list[int]] = {}

    async def generate(self, prompt_ids: list[int], max_tokens: int, seed: int | None = None) -> Generation:
        assert seed is not None
        self.prompts[seed] = list(prompt_ids)
        ids = self.tok.encode(format_call("bash", {"command": self.by_seed[seed]}),
                              add_special_tokens=False) + [self.tok.eos_token_id]
        return Generation(ids, [-0.5] * len(ids), self.version, "stop")


@pytest.fixture(scope="module")
def server() -> Iterator[ThreadedServer]:
    with serve_in_thread(make_settings(families=["terminal", "echo"])) as s:
        yield s


def test_branches_share_the_prefix_token_for_token_and_are_judged_apart(server: ThreadedServer) -> None:
    tok = ChatMLTokenizer()
    prefix_seed = derive_seed("prefix", *SEEDS)
    policy = SeedScriptPolicy(tok, {derive_seed(prefix_seed, 0): PREFIX,
                                    derive_seed(SEEDS[0], 1): RIGHT, derive_seed(SEEDS[1], 1): WRONG})

    plain_seed = 99  # an episode played through without a fork, for what the prefix must be
    policy.by_seed |= {derive_seed(plain_seed, 0): PREFIX, derive_seed(plain_seed, 1): RIGHT}

    async def go():
        async with AsyncEnvClient(server.url, retries=0) as env:
            group = await rollout_group(env, policy, ChatCodec(tok), TASK, 2, cfg=CFG, sampling_seeds=SEEDS,
                                        branch_at=1)
            plain = await run_episode(env, policy, ChatCodec(tok), TASK, cfg=CFG, sampling_seed=plain_seed)
            return group, plain

    (right, wrong), plain = asyncio.run(go())
    assert len(policy.prompts) == 5  # the prefix's turn was sampled once, then each member's, then the plain two
    assert (right.reward, wrong.reward) == (1.0, 0.0), (right.failure_detail, wrong.failure_detail)
    assert right.group_id == wrong.group_id and right.trajectory_id != wrong.trajectory_id
    assert (right.branch_at, wrong.branch_at, right.repeat_index, wrong.repeat_index) == (1, 1, 0, 1)
    # the prefix (prompt, first turn, its observation) is the same tokens in both, and is exactly what
    # each member's second turn was sampled from
    first = policy.prompts[derive_seed(SEEDS[0], 1)]
    assert first == policy.prompts[derive_seed(SEEDS[1], 1)] == policy.prompts[derive_seed(plain_seed, 1)]
    assert right.token_ids == plain.token_ids and plain.reward == 1.0
    assert right.token_ids[:len(first)] == wrong.token_ids[:len(first)] == first
    assert right.loss_mask[:len(first)] == wrong.loss_mask[:len(first)]
    assert right.token_ids[len(first):] != wrong.token_ids[len(first):]
    assert right.gen_s >= 0 and wrong.gen_s >= 0


@pytest.mark.usefixtures("echo_cannot_copy")
def test_a_family_that_cannot_fork_is_told_plainly(server: ThreadedServer) -> None:
    tok = ChatMLTokenizer()
    prefix_seed = derive_seed("prefix", *SEEDS)
    say = format_call("echo", {"message": "hello"})

    async def go():
        async with AsyncEnvClient(server.url, retries=0) as env:
            return await rollout_group(env, _Raw(tok, {derive_seed(prefix_seed, 0): say}), ChatCodec(tok),
                                       "echo/say-done", 2, cfg=RolloutConfig(max_turns=2, tools=["echo"]),
                                       sampling_seeds=SEEDS, branch_at=1)

    with pytest.raises(NotSupported, match="cannot copy a live episode"):
        asyncio.run(go())


class _Raw(SeedScriptPolicy):
    """Answers the scripted text as the model's whole output (a tool call already formatted)."""

    async def generate(self, prompt_ids: list[int], max_tokens: int, seed: int | None = None) -> Generation:
        assert seed is not None
        self.prompts[seed] = list(prompt_ids)
        ids = self.tok.encode(self.by_seed[seed], add_special_tokens=False) + [self.tok.eos_token_id]
        return Generation(ids, [-0.5] * len(ids), self.version, "stop")
