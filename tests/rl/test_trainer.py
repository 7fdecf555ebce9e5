"""The policy backend and the learner on SmolLM2 (CPU, fp32): logprob consistency (rule 15), seeded
sampling that does not depend on the batch, a GRPO step that moves probability toward the
advantaged trajectory, and TRL's GRPOTrainer taking one real optimiser step over envhub episodes
through `make_rollout_func`."""

from __future__ import annotations

import asyncio
import time
import uuid

import pytest

from envhub.rl.codec import ChatCodec, format_call
from envhub.rl.policy import HFPolicy, OpenAICompletionsPolicy
from envhub.rl.prefix import plan_prefixes
from envhub.rl.trainer import GRPOLearner, token_logprobs
from envhub.rl.trajectory import Trajectory
from tests.rl.conftest import ScriptedPolicy


@pytest.fixture(scope="module")
def model_and_tok(smollm2):
    return smollm2


def test_rule15_generation_logprobs_match_teacher_forcing(model_and_tok) -> None:
    import torch

    model, tok = model_and_tok
    codec = ChatCodec(tok)
    prompt = codec.initial("What is 2+3? Answer with a number.", [])
    torch.manual_seed(1)
    gen = asyncio.run(HFPolicy(model, tok).generate(prompt, 12))
    assert 0 < len(gen.token_ids) <= 12 and len(gen.logprobs) == len(gen.token_ids)
    with torch.no_grad():
        lp = token_logprobs(model, [prompt + gen.token_ids])[0, len(prompt):].tolist()
    assert max(abs(a - b) for a, b in zip(lp, gen.logprobs, strict=True)) <= 1e-4


def test_seeded_sampling_is_the_same_alone_and_batched(model_and_tok) -> None:
    """A seeded request samples the same tokens alone and batched with others (other prompts, a
    shared prefix, other lengths); other seeds sample otherwise; logprobs stay the tempered ones."""
    import torch

    model, tok = model_and_tok
    codec = ChatCodec(tok)
    poem = codec.initial("Write one line of a poem about the sea.", [])
    other = codec.initial("Name three colours.", [])
    longer = codec.initial("Write one line of a poem about the sea, then one about the sky.", [])
    policy = HFPolicy(model, tok, temperature=1.0)
    batch_sizes: list[int] = []
    serve = policy._generate_batch
    policy._generate_batch = lambda reqs: (batch_sizes.append(len(reqs)), serve(reqs))[1]  # type: ignore[method-assign]

    async def go(reqs):
        return await asyncio.gather(*(policy.generate(p, 16, seed=s) for p, s in reqs))

    alone = asyncio.run(go([(poem, 7)]))[0]
    again = asyncio.run(go([(poem, 7)]))[0]
    batched = asyncio.run(go([(other, 1), (poem, 7), (longer, 2), (poem, 8), (poem, 9), (poem, 10)]))
    assert batch_sizes == [1, 1, 6]
    assert again.token_ids == alone.token_ids
    assert batched[1].token_ids == alone.token_ids
    assert max(abs(a - b) for a, b in zip(batched[1].logprobs, alone.logprobs, strict=True)) <= 1e-4
    assert len({tuple(g.token_ids) for g in [alone, *batched[3:]]}) > 1  # other seeds, other samples
    for prompt, gen in zip((other, poem, longer, poem), batched, strict=False):
        with torch.no_grad():
            lp = token_logprobs(model, [prompt + gen.token_ids])[0, len(prompt):].tolist()
        assert max(abs(a - b) for a, b in zip(lp, gen.logprobs, strict=True)) <= 1e-4  # rule 15, batched


