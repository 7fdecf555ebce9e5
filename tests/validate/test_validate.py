"""`envhub validate` accepts a sound task and rejects broken ones, for the right reason."""

import json
from pathlib import Path

import pytest

from envhub.records import validation_status, write_record
from envhub.tasks.catalog import Catalog
from envhub.validate.core import Validator
from tests.conftest import make_settings, running_hub

REPO_TASKS = Path(__file__).resolve().parents[2] / "tasks"


def echo_task(root: Path, name: str, test_body: str) -> None:
    d = root / "echo" / name
    (d / "tests").mkdir(parents=True)
    (d / "solution").mkdir()
    (d / "task.yaml").write_text(f"id: echo/{name}\nfamily: echo\ntitle: {name}\nlimits: {{verify_timeout_s: 30}}\n")
    (d / "prompt.md").write_text('Echo "done".')
    (d / "solution" / "actions.json").write_text(json.dumps([{"tool": "echo", "arguments": {"message": "done"}}]))
    (d / "tests" / "test_v.py").write_text(test_body)


SOUND = ("import json\nfrom verifiers import STATE, check\n\n@check('said-done')\ndef test_done():\n"
         "    assert 'done' in json.loads((STATE / 'messages.json').read_text())\n")
VACUOUS = "def test_always():\n    assert True\n"
READS_FORGED_RESULT = ("import json\nfrom verifiers import STATE\n\ndef test_result():\n"
                       "    p = STATE / 'result.json'\n"
                       "    if p.exists():\n        assert json.loads(p.read_text())['passed']\n        return\n"
                       "    assert 'done' in json.loads((STATE / 'messages.json').read_text())\n")


@pytest.fixture
async def validator(tmp_path):
    for name, body in (("sound", SOUND), ("vacuous", VACUOUS), ("gullible", READS_FORGED_RESULT)):
        echo_task(tmp_path, name, body)
    async with running_hub(make_settings(families=["echo"], tasks_dir=tmp_path, store_enabled=False)) as hub:
        v = Validator(hub, runs=2)
        yield v, hub.catalog
        v.close()


async def test_a_sound_task_is_validated_and_recorded(validator):
    v, catalog = validator
    task = catalog.get("echo/sound")
    report = await v.validate(task)
    assert report.status == "validated", [f for f in report.findings if not f.ok]
    assert {f.check for f in report.findings} >= {"static", "oracle:run1", "oracle:run2", "null", "determinism",
                                                  "exploit:planted_conftest", "exploit:forged_result_file",
                                                  "exploit:fake_success_output", "exploit:trojaned_path_binary"}
    assert validation_status(task) == "validated"


async def test_a_verifier_that_passes_for_a_do_nothing_agent_is_rejected(validator):
    v, catalog = validator
    report = await v.validate(catalog.get("echo/vacuous"))
    assert report.status == "rejected"
    assert [f.check for f in report.findings if not f.ok][0] == "null"
    assert validation_status(catalog.get("echo/vacuous")) == "rejected"


async def test_a_verifier_fooled_by_a_forged_result_file_is_rejected(validator):
    v, catalog = validator
    report = await v.validate(catalog.get("echo/gullible"))
    failed = {f.check for f in report.findings if not f.ok}
    assert failed == {"exploit:forged_result_file"}


def test_a_record_goes_stale_when_the_task_changes(tmp_path):
    echo_task(tmp_path, "sound", SOUND)
    task = Catalog(tmp_path).get("echo/sound")
    write_record(task, {"status": "validated"})
    assert validation_status(task) == "validated"
    (task.path / "prompt.md").write_text('Echo "done", please.')
    assert validation_status(task) == "stale"


def test_the_repository_catalogue_loads_without_broken_folders():
    catalog = Catalog(REPO_TASKS)
    assert catalog.tasks and not catalog.errors, catalog.errors


def test_a_record_is_keyed_by_the_files_a_family_declares_as_judging():
    """SWE declares its judging files: its tools are outside the key, its controls inside it."""
    from envhub.records import judge_parts

    task = Catalog(REPO_TASKS).for_family("swe")[0]
    parts = {p.relative_to(REPO_TASKS.parent).as_posix() for p in judge_parts(task)}
    assert "environments/swe/controls.py" in parts and "environments/swe/validate.py" in parts
    assert "environments/swe/tools.py" not in parts
    # A family that declares nothing is judged by its whole package.
    from envhub.env import Family

    class Undeclared(Family):
        name, description = "undeclared", ""
        make = tool_specs = None  # type: ignore[assignment]

    assert Undeclared.judge_files() == [Path(__file__).resolve().parent]


def test_the_runtime_keys_a_record_by_its_verdict_not_by_how_a_verify_is_carried_out():
    """How pytest runs and how its result becomes a verdict (`verdict.py`, the result plugin, the
    runtime's packages) key every record; the cold and warm ways of carrying a verify out do not:
    tests/verify/test_warm.py holds them to the same verdicts."""
    from envhub.records import judge_parts

    for family in ("echo", "db", "swe"):
        task = Catalog(REPO_TASKS).for_family(family)[0]
        parts = {p.relative_to(REPO_TASKS.parent).as_posix() for p in judge_parts(task)}
        assert {"envhub/verify/verdict.py", "envhub/verify/plugin.py", "verifiers/requirements.txt"} <= parts
        assert not parts & {"envhub/verify", "envhub/verify/runner.py", "envhub/verify/warm.py",
                            "envhub/verify/zygote.py", "envhub/verify/runtime.py"}


@pytest.mark.parametrize(("line", "module"), [
    ("from verifiers import fs_state as fs", "fs_state"),
    ("from verifiers import (\n    check,\n    db_state as db,\n)", "db_state"),
    ("import verifiers.office_prose as prose", "office_prose"),
    ("from verifiers.swe_reports import PASSED", "swe_reports"),
])
def test_every_form_of_importing_a_verifiers_module_puts_it_in_the_key(tmp_path, line, module):
    from envhub.records import LIBRARY, judge_parts

    echo_task(tmp_path, "uses-lib", SOUND + line + "\n")
    parts = judge_parts(Catalog(tmp_path).get("echo/uses-lib"))
    assert LIBRARY / f"{module}.py" in parts
    assert LIBRARY / "office.py" not in parts  # only what the tests import


def test_the_key_follows_the_library_modules_a_verifiers_module_imports(tmp_path):
    """`verifiers/office.py` imports `office_safe`: a change there changes what judges the task."""
    from envhub.records import LIBRARY, judge_parts

    echo_task(tmp_path, "office-lib", SOUND + "from verifiers import office as ov\n")
    parts = judge_parts(Catalog(tmp_path).get("echo/office-lib"))
    assert {LIBRARY / "office.py", LIBRARY / "office_safe.py"} <= set(parts)
