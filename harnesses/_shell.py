"""What the shell-driving skins share: files and commands over a family's canonical tools.

A "shell family" is one whose canonical tools include `bash` and a way to write a file
(`write_file` or `create_file`): terminal and swe. Files are read exactly (terminal's
`read_file`, or base64 through `bash` in chunks that fit an observation) so an edit through a
skin writes back what the agent meant, byte for byte.
"""

from __future__ import annotations

import base64
import re
import shlex

from envhub.errors import AgentError
from envhub.harness import Run, Skin
from envhub.spec import Observation, ToolCall
from envhub.tools import Tool

_EXIT = re.compile(r"\n?\[exit code (-?\d+)\]\s*$")
CHUNK = 30_000  # base64 characters per read: well inside an observation's output cap


def output(obs: Observation) -> str:
    """A bash observation's output without the trailing `[exit code N]` line."""
    return _EXIT.sub("", obs.text)


def numbered(text: str, start: int = 1, end: int | None = None) -> str:
    """Lines start..end (1-based, inclusive) as `cat -n` shows them."""
    lines = text.splitlines()
    end = len(lines) if end is None or end < 0 else min(end, len(lines))
    return "\n".join(f"{n:6}\t{lines[n - 1]}" for n in range(max(1, start), end + 1))


class ShellSkin(Skin):
    """Base of the skins that present a shell and files."""

    def unsupported(self, family: str, tool_names: set[str]) -> str | None:
        if "bash" not in tool_names or not ({"write_file", "create_file"} & tool_names):
            return "it drives a shell and files, and this environment's tools are typed operations"
        return None

    def express(self, action: ToolCall, canonical: dict[str, Tool]) -> list[ToolCall]:
        """Canonical shell actions (an oracle's) as one command of this skin's shell tool."""
        if action.tool == "bash":
            return [self.shell_call(action.arguments["command"], action.arguments.get("timeout_s"))]
        if action.tool == "apply_patch":
            patch = action.arguments["patch"]
            patch += "" if patch.endswith("\n") else "\n"
            b64 = base64.b64encode(patch.encode()).decode()
            return [self.shell_call(f"printf %s {b64} | base64 -d | git apply --whitespace=nowarn -")]
        raise NotImplementedError(f"{self.name} cannot express {action.tool}")

    def shell_call(self, command: str, timeout_s: float | None = None) -> ToolCall:
        raise NotImplementedError


class Files:
    """Exact file reads and writes, and shell commands, through one session's canonical tools."""

    def __init__(self, canonical: dict[str, Tool], run: Run) -> None:
        self.canonical = canonical
        self.run = run

    async def sh(self, command: str, timeout_s: float | None = None) -> Observation:
        args: dict = {"command": command}
        if timeout_s is not None:
            args["timeout_s"] = timeout_s
        return await self.run(ToolCall(tool="bash", arguments=args))

    async def exists(self, path: str) -> str:
        """'file', 'dir' or '' for `path`."""
        q = shlex.quote(path)
        obs = await self.sh(f"if [ -d {q} ]; then echo dir; elif [ -f {q} ]; then echo file; fi")
        return output(obs).strip()

    async def read(self, path: str) -> str:
        if "read_file" in self.canonical:
            obs = await self.run(ToolCall(tool="read_file", arguments={"path": path}))
            if obs.text.endswith("[truncated at 1 MiB]"):
                raise AgentError(f"{path} is over 1 MiB; read it in parts with the shell")
            return obs.text
        q = shlex.quote(path)
        obs = await self.sh(f"test -f {q} || {{ echo \"no such file: {path}\" >&2; exit 2; }}; "
                            f"base64 -w0 -- {q} | wc -c")
        if obs.is_error:
            raise AgentError(output(obs).strip() or f"cannot read {path}")
        size = int(output(obs).strip() or 0)
        parts = []
        for start in range(1, size + 1, CHUNK):
            chunk = await self.sh(f"base64 -w0 -- {q} | cut -c {start}-{start + CHUNK - 1}")
            parts.append(output(chunk).strip())
        return base64.b64decode("".join(parts)).decode("utf-8", errors="replace")

    async def write(self, path: str, text: str) -> None:
        tool = "write_file" if "write_file" in self.canonical else "create_file"
        await self.run(ToolCall(tool=tool, arguments={"path": path, "content": text}))
