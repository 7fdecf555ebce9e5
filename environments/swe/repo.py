"""A SWE task's repository: its `task.yaml` metadata and the cached base checkout.

The agent's workspace is a checkout of `base_commit`, without the test patch: for a hand-written
task, from `state/repo.bundle`; for a factory task, the pinned upstream source
(`environments/swe/source.py`) with the gold patch reversed (the bug) and its FAIL_TO_PASS tests
deleted (`verifiers.swe_twins.hide`: the package's own tests judge it, so the agent must not read
them; grading restores them from `protected.tar`), committed as the single commit `base_commit`.
Building it costs a second or more, so each task's checkout is prepared once under
`<data_dir>/swe-cache/<key>/repo` (the key hashes what it is made of) and every reset copies it as
the sandbox template.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Sequence
from pathlib import Path

from envhub.errors import EnvError, TaskInvalid
from envhub.tasks.model import Task
from environments.swe import source as swe_source
from verifiers.swe import SweConfig, git_env

BUNDLE = "repo.bundle"
_locks: dict[str, threading.Lock] = {}
_locks_guard = threading.Lock()


def config(task: Task) -> SweConfig:
    """The task's SWE metadata, checked for the fields grading needs."""
    meta = task.config.metadata
    missing = [k for k in ("language", "test_command", "report", "base_commit") if not meta.get(k)]
    if missing:
        raise TaskInvalid(f"{task.id}: task.yaml metadata lacks {', '.join(missing)}")
    try:
        return SweConfig.from_metadata(meta, task.config.limits.verify_timeout_s)
    except (KeyError, TypeError) as e:
        raise TaskInvalid(f"{task.id}: bad SWE metadata: {e}") from e


def base_commit(task: Task) -> str:
    return str(task.config.metadata["base_commit"])


def bundle_path(task: Task) -> Path:
    return task.state_dir / BUNDLE


def cache_key(task: Task) -> str:
    h = hashlib.sha256()
    src = swe_source.of(task.config.metadata, task.id)
    parts = ([task.solution_dir / "gold.patch"] if src else [bundle_path(task)])
    if src:
        h.update(src.key.encode())
        parts.append(task.tests_dir / "tests.json")  # the hidden tests
    for part in parts:
        with open(part, "rb") as f:
            for chunk in iter(lambda: f.read(1 << 20), b""):
                h.update(chunk)
    h.update(base_commit(task).encode())
    return h.hexdigest()[:32]


def git(*args: str, cwd: Path | None = None, check: bool = True, input: str | None = None) -> str:
    """Run git with no user or system config (so no host settings leak into task repositories)."""
    home = Path(tempfile.mkdtemp(prefix="swe-git-"))
    try:
        proc = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, input=input,
                              env={**git_env(home), "GIT_AUTHOR_NAME": "envhub", "GIT_AUTHOR_EMAIL": "envhub@localhost",
                                   "GIT_COMMITTER_NAME": "envhub", "GIT_COMMITTER_EMAIL": "envhub@localhost",
                                   "GIT_AUTHOR_DATE": "2024-01-01T00:00:00Z",
                                   "GIT_COMMITTER_DATE": "2024-01-01T00:00:00Z"}, timeout=300)
    finally:
        shutil.rmtree(home, ignore_errors=True)
    if check and proc.returncode != 0:
        raise EnvError(f"git {' '.join(args[:3])} failed: {(proc.stderr or proc.stdout).strip()[-800:]}")
    return proc.stdout


