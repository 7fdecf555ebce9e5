"""`codex`: `shell` taking an argv list, and `apply_patch` in its `*** Begin Patch` envelope.

The envelope holds file operations: `*** Add File: P` (every line `+`), `*** Delete File: P`,
and `*** Update File: P` (optionally `*** Move to: Q`) with hunks whose lines are context (` `),
removals (`-`) and additions (`+`), separated by `@@` lines that may name an anchor line.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field

from envhub.errors import AgentError
from envhub.harness import Run
from envhub.sandbox.files import refusal
from envhub.spec import Observation, ToolCall
from envhub.tools import Param, Tool
from harnesses._shell import Files, ShellSkin, output

TOOLS = [
    Tool("shell", "Run a command given as an argv list (e.g. [\"bash\", \"-lc\", \"ls\"]).",
         {"command": Param("array", items=Param("string", max_len=100_000), min_items=1, max_items=1000),
          "workdir": Param("string", required=False, max_len=4096),
          "timeout_ms": Param("integer", required=False, minimum=1, maximum=3_600_000)}),
    Tool("apply_patch", "Edit files with a patch: *** Begin Patch / *** Add File: path / *** Update File: path "
         "(@@ hunks of ' ', '-', '+' lines) / *** Delete File: path / *** End Patch.",
         {"input": Param("string", min_len=1, max_len=1024 * 1024)}),
]


@dataclass
class FileOp:
    kind: str  # add | delete | update
    path: str
    move_to: str | None = None
    lines: list[str] = field(default_factory=list)  # add: content; update: hunk lines with their prefixes


def parse(patch: str) -> list[FileOp]:
    lines = patch.strip("\n").split("\n")
    if not lines or lines[0].strip() != "*** Begin Patch" or lines[-1].strip() != "*** End Patch":
        raise AgentError("a patch starts with '*** Begin Patch' and ends with '*** End Patch'")
    ops: list[FileOp] = []
    for line in lines[1:-1]:
        for kind, head in (("add", "*** Add File: "), ("delete", "*** Delete File: "), ("update", "*** Update File: ")):
            if line.startswith(head):
                ops.append(FileOp(kind, line[len(head):].strip()))
                break
        else:
            if not ops:
                raise AgentError(f"patch line before any file header: {line[:80]!r}")
            op = ops[-1]
            if line.startswith("*** Move to: ") and op.kind == "update":
                op.move_to = line[len("*** Move to: "):].strip()
            elif op.kind == "add":
                if not line.startswith("+"):
                    raise AgentError(f"an added file's lines start with '+': {line[:80]!r}")
                op.lines.append(line[1:])
            elif op.kind == "update":
                if line == "*** End of File":
                    continue
                if not (line.startswith(("@@", " ", "-", "+")) or line == ""):
                    raise AgentError(f"a hunk line starts with ' ', '-', '+' or '@@': {line[:80]!r}")
                op.lines.append(line)
            else:
                raise AgentError(f"a deleted file takes no lines: {line[:80]!r}")
    return ops


def apply_update(text: str, hunk_lines: list[str], path: str) -> str:
    """Apply one file's hunks in order; each hunk's old lines must be found after the previous one."""
    lines = text.split("\n")
    pos = 0
    hunks: list[list[str]] = [[]]
    for line in hunk_lines:
        if line.startswith("@@"):
            hunks.append([])
        else:
            hunks[-1].append(line)
    for hunk in (h for h in hunks if h):
        old = [h[1:] for h in hunk if not h.startswith("+")]
        new = [h[1:] for h in hunk if not h.startswith("-")]
        at = _find(lines, old, pos)
        if at < 0:
            raise AgentError(f"{path}: a hunk's lines were not found:\n" + "\n".join(old[:8]))
        lines[at:at + len(old)] = new
        pos = at + len(new)
    return "\n".join(lines)


def _find(lines: list[str], block: list[str], start: int) -> int:
    if not block:
        return len(lines) - (1 if lines and lines[-1] == "" else 0)  # pure addition: append
    for i in range(start, len(lines) - len(block) + 1):
        if lines[i:i + len(block)] == block:
            return i
    for i in range(start, len(lines) - len(block) + 1):  # tolerate trailing whitespace, as the tool does
        if [x.rstrip() for x in lines[i:i + len(block)]] == [b.rstrip() for b in block]:
            return i
    return -1


class Codex(ShellSkin):
    name = "codex"
    description = "Codex-like tools: shell (argv list) and apply_patch (patch envelope)."

    def tools(self, canonical: dict[str, Tool]) -> list[Tool]:
        return TOOLS

    def shell_call(self, command: str, timeout_s: float | None = None) -> ToolCall:
        args: dict = {"command": ["bash", "-c", command]}
        if timeout_s:
            args["timeout_ms"] = max(1, int(timeout_s * 1000))
        return ToolCall(tool="shell", arguments=args)

    async def call(self, call: ToolCall, canonical: dict[str, Tool], run: Run) -> Observation:
        files, a = Files(canonical, run), call.arguments
        if call.tool == "shell":
            command = shlex.join(a["command"])
            if a.get("workdir"):
                command = f"cd {shlex.quote(a['workdir'])} && {command}"
            return await files.sh(command, a["timeout_ms"] / 1000 if "timeout_ms" in a else None)
        ops = parse(a["input"])
        done = []
        for op in ops:  # check every update applies before writing anything
            if op.kind == "update":
                op.lines = [apply_update(await files.read(op.path), op.lines, op.path)]
        for op in ops:
            if op.kind == "add":
                await files.write(op.path, "\n".join(op.lines) + "\n")
                done.append(f"A {op.path}")
            elif op.kind == "delete":
                obs = await files.sh(f"rm -- {shlex.quote(op.path)}")
                if obs.is_error:
                    raise refusal("delete", op.path, output(obs), timed_out=obs.timed_out)
                done.append(f"D {op.path}")
            else:
                await files.write(op.move_to or op.path, op.lines[0])
                if op.move_to:
                    await files.sh(f"rm -- {shlex.quote(op.path)}")
                done.append(f"M {op.move_to or op.path}")
        return Observation(text="Success. Updated the following files:\n" + "\n".join(done), data={"files": done})
