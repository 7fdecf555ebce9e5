"""One session's container as a `Sandbox`: the agent's persistent shell, deadline kills from the
container's cgroup, and fault classification from the engine's and the host's view."""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
import signal
import time
from pathlib import Path
from typing import Protocol

from envhub.errors import AgentError, EnvError, SandboxGone, SandboxOOM, Unavailable
from envhub.sandbox.base import ExecResult, Sandbox
from envhub.sandbox.docker.engine import Engine
from envhub.sandbox.docker.pool import Box
from envhub.sandbox.process import copy_tree, signal_all
from envhub.sandbox.shell import RUNAWAY_NOTE, SHELL_GRACE_S, converse, frame


class Host(Protocol):
    """What a sandbox asks of the backend that started it (`DockerBackend`)."""

    engine: Engine
    #: container id -> the cgroup's OOM kills when the container was handed out
    oom_base: dict[str, int]

    async def running(self, cid: str) -> bool: ...

    async def remove(self, box: Box) -> None: ...


class DockerSandbox(Sandbox):
    def __init__(self, backend: Host, box: Box) -> None:
        self._backend = backend
        self._box = box
        self._closed = False
        self._paused = False
        self._ended = False

    @property
    def container_id(self) -> str:
        return self._box.cid

    @property
    def workspace(self) -> Path:
        return self._box.workspace

    async def is_alive(self) -> bool:
        if self._closed or self._box.shell.returncode is not None:
            return False
        return await self._backend.running(self._box.cid)

    async def _died(self) -> AgentError | EnvError:
        """Classify a dead shell from the engine's and the host's view, not from its output."""
        box = self._box
        if self._ended:  # the agent wedged its shell and we ended the container (see `_end_keep_files`)
            return SandboxGone("the shell was ended after a command wedged it; files in /workspace are kept for "
                               "the verifier")
        with contextlib.suppress(ProcessLookupError, PermissionError, OSError):
            os.kill(box.shell_pid, 0)
            return EnvError("the sandbox's shell stream broke while the shell was still running")
        try:
            running = await self._backend.running(box.cid)
        except Unavailable as e:
            return EnvError(f"the container engine went away: {e.detail}")
        if not running:
            # PID 1 is root and out of the agent's reach: only the host, an operator or the engine
            # can have stopped the container.
            return EnvError("the sandbox container was stopped from outside", container=box.cid)
        if box.cgroup.oom_kills() > self._backend.oom_base.get(box.cid, 0):
            return SandboxOOM(f"the shell was killed for exceeding the sandbox's {box.limits.memory_mb} MiB "
                              "memory limit. Files in /workspace are kept for the verifier.")
        return SandboxGone(f"the shell exited (status {box.shell.returncode}); the agent's command ended it. "
                           "Files in /workspace are kept for the verifier.", exit_code=box.shell.returncode)

    async def run(self, command: str, *, timeout_s: float, max_output: int = 64_000) -> ExecResult:
        if self._closed:
            raise EnvError("sandbox is closed")
        box = self._box
        if box.shell.returncode is not None:
            raise await self._died()
        started = time.monotonic()
        marker = secrets.token_hex(12)
        script = frame(command, marker)
        cleared = self._clear_runaway()
        before = box.cgroup.pids()
        ooms_before = box.cgroup.oom_kills()

        async def on_idle() -> bool:  # a bomb still forking from an earlier command
            return self._clear_runaway()

        reply = await converse(box.shell, script, marker, deadline=started + timeout_s, max_output=max_output,
                               grace_s=SHELL_GRACE_S, kill_new=lambda: self._kill_new(before), died=self._died,
                               hard_kill=self._end_keep_files, on_idle=on_idle)
        if box.cgroup.oom_kills() > ooms_before:
            self._backend.oom_base[box.cid] = box.cgroup.oom_kills()
            raise SandboxOOM(f"the command exceeded the sandbox's {box.limits.memory_mb} MiB memory limit and the "
                             f"kernel killed it (exit status {reply.status}). Output (tail):\n{reply.output[-1500:]}",
                             exit_code=reply.status)
        runaway = cleared or reply.cleared or self._clear_runaway()
        return reply.result(started, RUNAWAY_NOTE if runaway else "")

    def _clear_runaway(self) -> bool:
        """A runaway (fork bomb) leaves the container at its pids limit, where the shell cannot fork:
        kill every process but PID 1, its `sleep` and the shell, background services included."""
        box = self._box
        if box.cgroup.task_count() < 0.8 * box.limits.processes:
            return False
        for _ in range(100):
            rest = [p for p in box.cgroup.pids() - box.core_pids]
            if not rest:
                break
            signal_all(rest, signal.SIGKILL)
        return True

    def _kill_new(self, before: set[int]) -> None:
        """Kill every process the current command started (orphans too), sparing PID 1, the shell
        and background processes that were running before it. Host pids, from the cgroup."""
        box = self._box
        for _ in range(100):
            new = [p for p in box.cgroup.pids() - before if p != box.shell_pid]
            if not new:
                return
            signal_all(new, signal.SIGKILL)

    async def _end_keep_files(self) -> None:
        """The agent wedged its shell: end every process in the container (it stops) but keep
        /workspace for the verifier, as the local backend does; `close` removes the rest."""
        box = self._box
        with contextlib.suppress(ProcessLookupError):
            box.shell.kill()
        signal_all(list(box.cgroup.pids()), signal.SIGKILL)
        with contextlib.suppress(Exception):
            await asyncio.wait_for(box.shell.wait(), timeout=5)
        self._ended = True

    async def export(self, dest: Path) -> None:
        if self._closed:
            raise EnvError("sandbox is closed")
        if not self._paused and not self._ended:  # an ended container has nothing left to pause
            await self._backend.engine.call("POST", f"/containers/{self._box.cid}/pause")
            self._paused = True
        await copy_tree(self.workspace, dest)

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        await self._backend.remove(self._box)

