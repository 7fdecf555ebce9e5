"""`swe-agent`: a windowed file viewer and line-range editor (`open`, `goto`, `scroll_up`,
`scroll_down`, `edit`, `create`), search commands, `bash`, and `submit`."""

from __future__ import annotations

import shlex

from envhub.errors import AgentError
from envhub.harness import Run
from envhub.spec import Observation, ToolCall
from envhub.tools import Param, Tool
from harnesses._shell import Files, ShellSkin, numbered, output

WINDOW = 100
LINE = Param("integer", minimum=1)
TOOLS = [
    Tool("open", "Open a file and show a window of lines (around line_number if given).",
         {"path": Param("string", min_len=1, max_len=4096),
          "line_number": Param("integer", required=False, minimum=1)}),
    Tool("goto", "Move the window of the open file to line_number.", {"line_number": LINE}),
    Tool("scroll_down", f"Move the window down {WINDOW} lines.", {}),
    Tool("scroll_up", f"Move the window up {WINDOW} lines.", {}),
    Tool("create", "Create an empty file and open it.", {"filename": Param("string", min_len=1, max_len=4096)}),
    Tool("edit", "Replace lines start_line..end_line (inclusive) of the open file with replacement text.",
         {"start_line": LINE, "end_line": LINE, "replacement": Param("string", max_len=1024 * 1024)}),
    Tool("search_dir", "List files under dir containing search_term, with match counts.",
         {"search_term": Param("string", min_len=1, max_len=4096), "dir": Param("string", required=False,
                                                                             max_len=4096)}),
    Tool("search_file", "Show lines of a file (default: the open one) containing search_term.",
         {"search_term": Param("string", min_len=1, max_len=4096),
          "file": Param("string", required=False, max_len=4096)}),
    Tool("find_file", "Find files named file_name (a glob) under dir.",
         {"file_name": Param("string", min_len=1, max_len=500), "dir": Param("string", required=False, max_len=4096)}),
    Tool("bash", "Run a shell command.", {"command": Param("string", min_len=1, max_len=100_000)}),
    Tool("submit", "Submit the current state of the repository as the solution.", {}),
]


class SweAgent(ShellSkin):
    name = "swe-agent"
    description = "SWE-agent-like tools: open/goto/scroll, edit of a line range, search, bash, submit."

    def __init__(self) -> None:
        self.path: str | None = None
        self.first = 1

    def tools(self, canonical: dict[str, Tool]) -> list[Tool]:
        return TOOLS

    def shell_call(self, command: str, timeout_s: float | None = None) -> ToolCall:
        return ToolCall(tool="bash", arguments={"command": command})

    async def call(self, call: ToolCall, canonical: dict[str, Tool], run: Run) -> Observation:
        files, a = Files(canonical, run), call.arguments
        tool = call.tool
        if tool == "bash":
            return await files.sh(a["command"])
        if tool == "submit":
            return Observation(text="submitted", data={"finished": True})
        if tool == "open":
            text = await files.read(a["path"])  # a path that is not a readable regular file: the error says why
            self.path = a["path"]
            self.first = max(1, a.get("line_number", 1) - WINDOW // 2) if "line_number" in a else 1
            return self._show(text)
        if tool == "create":
            if await files.exists(a["filename"]):
                raise AgentError(f"{a['filename']} already exists")
            await files.write(a["filename"], "")
            self.path, self.first = a["filename"], 1
            return await self._window(files)
        if tool in ("search_dir", "find_file"):
            await files.check(a.get("dir") or ".")
            where = shlex.quote(a.get("dir") or ".")
            # -D skip: a FIFO or device is passed over, never read (it would block or never end).
            command = (f"grep -rIc -D skip --exclude-dir=.git -e {shlex.quote(a['search_term'])} -- {where} "
                       "| grep -v ':0$'"
                       if tool == "search_dir" else
                       f"find {where} -name {shlex.quote(a['file_name'])} -not -path '*/.git/*' | sort")
            obs = await files.sh(command + " | head -n 200")
            return Observation(text=output(obs).strip() or "No matches found", data={})
        if tool == "search_file":
            path = a.get("file") or self._open()
            await files.check(path, folders=False)
            obs = await files.sh(f"grep -nI -D skip -e {shlex.quote(a['search_term'])} -- {shlex.quote(path)} "
                                 "| head -n 200")
            return Observation(text=output(obs).strip() or "No matches found", data={})
        path = self._open()
        if tool == "goto":
            self.first = max(1, a["line_number"] - WINDOW // 2)
        elif tool == "scroll_down":
            self.first += WINDOW
        elif tool == "scroll_up":
            self.first = max(1, self.first - WINDOW)
        else:  # edit
            text = await files.read(path)
            lines = text.splitlines(keepends=True)
            start, end = a["start_line"], a["end_line"]
            if end < start or start > len(lines) + 1:
                raise AgentError(f"bad line range {start}..{end} for a file of {len(lines)} lines")
            block = a["replacement"]
            if block and not block.endswith("\n"):
                block += "\n"
            lines[start - 1:end] = [block] if block else []
            await files.write(path, "".join(lines))
            self.first = max(1, start - WINDOW // 2)
        return await self._window(files)

    def _open(self) -> str:
        if self.path is None:
            raise AgentError("no file is open; use open first")
        return self.path

    async def _window(self, files: Files) -> Observation:
        return self._show(await files.read(self._open()))

    def _show(self, text: str) -> Observation:
        total = len(text.splitlines())
        self.first = min(self.first, max(1, total - WINDOW + 1))
        last = min(total, self.first + WINDOW - 1)
        header = f"[File: {self.path} ({total} lines total)]\n({self.first - 1} more lines above)"
        footer = f"({max(0, total - last)} more lines below)"
        return Observation(text=f"{header}\n{numbered(text, self.first, last)}\n{footer}",
                           data={"path": self.path, "first": self.first, "last": last, "lines": total})
