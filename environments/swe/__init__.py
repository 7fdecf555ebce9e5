"""The SWE family: fix a real bug in a small repository in one of 18 languages.

A task is `tasks/swe/<language>/<name>/` (see `environments/swe/repo.py` and the task format in
`verifiers/swe.py`): the repository as a git bundle at its base commit, the issue text, a hidden
gold patch, a hidden test patch with its FAIL_TO_PASS / PASS_TO_PASS ids, and the toolchain,
build, test command and report format in `task.yaml`'s metadata. Grading runs the repository's
own tests and parses the runner's structured report (`verifiers.swe`).
"""

from environments.swe.family import SweEnvironment, SweFamily

__all__ = ["SweEnvironment", "SweFamily"]
