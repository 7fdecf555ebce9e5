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

from envhub.harness import Run, Skin
from envhub.sandbox import files
from envhub.spec import Observation, ToolCall
from envhub.tools import Tool

_EXIT = re.compile(r"\n?\[exit code (-?\d+)\]\s*$")
CHUNK = 30_000  # base64 characters per read: well inside an observation's output cap
#: The largest file an editor reads (as the families' own file tools).
MAX_READ_BYTES = 1024 * 1024


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
            return (await self.run(ToolCall(tool="read_file", arguments={"path": path}))).text
        # Checked inside the sandbox before anything opens it (a FIFO, a device, a folder, a file over
        # the limit is the agent's error, `envhub.sandbox.files`); only then read, in chunks.
        obs = await self.sh(files.size_command(path, limit=MAX_READ_BYTES))
        size = files.found("read", path, output(obs), obs.data.get("exit_code"), limit=MAX_READ_BYTES,
                           timed_out=obs.timed_out).size
        q = shlex.quote(path)
        parts = []
        for start in range(1, 4 * ((size + 2) // 3) + 1, CHUNK):
            chunk = await self.sh(f"head -c {MAX_READ_BYTES} -- {q} | base64 -w0 | cut -c {start}-{start + CHUNK - 1}")
            if chunk.is_error:
                raise files.refusal("read", path, output(chunk), timed_out=chunk.timed_out)
            parts.append(output(chunk).strip().split("\n", 1)[0])  # a backend's note may follow the chunk
        try:
            return base64.b64decode("".join(parts), validate=True).decode("utf-8", errors="replace")
        except ValueError:  # binascii.Error too: the file changed under the reads (the agent's own doing)
            raise files.refusal("read", path, "it changed while it was read") from None

    async def check(self, path: str, *, folders: bool = True) -> None:
        """The agent's error, naming why, unless `path` is a regular file a search may read (or a
        folder, where `folders`)."""
        obs = await self.sh(files.check_command(path, folders=folders))
        files.found("search", path, output(obs), obs.data.get("exit_code"), limit=0, timed_out=obs.timed_out)

    async def write(self, path: str, text: str) -> None:
        tool = "write_file" if "write_file" in self.canonical else "create_file"
        await self.run(ToolCall(tool=tool, arguments={"path": path, "content": text}))
