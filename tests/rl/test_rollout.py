"""Rollouts against a real db server: token exactness (rule 2), failure classes carried through,
malformed calls as agent_error turns, the budget (rule 16), fault injection masked end to end,
infra faults retried with the episode's sampling seed."""

from __future__ import annotations

import asyncio
import json

import pytest

from envhub.client import AsyncEnvClient
from envhub.rl.codec import ChatCodec, format_call
from envhub.rl.policy import Generation
from envhub.rl.rollout import RolloutConfig, derive_seed, rollout_group, run_episode
from envhub.rl.trajectory import read_jsonl, write_jsonl
from envhub.server.thread import serve_in_thread
from tests.conftest import echo_with_step_budget, make_settings
from tests.rl.conftest import ScriptedPolicy

TASK = "db/bank/ask-balance-001"
ANSWER = "22806.26"
CFG = RolloutConfig(tools=["search_accounts", "submit_answer"], max_turns=4, per_turn_tokens=128)


def enc(tok, text: str) -> list[int]:
    return tok.encode(text, add_special_tokens=False)


def call(tok, tool: str, **args) -> list[int]:
    return enc(tok, format_call(tool, args)) + [tok.eos_token_id]


def run(url: str, policy, tok, task: str = TASK, cfg: RolloutConfig = CFG):
    async def go():
        async with AsyncEnvClient(url, retries=0) as env:
            return await run_episode(env, policy, ChatCodec(tok), task, cfg=cfg)
    return asyncio.run(go())


def test_oracle_episode_is_token_exact_and_rewarded(db_server, tokenizer, noncanonical) -> None:
    """Rule 2: each prompt sent to the engine is a prefix of the final ids; the sampled ids, including
    non-canonical ones (that read "hello world"), sit verbatim at mask 1."""
    tok = tokenizer
    first_turn = (enc(tok, '<tool_call>\n{"name": "search_accounts", "arguments": {"number": "ACC-101961", '
                           '"note": "') + noncanonical + enc(tok, '"}}\n</tool_call>') + [tok.eos_token_id])
    turns = [first_turn, call(tok, "submit_answer", answer=ANSWER)]
    policy = ScriptedPolicy([list(t) for t in turns], tok.eos_token_id)
    t = run(db_server.url, policy, tok)
    assert t.failure_class == "ok" and t.reward == 1.0 and t.passed and t.finish_reason == "stop"
    assert len(policy.prompts) == 2
    sampled_turns = [tr for tr in t.turns if tr.role == "assistant"]
    for prompt, tr, ids in zip(policy.prompts, sampled_turns, turns, strict=True):
        assert t.token_ids[:len(prompt)] == prompt
        assert tr.start == len(prompt)
        assert t.token_ids[tr.start:tr.end] == ids
        assert set(t.loss_mask[tr.start:tr.end]) == {1}
        assert t.policy_version[tr.start:tr.end] == [3] * len(ids)
    first = t.token_ids[sampled_turns[0].start:sampled_turns[0].end]
    n = len(noncanonical)
    assert any(first[i:i + n] == noncanonical for i in range(len(first)))
    assert sum(t.loss_mask) == sum(len(x) for x in turns)  # everything else is masked (rule 4)
    assert t.prompt_len == len(policy.prompts[0])


def test_malformed_call_is_an_agent_error_turn_not_a_crash(db_server, tokenizer) -> None:
    tok = tokenizer
    turns = [enc(tok, "I think the balance is high.") + [tok.eos_token_id],
             enc(tok, '<tool_call>{"name": broken</tool_call>') + [tok.eos_token_id],
             call(tok, "submit_answer", answer="0")]
    policy = ScriptedPolicy(turns, tok.eos_token_id)
    t = run(db_server.url, policy, tok)
    assert t.num_tool_errors == 2 and [tr.failure for tr in t.turns if tr.role == "assistant"][:2] == \
        ["agent_error", "agent_error"]
    assert t.failure_class == "ok" and t.reward == 0.0  # judged, trainable, the wrong answer scores 0
    assert "no tool call found" in tok.decode(policy.prompts[1][len(policy.prompts[0]):])


