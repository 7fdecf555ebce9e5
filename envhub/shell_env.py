"""The base of environments that own one sandbox with a persistent shell (terminal, swe).

It starts the sandbox with the task's limits, runs the agent's `bash` tool, exports the
workspace for the verifier, copies a live episode (`snapshot`, `restore`: forks and snapshots) and
closes the sandbox; a family adds its own tools on top.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from envhub.env import EnvContext, Environment
from envhub.errors import AgentError, EnvError
from envhub.sandbox.base import WORKSPACE, ExecResult, Sandbox, SandboxLimits, SandboxSpec
from envhub.spec import Observation

if TYPE_CHECKING:
    from envhub.tasks.model import Task


#: Prints the shell's state a fork carries: its working directory, exported variables and options
#: (each line a command that sets it again), then `#process` lines for the processes left running
#: besides the shell (`/proc`: the sandbox is its own pid namespace). Run in the shell itself, not a
#: subshell: a subshell's `$$` is the shell's, its `$BASHPID` its own.
SHELL_STATE = r"""printf 'cd %q\n' "$PWD"; export -p; shopt -p; set +o | grep -v -e ' history$' -e ' monitor$'
for d in /proc/[0-9]*; do p=${d#/proc/}; [ "$p" = 1 ] || [ "$p" = $$ ] || [ "$p" = "$BASHPID" ] && continue
  c=$(tr '\0' ' ' < "$d/cmdline" 2>/dev/null); [ -n "$c" ] && printf '#process %s %s\n' "$p" "$c"; done; true"""


#: The snapshot's file of shell commands that set the state again.
SHELL_FILE = "shell.sh"


class ShellEnvironment(Environment):
    #: Largest file a process in the sandbox may write, in MiB (`SandboxLimits.file_mb`).
    file_mb: ClassVar[int] = SandboxLimits().file_mb

    def __init__(self, ctx: EnvContext) -> None:
        self.ctx = ctx
        self.sandbox: Sandbox | None = None
        self.task: Task | None = None

    def sandbox_limits(self, task: Task) -> SandboxLimits:
        """The agent's sandbox limits from `task.yaml`: memory, processes, CPUs, and CPU seconds
        for the whole episode."""
        limits = task.config.limits
        return SandboxLimits(memory_mb=limits.memory_mb, processes=limits.processes, cpus=limits.cpus,
                             cpu_s=int(limits.episode_timeout_s), file_mb=self.file_mb)

    async def start_sandbox(self, task: Task, template: Path | None, *, take: bool = False) -> Sandbox:
        """Start the episode's sandbox over a copy of `template` (None: an empty workspace; `take`:
        the folder itself, which is this episode's alone)."""
        self.task = task
        self.sandbox = await self.ctx.sandbox.start(SandboxSpec(template=template, take_template=take,
                                                                limits=self.sandbox_limits(task)))
        return self.sandbox

    def _sandbox(self) -> Sandbox:
        if self.sandbox is None or self.task is None:
            raise EnvError("environment was not reset")
        return self.sandbox

    @property
    def step_limit(self) -> float:
        """The task's per-step deadline, which caps every command."""
        assert self.task is not None
        return self.task.config.limits.step_timeout_s

    async def _bash(self, command: str, timeout_s: float | None = None) -> Observation:
        """The `bash` tool: one command in the persistent shell, cut at `timeout_s` (capped by the
        step limit)."""
        timeout = min(timeout_s or self.step_limit, self.step_limit)
        res = await self._sandbox().run(command, timeout_s=timeout, max_output=self.ctx.settings.max_output_bytes)
        if res.timed_out:
            text = f"{res.output}\n[command timed out after {timeout:g}s and was killed]"
        else:
            text = f"{res.output}\n[exit code {res.exit_code}]" if res.output else f"[exit code {res.exit_code}]"
        return Observation(text=text, is_error=res.timed_out or res.exit_code != 0, timed_out=res.timed_out,
                           data={"exit_code": res.exit_code, "timed_out": res.timed_out, "truncated": res.truncated,
                                 "elapsed_s": round(res.elapsed_s, 4)})

    async def export_state(self, dest: Path) -> None:
        await self._sandbox().export(dest)

    async def snapshot(self, dest: Path) -> dict[str, Any]:
        """The workspace (copied with every process paused) and the shell's working directory,
        exported variables and options. Processes are not carried, nor `/tmp` (each sandbox's own):
        the answer lists what was running."""
        sandbox = self._sandbox()
        state = await sandbox.run(SHELL_STATE, timeout_s=self.step_limit, max_output=1_000_000)
        if state.exit_code != 0:
            raise EnvError(f"the shell's state could not be read for the copy (exit {state.exit_code})")
        lines = state.output.splitlines()
        dest.mkdir(parents=True)
        (dest / SHELL_FILE).write_text("\n".join(line for line in lines if not line.startswith("#process ")))
        await sandbox.snapshot(dest / "workspace")
        return {"processes_not_carried": [line.removeprefix("#process ") for line in lines
                                          if line.startswith("#process ")]}

    async def restore(self, *, task: Task, state: Path) -> Observation:
        return await self._restore(task, state, take=False)

    async def restore_owned(self, *, task: Task, state: Path) -> Observation:
        return await self._restore(task, state, take=True)  # the workspace is moved: one copy a fork, not two

    async def _restore(self, task: Task, state: Path, *, take: bool) -> Observation:
        sandbox = await self.start_sandbox(task, state / "workspace", take=take)
        self.sandbox = ReplayFirst(sandbox, (state / SHELL_FILE).read_text(), self.step_limit)
        return Observation(text="The workspace and the shell (directory, exported variables, options) are as they "
                                "were; running processes and /tmp are not carried.",
                           data={"workspace": WORKSPACE})

    async def close(self) -> None:
        if self.sandbox is not None:
            await self.sandbox.close()


class ReplayFirst(Sandbox):
    """A copy's sandbox whose first command runs once the source shell's state is replayed in it, so
    a fork answers without waiting for the copy's shell to start (a reset does not wait for its shell
    either: the first step does). A line the new shell refuses (a read-only variable) is skipped;
    a shell that dies taking the state is an `EnvError` (no policy has acted in the copy yet)."""

    def __init__(self, inner: Sandbox, script: str, timeout_s: float) -> None:
        self.inner, self.script, self.timeout_s = inner, script, timeout_s

    async def run(self, command: str, *, timeout_s: float, max_output: int = 64_000) -> ExecResult:
        if self.script is not None:
            script, self.script = self.script, None
            try:
                done = await self.inner.run(f"{script}\ntrue", timeout_s=self.timeout_s)
            except AgentError as e:  # the shell ended while taking the state: the copy's, not the agent's
                raise EnvError(f"the copy's shell did not take the source's state: {e.detail}") from e
            if done.exit_code != 0:
                raise EnvError(f"the copy's shell did not take the source's state: {done.output[-300:]}")
        return await self.inner.run(command, timeout_s=timeout_s, max_output=max_output)

    async def is_alive(self) -> bool:
        return await self.inner.is_alive()

    async def export(self, dest: Path) -> None:
        await self.inner.export(dest)

    async def snapshot(self, dest: Path) -> None:
        await self.inner.snapshot(dest)

    async def close(self) -> None:
        await self.inner.close()