def test_shared_prompt_scoring_matches_full_teacher_forcing(model_and_tok) -> None:
    """The learner's scoring (each shared prompt forwarded once, only sampled tokens projected)
    gives the full forward pass's logprobs and gradients."""
    import copy

    import torch

    from envhub.rl.trainer import _pad, sampled_logprobs

    model, tok = model_and_tok
    model = copy.deepcopy(model)
    codec = ChatCodec(tok)
    enc = lambda text: tok.encode(text, add_special_tokens=False)  # noqa: E731
    trajs = []
    for prompt, turns in (("Find the balance of ACC-1.", ["I will look.", "It is 12."]),
                          ("Find the balance of ACC-1.", ["Searching now, one moment please."]),
                          ("Find the balance of ACC-1.", ["Twelve.", "Done, the answer stands."]),
                          ("Name a colour.", ["Blue."])):
        t = Trajectory(task_id="db/x", env="db")
        t.add_prompt(codec.initial(prompt, []))
        for i, text in enumerate(turns):
            ids = enc(text) + [tok.eos_token_id]
            t.add_sampled(ids, [0.0] * len(ids), 0)
            if i + 1 < len(turns):
                t.add_observation(codec.closing(ids) + codec.observation("ok"))
        trajs.append(t)
    mask = torch.tensor(_pad([t.loss_mask for t in trajs], 0)).bool()
    dense = token_logprobs(model, [t.token_ids for t in trajs])
    (-dense[mask].mean()).backward()
    full_grads = {k: p.grad.clone() for k, p in model.named_parameters()}
    model.zero_grad()
    flat = sampled_logprobs(model, trajs)
    (-flat.mean()).backward()
    assert flat.shape == (int(mask.sum()),)
    assert float((flat - dense[mask]).detach().abs().max()) <= 1e-4
    for k, p in model.named_parameters():
        assert float((p.grad - full_grads[k]).norm()) <= 1e-4 * float(full_grads[k].norm()) + 1e-8, k


def test_prefix_plan_shares_each_groups_prompt() -> None:
    a, b = [1, 2, 3, 4, 5, 6, 7, 8], [1, 2, 9, 9, 9, 9, 9, 9]
    prompts = [a + [10], b + [11], a + [12, 13], b + [14], [1, 2, 5]]
    plan = sorted(plan_prefixes(prompts, list(range(len(prompts)))))
    assert plan == [([0, 2], 8), ([1, 3], 8), ([4], 2)]
    assert plan_prefixes([a, a], [0, 1]) == [([0, 1], 7)]  # each row keeps its last token to decode from
    # a split that saves less than the shared part costs to recompute is not made
    assert plan_prefixes([a + [1], a + [2], [1, 2, 3]], [0, 1, 2]) == [([0, 1], 8), ([2], 2)]
    assert plan_prefixes([[5, 1, 1], [5, 2, 2]], [0, 1]) == [([0, 1], 1)]


def test_grpo_step_raises_the_advantaged_trajectory(model_and_tok) -> None:
    import copy

    import torch

    model, tok = model_and_tok
    learner_model = copy.deepcopy(model)
    codec = ChatCodec(tok)
    prompt = codec.initial("Report the status of shipment TRK1.", [])
    good, bad = (tok.encode(format_call("submit_answer", {"answer": a}), add_special_tokens=False) + [tok.eos_token_id]
                 for a in ("delivered", "no idea"))
    with torch.no_grad():
        before = [token_logprobs(learner_model, [prompt + ids])[0, len(prompt):] for ids in (good, bad)]
    trajs = []
    for ids, lp, adv in ((good, before[0], 1.0), (bad, before[1], -1.0)):
        t = Trajectory(task_id="db/x", env="db", reward=max(adv, 0.0))
        t.add_prompt(prompt)
        t.add_sampled(ids, lp.tolist(), 0)
        t.advantage = adv
        trajs.append(t)
    learner = GRPOLearner(learner_model, lr=1e-5)
    metrics = learner.step(trajs)
    assert metrics["tokens"] == len(good) + len(bad) and learner.version == 1
    with torch.no_grad():
        after = [token_logprobs(learner_model, [prompt + ids])[0, len(prompt):] for ids in (good, bad)]
    assert after[0].sum() > before[0].sum()
    assert after[1].sum() < before[1].sum()
    policy = HFPolicy(copy.deepcopy(model), tok)
    policy.push(learner.weights(), learner.version)  # weights travel to the actor by version
    assert policy.version == 1
    actor, learned = policy.model.state_dict(), learner_model.state_dict()
    assert all(torch.equal(actor[k], learned[k]) for k in learned)
    assert not torch.equal(learned["model.norm.weight"], model.state_dict()["model.norm.weight"])