def clone_base(task: Task, dest: Path, data_dir: Path | None = None) -> None:
    """The base checkout in `dest`: the bundle cloned at the base commit with no remote, or a
    factory task's source with its bug committed."""
    src = swe_source.of(task.config.metadata, task.id)
    if src is not None:
        from envhub.config import get_settings

        _base_from_source(task, src, data_dir or get_settings().data_dir, dest)
        return
    bundle = bundle_path(task)
    if not bundle.is_file():
        raise TaskInvalid(f"{task.id}: {bundle} is missing")
    git("clone", "-q", "--no-checkout", str(bundle), str(dest))
    git("-c", "advice.detachedHead=false", "checkout", "-q", "--detach", base_commit(task), cwd=dest)
    git("remote", "remove", "origin", cwd=dest)
    # Only the base commit's history stays reachable: no branch may point past it.
    for ref in git("for-each-ref", "--format=%(refname)", "refs/heads", "refs/tags", cwd=dest).split():
        git("update-ref", "-d", ref, cwd=dest)
    git("branch", "-q", "main", cwd=dest)
    git("-c", "advice.detachedHead=false", "checkout", "-q", "main", cwd=dest)
    git("reflog", "expire", "--expire=now", "--all", cwd=dest)
    git("gc", "-q", "--prune=now", cwd=dest)


def source_base_commit(src: swe_source.Source, gold: Path, data_dir: Path, dest: Path, *,
                       hidden: Sequence[str] = (), language: str = "", protected: Sequence[str] = ()) -> str:
    """Build in `dest` the upstream tree of `src` with the patch `gold` reversed (the bug) and the
    tests `hidden` deleted, committed once; the commit id.

    Files are copies, never links into the shared tree: whoever edits a checkout in place (a
    forger, a control, a twin) must not change the next task's base."""
    from verifiers import swe_twins
    from verifiers.swe import PatchError, apply_patch, is_protected

    upstream = swe_source.tree(src, data_dir)
    shutil.copytree(upstream, dest, symlinks=True)
    try:
        apply_patch(dest, gold, reverse=True)
    except PatchError as e:
        raise TaskInvalid(f"the gold patch does not reverse on {src.id}: {e}") from e
    if hidden:
        unseen = swe_twins.hide(dest, language, list(hidden), lambda rel: is_protected(rel, protected))
        if unseen:
            raise TaskInvalid(f"{len(unseen)} FAIL_TO_PASS test(s) cannot be hidden from the checkout (no "
                              f"definition found by name): " + ", ".join(map(repr, unseen[:3])))
    git("init", "-q", "-b", "main", cwd=dest)
    git("add", "-A", "--force", cwd=dest)  # the tree as the registry ships it, ignored files too
    git("commit", "-q", "--no-verify", "-m", "base", cwd=dest)
    return git("rev-parse", "HEAD", cwd=dest).strip()


def _base_from_source(task: Task, src: swe_source.Source, data_dir: Path, dest: Path) -> None:
    gold = task.solution_dir / "gold.patch"
    if not gold.is_file():
        raise TaskInvalid(f"{task.id}: {gold} is missing")
    from verifiers.swe import load_tests_json

    f2p, _ = load_tests_json(task.path)
    cfg = config(task)
    head = source_base_commit(src, gold, data_dir, dest, hidden=f2p, language=cfg.language,
                              protected=cfg.protected_paths)
    if head != base_commit(task):
        raise TaskInvalid(f"{task.id}: the base built from {src.id} is commit {head}, not the task's "
                          f"base_commit {base_commit(task)}")


def checkout(task: Task, data_dir: Path) -> Path:
    """The prepared base checkout of `task` (built once; safe to call from several threads)."""
    root = data_dir / "swe-cache" / cache_key(task)
    repo = root / "repo"
    if repo.is_dir():
        return repo
    with _locks_guard:
        lock = _locks.setdefault(str(root), threading.Lock())
    with lock:
        if repo.is_dir():
            return repo
        root.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix="repo-", dir=root))
        try:
            clone_base(task, tmp / "repo", data_dir)
            for p in (tmp, *tmp.rglob("*")):
                if not p.is_symlink():
                    p.chmod(p.stat().st_mode | 0o444 | (0o111 if p.is_dir() else 0))
            os.replace(tmp / "repo", repo)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        for p in (data_dir / "swe-cache", root):
            p.chmod(0o755)
    return repo
