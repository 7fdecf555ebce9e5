"""A task whose toolchain this machine lacks is reported everywhere a user looks, and a reset of it
is a 503 with the fixing command before any sandbox is made.

The lacking toolchain is real: a copy of a go task whose `toolchain.check` names a command that does
not exist, beside a copy of a python task (whose toolchain is present), served from a temp tasks root.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from envhub.client import EnvClient
from envhub.errors import RequirementMissing
from envhub.server.thread import ThreadedServer, serve_in_thread
from environments.swe import toolchains
from environments.swe.family import SweFamily
from tests.conftest import make_settings
from tests.swe.conftest import GOOD, LACKING, NO_SUCH, lacking_tasks, require_toolchain


@pytest.fixture
def tasks_dir(tmp_path: Path) -> Path:
    return lacking_tasks(tmp_path / "tasks")


@pytest.fixture
def server(tasks_dir: Path) -> Iterator[ThreadedServer]:
    require_toolchain("python")
    with serve_in_thread(make_settings(families=["swe"], tasks_dir=tasks_dir)) as s:
        yield s


def _sandboxes(server: ThreadedServer) -> set[str]:
    root = server.hub.settings.data_dir / "sandboxes"
    return {p.name for p in root.iterdir()} if root.is_dir() else set()


def test_registry_and_ready_name_the_lacking_toolchain_and_the_fix(server: ThreadedServer):
    http = httpx.Client(base_url=server.url, timeout=60)
    env = http.get("/v1/envs/swe").json()
    assert env["availability"] == "partial" and env["unavailable_tasks"] == 1 and env["task_count"] == 2
    assert "go toolchain is missing" in env["unavailable"]["reason"]
    assert env["unavailable"]["fix"] == "envhub toolchains install go"
    lacking = http.get(f"/v1/tasks/{LACKING}").json()["unavailable"]
    assert NO_SUCH in lacking["reason"] and lacking["fix"] == "envhub toolchains install go"
    assert http.get(f"/v1/tasks/{GOOD}").json()["unavailable"] is None
    listed = {t["id"]: t["unavailable"] for t in http.get("/v1/tasks", params={"env": "swe"}).json()["tasks"]}
    assert listed[GOOD] is None and listed[LACKING]["fix"] == "envhub toolchains install go"
    ready = http.get("/ready")
    assert ready.status_code == 200  # the python task still runs
    assert ready.json()["unavailable"]["swe"]["availability"] == "partial"
    assert ready.json()["unavailable"]["swe"]["fix"] == "envhub toolchains install go"


def test_reset_of_a_lacking_task_is_a_503_before_any_sandbox(server: ThreadedServer):
    http = httpx.Client(base_url=server.url, timeout=120)
    before = _sandboxes(server)
    r = http.post("/v1/sessions", json={"env": "swe", "task_id": LACKING})
    assert r.status_code == 503 and r.headers["content-type"].startswith("application/problem+json")
    problem = r.json()
    assert problem["code"] == "requirement_missing" and problem["failure_class"] == "unavailable"
    assert problem["retryable"] is False  # the same reset fails until someone runs the fix
    assert problem["fix"] == "envhub toolchains install go" and "go toolchain is missing" in problem["reason"]
    assert "envhub toolchains install go" in problem["detail"]
    assert server.hub.manager.active == 0 and _sandboxes(server) == before

    with EnvClient(server.url) as client:  # the client raises it at once, without retrying
        with pytest.raises(RequirementMissing, match="envhub toolchains install go"):
            client.reset("swe", task_id=LACKING)

    # A reset without a task id draws among the tasks that can run: this seed alone would draw the lacking one.
    tasks = server.hub.catalog.for_family("swe")
    seed = next(s for s in range(1000) if random.Random(s).choice(tasks).id == LACKING)
    created = http.post("/v1/sessions", json={"env": "swe", "seed": seed})
    assert created.status_code == 201 and created.json()["task"]["id"] == GOOD
    http.delete(f"/v1/sessions/{created.json()['session_id']}")


def test_ready_is_503_when_no_served_family_can_run(tmp_path: Path):
    with serve_in_thread(make_settings(families=["swe"], tasks_dir=lacking_tasks(tmp_path / "t", with_good=False))) as s:
        r = httpx.get(s.url + "/ready", timeout=60)
        assert r.status_code == 503 and r.json()["code"] == "requirement_missing"
        assert r.json()["fix"] == "envhub toolchains install go"
        assert httpx.get(s.url + "/v1/envs/swe", timeout=60).json()["availability"] == "unavailable"


def test_envhub_list_has_a_runs_here_column(tasks_dir: Path):
    env = {**os.environ, "ENVHUB_TASKS_DIR": str(tasks_dir), "COLUMNS": "200"}
    envhub = str(Path(sys.executable).parent / "envhub")
    rows = json.loads(subprocess.run([envhub, "list", "--env", "swe", "--json"], env=env, check=True,
                                     capture_output=True, text=True).stdout)
    by_id = {r["id"]: r["unavailable"] for r in rows}
    assert by_id[GOOD] is None and by_id[LACKING]["fix"] == "envhub toolchains install go"
    table = subprocess.run([envhub, "list", "--env", "swe"], env=env, check=True, capture_output=True,
                           text=True).stdout
    assert "runs here" in table and "1 task(s) cannot run here" in table and "envhub toolchains install go" in table


def test_family_level_names_every_missing_language(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setitem(toolchains.TOOLCHAINS, "cobol", toolchains.Toolchain("cobol", ("gnucobol",), NO_SUCH,
                                                                             "junit_xml"))
    missing = SweFamily().availability()
    assert missing is not None and "cobol" in missing.reason
    assert missing.fix.startswith("envhub toolchains install ") and "cobol" in missing.fix.split()
    monkeypatch.delitem(toolchains.TOOLCHAINS, "cobol")
    if not toolchains.missing_languages():  # every toolchain of the table present: the family lacks nothing
        assert SweFamily().availability() is None


def test_make_test_fails_where_the_setup_was_to_install(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setitem(toolchains.TOOLCHAINS, "cobol", toolchains.Toolchain("cobol", ("gnucobol",), NO_SUCH,
                                                                             "junit_xml"))
    monkeypatch.setenv("ENVHUB_SWE_REQUIRED", "python,cobol")
    with pytest.raises(BaseException) as failed:  # a skip would escape a narrower `raises` and pass as a skip
        require_toolchain("cobol")
    assert failed.type is pytest.fail.Exception and "the set-up was to install it" in str(failed.value)
    monkeypatch.setenv("ENVHUB_SWE_REQUIRED", "python")
    with pytest.raises(BaseException) as skipped:
        require_toolchain("cobol")
    assert skipped.type is pytest.skip.Exception and "envhub toolchains install cobol" in str(skipped.value)


def test_validate_does_not_judge_a_task_this_machine_cannot_run(tasks_dir: Path):
    """A missing toolchain is no verdict on the task: no rejected record is written, and it fails loudly."""
    record = tasks_dir / LACKING / "validation.json"
    before = record.read_bytes()
    env = {**os.environ, "ENVHUB_TASKS_DIR": str(tasks_dir)}
    done = subprocess.run([str(Path(sys.executable).parent / "envhub"), "validate", LACKING, "--json"], env=env,
                          capture_output=True, text=True)
    assert done.returncode == 1, done.stderr[-2000:]
    data = json.loads(done.stdout)
    assert data["tasks"] == [] and data["unavailable"][0]["fix"] == "envhub toolchains install go"
    assert record.read_bytes() == before
