"""Whether a factory task's twins pin every in-process forger: the gate's catch must not be luck.

Grading plants the twins of every twinned FAIL_TO_PASS test in every run, and the twins of two
PASS_TO_PASS tests drawn afresh. A forger that makes a required test pass (`environments.swe.forgers`:
verdicts flipped for the tests that reached the library, the runner's output rewritten, answers
read from the calling assertion) makes that test's twins pass too, since a twin makes the same
calls in the same shape. So a forger is caught in every run when one of the FAIL_TO_PASS tests it
forges has twins; when it forges only untwinned ones, whether the drawn PASS_TO_PASS twins happen
to be of a shape it forges decides, and the same task is validated one day and rejected the next
(CI's sample re-validation saw exactly that: a caller-aware forger, a FAIL_TO_PASS test with no
twin, two drawn twins it did not answer). The factory keeps a candidate only when, for every
forger of its language, the FAIL_TO_PASS tests it forges (one run of the bug with the forger in
place, no twins) are none, or include a twinned one; and at least one FAIL_TO_PASS test must have
twins at all.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from envhub.config import get_settings
from envhub.tasks.model import Task
from environments.swe.forgers import FORGERS, Forger
from environments.swe.repo import checkout
from verifiers import swe_twins
from verifiers.swe import PASSED, SweConfig, load_tests_json, run_state


def unpinned(task: Task, data_dir: Path | None = None, forgers: dict[str, Forger] | None = None) -> list[str]:
    """Why the task's twins would catch a forger only by chance (empty: every forger is pinned)."""
    f2p, p2p = load_tests_json(task.path)
    twinned = {t.test for t in swe_twins.load(task.tests_dir)} & set(f2p)
    if not twinned:
        return [f"none of the {len(f2p)} FAIL_TO_PASS tests has a twin"]
    if twinned == set(f2p):
        return []  # whatever a forger forges has twins
    cfg = SweConfig.from_task_dir(task.path)
    problems = []
    for name, forger in (FORGERS if forgers is None else forgers).items():
        work = Path(tempfile.mkdtemp(prefix="swe-pinned-", dir=data_dir))
        try:
            work.chmod(0o755)
            repo = work / "repo"
            # a copy: the prepared checkout is every reset's template, and a forger edits files in place
            shutil.copytree(checkout(task, data_dir or get_settings().data_dir), repo, symlinks=True)
            if not forger(repo, cfg, f2p + p2p):
                continue  # no forger of this kind for the language
            run = run_state(repo, task.path)
            forged = {t for t in f2p if run.statuses.get(t) == PASSED}
            if forged and not forged & twinned:
                problems.append(f"{name} forges {len(forged)} FAIL_TO_PASS test(s), none with a twin "
                                f"(e.g. {sorted(forged)[0]})")
        finally:
            shutil.rmtree(work, ignore_errors=True)
    return problems
