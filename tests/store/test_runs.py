"""Training runs (`/v1/runs`) on a real server and store: who reads a run, and its figures computed
from real recorded episodes (echo and db, two policy versions, one anti_hack failure, one episode
over the WebSocket) and the trainer's step reports."""

from __future__ import annotations

import json
import math
import os
import sqlite3
import statistics
import subprocess
import sys
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import httpx
import pytest
from websockets.sync.client import connect

from envhub.client import EnvClient
from envhub.config import REPO_ROOT, Settings
from envhub.core.auth import new_key
from envhub.errors import Conflict, Forbidden, NotFound
from envhub.server.thread import serve_in_thread
from envhub.store import OPERATOR, EpisodeStore
from envhub.store.runs import T95, figures_of
from tests.store.test_owners import OLD_SCHEMA
from tests.web.conftest import wait_recorded

ALICE, ALICE_KEY = new_key("alice")
BOB, BOB_KEY = new_key("bob")
OPS, OPS_KEY = new_key("ops", admin=True)


def clipped_t95(rewards: list[float]) -> tuple[float, float]:
    """The mean's 95 % t interval clipped to [0, 1], written out here apart from the store's code."""
    mean, sd = statistics.fmean(rewards), statistics.stdev(rewards)
    half = T95[len(rewards) - 2] * sd / math.sqrt(len(rewards))
    return (round(max(0.0, mean - half), 4), round(min(1.0, mean + half), 4))


def _row(policy: str, reward: float) -> SimpleNamespace:
    """A judged, ended episode as `run_figures` selects it."""
    at = datetime(2026, 1, 2, tzinfo=UTC)
    return SimpleNamespace(id=uuid.uuid4().hex, policy_version=policy, created_at=at, ended_at=at, step_count=1,
                           reward=reward, passed=reward >= 1.0, failure_class="ok", trainable=True, timings={},
                           reverify=None)


def test_the_reward_interval_stays_on_the_reward_scale() -> None:
    """0/1 rewards get the Wilson score interval (values from statsmodels' `proportion_confint(...,
    method="wilson")`); other rewards a t interval clipped to [0, 1]: never [-0.77, 2.10] for n = 3."""
    rows = ([_row("1", r) for r in (1.0, 0.0)] + [_row("2", r) for r in (1.0, 1.0, 0.0)]
            + [_row("3", 1.0) for _ in range(3)] + [_row("4", r) for r in (0.5, 0.7, 0.2)]
            + [_row("5", r) for r in (0.5, 0.6, 0.55, 0.5)])
    by = {r.policy_version: r.ci95 for r in figures_of(rows, set(), set(), []).reward_by_policy}
    assert by["1"] == (0.0945, 0.9055) and by["2"] == (0.2077, 0.9385)  # Wilson
    assert by["3"] == (0.4385, 1.0)  # all passed: not the point [1, 1] a t interval gives
    assert by["4"] == (0.0, 1.0) == clipped_t95([0.5, 0.7, 0.2])  # unclipped: [-0.19, 1.12]
    assert by["5"] == clipped_t95([0.5, 0.6, 0.55, 0.5]) and 0.0 < by["5"][0] < by["5"][1] < 1.0  # nothing to clip


@pytest.fixture
def runs_server(data_dir: Path) -> Iterator[tuple[Any, Settings]]:
    settings = Settings(data_dir=data_dir, tasks_dir=REPO_ROOT / "tasks", families=["echo", "db"], auth="on",
                        api_keys=";".join(k.entry() for k in (ALICE_KEY, BOB_KEY, OPS_KEY)))
    with serve_in_thread(settings) as server:
        yield server, settings


def _echo(client: EnvClient, messages: list[str], *, verify: bool = True, **reset: Any) -> tuple[str, int]:
    with client.session("echo", task_id="echo/say-done", **reset) as s:
        for m in messages:
            s.step("echo", message=m)
        if verify:
            s.verify()
    return s.id, len(messages)


def _hedged_db_answer(client: EnvClient, **reset: Any) -> tuple[str, int]:
    """Two different answers to one question: the `one-outcome` anti_hack check fails."""
    with client.session("db", task_id="db/hr/ask-headcount-001", **reset) as s:
        s.step("search_employees", department_id=3, status="active", limit=100)
        s.step("submit_answer", answer="14")
        s.step("submit_answer", answer="15")
        verdict = s.verify()
    assert not verdict.passed and any(c.kind == "anti_hack" and not c.passed for c in verdict.checks)
    return s.id, 3


