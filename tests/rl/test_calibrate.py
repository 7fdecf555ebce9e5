"""`envhub calibrate` (#38): the pass@k estimator against hand-computed values; the command end to
end against a real db server with model-free policies whose pass@k is known (the oracle's calls:
1; no call at all: 0; every verify faulted: unknown, all masked), the run it records and the
calibration the registry then serves; and a CPU smoke with SmolLM2 through `envhub.rl`'s policy."""

from __future__ import annotations

import hashlib
import json
import math
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from typer.testing import CliRunner

from envhub.cli import app
from envhub.rl.codec import format_call
from envhub.rl.policy import Generation
from envhub.server.thread import serve_in_thread
from envhub.store.calibrations import Figures, pass_at_k
from tests.conftest import make_settings
from tests.rl.chatml import ChatMLTokenizer

TOKEN = "rl-calibrate-client-token-0000001"  # the CLI's credential (ENVHUB_API_KEY; the server has no keys)
TASKS = ["db/bank/ask-balance-001", "db/hr/ask-salary-001"]
runner = CliRunner()


# -- the estimator ------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("n", "c", "k", "want"), [
    (8, 0, 8, 0.0),                  # nothing passed
    (8, 8, 8, 1.0),                  # everything passed
    (8, 1, 8, 1.0),                  # n = k: any pass is in the one k-subset
    (10, 3, 1, 0.3),                 # pass@1 is c / n
    (8, 2, 2, 1 - 15 / 28),          # 1 - C(6,2)/C(8,2)
    (5, 1, 2, 1 - 6 / 10),           # 1 - C(4,2)/C(5,2)
    (10, 2, 4, 1 - 70 / 210),        # 1 - C(8,4)/C(10,4)
    (6, 4, 3, 1.0),                  # n - c < k: every 3-subset holds a pass
])
def test_pass_at_k_is_the_unbiased_estimator(n: int, c: int, k: int, want: float) -> None:
    assert math.isclose(pass_at_k(n, c, k), want, abs_tol=1e-12)
    assert math.isclose(pass_at_k(n, c, k), 1 - math.comb(n - c, k) / math.comb(n, k), abs_tol=1e-12)


def test_pass_at_k_refuses_what_it_cannot_estimate() -> None:
    with pytest.raises(ValueError, match="at least 3 judged"):
        pass_at_k(2, 1, 3)
    with pytest.raises(ValueError):
        pass_at_k(4, 5, 2)
    with pytest.raises(ValueError):
        pass_at_k(4, 1, 0)
    short = Figures(k=4, n=3, passed=1, masked=1, reward_sum=1.0)
    assert short.pass_at_k is None and short.pass_at_1 == 0.3333 and short.mean_reward == 0.3333
    assert Figures(k=2, n=0, passed=0, masked=2).as_dict() == {
        "k": 2, "n": 0, "passed": 0, "masked": 2, "pass_at_1": None, "pass_at_k": None, "mean_reward": None}


# -- model-free policies (`--policy tests.rl.test_calibrate:FUNCTION`) -------------------------------------

class ScriptPolicy:
    """Answers each task's turns from a script, found by the task's first prompt line in the prompt."""

    engine = "script"
    version = 0

    def __init__(self, tok: Any, scripts: dict[str, list[list[int]]], otherwise: list[int]) -> None:
        self.tok, self.scripts, self.otherwise = tok, scripts, otherwise

    async def generate(self, prompt_ids: list[int], max_tokens: int, seed: int | None = None) -> Generation:
        text = self.tok.decode(prompt_ids)
        turn = text.count("<|im_start|>assistant") - 1
        turns = next((s for first, s in self.scripts.items() if first in text), [])
        ids = (turns[turn] if turn < len(turns) else self.otherwise)[:max_tokens]
        return Generation(ids, [-0.5] * len(ids), self.version, "stop")


def oracle_policy() -> tuple[ScriptPolicy, ChatMLTokenizer]:
    """Emits the oracle's tool calls: every episode passes."""
    from envhub import families
    from envhub.config import get_settings
    from envhub.tasks.catalog import Catalog

    tok = ChatMLTokenizer()
    catalog = Catalog(get_settings().tasks_dir)
    db = families.load(["db"])["db"]
    scripts = {}
    for task_id in TASKS:
        task = catalog.get(task_id)
        scripts[task.prompt.splitlines()[0]] = [
            tok.encode(format_call(a.tool, a.arguments)) + [tok.eos_token_id] for a in db.oracle_actions(task)]
    return ScriptPolicy(tok, scripts, [tok.eos_token_id]), tok


def mute_policy() -> tuple[ScriptPolicy, ChatMLTokenizer]:
    """Never calls a tool: every episode is judged and fails."""
    tok = ChatMLTokenizer()
    return ScriptPolicy(tok, {}, tok.encode("I would rather not.") + [tok.eos_token_id]), tok