def test_budget_ends_the_episode_before_the_engine(db_server, tokenizer) -> None:
    """Rule 16: per-turn max_tokens = min(cap, budget - context); ≤ 0 → finish "budget", no engine call."""
    tok = tokenizer
    policy = ScriptedPolicy([call(tok, "search_accounts", number="ACC-101961")], tok.eos_token_id)
    cfg = RolloutConfig(tools=CFG.tools, per_turn_tokens=128, token_budget=10)
    t = run(db_server.url, policy, tok, cfg=cfg)
    assert t.finish_reason == "budget" and policy.prompts == []
    assert t.failure_class == "ok" and t.reward == 0.0  # out of budget is the policy's own outcome


def test_the_tasks_step_budget_stops_the_episode_as_truncated(tokenizer, tmp_path) -> None:
    """The server's step budget cuts the episode off (`truncated`): the rollout stops, still verifies
    (the state so far is judged, trainable), and records the ending as a cut, not a terminal state."""
    tok = tokenizer
    policy = ScriptedPolicy([call(tok, "echo", message="done") for _ in range(3)], tok.eos_token_id)
    settings = make_settings(families=["echo"], tasks_dir=echo_with_step_budget(tmp_path, 2), store_enabled=False)
    with serve_in_thread(settings) as server:
        t = run(server.url, policy, tok, task="echo/say-done", cfg=RolloutConfig(tools=["echo"], max_turns=8))
    assert t.finish_reason == "truncated" and t.num_turns == 3 and policy.turns == []
    assert t.failure_class == "ok" and t.trainable and t.reward == 1.0  # judged: "done" was said in the budget
    assert [tr.failure for tr in t.turns if tr.role == "assistant"] == ["ok", "ok", "agent_timeout"]


def test_unknown_task_is_not_trainable_and_gets_no_reward(db_server, tokenizer) -> None:
    policy = ScriptedPolicy([], tokenizer.eos_token_id)
    t = run(db_server.url, policy, tokenizer, task="db/bank/no-such-task")
    assert t.failure_class != "ok" and not t.trainable and t.reward is None and t.finish_reason == "error"


@pytest.mark.parametrize("op", ["reset", "step", "verify"])
def test_injected_faults_are_env_errors_never_zero(tokenizer, op: str) -> None:
    tok = tokenizer
    with serve_in_thread(make_settings(families=["db"], fault_rate=1.0, fault_ops=[op])) as server:
        policy = ScriptedPolicy([call(tok, "search_accounts", number="ACC-101961"),
                                 call(tok, "submit_answer", answer=ANSWER)], tok.eos_token_id)
        t = run(server.url, policy, tok)
        assert server.hub.manager.faults.injected[op] >= 1
    assert t.failure_class == "env_error" and t.reward is None and not t.trainable
    assert "injected" in t.failure_detail


def test_fault_injection_is_off_by_default() -> None:
    assert make_settings().fault_rate == 0.0


def test_bad_fault_ops_are_refused_clearly() -> None:
    from envhub.core.faults import FaultInjector

    with pytest.raises(ValueError, match="unknown operation"):
        FaultInjector(make_settings(fault_rate=0.5, fault_ops=["stpe"]))


def test_group_survives_faults_and_exports_jsonl(tokenizer, tmp_path) -> None:
    """Half the operations fail: the group still returns G trajectories, each fault masked."""
    tok = tokenizer
    G = 6
    turns = [call(tok, "submit_answer", answer=ANSWER) for _ in range(G)]
    with serve_in_thread(make_settings(families=["db"], fault_rate=0.5, fault_seed=1)) as server:
        async def go():
            async with AsyncEnvClient(server.url, retries=0) as env:
                return await rollout_group(env, ScriptedPolicy(turns, tok.eos_token_id), ChatCodec(tok), TASK, G,
                                           cfg=CFG, limit=asyncio.Semaphore(3))
        group = asyncio.run(go())
    assert len(group) == G and len({t.group_id for t in group}) == 1
    classes = {t.failure_class for t in group}
    assert "env_error" in classes
    for t in group:
        assert (t.reward is None) == (t.failure_class == "env_error")
        if t.failure_class == "ok":
            assert t.reward == 1.0
    path = tmp_path / "trajectories.jsonl"
    assert write_jsonl(group, path) == G
    back = list(read_jsonl(path))
    assert [b.token_ids for b in back] == [t.token_ids for t in group]
    assert json.loads(path.read_text().splitlines()[0])["schema_version"] == 1