def _over_websocket(url: str, run_id: str) -> tuple[str, int]:
    """A reset with a run id over the session WebSocket: the same field, the same record."""
    with connect(url.replace("http", "ws") + "/v1/sessions/ws",
                 additional_headers={"Authorization": f"Bearer {ALICE}"}) as ws:
        ws.send(json.dumps({"op": "reset", "data": {"env": "echo", "task_id": "echo/say-done",
                                                    "policy_version": "1", "run_id": run_id}}))
        created = json.loads(ws.recv())
        assert created["ok"], created
        sid = created["data"]["session_id"]
        for op in ({"op": "step", "data": {"action": {"tool": "echo", "arguments": {"message": "nope"}}}},
                   {"op": "verify"}, {"op": "close"}):
            ws.send(json.dumps(op))
            answer = json.loads(ws.recv())
            assert answer["ok"], answer
    return sid, 1


def test_a_runs_figures_come_from_its_owners_episodes_and_its_step_reports(runs_server) -> None:
    server, settings = runs_server
    run_id = f"run-{uuid.uuid4().hex[:8]}"
    with EnvClient(server.url, api_key=ALICE) as alice, EnvClient(server.url, api_key=BOB) as bob:
        made = alice.create_run(run_id, {"lr": 3e-5, "group_size": 8})
        assert (made["id"], made["config"], made["steps"]) == (run_id, {"lr": 3e-5, "group_size": 8}, 0)
        recorded = [
            _echo(alice, ["done"], policy_version="1", run_id=run_id),  # 1.0, 1 step
            _over_websocket(server.url, run_id),  # policy 1: 0.0, 1 step
            _echo(alice, ["done"], policy_version="2", run_id=run_id),  # 1.0, 1 step
            _echo(alice, ["hello", "done"], policy_version="2", run_id=run_id),  # 1.0, 2 steps
            _hedged_db_answer(alice, policy_version="2", run_id=run_id),  # 0.0 (anti_hack), 3 steps
            _echo(alice, ["done"], verify=False, policy_version="2", run_id=run_id),  # unverified
            _echo(alice, ["nope"], policy_version="2"),  # another run's (none): not counted
            _echo(bob, ["nope"], policy_version="2", run_id=run_id),  # another caller naming the run: not counted
        ]
        for i, (sid, steps) in enumerate(recorded):
            wait_recorded(settings.store_url, sid, steps=steps, verified=i != 5)
        assert {e["id"] for e in alice.episodes(run_id=run_id)["episodes"]} == {sid for sid, _ in recorded[:6]}

        alice.report_step(run_id, 1, {"loss": 0.5, "valid": 16, "discarded": 2, "duplicated": 1, "cpu_s": 2.0,
                                      "staleness": {"0": 12, "1": 4}}, policy_version="1")
        alice.report_step(run_id, 2, {"loss": 0.9, "cpu_s": 9.0}, policy_version="2")
        alice.report_step(run_id, 2, {"loss": 0.4, "valid": 16, "discarded": 1, "cpu_s": 4.0,
                                      "staleness": {"0": 16}}, policy_version="2")  # a retried report replaces
        assert alice.create_run(run_id)["steps"] == 2  # a retried create: the same run

        run = alice.get_run(run_id)
    assert [(s["step"], s["policy_version"], s["figures"]["loss"]) for s in run["step_reports"]] == [
        (1, "1", 0.5), (2, "2", 0.4)]
    f = run["figures"]
    assert f["episodes"] == 6 and f["failure_classes"] == {"ok": 5, "unverified": 1}
    assert f["reward_by_policy"] == [
        {"policy_version": "1", "n": 2, "mean": 0.5, "ci95": [0.0945, 0.9055]},  # Wilson: 0/1 rewards
        {"policy_version": "2", "n": 3, "mean": round(2 / 3, 4), "ci95": [0.2077, 0.9385]}]
    assert f["trainable_share"] == 1.0 and f["anti_hack_rate"] == 0.2  # 1 of the 5 judged by checks
    assert f["success_by_length"] == [{"steps": "1", "n": 3, "solved": 2, "rate": round(2 / 3, 4)},
                                      {"steps": "2-3", "n": 2, "solved": 1, "rate": 0.5}]
    assert f["trajectories_per_s"] > 0 and 0 < f["episode_s_p50"] <= f["episode_s_p99"]
    assert f["trainer"] == {"valid": 32.0, "discarded": 3.0, "duplicated": 1.0, "cpu_s": 6.0,
                            "staleness": {"0": 28.0, "1": 4.0}}
    assert f["cpu_s_per_success"] == 2.0  # 6 CPU seconds reported, 3 episodes passed
    assert f["gpu_s_per_success"] is None and "gpu_s" in f["unknown"]["gpu_s_per_success"]


