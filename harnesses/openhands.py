"""`openhands`: a CodeAct-style surface — `execute_bash`, `str_replace_editor`, `finish`."""

from __future__ import annotations

import shlex
from typing import Any

from envhub.errors import AgentError
from envhub.harness import Run
from envhub.spec import Observation, ToolCall
from envhub.tools import Param, Tool
from harnesses._shell import Files, ShellSkin, numbered, output

PATH = Param("string", "Absolute or workspace-relative path.", min_len=1, max_len=4096)
TEXT = 1024 * 1024
TOOLS = [
    Tool("execute_bash", "Execute a bash command in the persistent shell; long-running commands should run in the "
         "background.", {"command": Param("string", min_len=1, max_len=100_000),
                         "timeout": Param("number", "Seconds before the command is killed.", required=False,
                                          exclusive_minimum=0, maximum=3600)}),
    Tool("str_replace_editor", "View, create and edit files. `view` shows a file with line numbers (or lists a "
         "folder); `create` writes a new file; `str_replace` replaces `old_str` (exactly one occurrence) with "
         "`new_str`; `insert` adds `new_str` after line `insert_line`; `undo_edit` reverts the last edit of `path`.",
         {"command": Param("string", enum=("view", "create", "str_replace", "insert", "undo_edit")), "path": PATH,
          "file_text": Param("string", required=False, max_len=TEXT),
          "old_str": Param("string", required=False, min_len=1, max_len=TEXT),
          "new_str": Param("string", required=False, max_len=TEXT),
          "insert_line": Param("integer", required=False, minimum=0),
          "view_range": Param("array", required=False, items=Param("integer", minimum=-1), min_items=2,
                              max_items=2)}),
    Tool("finish", "Say the task is done (the episode is then verified).",
         {"message": Param("string", required=False, max_len=10_000)}),
]


class OpenHands(ShellSkin):
    name = "openhands"
    description = "OpenHands-like CodeAct tools: execute_bash, str_replace_editor, finish."

    def __init__(self) -> None:
        self.history: dict[str, list[str]] = {}

    def tools(self, canonical: dict[str, Tool]) -> list[Tool]:
        return TOOLS

    def shell_call(self, command: str, timeout_s: float | None = None) -> ToolCall:
        return ToolCall(tool="execute_bash", arguments={"command": command} | ({"timeout": timeout_s} if timeout_s
                                                                                 else {}))

    async def call(self, call: ToolCall, canonical: dict[str, Tool], run: Run) -> Observation:
        files, a = Files(canonical, run), call.arguments
        if call.tool == "execute_bash":
            return await files.sh(a["command"], a.get("timeout"))
        if call.tool == "finish":
            return Observation(text="finished", data={"finished": True})
        return await self._edit(files, a)

    async def _edit(self, files: Files, a: dict[str, Any]) -> Observation:
        command, path = a["command"], a["path"]
        kind = await files.exists(path)
        if command == "view":
            if kind == "dir":
                obs = await files.sh(f"find {shlex.quote(path)} -maxdepth 2 -not -path '*/.*' | sort | head -500")
                return Observation(text=output(obs), data={"path": path, "kind": "dir"})
            text = await self._read(files, path, kind)
            start, end = a.get("view_range") or (1, -1)
            return Observation(text=numbered(text, start, end), data={"path": path})
        if command == "create":
            if kind:
                raise AgentError(f"{path} already exists; use str_replace to change it")
            if "file_text" not in a:
                raise AgentError("create needs file_text")
            await files.write(path, a["file_text"])
            self.history.setdefault(path, []).append("")
            return Observation(text=f"File created successfully at: {path}", data={"path": path})
        if command == "undo_edit":
            if not self.history.get(path):
                raise AgentError(f"no edit of {path} to undo")
            await files.write(path, self.history[path].pop())
            return Observation(text=f"Last edit to {path} undone successfully.", data={"path": path})
        text = await self._read(files, path, kind)
        if command == "str_replace":
            old, new = a.get("old_str"), a.get("new_str", "")
            if old is None:
                raise AgentError("str_replace needs old_str")
            count = text.count(old)
            if count != 1:
                raise AgentError(f"old_str occurs {count} times in {path}; it must occur exactly once")
            updated = text.replace(old, new, 1)
        else:  # insert
            if "insert_line" not in a or "new_str" not in a:
                raise AgentError("insert needs insert_line and new_str")
            lines = text.splitlines(keepends=True)
            if a["insert_line"] > len(lines):
                raise AgentError(f"insert_line {a['insert_line']} is past the end ({len(lines)} lines)")
            block = a["new_str"] if a["new_str"].endswith("\n") else a["new_str"] + "\n"
            if lines and a["insert_line"] == len(lines) and not lines[-1].endswith("\n"):
                lines[-1] += "\n"
            lines.insert(a["insert_line"], block)
            updated = "".join(lines)
        self.history.setdefault(path, []).append(text)
        await files.write(path, updated)
        return Observation(text=f"The file {path} has been edited.", data={"path": path})

    @staticmethod
    async def _read(files: Files, path: str, kind: str) -> str:
        if kind == "dir":
            raise AgentError(f"cannot read {path}: Is a directory", path=path, reason="Is a directory")
        return await files.read(path)  # anything else not a regular file is refused, naming why
