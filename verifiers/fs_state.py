"""Filesystem state: files, contents, modes and command output over the final workspace."""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
import subprocess
import tempfile
from pathlib import Path

from verifiers import STATE


def path(rel: str) -> Path:
    """The final-state path of `rel`, refusing paths that leave the workspace."""
    p = (STATE / rel)
    if not p.resolve(strict=False).is_relative_to(STATE.resolve()) and not p.is_symlink():
        raise AssertionError(f"{rel!r} points outside the workspace")
    return p


def read_text(rel: str, *, max_bytes: int = 8 * 1024 * 1024) -> str:
    p = path(rel)
    assert p.is_file() and not p.is_symlink(), f"{rel} is missing or not a regular file"
    size = p.stat().st_size
    assert size <= max_bytes, f"{rel} is {size} bytes, over the {max_bytes} limit"
    return p.read_text(encoding="utf-8", errors="replace")


def read_lines(rel: str) -> list[str]:
    return read_text(rel).splitlines()


def mode(rel: str) -> int:
    p = path(rel)
    assert p.exists() or p.is_symlink(), f"{rel} is missing"
    return stat.S_IMODE(p.lstat().st_mode)


def sha256(rel: str) -> str:
    p = path(rel)
    assert p.is_file(), f"{rel} is missing"
    return hashlib.sha256(p.read_bytes()).hexdigest()


def exists(rel: str) -> bool:
    return path(rel).exists()


def listing(rel: str = ".") -> list[str]:
    """Relative paths of every entry below `rel`, sorted."""
    root = path(rel)
    assert root.is_dir(), f"{rel} is not a directory"
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*"))


def scratch_copy() -> Path:
    """A writable copy of the final workspace, for checks that must run the agent's work."""
    dest = Path(tempfile.mkdtemp(prefix="state-")) / "workspace"
    shutil.copytree(STATE, dest, symlinks=True)
    return dest


def run(cmd: str | list[str], *, cwd: Path | None = None, timeout: float = 30,
        input: str | None = None, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """Run a command with a clean PATH (no agent-controlled directories) in a scratch copy.

    Agent-written binaries are never found through PATH: trojans on PATH do not apply.
    """
    clean = {"PATH": "/usr/bin:/bin", "HOME": os.environ.get("HOME", "/tmp"), "LANG": "C.UTF-8",
             "LC_ALL": "C.UTF-8", "TZ": "UTC", **(env or {})}
    return subprocess.run(cmd, shell=isinstance(cmd, str), cwd=cwd or scratch_copy(), timeout=timeout,
                          input=input, capture_output=True, text=True, env=clean, errors="replace")


_shared_copy: Path | None = None


def shared_copy() -> Path:
    """One writable scratch copy of the final state per verifier run, for read-mostly tools
    (git, sqlite3) that need to write lock or index files. Checks must not change it."""
    global _shared_copy
    if _shared_copy is None:
        _shared_copy = scratch_copy()
    return _shared_copy


def git(repo: str, *args: str, check: bool = True) -> str:
    """`git <args>` in the final-state repository `repo` (a scratch copy), its stdout stripped.

    Runs with no user or system config and any directory owner accepted, so the agent's
    `.gitconfig` cannot change what the verifier sees (aliases, hooks paths, pagers).
    """
    assert path(repo).joinpath(".git").exists(), f"{repo} is not a git repository"
    res = run(["git", "-c", "safe.directory=*", "-c", "core.hooksPath=/dev/null", "-C", repo, *args],
              cwd=shared_copy(), env={"GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1",
                                      "GIT_PAGER": "cat", "GIT_TERMINAL_PROMPT": "0"})
    if check:
        assert res.returncode == 0, f"git {' '.join(args)} failed: {res.stderr.strip()[-500:]}"
    return res.stdout.strip()
