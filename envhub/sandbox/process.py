"""Host-side process and file helpers both sandbox backends share.

The backends find a sandbox's processes differently (bubblewrap: the host's process tree;
Docker: the container's cgroup) but signal them, copy workspaces and set up the shell the
same way: those pieces live here once.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import os
import subprocess
from collections.abc import Sequence
from pathlib import Path

from envhub.errors import EnvError
from envhub.sandbox.base import WORKSPACE

#: The persistent shell every sandbox runs.
SHELL = ("/bin/bash", "--noprofile", "--norc")
PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
#: What the agent's uid is called inside a sandbox, whatever the host calls it.
AGENT = "agent"


def base_env() -> dict[str, str]:
    """The environment every sandboxed process starts with (a spec's `env` goes on top)."""
    return {"PATH": PATH, "HOME": WORKSPACE, "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "TERM": "dumb",
            "USER": AGENT, "TZ": "UTC", "TMPDIR": "/tmp"}


def children(pid: int) -> list[int]:
    """The direct children of `pid` (its main thread's)."""
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            return [int(c) for c in f.read().split()]
    except FileNotFoundError:
        return []


def descendants(pid: int) -> list[int]:
    """Every live descendant of `pid`, parents before children."""
    out: list[int] = []
    stack = [pid]
    while stack:
        p = stack.pop()
        try:
            for tid in os.listdir(f"/proc/{p}/task"):
                with open(f"/proc/{p}/task/{tid}/children") as f:
                    kids = [int(c) for c in f.read().split()]
                out.extend(kids)
                stack.extend(kids)
        except (FileNotFoundError, ProcessLookupError, NotADirectoryError):
            continue
    return out


def signal_all(pids: Sequence[int], sig: int) -> None:
    """Send `sig` to each pid; ones already gone (or never ours) are skipped."""
    for p in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(p, sig)


def chown_tree(root: Path, uid: int) -> None:
    """Give a whole tree to `uid` (links themselves, never what they point to)."""
    os.chown(root, uid, uid, follow_symlinks=False)
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            os.chown(os.path.join(dirpath, name), uid, uid, follow_symlinks=False)


async def copy_tree(src: Path, dest: Path, *, into: bool = False) -> None:
    """Copy a tree with modes and symlinks as they are (`cp -a`, reflink where possible): to `dest`
    itself, or with `into` the contents of `src` into the existing folder `dest`."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    argv = ["cp", "-a", "--reflink=auto", f"{src}/.", f"{dest}/"] if into else \
        ["cp", "-a", "--reflink=auto", "--no-target-directory", str(src), str(dest)]
    # On a worker thread, by vfork: uvloop's own start would stall the loop (envhub.sandbox.spawn).
    done = await asyncio.to_thread(subprocess.run, argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False)
    if done.returncode != 0:
        raise EnvError(f"copying {src} failed: {done.stderr.decode(errors='replace').strip()}")


def cpu_set(cpus: float | None) -> list[int] | None:
    """The CPUs a sandbox limited to `cpus` is pinned to (what `nproc` then reports): the first
    ceil(cpus) of those this server may use; None for no limit."""
    if cpus is None:
        return None
    allowed = sorted(os.sched_getaffinity(0))
    return allowed[:max(1, min(len(allowed), math.ceil(cpus)))]
