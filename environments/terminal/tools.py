"""The terminal family's tools: a persistent shell in a sandbox over a copy of the task's `state/`.

Tools: `bash` (one command in the persistent shell; cwd and exported variables persist),
`read_file` and `write_file` (through the sandbox, so symlinks cannot reach the host; a FIFO, a device,
a folder or a file over 1 MiB is refused as the agent's error, `envhub.sandbox.files`). They serve
the agent only: the verdict depends on the exported workspace (`envhub.shell_env`), the oracle
and the mutators (`env.py`, `mutators.py`), so this file is not in the family's `judged_by`.
"""

from __future__ import annotations

from envhub.errors import AgentError
from envhub.sandbox import files
from envhub.sandbox.base import WORKSPACE
from envhub.shell_env import ShellEnvironment
from envhub.spec import Observation, ToolCall
from envhub.tasks.model import Task
from envhub.tools import Param, Tool

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


class TerminalEnvironment(ShellEnvironment):
    def tools(self) -> list[Tool]:
        return TOOLS

    async def reset(self, *, task: Task, seed: int | None = None) -> Observation:
        await self.start_sandbox(task, task.state_dir if task.state_dir.is_dir() else None)
        return Observation(text=f"{task.prompt}\n\nYou are in {WORKSPACE}; use the tools to work.",
                           data={"workspace": WORKSPACE})

    async def step(self, call: ToolCall) -> Observation:
        step_limit = self.step_limit
        args = call.arguments
        if call.tool == "bash":
            return await self._bash(args["command"], args.get("timeout_s"))
        if call.tool == "read_file":
            path = args["path"]
            res = await self._sandbox().run(files.read_command(path, limit=MAX_FILE_BYTES), timeout_s=step_limit,
                                            max_output=2 * MAX_FILE_BYTES)
            data = files.found("read", path, res.output, res.exit_code, limit=MAX_FILE_BYTES,
                               timed_out=res.timed_out).data or b""
            return Observation(text=data.decode("utf-8", errors="replace"), data={"path": path, "bytes": len(data)})
        if call.tool == "write_file":
            path, content = args["path"], args["content"]
            data = content.encode()
            if len(data) > MAX_FILE_BYTES:
                raise AgentError("content is over 1 MiB; write it in parts with bash")
            res = await self._sandbox().run(files.write_command(path, data), timeout_s=step_limit)
            if res.timed_out or res.exit_code != 0:
                raise files.refusal("write", path, res.output, timed_out=res.timed_out)
            return Observation(text=f"wrote {len(data)} bytes to {path}", data={"path": path})
        raise AgentError(f"unknown tool {call.tool!r}; tools are: bash, read_file, write_file")
