"""`claude-code`: `Bash`, `Read`, `Write`, `Edit`, `Grep`, `Glob`, with their argument names."""

from __future__ import annotations

import shlex

from envhub.errors import AgentError
from envhub.harness import Run
from envhub.spec import Observation, ToolCall
from envhub.tools import Param, Tool
from harnesses._shell import Files, ShellSkin, numbered, output

FILE = Param("string", "The path of the file.", min_len=1, max_len=4096)
TEXT = 1024 * 1024
TOOLS = [
    Tool("Bash", "Executes a bash command in a persistent shell session.",
         {"command": Param("string", min_len=1, max_len=100_000),
          "timeout": Param("integer", "Milliseconds (max 600000).", required=False, minimum=1, maximum=600_000),
          "description": Param("string", "What the command does, in a few words.", required=False, max_len=500)}),
    Tool("Read", "Reads a file; lines are numbered as by `cat -n`. `offset` (1-based line) and `limit` read a part.",
         {"file_path": FILE, "offset": Param("integer", required=False, minimum=1),
          "limit": Param("integer", required=False, minimum=1, maximum=10_000)}),
    Tool("Write", "Writes a file, replacing it if it exists.",
         {"file_path": FILE, "content": Param("string", max_len=TEXT)}),
    Tool("Edit", "Replaces `old_string` with `new_string` in a file; `old_string` must be unique unless "
         "`replace_all`.", {"file_path": FILE, "old_string": Param("string", min_len=1, max_len=TEXT),
                            "new_string": Param("string", max_len=TEXT),
                            "replace_all": Param("boolean", required=False, default=False)}),
    Tool("Grep", "Searches file contents with a regular expression (extended).",
         {"pattern": Param("string", min_len=1, max_len=4096), "path": Param("string", required=False, max_len=4096),
          "glob": Param("string", "Only files matching this glob, e.g. *.py", required=False, max_len=500),
          "output_mode": Param("string", required=False, enum=("content", "files_with_matches", "count"),
                               default="files_with_matches"),
          "-i": Param("boolean", "Case-insensitive.", required=False, default=False)}),
    Tool("Glob", "Lists files matching a glob pattern such as **/*.js.",
         {"pattern": Param("string", min_len=1, max_len=500), "path": Param("string", required=False, max_len=4096)}),
]


class ClaudeCode(ShellSkin):
    name = "claude-code"
    description = "Claude-Code-like tools: Bash, Read, Write, Edit, Grep, Glob."

    def tools(self, canonical: dict[str, Tool]) -> list[Tool]:
        return TOOLS

    def shell_call(self, command: str, timeout_s: float | None = None) -> ToolCall:
        args: dict = {"command": command}
        if timeout_s:
            args["timeout"] = min(600_000, max(1, int(timeout_s * 1000)))
        return ToolCall(tool="Bash", arguments=args)

    async def call(self, call: ToolCall, canonical: dict[str, Tool], run: Run) -> Observation:
        files, a = Files(canonical, run), call.arguments
        if call.tool == "Bash":
            return await files.sh(a["command"], a["timeout"] / 1000 if "timeout" in a else None)
        if call.tool == "Read":
            text = await files.read(a["file_path"])
            start = a.get("offset", 1)
            end = start + a.get("limit", 2000) - 1
            return Observation(text=numbered(text, start, end) or "(empty file)", data={"path": a["file_path"]})
        if call.tool == "Write":
            await files.write(a["file_path"], a["content"])
            return Observation(text=f"File written: {a['file_path']}", data={"path": a["file_path"]})
        if call.tool == "Edit":
            text = await files.read(a["file_path"])
            count = text.count(a["old_string"])
            if count == 0:
                raise AgentError(f"old_string not found in {a['file_path']}")
            if count > 1 and not a["replace_all"]:
                raise AgentError(f"old_string occurs {count} times in {a['file_path']}; make it unique or "
                                 "set replace_all")
            updated = text.replace(a["old_string"], a["new_string"], -1 if a["replace_all"] else 1)
            await files.write(a["file_path"], updated)
            return Observation(text=f"Edited {a['file_path']} ({count if a['replace_all'] else 1} replacement(s))",
                               data={"path": a["file_path"]})
        if call.tool == "Grep":
            mode = {"content": "-n", "files_with_matches": "-l", "count": "-c"}[a["output_mode"]]
            include = f"--include={shlex.quote(a['glob'])} " if a.get("glob") else ""
            flags = "-i " if a["-i"] else ""
            await files.check(a.get("path") or ".")
            # -D skip: a FIFO or device is passed over, never read (it would block or never end).
            obs = await files.sh(f"grep -rIE -D skip {mode} {flags}{include}--exclude-dir=.git "
                                 f"-e {shlex.quote(a['pattern'])} -- {shlex.quote(a.get('path') or '.')} | head -n 500")
            return Observation(text=output(obs).strip() or "No matches found", data={})
        # Glob
        obs = await files.sh(f"cd {shlex.quote(a.get('path') or '.')} && shopt -s globstar nullglob dotglob && "
                             f"for f in {_glob(a['pattern'])}; do [ -f \"$f\" ] && printf '%s\\n' \"$f\"; done "
                             "| head -n 1000")
        if obs.is_error:
            raise AgentError(output(obs).strip() or "glob failed")
        return Observation(text=output(obs).strip() or "No files found", data={})


def _glob(pattern: str) -> str:
    """A glob pattern for bash: its wildcards stay live, everything else is quoted."""
    out = []
    for ch in pattern:
        out.append(ch if ch in "*?[]{}," else shlex.quote(ch) if not ch.isalnum() and ch not in "/._-" else ch)
    return "".join(out)
