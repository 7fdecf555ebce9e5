"""A run's verifier disagreement: rollouts judge a day-seeded sample of their final states a second
time (`RolloutConfig.reverify_rate`, `POST /v1/sessions/{id}/reverify`) and the hub counts the
verdicts that flipped. A real db server and its store; a steady verifier flips nothing, and one
made to disagree with itself (the hub's verifier runner, patched in-process) is caught."""

from __future__ import annotations

import asyncio
import dataclasses
import time
import uuid
from collections import Counter
from datetime import date
from pathlib import Path
from typing import Any

import pytest

from envhub.client import AsyncEnvClient, EnvClient
from envhub.errors import Conflict, NotFound
from envhub.rl.codec import ChatCodec, format_call
from envhub.rl.rollout import reverify_sampled, rollout_group
from envhub.rl.trajectory import Trajectory
from envhub.spec import VerifyResult
from envhub.verify.runner import VerifierRunner
from tests.rl.chatml import ChatMLTokenizer
from tests.rl.conftest import ScriptedPolicy
from tests.rl.test_train_loop import CFG

TOKEN = "rl-reverify-client-token-00000000001"
TASK = "db/bank/ask-balance-001"


def _rollouts(url: str, run_id: str, rate: float, answers: list[str]) -> list[Trajectory]:
    """One group of len(answers) episodes of TASK in run `run_id`, member i answering answers[i]."""
    tok = ChatMLTokenizer()
    turns = [tok.encode(format_call("submit_answer", {"answer": a}), add_special_tokens=False) + [tok.eos_token_id]
             for a in answers]
    policy = ScriptedPolicy(turns, tok.eos_token_id, version=1)

    async def go() -> list[Trajectory]:
        async with AsyncEnvClient(url, api_key=TOKEN, retries=0) as env:
            await env.create_run(run_id, {"reverify_rate": rate})
            cfg = dataclasses.replace(CFG, run_id=run_id, reverify_rate=rate)
            out = []
            for _ in answers:  # one at a time: the scripted turns go to the members in order
                out += await rollout_group(env, policy, ChatCodec(tok), TASK, 1, cfg=cfg)
            return out

    return asyncio.run(go())


def _figures_when_recorded(url: str, run_id: str, episodes: int, sampled: int,
                           timeout_s: float = 20.0) -> dict[str, Any]:
    """The run's figures once the store holds its `episodes` verified and `sampled` second verdicts
    (the writer is asynchronous)."""
    deadline = time.monotonic() + timeout_s
    with EnvClient(url, api_key=TOKEN) as client:
        while True:
            figures = client.get_run(run_id)["figures"]
            got = (figures["verifier_disagreement"] or {}).get("sampled", 0)
            ended = sum(n for cls, n in figures["failure_classes"].items() if cls != "unverified")
            if (got >= sampled and ended >= episodes) or time.monotonic() > deadline:
                return figures
            time.sleep(0.1)


def test_the_sample_is_the_days_and_the_runs_and_holds_its_rate() -> None:
    day = date(2026, 12, 6)
    sessions = [uuid.uuid4().hex for _ in range(4000)]
    chosen = [s for s in sessions if reverify_sampled(0.05, "run-a", s, day)]
    assert 140 <= len(chosen) <= 260  # 5 % of 4000 is 200; a binomial's 99.99 % band
    assert chosen == [s for s in sessions if reverify_sampled(0.05, "run-a", s, day)]  # the same choice again
    assert chosen != [s for s in sessions if reverify_sampled(0.05, "run-a", s, date(2026, 12, 7))]
    assert chosen != [s for s in sessions if reverify_sampled(0.05, "run-b", s, day)]
    assert not any(reverify_sampled(0.0, "run-a", s, day) for s in sessions)
    assert all(reverify_sampled(1.0, "run-a", s, day) for s in sessions)


