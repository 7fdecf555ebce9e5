"""Shared helpers for the deterministic generators of terminal task data.

Run a generator from the repo root: `python3 tasks/terminal/_gen/<task>.py`; it rewrites that
task's `state/` (and any hidden test data) from a fixed seed, so the committed files can always
be reproduced. Git bundles are the exception: commit hashes are reproducible (fixed identities
and dates), the bundle's pack bytes may not be, so regenerate only when the history changes.

Generators: count-error-lines.py, access_logs.py (top-ips, http-status-summary),
find-large-files.py, archive-site.py, unzip-merge.py, git_tasks.py (git-commit-fix,
git-find-commit, git-merge-conflict, release-pipeline), data_tasks.py (csv-join, jq-admins,
jsonl-summary, dedupe-emails, split-by-region, sqlite-report). The other tasks' files are
small and committed as written.
"""

from __future__ import annotations

import random
import shutil
import subprocess
from pathlib import Path

TASKS = Path(__file__).resolve().parents[1]


def task_dir(name: str) -> Path:
    return TASKS / name


def fresh_state(name: str) -> Path:
    """Empty `state/` of task `name`."""
    state = task_dir(name) / "state"
    shutil.rmtree(state, ignore_errors=True)
    state.mkdir(parents=True)
    return state


def rng(name: str) -> random.Random:
    return random.Random(f"envhub-terminal-{name}")


GIT_ENV = {"GIT_AUTHOR_NAME": "Dana Dev", "GIT_AUTHOR_EMAIL": "dana@example.com",
           "GIT_COMMITTER_NAME": "Dana Dev", "GIT_COMMITTER_EMAIL": "dana@example.com",
           "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1", "PATH": "/usr/bin:/bin",
           "TZ": "UTC", "HOME": "/tmp"}


def git(repo: Path, *args: str, date: str | None = None) -> str:
    """Run git with a fixed identity (and a fixed date, so hashes are reproducible)."""
    env = dict(GIT_ENV)
    if date:
        env.update(GIT_AUTHOR_DATE=date, GIT_COMMITTER_DATE=date)
    return subprocess.run(["git", "-c", "init.defaultBranch=main", *args], cwd=repo, env=env, check=True,
                          capture_output=True, text=True).stdout
