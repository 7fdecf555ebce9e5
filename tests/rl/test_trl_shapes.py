"""The TRL adapter's answer without TRL or torch: real episodes against a db server, in the shapes
`GRPOTrainer`'s `rollout_func` must return (the training step itself is in test_trainer.py)."""

from __future__ import annotations

import asyncio
import types

import pytest

from envhub.client import AsyncEnvClient
from envhub.rl.codec import ChatCodec, format_call
from envhub.rl.rollout import RolloutConfig, rollout_group
from envhub.rl.trl import _task_id, envhub_reward, make_rollout_func, to_trl
from tests.rl.conftest import ScriptedPolicy

CFG = RolloutConfig(tools=["search_accounts", "submit_answer"], max_turns=2, per_turn_tokens=128)


def test_to_trl_splits_each_episode_at_its_prompt(db_server, tokenizer) -> None:
    tok = tokenizer

    def call(tool: str, **args: str) -> list[int]:
        return tok.encode(format_call(tool, args), add_special_tokens=False) + [tok.eos_token_id]

    policy = ScriptedPolicy([call("search_accounts", number="ACC-101961"), call("submit_answer", answer="22806.26"),
                             call("submit_answer", answer="0")], tok.eos_token_id, version=0)

    async def go():
        async with AsyncEnvClient(db_server.url, retries=0) as env:
            codec = ChatCodec(tok)
            right = await rollout_group(env, policy, codec, "db/bank/ask-balance-001", 1, cfg=CFG)
            wrong = await rollout_group(env, policy, codec, "db/bank/ask-balance-001", 1, cfg=CFG)
            unknown = await rollout_group(env, policy, codec, "db/bank/no-such-task", 1, cfg=CFG)
            return [*right, *wrong, *unknown]

    trajs = asyncio.run(go())
    out = to_trl(trajs, tok.eos_token_id)
    assert set(out) == {"prompt_ids", "completion_ids", "logprobs", "env_mask", "envhub_reward", "envhub_failure"}
    assert all(len(v) == 3 for v in out.values())
    for i, t in enumerate(trajs[:2]):  # judged episodes: prompt + completion are the episode's ids, token-exact
        assert out["prompt_ids"][i] + out["completion_ids"][i] == t.token_ids
        assert len(out["prompt_ids"][i]) == t.prompt_len
        assert len(out["completion_ids"][i]) == len(out["logprobs"][i]) == len(out["env_mask"][i])
        assert out["env_mask"][i] == t.loss_mask[t.prompt_len:] and 0 in out["env_mask"][i]  # an observation
        assert out["envhub_failure"][i] == "ok"
    assert out["envhub_reward"][:2] == [1.0, 0.0]
    # the unknown task failed before the model spoke: one masked token keeps the shapes valid, no reward
    assert out["completion_ids"][2] == [tok.eos_token_id] and out["env_mask"][2] == [0] and out["logprobs"][2] == [0.0]
    assert out["envhub_reward"][2] is None and out["envhub_failure"][2] != "ok"
    assert envhub_reward(["a", "b", "c"], envhub_reward=out["envhub_reward"]) == [1.0, 0.0, None]


def test_task_ids_from_plain_and_conversational_prompts() -> None:
    assert _task_id(" db/bank/ask-balance-001\n") == "db/bank/ask-balance-001"
    assert _task_id([{"role": "user", "content": "db/hr/ask-salary-001"}]) == "db/hr/ask-salary-001"
    with pytest.raises(ValueError, match="must be an envhub task id"):
        _task_id({"prompt": "db/x"})


class _Model:
    """What the rollout function reads of the trainer's model: its train/eval mode, put back after."""

    training = True

    def train(self, mode: bool = True) -> None:
        self.training = mode


def test_the_rollout_func_branches_each_group_after_its_shared_turns(db_server, tokenizer) -> None:
    """With `branch_at=1` a group's first turn is played once and the members fork from it (one
    completion per prompt, the same prompt ids and first turn, their own verdicts); a group whose
    episode ended within those turns is that one episode, repeated to the group's size."""
    tok = tokenizer

    def call(tool: str, **args: str) -> list[int]:
        return tok.encode(format_call(tool, args), add_special_tokens=False) + [tok.eos_token_id]

    trainer = types.SimpleNamespace(model=_Model(), temperature=1.0, state=types.SimpleNamespace(global_step=0))
    task = "db/bank/ask-balance-001"
    search = call("search_accounts", number="ACC-101961")
    policy = ScriptedPolicy([search, call("submit_answer", answer="22806.26"), call("submit_answer", answer="0")],
                            tok.eos_token_id, version=0)
    out = make_rollout_func(db_server.url, tok, cfg=CFG, policy=policy, concurrency=4, branch_at=1)([task] * 2, trainer)
    assert len(policy.prompts) == 3  # the shared turn once, then one turn a member
    assert all(len(v) == 2 for v in out.values()) and sorted(out["envhub_reward"]) == [0.0, 1.0]
    assert out["prompt_ids"][0] == out["prompt_ids"][1]
    assert out["completion_ids"][0][:len(search)] == out["completion_ids"][1][:len(search)] == search
    assert out["completion_ids"][0] != out["completion_ids"][1] and trainer.model.training

    ended = ScriptedPolicy([call("submit_answer", answer="22806.26")], tok.eos_token_id, version=0)
    out = make_rollout_func(db_server.url, tok, cfg=CFG, policy=ended, concurrency=4, branch_at=1)([task] * 3, trainer)
    assert len(ended.prompts) == 1 and out["envhub_reward"] == [1.0] * 3
    assert out["completion_ids"][0] == out["completion_ids"][1] == out["completion_ids"][2]
