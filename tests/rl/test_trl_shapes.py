"""The TRL adapter's answer without TRL or torch: real episodes against a db server, in the shapes
`GRPOTrainer`'s `rollout_func` must return (the training step itself is in test_trainer.py)."""

from __future__ import annotations

import asyncio

import pytest

from envhub.client import AsyncEnvClient
from envhub.rl.codec import ChatCodec, format_call
from envhub.rl.rollout import RolloutConfig, rollout_group
from envhub.rl.trl import _task_id, envhub_reward, to_trl
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