def test_a_run_is_its_owners_and_an_admins(runs_server) -> None:
    server, _ = runs_server
    with (EnvClient(server.url, api_key=ALICE) as alice, EnvClient(server.url, api_key=BOB) as bob,
          EnvClient(server.url, api_key=OPS) as ops):
        mine = alice.create_run(config={"who": "alice"})["id"]
        theirs = bob.create_run(config={"who": "bob"})["id"]
        assert [r["id"] for r in alice.list_runs()["runs"]] == [mine]
        assert bob.list_runs()["total"] == 1
        with pytest.raises(NotFound, match="no run"):
            bob.get_run(mine)
        with pytest.raises(NotFound, match="no run"):
            bob.report_step(mine, 1, {"loss": 1.0})
        with pytest.raises(Conflict, match="taken"):
            bob.create_run(mine)
        assert {r["id"] for r in ops.list_runs()["runs"]} >= {mine, theirs}
        assert ops.get_run(mine)["config"] == {"who": "alice"}
        with pytest.raises(Forbidden, match="only its owner"):
            ops.report_step(mine, 1, {"loss": 1.0})
        with pytest.raises(NotFound, match="no run"):
            alice.get_run("no-such-run")
        with pytest.raises(ValueError, match="figures.loss"):  # the client checks the body before sending it
            alice.report_step(mine, 1, {"loss": "low"})
        assert alice.get_run(mine)["step_reports"] == []
    # Problems, never a raw 500: the one exception tree's answers, as application/problem+json.
    for method, path, body, status in (("GET", "/v1/runs/no-such-run", None, 404),
                                       ("POST", f"/v1/runs/{mine}/steps", {"step": 1, "figures": {"loss": "low"}}, 422),
                                       ("POST", f"/v1/runs/{mine}/steps", {"step": -1}, 422),
                                       ("POST", "/v1/runs", {"id": "no spaces/or slashes"}, 422),
                                       # an integer no answer could carry back (found by the REST fuzz)
                                       ("POST", "/v1/runs", {"config": {"seed": [1, {"n": 2**64}]}}, 422)):
        r = httpx.request(method, server.url + path, json=body, headers={"Authorization": f"Bearer {ALICE}"})
        assert r.status_code == status and r.headers["content-type"] == "application/problem+json", r.text
    assert httpx.get(server.url + "/v1/runs").status_code == 401  # keys are on: no key, no runs
    # A diverged loss is NaN, which JSON (and PostgreSQL) has no number for: kept as null.
    r = httpx.post(f"{server.url}/v1/runs/{mine}/steps", headers={"Authorization": f"Bearer {ALICE}",
                   "Content-Type": "application/json"},
                   content='{"step": 3, "figures": {"loss": NaN, "kl": 0.5, "staleness": {"0": Infinity, "1": 2}}}')
    assert r.status_code == 201, r.text
    with EnvClient(server.url, api_key=ALICE) as alice:
        assert alice.get_run(mine)["step_reports"][0]["figures"] == {"loss": None, "kl": 0.5,
                                                                     "staleness": {"0": None, "1": 2.0}}


def test_runs_route_without_a_store_says_so(data_dir: Path) -> None:
    settings = Settings(data_dir=data_dir, tasks_dir=REPO_ROOT / "tasks", families=["echo"], store_enabled=False)
    with serve_in_thread(settings) as server, EnvClient(server.url) as client:
        with pytest.raises(NotFound, match="records no episodes"):
            client.create_run()