def test_a_steady_verifier_judged_twice_flips_nothing(db_server) -> None:
    run_id = f"reverify-steady-{uuid.uuid4().hex[:8]}"
    trajectories = _rollouts(db_server.url, run_id, 1.0, ["22806.26", "0", "22806.26"])
    assert [t.reward for t in trajectories] == [1.0, 0.0, 1.0]
    assert [t.reverify_flipped for t in trajectories] == [False, False, False]  # every one sampled, judged twice
    figures = _figures_when_recorded(db_server.url, run_id, 3, 3)
    assert figures["verifier_disagreement"] == {"sampled": 3, "flipped": 0, "rate": 0.0}
    assert "verifier_disagreement" not in figures["unknown"]


def test_a_run_that_samples_nothing_says_why(db_server) -> None:
    run_id = f"reverify-none-{uuid.uuid4().hex[:8]}"
    trajectories = _rollouts(db_server.url, run_id, 0.0, ["22806.26", "0"])
    assert [t.reverify_flipped for t in trajectories] == [None, None]
    figures = _figures_when_recorded(db_server.url, run_id, 2, 0)
    assert figures["episodes"] == 2 and figures["verifier_disagreement"] is None
    assert "judged twice" in figures["unknown"]["verifier_disagreement"]


@pytest.fixture
def flaky_verifier(monkeypatch: pytest.MonkeyPatch) -> Counter[Path]:
    """The hub's verifier runner (in this process: the server runs in a thread), made to reverse its
    verdict whenever it judges a state it has judged before: what a verifier that reads the clock,
    the network or a counter does. The episode's own (first) verdict is the real one."""
    judged: Counter[Path] = Counter()
    real = VerifierRunner.verify

    async def verify(self: VerifierRunner, task: Any, state_dir: Path, trajectory: Any = None) -> VerifyResult:
        session = state_dir.parent  # the session's folder: the state judged first, or a copy of it
        result = await real(self, task, state_dir, trajectory)
        judged[session] += 1
        if judged[session] == 1:
            return result
        return result.model_copy(update={"reward": 1.0 - result.reward, "passed": not result.passed})

    monkeypatch.setattr(VerifierRunner, "verify", verify)
    return judged


def test_a_verifier_that_disagrees_with_itself_is_counted(db_server, flaky_verifier) -> None:
    run_id = f"reverify-flaky-{uuid.uuid4().hex[:8]}"
    trajectories = _rollouts(db_server.url, run_id, 1.0, ["22806.26", "0"])
    assert [t.reward for t in trajectories] == [1.0, 0.0]  # the first verdicts stand
    assert [t.reverify_flipped for t in trajectories] == [True, True]
    assert sorted(flaky_verifier.values()) == [2, 2]  # each episode's final state judged twice
    figures = _figures_when_recorded(db_server.url, run_id, 2, 2)
    assert figures["verifier_disagreement"] == {"sampled": 2, "flipped": 2, "rate": 1.0}
    assert figures["reward_by_policy"][0]["mean"] == 0.5  # the run's rewards are the first verdicts'


def test_reverify_answers_both_verdicts_and_refuses_before_verify(db_server) -> None:
    with EnvClient(db_server.url, api_key=TOKEN, retries=0) as client:
        with client.session("db", task_id=TASK) as s:
            with pytest.raises(Conflict, match="verify the episode first"):
                s.reverify()
            s.step("submit_answer", answer="22806.26")
            verdict = s.verify(keep_state=True)
            again, third = s.reverify(), s.reverify()  # each judges a fresh copy of the kept state
            with pytest.raises(Conflict, match="judged again 2 times already"):
                s.reverify()  # each is a whole verifier run: a session gets two
        assert (again.first.reward, again.first.passed) == (verdict.reward, verdict.passed) == (1.0, True)
        assert (again.second.reward, again.second.passed, again.flipped) == (1.0, True, False) == (
            third.second.reward, third.second.passed, third.flipped)
        with pytest.raises(NotFound):
            client.reverify(s.id)  # closed
        with client.session("db", task_id=TASK) as s:
            s.step("submit_answer", answer="22806.26")
            s.verify()  # the verifier consumed the state it judged, and none was kept
            with pytest.raises(Conflict, match="no final state was kept"):
                s.reverify()