class Answering:
    """A policy that always makes the same call and records the sampling seed of each request."""

    engine = "scripted"
    version = 0

    def __init__(self, ids: list[int]) -> None:
        self.ids = ids
        self.seeds: list[int | None] = []

    async def generate(self, prompt_ids: list[int], max_tokens: int, seed: int | None = None) -> Generation:
        self.seeds.append(seed)
        return Generation(list(self.ids), [-0.5] * len(self.ids), self.version, "stop")


def group_against(url: str, policy, tok, task: str, G: int, retries: int, seeds: list[int] | None = None):
    async def go():
        async with AsyncEnvClient(url, retries=0) as env:
            return await rollout_group(env, policy, ChatCodec(tok), task, G, cfg=CFG, retries=retries,
                                       sampling_seeds=seeds, limit=asyncio.Semaphore(3))
    return asyncio.run(go())


@pytest.fixture
def answering(tokenizer) -> Answering:
    return Answering(call(tokenizer, "submit_answer", answer=ANSWER))


def test_retries_rerun_infra_faults_with_the_same_seed(answering, tokenizer) -> None:
    """Half the steps fail: a failed episode is re-run (same sampling seed) up to `retries` times
    before the group is handed over; every injected fault is one masked attempt, none a reward."""
    G, retries = 6, 3
    seeds = [derive_seed("t", i) for i in range(G)]
    with serve_in_thread(make_settings(families=["db"], fault_rate=0.5, fault_ops=["step"], fault_seed=3)) as server:
        group = group_against(server.url, answering, tokenizer, TASK, G, retries, seeds)
        injected = server.hub.manager.faults.injected["step"]
    assert len(group) == G and [t.sampling["seed"] for t in group] == seeds
    attempts = 0
    for t in group:
        assert set(t.retried_failures) <= {"env_error"}
        if t.trainable:
            assert t.failure_class == "ok" and t.reward == 1.0
        else:  # failed every time: still masked, handed over for repair
            assert t.failure_class == "env_error" and t.reward is None and len(t.retried_failures) == retries
        attempts += len(t.retried_failures) + 1
        # every attempt of slot i sampled its first turn with the slot's seed
        assert answering.seeds.count(derive_seed(t.sampling["seed"], 0)) == len(t.retried_failures) + 1
    assert sum(len(t.retried_failures) for t in group) > 0
    assert sum(len(t.retried_failures) + (not t.trainable) for t in group) == injected
    assert len(answering.seeds) == attempts


def test_retries_give_up_after_the_budget(answering, tokenizer) -> None:
    G = 3
    with serve_in_thread(make_settings(families=["db"], fault_rate=1.0, fault_ops=["verify"])) as server:
        group = group_against(server.url, answering, tokenizer, TASK, G, retries=2)
        injected = server.hub.manager.faults.injected["verify"]
    assert injected == G * 3
    for t in group:
        assert t.retried_failures == ["env_error", "env_error"]
        assert t.failure_class == "env_error" and t.reward is None and t.retryable


def test_a_refused_request_is_not_retried(db_server, answering, tokenizer) -> None:
    """An unknown task stays unknown: masked at once, no retry, the policy never called."""
    group = group_against(db_server.url, answering, tokenizer, "db/bank/no-such-task", 2, retries=3)
    assert all(not t.trainable and not t.retryable and t.retried_failures == [] for t in group)
    assert answering.seeds == []


def test_agent_errors_are_never_retried(db_server, tokenizer) -> None:
    """A malformed call is the policy's: judged (reward 0), not re-run."""
    policy = Answering(enc(tokenizer, "no call here") + [tokenizer.eos_token_id])
    group = group_against(db_server.url, policy, tokenizer, TASK, 2, retries=3)
    for t in group:
        assert t.trainable and t.reward == 0.0 and t.retried_failures == []
    assert len(policy.seeds) == 2 * CFG.max_turns  # one episode each: max_turns agent_error turns