# -- the command end to end ----------------------------------------------------------------------------------

def _calibrate(url: str, policy: str, *args: str) -> tuple[int, dict[str, Any]]:
    result = runner.invoke(app, ["calibrate", *TASKS, "--policy", policy, "--url", url, "--max-turns", "3",
                                 "--token-budget", "100000", "--max-tokens", "4096", *args, "--json"])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    return result.exit_code, json.loads(result.stdout)


def _recorded(url: str, run_id: str, episodes: int, timeout_s: float = 20.0) -> dict[str, Any]:
    """The run once the store holds `episodes` of its ended episodes (the writer is asynchronous)."""
    deadline = time.monotonic() + timeout_s
    headers = {"Authorization": f"Bearer {TOKEN}"}
    while True:
        run = httpx.get(f"{url}/v1/runs/{run_id}", headers=headers, timeout=60).json()
        ended = sum(n for cls, n in run["figures"]["failure_classes"].items() if cls != "unverified")
        if ended >= episodes or time.monotonic() > deadline:
            return run
        time.sleep(0.1)


def _digest(folder: Path) -> str:
    h = hashlib.sha256()
    for p in sorted(folder.rglob("*")):
        if p.is_file():
            h.update(str(p.relative_to(folder)).encode() + b"\0" + p.read_bytes())
    return h.hexdigest()


def test_calibrate_records_a_run_and_the_registry_serves_its_pass_at_k(db_server, monkeypatch) -> None:
    from envhub.config import get_settings
    from envhub.tasks.catalog import Catalog

    monkeypatch.setenv("ENVHUB_API_KEY", TOKEN)
    url, k = db_server.url, 3
    folders = [Catalog(get_settings().tasks_dir).get(t).path for t in TASKS]
    before = [_digest(f) for f in folders]

    code, out = _calibrate(url, "tests.rl.test_calibrate:oracle_policy", "--k", str(k), "--seed", "7")
    assert code == 0 and out["k"] == k and out["policy"] == "tests.rl.test_calibrate:oracle_policy"
    assert out["run_id"].startswith("calibrate-oracle_policy-")
    assert [r["task_id"] for r in out["tasks"]] == TASKS
    for r in out["tasks"]:
        assert (r["n"], r["passed"], r["masked"], r["pass_at_1"], r["pass_at_k"], r["mean_reward"]) == \
            (k, k, 0, 1.0, 1.0, 1.0)
        assert r["group"] and r["proxies"] == {}  # these hand-written tasks record no generator proxies
    oracle_run = out["run_id"]
    run = _recorded(url, oracle_run, 2 * k)
    assert run["config"]["kind"] == "calibration" and run["config"]["k"] == k and run["config"]["tasks"] == TASKS
    assert run["figures"]["episodes"] == 2 * k and run["figures"]["failure_classes"] == {"ok": 2 * k}

    cal = httpx.get(f"{url}/v1/tasks/{TASKS[0]}", timeout=60).json()["calibration"]  # public: no credential needed
    assert {k_: cal[k_] for k_ in ("run_id", "policy", "k", "n", "passed", "masked", "pass_at_1", "pass_at_k")} == {
        "run_id": oracle_run, "policy": "tests.rl.test_calibrate:oracle_policy", "k": k, "n": k, "passed": k,
        "masked": 0, "pass_at_1": 1.0, "pass_at_k": 1.0}

    def found(**params: Any) -> tuple[set[str], int]:
        body = httpx.get(f"{url}/v1/tasks", params={"env": "db", "limit": 100, **params}, timeout=120).json()
        return {t["id"] for t in body["tasks"]}, body["total"]

    def listed(**params: Any) -> set[str]:
        ids, total = found(**params)
        assert total == len(ids)  # the calibrated are few here
        return ids

    assert listed(calibrated="true") >= set(TASKS)
    assert found(calibrated="false")[1] == found()[1] - len(listed(calibrated="true"))
    assert set(TASKS) <= listed(pass_at_k_min=0.9) and not listed(pass_at_k_max=0.5) & set(TASKS)
    page = httpx.get(f"{url}/tasks/{TASKS[0]}", timeout=60).text  # the task's page shows it, linking the run
    assert f"pass@{k} <strong>1.000</strong>" in page and f'href="/runs/{oracle_run}"' in page
    listing = httpx.get(f"{url}/tasks", params={"env": "db", "calibrated": "yes", "pass_at_k_min": "0.9"},
                        timeout=120).text
    assert f'data-task="{TASKS[0]}"' in listing and 'data-task="db/bank/ask-balance-002"' not in listing

    # a newer calibration (another policy) is the one the registry serves
    code, out = _calibrate(url, "tests.rl.test_calibrate:mute_policy", "--k", "2")
    assert code == 0
    assert [(r["n"], r["passed"], r["pass_at_k"], r["mean_reward"]) for r in out["tasks"]] == [(2, 0, 0.0, 0.0)] * 2
    _recorded(url, out["run_id"], 4)
    info = httpx.get(f"{url}/v1/tasks/{TASKS[1]}", timeout=60).json()["calibration"]
    assert (info["run_id"], info["k"], info["n"], info["pass_at_k"]) == (out["run_id"], 2, 2, 0.0)
    assert set(TASKS) <= listed(pass_at_k_max=0.5) and not listed(pass_at_k_min=0.9) & set(TASKS)
    assert [_digest(f) for f in folders] == before  # calibrating never touches a task's files