def test_a_store_made_before_runs_gains_the_run_column_and_table_and_keeps_its_rows(tmp_path: Path) -> None:
    """The first migration: an old store file gets `episodes.run_id` (and its index) in place, and
    the runs tables; its episode stays, with no run."""
    path = tmp_path / "old.sqlite3"
    with sqlite3.connect(path) as db:
        db.executescript(OLD_SCHEMA)
    store = EpisodeStore(f"sqlite:///{path}")
    try:
        old = store.episode("old-1", viewer=OPERATOR)
        assert old is not None and old.run_id is None and old.reward == 1.0
        made = store.create_run(owner=None, run_id="after-upgrade")
        assert store.run_detail(made.id, viewer=OPERATOR).figures.episodes == 0
    finally:
        store.engine.dispose()
    with sqlite3.connect(path) as db:
        assert "run_id" in {row[1] for row in db.execute("PRAGMA table_info(episodes)")}
        assert "ix_episodes_run_created" in {row[1] for row in db.execute("PRAGMA index_list(episodes)")}
        assert {"runs", "run_steps"} <= {r[0] for r in db.execute("SELECT name FROM sqlite_master")}
        assert db.execute("SELECT count(*) FROM episodes").fetchone() == (1,)


async def test_cli_runs_lists_and_shows_a_run(data_dir: Path, hub_with_store) -> None:
    """`envhub runs` and `envhub runs show ID` read the store file as its operator: a table, or JSON."""
    from envhub.core.auth import Caller
    from envhub.spec import ResetRequest, RunStepReport, StepRequest, ToolCall

    owner = Caller(owner="token:cli-runs-owner-0000000000000")
    hub = hub_with_store(data_dir)
    await hub.start()
    try:
        store, m = hub.store, hub.manager
        run = store.create_run(owner=owner.owner, run_id="cli-run-0001", config={"lr": 3e-05, "group_size": 8})
        for policy, message in (("1", "nope"), ("2", "done")):
            c = await m.create(ResetRequest(env="echo", task_id="echo/say-done", policy_version=policy,
                                            run_id=run.id), owner)
            await m.step(c.session_id, StepRequest(action=ToolCall(tool="echo", arguments={"message": message})),
                         owner)
            await m.verify(c.session_id, owner, keep_state=policy == "2")
            if policy == "2":  # judged twice: the run's verifier disagreement, 0 of 1
                assert not (await m.reverify(c.session_id, owner)).flipped
            await m.close(c.session_id, owner)
        store.report_step(run.id, RunStepReport(step=1, policy_version="2", figures={
            "loss": 0.125, "discarded": 3, "staleness": {"0": 6, "1": 2}}), viewer=owner.viewer)
        assert await store.writer.flush()
    finally:
        await hub.stop()

    env = {**os.environ, "ENVHUB_DATA_DIR": str(data_dir), "ENVHUB_TASKS_DIR": str(REPO_ROOT / "tasks"),
           "COLUMNS": "100"}

    def envhub(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "envhub.cli", *args], env=env, capture_output=True, text=True,
                              timeout=60)

    listed = envhub("runs", "--json")
    assert listed.returncode == 0, listed.stderr
    assert [(r["id"], r["steps"], r["config"]) for r in json.loads(listed.stdout)["runs"]] == [
        ("cli-run-0001", 1, {"lr": 3e-05, "group_size": 8})]
    table = envhub("runs")
    assert "1 of 1 runs" in table.stdout and "cli-run-0001" in table.stdout and "group_size=8" in table.stdout

    shown = envhub("runs", "show", "cli-run-0001", "--json")
    assert shown.returncode == 0, shown.stderr
    body = json.loads(shown.stdout)
    assert body["figures"]["episodes"] == 2 and body["figures"]["trainer"]["staleness"] == {"0": 6.0, "1": 2.0}
    assert [r["policy_version"] for r in body["figures"]["reward_by_policy"]] == ["1", "2"]
    assert body["figures"]["verifier_disagreement"] == {"sampled": 1, "flipped": 0, "rate": 0.0}
    readable = envhub("runs", "show", "cli-run-0001")
    assert readable.returncode == 0, readable.stderr
    for text in ("run cli-run-0001: 2 episodes, 1 steps reported", "reward by policy version", "ok 2",
                 "anti_hack rate", "solved by length (steps)", "1: 1/2", "no step report or episode timing holds cpu_s",
                 "trainer staleness", "0: 6, 1: 2", "trainer steps", "0.125",
                 "0 of 1 re-verified flipped (0.0%)"):
        assert text in readable.stdout, (text, readable.stdout)
    missing = envhub("runs", "show", "no-such-run")
    assert missing.returncode == 2 and "no run 'no-such-run'" in missing.stdout
