"""db's validation records are keyed by the files that judge (`DbFamily.judged_by`), not its tools."""

from __future__ import annotations

from environments.db import DbFamily
from environments.db import domains as registry


def test_judged_files_exist_and_leave_tools_and_synthesis_out():
    files = DbFamily.judge_files()
    root = DbFamily.package_dir()
    assert all(f.is_file() for f in files), [f for f in files if not f.is_file()]  # a typo would key nothing
    names = {f.relative_to(root).as_posix() for f in files}
    assert {"env.py", "calls.py", "mutators.py", "checks.py"} <= names
    assert {f"domains/{n}.py" for n in registry.NAMES} <= names  # the seed data
    assert not names & {"core.py", "synth.py", "intents.py"}
    assert not [n for n in names if n.endswith(("_tools.py", "_tasks.py"))]


def test_the_served_family_is_family_py_s_and_judges_nothing_of_its_own():
    """The package (what the installed entry point `environments.db:DbFamily` names) serves
    `family.py`'s classes, which copy live episodes; that file keys no record."""
    from environments.db import family

    assert DbFamily is family.DbFamily
    assert family.__file__ and "family.py" not in {f.name for f in DbFamily.judge_files()}