def test_masked_episodes_are_retried_and_counted_apart(tmp_path, monkeypatch) -> None:
    """Every verify fails as env_error: each episode is re-run `--retries` times, then counted as
    masked, never as a fail; with no judged episode pass@k is unknown and the command exits 3."""
    monkeypatch.setenv("ENVHUB_API_KEY", TOKEN)
    settings = make_settings(families=["db"], fault_rate=1.0, fault_ops=["verify"])
    with serve_in_thread(settings) as server:
        code, out = _calibrate(server.url, "tests.rl.test_calibrate:oracle_policy", "--k", "2", "--retries", "1")
        assert code == 3
        for r in out["tasks"]:
            assert (r["n"], r["masked"], r["retried"], r["pass_at_k"]) == (0, 2, 2, None)
            assert r["masked_reasons"] == {"env_error": 2}
        _recorded(server.url, out["run_id"], 8)
        cal = httpx.get(f"{server.url}/v1/tasks/{TASKS[0]}", timeout=60).json()["calibration"]
        assert cal["n"] == 0 and cal["masked"] == 4 and cal["pass_at_k"] is None and cal["pass_at_1"] is None


def test_on_a_hub_with_keys_only_an_admin_records_a_calibration() -> None:
    """A calibration shows on every task's page: a tenant's key may not record one, an admin's may."""
    from envhub.client import EnvClient
    from envhub.core.auth import new_key
    from envhub.errors import Forbidden

    tenant, tenant_key = new_key("tenant")
    ops, ops_key = new_key("ops", admin=True)
    settings = make_settings(families=["db"], auth="on", api_keys=f"{tenant_key.entry()};{ops_key.entry()}")
    with serve_in_thread(settings) as server:
        with EnvClient(server.url, api_key=tenant) as client, pytest.raises(Forbidden, match="admin key"):
            client.create_run("calibrate-by-a-tenant", {"kind": "calibration", "k": 2})
        with EnvClient(server.url, api_key=tenant) as client:  # any other run is the tenant's to make
            assert client.create_run("a-tenants-run", {"kind": "training"})["id"] == "a-tenants-run"
        with EnvClient(server.url, api_key=ops) as client:
            assert client.create_run("calibrate-by-ops", {"kind": "calibration", "k": 2})["id"] == "calibrate-by-ops"


def test_an_unknown_policy_is_a_usage_error() -> None:
    result = runner.invoke(app, ["calibrate", TASKS[0], "--policy", "smollm2"])
    assert result.exit_code == 2 and "local:smollm2" in result.output
    result = runner.invoke(app, ["calibrate", TASKS[0], "--policy", "http://127.0.0.1:9"])  # no --tokenizer
    assert result.exit_code == 2 and "--tokenizer" in result.output


# -- the CPU smoke: SmolLM2 through envhub.rl's HFPolicy -----------------------------------------------------

def test_calibrate_smoke_with_smollm2(db_server, smollm2, monkeypatch) -> None:  # smollm2: the model cache exists
    """Whatever the model samples: two episodes recorded, each judged or masked with its reason."""
    monkeypatch.setenv("ENVHUB_API_KEY", TOKEN)
    result = runner.invoke(app, ["calibrate", TASKS[0], "--policy", "local:smollm2", "--url", db_server.url,
                                 "--k", "2", "--max-turns", "2", "--max-tokens", "24",
                                 "--tools", "search_accounts,submit_answer", "--json"])
    assert result.exit_code in (0, 3), result.output
    out = json.loads(result.stdout)  # stderr holds transformers' progress bars
    (r,) = out["tasks"]
    assert r["n"] + r["masked"] == 2 and sum(r["masked_reasons"].values()) == r["masked"]
    assert r["pass_at_k"] is None if r["n"] < 2 else 0.0 <= r["pass_at_k"] <= 1.0
    run = _recorded(db_server.url, out["run_id"], 2)
    assert run["config"]["policy"] == "local:smollm2" and run["figures"]["episodes"] >= 2