def test_openai_completions_answer_is_parsed_token_exact() -> None:
    body = {"choices": [{"token_ids": [88, 11222, 905, 2], "finish_reason": "stop",
                         "logprobs": {"token_logprobs": [-0.1, -0.2, -0.3, -0.4]}}]}
    gen = OpenAICompletionsPolicy.parse(body, 7)
    assert gen.token_ids == [88, 11222, 905, 2] and gen.policy_version == 7 and gen.finish_reason == "stop"
    with pytest.raises(RuntimeError, match="no token ids"):
        OpenAICompletionsPolicy.parse({"choices": [{"text": "hello world"}]}, 0)


def test_trl_grpo_trainer_takes_a_real_step_over_envhub(model_and_tok, db_server, tmp_path) -> None:
    import copy

    import torch

    trl = pytest.importorskip("trl")
    datasets = pytest.importorskip("datasets")
    from envhub.rl.rollout import RolloutConfig
    from envhub.rl.trl import envhub_reward, make_rollout_func

    model, tok = model_and_tok
    model = copy.deepcopy(model)
    right, wrong = (tok.encode(format_call("submit_answer", {"answer": a}), add_special_tokens=False)
                    + [tok.eos_token_id] for a in ("22806.26", "0"))
    policy = ScriptedPolicy([right, wrong], tok.eos_token_id, version=0)
    from envhub.client import EnvClient
    from envhub.rl.trl import EnvhubRunCallback

    token, run_id = "rl-trl-run-client-token-000000000001", f"trl-{uuid.uuid4().hex[:8]}"
    with EnvClient(db_server.url, api_key=token) as client:
        client.create_run(run_id, {"trainer": "trl.GRPOTrainer"})
    rollout = make_rollout_func(db_server.url, tok, policy=policy, run_id=run_id, api_key=token,
                                cfg=RolloutConfig(tools=["search_accounts", "submit_answer"], max_turns=1))
    args = trl.GRPOConfig(output_dir=str(tmp_path), per_device_train_batch_size=2, num_generations=2, max_steps=1,
                          use_cpu=True, report_to=[], logging_steps=1, max_completion_length=64, learning_rate=1e-4,
                          save_strategy="no", bf16=False, beta=0.0)
    trainer = trl.GRPOTrainer(model=model, reward_funcs=envhub_reward, args=args, processing_class=tok,
                              train_dataset=datasets.Dataset.from_dict({"prompt": ["db/bank/ask-balance-001"]}),
                              rollout_func=rollout, callbacks=[EnvhubRunCallback(db_server.url, run_id, api_key=token)])
    before = {k: v.detach().clone() for k, v in model.named_parameters()}
    trainer.train()
    assert trainer.state.global_step == 1
    assert policy.turns == []  # both completions came from envhub episodes
    changed = sum(not torch.equal(before[k], v) for k, v in model.named_parameters())
    assert changed > 0
    logged = trainer.state.log_history[0]
    assert logged["reward"] == pytest.approx(0.5)  # one right (1), one wrong (0)
    # the run on the hub: its two episodes, and the step TRL logged (the closing summary merged in)
    with EnvClient(db_server.url, api_key=token) as client:
        deadline = time.monotonic() + 20
        while (run := client.get_run(run_id))["figures"]["episodes"] < 2 and time.monotonic() < deadline:
            time.sleep(0.1)  # the store writes asynchronously
    [report] = run["step_reports"]
    assert (report["step"], report["policy_version"]) == (1, "1")
    assert report["figures"]["loss"] == pytest.approx(logged["loss"]) and report["figures"]["mean_reward"] == 0.5
    assert "train_runtime" in report["figures"] and report["figures"]["cpu_s"] > 0
    assert run["figures"]["episodes"] == 2
