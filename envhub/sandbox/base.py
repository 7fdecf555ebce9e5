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
#: A `memory_mb` this large means no address-space limit (validation's harness control: sanitizers
#: re-exec themselves with RLIMIT_AS raised to infinity, which any finite hard limit forbids).
UNLIMITED_MB = 1 << 40


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


class Service(ABC):
    """A long-lived process in a sandbox of its own (`SandboxBackend.start_service`): the warm
    verifier's zygote, which forks a fresh, unprivileged process per verify."""

    @property
    @abstractmethod
    def alive(self) -> bool:
        """Neither killed nor exited."""

    @abstractmethod
    def kill(self) -> None:
        """End it now, with everything it started; its sandbox stays until `close`."""

    @abstractmethod
    async def close(self) -> None:
        """Kill, reap and give back what it held (its identity); idempotent."""

    @abstractmethod
    async def hand_over(self, folder: Path) -> None:
        """Make `folder` (a verify's copy of a state) the service's own, as a sandbox's workspace is."""

    @abstractmethod
    async def output(self, limit: int) -> str:
        """What it printed so far, up to `limit` bytes (why it failed to start)."""


class SandboxBackend(ABC):
    """Starts sandboxes; one per server."""

    name: str
    #: Why this backend hosts no `Service` (the warm verifier's zygotes), or None where it does. A
    #: backend without services verifies cold, a sandbox per verify.
    no_services: str | None = "it does not implement start_service"

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

    async def start_service(self, spec: SandboxSpec, argv: Sequence[str], *, capabilities: Sequence[str] = (),
                            device_root: str | None = None, pass_fds: Sequence[int] = ()) -> Service:
        """Start `argv` as a long-lived service in a sandbox of its own, with `spec.template` bound at
        /workspace as it is (no copy) and `pass_fds` inherited. So that it can make namespaces and
        mounts for its children, it keeps `capabilities` (it must drop them before it runs anything
        untrusted) and gets a second /dev at `device_root`. Backends that cannot say why in
        `no_services`."""
        raise NotSupported(f"the {self.name} backend hosts no services: {self.no_services}")

    async def aclose(self) -> None:  # noqa: B027 - optional hook
        """Release pooled resources."""
