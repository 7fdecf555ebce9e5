"""`envhub new-family`: the scaffolded family is served, its sample task validates (oracle 1, doing
nothing 0, every mutant and exploit fails) and it follows the layout every family follows."""

from __future__ import annotations

import importlib
import shutil
import sys
from pathlib import Path

import pytest

import environments
from envhub import families, scaffold
from envhub.config import REPO_ROOT
from envhub.spec import ResetRequest, StepRequest
from envhub.validate.core import Validator
from tests.conftest import make_settings, running_hub

NAME = "notebook_probe"


@pytest.fixture
def scaffolded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The family written into a scratch root and registered the way pip registers one: a
    distribution's `entry_points.txt` on the path (nothing of the real checkout changes)."""
    shutil.copy(REPO_ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    scaffold.write(tmp_path, NAME, set(families.available()))
    monkeypatch.setattr(environments, "__path__", [*environments.__path__, str(tmp_path / "environments")])
    dist = tmp_path / "site" / f"{NAME}-0.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {NAME}\nVersion: 0\n")
    line = next(x for x in (tmp_path / "pyproject.toml").read_text().splitlines() if x.startswith(f"{NAME} ="))
    (dist / "entry_points.txt").write_text(f"[envhub.families]\n{line.replace(chr(34), '')}\n")
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    importlib.invalidate_caches()
    yield tmp_path
    for mod in [m for m in sys.modules if m.startswith(f"environments.{NAME}")]:
        del sys.modules[mod]
    families.family_class.cache_clear()


async def test_the_scaffolded_family_is_served_and_its_sample_task_validates(scaffolded: Path):
    assert families.available()[NAME] == f"environments.{NAME}.family:NotebookProbeFamily"
    family_cls = families.family_class(NAME)
    async with running_hub(make_settings(families=[NAME], tasks_dir=scaffolded / "tasks", store_enabled=False)) as hub:
        task = hub.catalog.get(f"{NAME}/hello")
        m = hub.manager
        created = await m.create(ResetRequest(env=NAME, task_id=task.id))
        for call in family_cls().oracle_actions(task):
            assert not (await m.step(created.session_id, StepRequest(action=call))).observation.is_error
        verdict = await m.verify(created.session_id)
        assert (verdict.failure_class, verdict.reward) == ("ok", 1.0), verdict.checks
        await m.close(created.session_id)
        created = await m.create(ResetRequest(env=NAME, task_id=task.id))
        verdict = await m.verify(created.session_id)
        assert (verdict.failure_class, verdict.reward) == ("ok", 0.0), verdict.checks
        await m.close(created.session_id)

        v = Validator(hub, runs=2)
        try:
            report = await v.validate(task)
        finally:
            v.close()
        assert report.status == "validated", [(f.check, f.detail) for f in report.findings if not f.ok]
        checks = {f.check for f in report.findings}
        assert {"mutant:forget-last-note", "mutant:misspell-notes", "null"} <= checks
    # the generated test is Python that pytest can collect
    compile((scaffolded / "tests" / NAME / f"test_{NAME}.py").read_text(), "test", "exec")


def test_a_name_that_cannot_be_a_family_or_is_taken_writes_nothing(tmp_path: Path):
    shutil.copy(REPO_ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    before = (tmp_path / "pyproject.toml").read_text()
    (tmp_path / "tasks" / "ledger").mkdir(parents=True)
    for bad, why in (("Db", "cannot name"), ("x", "cannot name"), ("class", "cannot name"), ("a-b", "cannot name"),
                     ("db", "registered already"), ("ledger", "tasks/ledger exists")):
        with pytest.raises(scaffold.ScaffoldError, match=why):
            scaffold.write(tmp_path, bad, set(families.available()))
    assert (tmp_path / "pyproject.toml").read_text() == before
    assert not (tmp_path / "environments").exists()
