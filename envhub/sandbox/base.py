"""The sandbox interface, after SWE-ReX's deployment/runtime split.

`SandboxBackend` knows *where* sandboxes run (bubblewrap here, a container engine, a cluster)
and starts them; a `Sandbox` is one running, isolated machine with a persistent shell and a
writable workspace. Requests and results are small typed models.
"""

from __future__ import annotations

import base64
import shlex
from abc import ABC, abstractmethod
from collections.abc import Sequence
from pathlib import Path

from pydantic import BaseModel, Field

from envhub.errors import NotSupported

WORKSPACE = "/workspace"
#: The variable naming the descriptor a `run_once(result=True)` program writes its result to.
RESULT_FD_ENV = "ENVHUB_RESULT_FD"
#: The most a result channel carries; a program that writes more has written no result.
RESULT_LIMIT = 4 * 1024 * 1024


class SandboxLimits(BaseModel):
    cpu_s: int = Field(default=600, description="CPU seconds per process (RLIMIT_CPU).")
    memory_mb: int = Field(default=1024, description="Address space per process (RLIMIT_AS).")
    processes: int = Field(default=256, description="Processes for the whole sandbox (RLIMIT_NPROC).")
    file_mb: int = Field(default=256, description="Largest file a process may write (RLIMIT_FSIZE).")
    open_files: int = Field(default=1024)
    cpus: float | None = Field(default=None, gt=0, description="CPUs the sandbox may use; None: the backend's default.")


class SandboxSpec(BaseModel):
    """What to start."""

    #: Host folder whose *copy* becomes the writable `/workspace`; None for an empty one.
    template: Path | None = None
    #: The template is this sandbox's alone (a fork's copy): moved into place rather than copied
    #: where the backend can, so a fork copies its source's workspace once, not twice.
    take_template: bool = False
    #: Extra read-only binds, host path → path inside.
    ro_binds: dict[str, str] = Field(default_factory=dict)
    #: Extra writable binds, host path → path inside (the verifier's scratch space).
    rw_binds: dict[str, str] = Field(default_factory=dict)
    env: dict[str, str] = Field(default_factory=dict)
    limits: SandboxLimits = Field(default_factory=SandboxLimits)
    workdir: str = WORKSPACE
    #: Mount the workspace read-only (the verifier's view of final state).
    read_only_workspace: bool = False


class ExecResult(BaseModel):
    exit_code: int | None = Field(description="None when the command was killed at its deadline.")
    output: str = Field(description="stdout and stderr interleaved, clipped to the output limit.")
    timed_out: bool = False
    truncated: bool = False
    elapsed_s: float = 0.0
    #: What a `run_once(result=True)` program wrote to its result channel (None when not asked for).
    result: bytes | None = None


class Sandbox(ABC):
    """One running sandbox (a 'runtime' in SWE-ReX's words)."""

    @abstractmethod
    async def run(self, command: str, *, timeout_s: float, max_output: int = 64_000) -> ExecResult:
        """Run `command` in the sandbox's persistent shell (cwd and exported variables persist).

        At the deadline every process the command started is killed and the shell survives.
        Raises `EnvError` if the sandbox died for a reason the agent could not have caused, and
        `SandboxGone` (an `AgentError`) if the agent's own command ended the shell.
        """

    async def exec(self, argv: Sequence[str], *, timeout_s: float, stdin: bytes | None = None,
                   max_output: int = 64_000) -> ExecResult:
        """Run one process through the persistent shell, in a subshell (cwd and variables untouched)."""
        cmd = " ".join(shlex.quote(a) for a in argv)
        if stdin is not None:
            cmd = f"printf %s {base64.b64encode(stdin).decode()} | base64 -d | {cmd}"
        return await self.run(f"( {cmd} )", timeout_s=timeout_s, max_output=max_output)

    @abstractmethod
    async def is_alive(self) -> bool: ...

    @abstractmethod
    async def export(self, dest: Path) -> None:
        """Freeze every process and copy the workspace to host folder `dest` (must not exist)."""

    async def snapshot(self, dest: Path) -> None:
        """Copy the workspace to host folder `dest` (must not exist) while every process is paused,
        then let them go on: a fork's state. A backend that cannot pause and copy says so."""
        raise NotSupported(f"the {type(self).__name__} sandbox cannot copy a live workspace")

    @abstractmethod
    async def close(self) -> None:
        """Kill everything and remove the workspace; idempotent."""


class SandboxBackend(ABC):
    """Starts sandboxes; one per server."""

    name: str

    @abstractmethod
    def check(self) -> None:
        """Raise `SandboxUnavailable` with an actionable message if this backend cannot run here."""

    @abstractmethod
    async def start(self, spec: SandboxSpec) -> Sandbox:
        """Start a sandbox with a persistent shell over a fresh copy of `spec.template`."""

    @abstractmethod
    async def run_once(self, spec: SandboxSpec, argv: Sequence[str], *, timeout_s: float, max_output: int = 64_000,
                       result: bool = False) -> ExecResult:
        """Run one command in a fresh, throwaway sandbox (no persistent shell): the verifier's path.

        With `result`, the program gets a result channel: a write-only descriptor named by
        `$ENVHUB_RESULT_FD` that the backend owns (a pipe, or a file only root can open), out of
        band of everything the program reads, so the judged state can never write the result.
        Its bytes come back as `ExecResult.result` (empty when none or more than `RESULT_LIMIT`).
        """

    async def aclose(self) -> None:  # noqa: B027 - optional hook
        """Release pooled resources."""
