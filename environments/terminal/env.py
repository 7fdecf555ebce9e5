"""A persistent shell in a sandbox over a copy of the task's `state/` folder.

Tools: `bash` (one command in the persistent shell; cwd and exported variables persist),
`read_file` and `write_file` (through the sandbox, so symlinks cannot reach the host).
The oracle is `solution/solve.sh`, run as one `bash` call.
"""

from __future__ import annotations

import base64
import shlex
from pathlib import Path
from typing import TYPE_CHECKING

from envhub.env import EnvContext, Environment, Family, Mutator
from envhub.errors import AgentError, EnvError
from envhub.sandbox.base import WORKSPACE, Sandbox, SandboxLimits, SandboxSpec
from envhub.spec import Observation, ToolCall, ToolSpec
from envhub.tasks.model import Task
from envhub.tools import Param, Tool

if TYPE_CHECKING:
    import typer

MAX_FILE_BYTES = 1024 * 1024

#: The longest a single command may ask for; the task's step limit still caps it.
MAX_TIMEOUT_S = 3600.0

TOOLS = [
    Tool("bash", "Run a bash command in the workspace's persistent shell (cwd and exported variables persist "
         "between calls). Returns combined stdout/stderr and the exit code. No network.",
         {"command": Param("string", min_len=1, max_len=100_000),
          "timeout_s": Param("number", "Kill the command after this long (capped by the task's step limit).",
                             required=False, exclusive_minimum=0, maximum=MAX_TIMEOUT_S)}),
    Tool("read_file", "Read a text file (up to 1 MiB).", {"path": Param("string", min_len=1, max_len=4096)}),
    Tool("write_file", "Create or overwrite a text file with the given content.",
         {"path": Param("string", min_len=1, max_len=4096), "content": Param("string", max_len=MAX_FILE_BYTES)}),
]


class TerminalEnvironment(Environment):
    def __init__(self, ctx: EnvContext) -> None:
        self.ctx = ctx
        self.sandbox: Sandbox | None = None
        self.task: Task | None = None

    def tools(self) -> list[Tool]:
        return TOOLS

    async def reset(self, *, task: Task, seed: int | None = None) -> Observation:
        self.task = task
        limits = task.config.limits
        self.sandbox = await self.ctx.sandbox.start(SandboxSpec(
            template=task.state_dir if task.state_dir.is_dir() else None,
            limits=SandboxLimits(memory_mb=limits.memory_mb, processes=limits.processes,
                                 cpu_s=int(limits.episode_timeout_s))))
        return Observation(text=f"{task.prompt}\n\nYou are in {WORKSPACE}; use the tools to work.",
                           data={"workspace": WORKSPACE})

    def _sandbox(self) -> Sandbox:
        if self.sandbox is None:
            raise EnvError("environment was not reset")
        return self.sandbox

    async def step(self, call: ToolCall) -> Observation:
        assert self.task is not None
        step_limit = self.task.config.limits.step_timeout_s
        args = call.arguments
        if call.tool == "bash":
            return await self._bash(args["command"], min(args.get("timeout_s", step_limit), step_limit))
        if call.tool == "read_file":
            path = args["path"]
            res = await self._sandbox().run(
                f"( test -f {shlex.quote(path)} || {{ echo 'no such file' >&2; exit 2; }}; "  # a subshell: `exit`
                f"head -c {MAX_FILE_BYTES + 1} -- {shlex.quote(path)} | base64 -w0 )", timeout_s=step_limit,  # keeps the shell
                max_output=2 * MAX_FILE_BYTES)
            if res.exit_code != 0:
                raise AgentError(f"cannot read {path}: {res.output.strip()[-300:]}")
            data = base64.b64decode(res.output)
            note = "\n[truncated at 1 MiB]" if len(data) > MAX_FILE_BYTES else ""
            return Observation(text=data[:MAX_FILE_BYTES].decode("utf-8", errors="replace") + note,
                               data={"path": path, "bytes": len(data)})
        if call.tool == "write_file":
            path, content = args["path"], args["content"]
            if len(content.encode()) > MAX_FILE_BYTES:
                raise AgentError("content is over 1 MiB; write it in parts with bash")
            encoded = base64.b64encode(content.encode()).decode()
            res = await self._sandbox().run(
                f"mkdir -p -- \"$(dirname -- {shlex.quote(path)})\" && printf %s {encoded} | base64 -d > "
                f"{shlex.quote(path)}", timeout_s=step_limit)
            if res.exit_code != 0:
                raise AgentError(f"cannot write {path}: {res.output.strip()[-300:]}")
            return Observation(text=f"wrote {len(content.encode())} bytes to {path}", data={"path": path})
        raise AgentError(f"unknown tool {call.tool!r}; tools are: bash, read_file, write_file")

    async def _bash(self, command: str, timeout: float) -> Observation:
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

    async def healthy(self) -> bool:
        return self.sandbox is not None and await self.sandbox.is_alive()

    async def close(self) -> None:
        if self.sandbox is not None:
            await self.sandbox.close()


class TerminalFamily(Family):
    name = "terminal"
    uses_workdir = False
    description = "Real shell work in a sandboxed workspace: files, text, archives, git, builds, services."
    # The environment that exports the workspace (env.py) and the mutators judge a task; the Harbor
    # importer (harbor.py, dockerfile.py) only writes tasks, whose files are keyed themselves.
    judged_by = ("__init__.py", "env.py", "mutators.py")
    cli_aliases = {"import harbor": "import"}

    @classmethod
    def cli(cls) -> typer.Typer:
        from environments.terminal.cli import app

        return app

    def make(self, ctx: EnvContext) -> TerminalEnvironment:
        return TerminalEnvironment(ctx)

    def tool_specs(self) -> list[ToolSpec]:
        return [t.spec() for t in TOOLS]

    def mutators(self) -> dict[str, Mutator]:
        from environments.terminal.mutators import MUTATORS

        return dict(MUTATORS)

    def oracle_actions(self, task: Task) -> list[ToolCall]:
        script = task.solution_dir / "solve.sh"
        if not script.is_file():
            if "harbor" in task.config.metadata:  # an imported Harbor / Terminal-Bench task: its oracle is a script
                raise AgentError(f"task {task.id} has no oracle: {script} is missing")
            return super().oracle_actions(task)
        body = script.read_text()
        return [ToolCall(tool="bash", arguments={"command": f"bash <<'ENVHUB_SOLVE_EOF'\n{body}\nENVHUB_SOLVE_EOF"})]
