"""The training-run pages (`/runs`, `/runs/{id}`) on a real server and store: a run with episodes of
two policy versions (one failing its anti_hack check) and two step reports, read by its owner, a
second tenant, the public and an admin, as `/v1/runs` reads it."""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
import pytest

from envhub.client import EnvClient
from envhub.config import REPO_ROOT, Settings
from envhub.core.auth import new_key
from envhub.server.thread import serve_in_thread
from tests.web.conftest import wait_recorded

ALICE, ALICE_KEY = new_key("alice")
BOB, BOB_KEY = new_key("bob")
OPS, OPS_KEY = new_key("ops", admin=True)
KEYS = ";".join(k.entry() for k in (ALICE_KEY, BOB_KEY, OPS_KEY))


def _bearer(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def _echo(client: EnvClient, message: str, *, verify: bool = True, **reset: Any) -> tuple[str, int, bool]:
    with client.session("echo", task_id="echo/say-done", **reset) as s:
        s.step("echo", message=message)
        if verify:
            s.verify()
    return s.id, 1, verify


def _hedged_db_answer(client: EnvClient, **reset: Any) -> tuple[str, int, bool]:
    """Two different answers to one question: the `one-outcome` anti_hack check fails."""
    with client.session("db", task_id="db/hr/ask-headcount-001", **reset) as s:
        s.step("search_employees", department_id=3, status="active", limit=100)
        s.step("submit_answer", answer="14")
        s.step("submit_answer", answer="15")
        verdict = s.verify(keep_state=True)
        assert not s.reverify().flipped  # judged twice: the run's verifier disagreement, 0 of 1
    assert any(c.kind == "anti_hack" and not c.passed for c in verdict.checks)
    return s.id, 3, True


@pytest.fixture(scope="module")
def run(data_dir: Path) -> Iterator[dict[str, Any]]:
    """Alice's run: policy 1 (done, nope), policy 2 (done, done, the hedged db answer, judged twice),
    one unverified; one episode of hers outside it; two step reports, the second without a loss."""
    settings = Settings(data_dir=data_dir, tasks_dir=REPO_ROOT / "tasks", families=["echo", "db"], auth="on",
                        api_keys=KEYS)
    run_id = f"web:run-{uuid.uuid4().hex[:6]}"
    with serve_in_thread(settings) as server, EnvClient(server.url, api_key=ALICE) as alice:
        alice.create_run(run_id, {"lr": 3e-5, "note": "<script>alert(1)</script>"})
        mine = [_echo(alice, "done", policy_version="1", run_id=run_id),
                _echo(alice, "nope", policy_version="1", run_id=run_id),
                _echo(alice, "done", policy_version="2", run_id=run_id),
                _echo(alice, "done", policy_version="2", run_id=run_id),
                _hedged_db_answer(alice, policy_version="2", run_id=run_id),
                _echo(alice, "done", verify=False, policy_version="2", run_id=run_id)]
        outside = _echo(alice, "done", policy_version="2")
        for sid, steps, verified in [*mine, outside]:
            wait_recorded(settings.store_url, sid, steps=steps, verified=verified)
        alice.report_step(run_id, 1, {"loss": 0.5, "valid": 16, "discarded": 2, "staleness": {"0": 12, "1": 4}},
                          policy_version="1")
        alice.report_step(run_id, 2, {"valid": 16, "staleness": {"0": 10, "2": 6}}, policy_version="2")
        yield {"url": server.url, "id": run_id, "mine": [m[0] for m in mine], "outside": outside[0],
               "api": alice.get_run(run_id)}


def page(run: dict[str, Any], path: str, key: str | None = ALICE, status: int = 200) -> str:
    r = httpx.get(run["url"] + path, headers=_bearer(key) if key else {}, timeout=30)
    assert r.status_code == status, (path, r.status_code, r.text[:500])
    assert r.headers["content-type"].startswith("text/html") and "Traceback" not in r.text
    return r.text


def _path(run_id: str) -> str:
    return "/runs/" + quote(run_id, safe="/")


def test_the_runs_list_is_the_owners(run: dict[str, Any]) -> None:
    listing = page(run, "/runs")
    assert 'data-total="1"' in listing and 'data-everyone="1"' in listing
    assert f'href="{_path(run["id"])}"' in listing
    assert "<script>alert" not in listing and "&lt;script&gt;alert(1)" in listing  # the config is text
    for key in (BOB, None):
        other = page(run, "/runs", key)
        assert 'data-total="0"' in other and 'data-everyone="1"' in other  # the count is an aggregate
        assert run["id"] not in other and "alert" not in other
    assert 'data-total="1"' in page(run, "/runs", OPS)


def test_another_reader_gets_a_404(run: dict[str, Any]) -> None:
    for key in (BOB, None):
        text = page(run, _path(run["id"]), key, status=404)
        assert 'id="not-found"' in text and "0.5" not in text and "anti_hack" not in text
    assert httpx.get(run["url"] + "/v1/runs/" + run["id"], headers=_bearer(BOB)).status_code == 404  # as the API
    page(run, _path(run["id"]), OPS)  # an admin reads every run
    page(run, "/runs/no-such-run", status=404)


def test_the_run_page_shows_its_figures(run: dict[str, Any]) -> None:
    text = page(run, _path(run["id"]))
    f = run["api"]["figures"]
    assert f["episodes"] == 6 and f["anti_hack_rate"] == 0.2  # 1 of the 5 with checks
    assert 'data-episodes="6"' in text and "<script>alert" not in text

    def cell(layer: str, figure: str) -> str:
        row = re.search(rf'<tr data-layer="{layer}" data-figure="{re.escape(figure)}">(.*?)</tr>', text, re.S)
        assert row, (layer, figure)
        return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", row.group(1))).strip()

    assert cell("execution", "episodes").endswith("episodes 6")
    assert "ok 5" in cell("execution", "failure classes") and "unverified 1" in cell("execution", "failure classes")
    assert cell("reward", "anti_hack rate").endswith("20.0%")
    assert f["verifier_disagreement"] == {"sampled": 1, "flipped": 0, "rate": 0.0}
    assert cell("reward", "verifier disagreement").endswith("0 of 1 re-verified flipped (0.0%)")
    latest = f["reward_by_policy"][-1]
    assert latest["policy_version"] == "2" and f"{latest['mean']:.3f} [{latest['ci95'][0]:.3f}" in \
        cell("reward", "reward, latest policy")
    assert cell("data", "valid").endswith("32") and cell("data", "discarded").endswith("2")
    assert cell("learning", "loss, last step").endswith("0.5 (step 1)")
    # a null figure says why it is unknown, in the store's words where it gave them
    assert cell("economics", "GPU s per solved task").endswith(f"unknown ({f['unknown']['gpu_s_per_success']})")
    assert cell("data", "duplicated").endswith("unknown (no step report holds duplicated)")
    assert {m for m in re.findall(r'data-layer="(\w+)"', text)} == {
        "execution", "data", "reward", "learning", "performance", "economics"}
    # the charts: a point and an error bar per version, a bar per staleness bucket, the classes over time
    reward = text.split('id="chart-reward"', 1)[1].split("</figure>", 1)[0]
    assert reward.count('<circle class="mean"') == 2 and reward.count('<g class="ci"') == 2
    staleness = text.split('id="chart-staleness"', 1)[1].split("</figure>", 1)[0]
    assert re.findall(r'<title>(\d+ behind): ([\d.]+)</title>', staleness) == [
        ("0 behind", "22"), ("1 behind", "4"), ("2 behind", "6")]
    mix = text.split('id="chart-mix"', 1)[1].split("</figure>", 1)[0]
    counts = re.findall(r"<title>(\w+): (\d+)</title></rect>", mix)
    assert sum(int(n) for c, n in counts if c == "ok") == 5 and sum(int(n) for c, n in counts) == 6
    throughput = text.split('id="chart-throughput"', 1)[1].split("</figure>", 1)[0]
    ended = [int(n) for n in re.findall(r"(\d+) episodes? ended in", throughput)]
    assert ended and sum(ended) == 6
    assert re.findall(r'<tr data-step="(\d+)">', text) == ["1", "2"]


def test_the_run_and_its_episodes_link_each_other(run: dict[str, Any]) -> None:
    text = page(run, _path(run["id"]))
    link = re.search(r'<a href="(/episodes\?run=[^"]+)" id="run-episodes"', text)
    assert link
    listing = page(run, link.group(1).replace("&amp;", "&"))
    assert 'data-total="6"' in listing
    shown = set(re.findall(r'data-episode="([^"]+)"', listing))
    assert shown == set(run["mine"]) and run["outside"] not in shown
    for sid in (run["mine"][0], run["mine"][4]):
        episode = page(run, f"/episodes/{sid}")
        assert f'<a href="{_path(run["id"])}" id="episode-run">' in episode
    assert 'id="episode-run"' not in page(run, f"/episodes/{run['outside']}")
    assert 'data-total="0"' in page(run, link.group(1).replace("&amp;", "&"), BOB)


def test_without_public_reads_a_page_needs_a_key(data_dir: Path) -> None:
    """ENVHUB_PUBLIC_READS=false: the run pages, like every page, answer 401 without a key."""
    settings = Settings(data_dir=data_dir, tasks_dir=REPO_ROOT / "tasks", families=["echo"], auth="on",
                        api_keys=KEYS, public_reads=False)
    with serve_in_thread(settings) as server:
        for path in ("/runs", "/runs/anything"):
            assert httpx.get(server.url + path).status_code == 401
        assert httpx.get(server.url + "/runs", headers=_bearer(ALICE)).status_code == 200
