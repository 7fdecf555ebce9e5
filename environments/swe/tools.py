"""The SWE environment: a repository checkout in a sandbox, editor and shell tools, the tests.

Tools: `view_file`, `search`, `create_file`, `str_replace` (the old text must occur exactly
once), `apply_patch` (`git apply`), `bash` (the persistent shell) and `run_tests` (the task's
build and test command, with the runner's report summarised). Paths are judged inside the
sandbox (`envhub.sandbox.files`): a FIFO, a device, a file over 1 MiB is the agent's error. No
tool runs past the task's step limit, so a slow command is the agent's timeout, never a fault.
The workspace is a checkout of the base commit without the test patch; `tests/` and `solution/`
never enter the sandbox.
"""

from __future__ import annotations

import asyncio
import base64
import shlex
from pathlib import Path
from typing import Any

from envhub.env import EnvContext
from envhub.errors import AgentError
from envhub.sandbox import files
from envhub.sandbox.base import WORKSPACE
from envhub.shell_env import ShellEnvironment
from envhub.spec import Observation, ToolCall
from envhub.tasks.model import Task
from envhub.tools import Param, Tool
from environments.swe import repo as swe_repo
from verifiers.swe import FIXED_ENV, SweConfig
from verifiers.swe_reports import PASSED, ReportError, parse

MAX_FILE_BYTES = 1024 * 1024
MAX_VIEW_LINES = 2000


MAX_TIMEOUT_S = 3600.0
_PATH = Param("string", min_len=1, max_len=4096)
DECLARED = [
    Tool("view_file", "Show a file of the repository with line numbers, optionally only lines start_line..end_line "
         f"(1-based, inclusive; at most {MAX_VIEW_LINES} lines at once). A folder is listed instead.",
         {"path": _PATH, "start_line": Param("integer", required=False, minimum=1),
          "end_line": Param("integer", required=False, minimum=1)}),
    Tool("search", "Search file contents for a regular expression (grep -rnE) under path (default: the repository "
         "root); prints file:line:text, at most 200 matches.",
         {"pattern": Param("string", min_len=1, max_len=4096), "path": Param("string", required=False, max_len=4096)}),
    Tool("create_file", "Create or overwrite a file with the given content.",
         {"path": _PATH, "content": Param("string", max_len=MAX_FILE_BYTES)}),
    Tool("str_replace", "Replace the text `old` with `new` in a file; `old` must occur exactly once (add surrounding "
         "lines to make it unique).",
         {"path": _PATH, "old": Param("string", min_len=1, max_len=MAX_FILE_BYTES),
          "new": Param("string", max_len=MAX_FILE_BYTES)}),
    Tool("apply_patch", "Apply a unified diff (as from `git diff`) at the repository root.",
         {"patch": Param("string", min_len=1, max_len=MAX_FILE_BYTES)}),
    Tool("bash", "Run a bash command in the repository's persistent shell (cwd and exported variables persist). "
         "No network.",
         {"command": Param("string", min_len=1, max_len=100_000),
          "timeout_s": Param("number", "Kill the command after this long (capped by the task's step limit).",
                             required=False, exclusive_minimum=0, maximum=MAX_TIMEOUT_S)}),
    Tool("run_tests", "Build the project and run its test suite the way it is graded; shows the output and which "
         "tests failed. `args` is passed to the runner as $TEST_ARGS where the project's command uses it. A run is "
         "killed at the task's step limit.",
         {"args": Param("string", required=False, max_len=4096)}),
]
TOOLS = [t.spec() for t in DECLARED]  # in MCP's shape, for the registry


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


class SweEnvironment(ShellEnvironment):
    file_mb = 512  # builds write large objects

    def __init__(self, ctx: EnvContext) -> None:
        super().__init__(ctx)
        self.cfg: SweConfig | None = None

    def tools(self) -> list[Tool]:
        return DECLARED

    async def reset(self, *, task: Task, seed: int | None = None) -> Observation:
        self.cfg = swe_repo.config(task)
        template = await asyncio.to_thread(swe_repo.checkout, task, self.ctx.settings.data_dir)
        await self.start_sandbox(task, template)
        lang = self.cfg.language
        return Observation(
            text=(f"{task.prompt}\n\nThe {lang} repository is checked out in {WORKSPACE} (a git repository). "
                  "Fix the issue in the source code; `run_tests` runs the project's test suite."),
            data={"workspace": WORKSPACE, "language": lang})

    async def _restore(self, task: Task, state: Path, *, take: bool) -> Observation:
        self.cfg = swe_repo.config(task)
        return await super()._restore(task, state, take=take)

    async def _run(self, command: str, *, timeout: float | None = None, max_output: int | None = None):
        # Every helper command runs in a subshell: its `exit` must not end the persistent shell.
        return await self._sandbox().run(f"( {command}\n)", timeout_s=timeout or self.step_limit,
                                         max_output=max_output or self.ctx.settings.max_output_bytes)

    async def step(self, call: ToolCall) -> Observation:
        self._sandbox()
        args = call.arguments
        handlers = {"view_file": self._view, "search": self._search, "create_file": self._create,
                    "str_replace": self._replace, "apply_patch": self._apply_patch, "bash": self._bash_tool,
                    "run_tests": self._run_tests}
        handler = handlers.get(call.tool)
        if handler is None:
            raise AgentError(f"unknown tool {call.tool!r}; tools are: {', '.join(handlers)}")
        return await handler(args)

    # -- tools ---------------------------------------------------------------------------------
    async def _read(self, path: str) -> str:
        res = await self._sandbox().run(files.read_command(path, limit=MAX_FILE_BYTES), timeout_s=self.step_limit,
                                        max_output=2 * MAX_FILE_BYTES)
        data = files.found("read", path, res.output, res.exit_code, limit=MAX_FILE_BYTES, timed_out=res.timed_out).data
        return (data or b"").decode("utf-8", errors="replace")

    async def _write(self, path: str, content: str) -> None:
        data = content.encode()
        if len(data) > MAX_FILE_BYTES:
            raise AgentError("content is over 1 MiB")
        res = await self._sandbox().run(files.write_command(path, data), timeout_s=self.step_limit)
        if res.timed_out or res.exit_code != 0:
            raise files.refusal("write", path, res.output, timed_out=res.timed_out)

    async def _view(self, args: dict[str, Any]) -> Observation:
        path, start, end = args["path"], args.get("start_line", 1), args.get("end_line")
        res = await self._sandbox().run(files.read_command(path, limit=MAX_FILE_BYTES, folders=True),
                                        timeout_s=self.step_limit, max_output=2 * MAX_FILE_BYTES)
        seen = files.found("view", path, res.output, res.exit_code, limit=MAX_FILE_BYTES, timed_out=res.timed_out)
        if seen.kind == "dir":
            res = await self._run(f"find {shlex.quote(path)} -maxdepth 2 -not -path '*/.git*' | sort | head -500")
            return Observation(text=res.output.strip(), data={"path": path, "kind": "dir"})
        text = (seen.data or b"").decode("utf-8", errors="replace")
        lines = text.splitlines()
        last = min(len(lines), end if end is not None else start + MAX_VIEW_LINES - 1, start + MAX_VIEW_LINES - 1)
        if start > max(1, len(lines)):
            raise AgentError(f"{path} has {len(lines)} lines; start_line {start} is past the end")
        body = "\n".join(f"{n:6}\t{lines[n - 1]}" for n in range(start, last + 1))
        more = f"\n[... {len(lines) - last} more lines]" if last < len(lines) else ""
        return Observation(text=body + more, data={"path": path, "lines": len(lines), "shown": [start, last]})

    async def _search(self, args: dict[str, Any]) -> Observation:
        pattern, path = args["pattern"], args.get("path") or "."
        checked = await self._sandbox().run(files.check_command(path), timeout_s=self.step_limit)
        files.found("search", path, checked.output, checked.exit_code, limit=0, timed_out=checked.timed_out)
        # -D skip: a FIFO or device met on the way is passed over, never read (it would block or never end).
        res = await self._run(f"grep -rnIE -D skip --exclude-dir=.git -e {shlex.quote(pattern)} -- "
                              f"{shlex.quote(path)} | head -n 200")
        text = res.output.strip() or "no matches"
        data = {"matches": 0 if text == "no matches" else text.count("\n") + 1}
        if res.timed_out:
            text += f"\n[the search timed out after {self.step_limit:g}s, the task's step limit, and was killed]"
        return Observation(text=text, is_error=res.timed_out, timed_out=res.timed_out, data=data)

    async def _create(self, args: dict[str, Any]) -> Observation:
        path, content = args["path"], args["content"]
        await self._write(path, content)
        return Observation(text=f"wrote {len(content.encode())} bytes to {path}", data={"path": path})

    async def _replace(self, args: dict[str, Any]) -> Observation:
        path, old, new = args["path"], args["old"], args["new"]
        text = await self._read(path)
        count = text.count(old)
        if count != 1:
            raise AgentError(f"`old` occurs {count} times in {path}; it must occur exactly once")
        updated = text.replace(old, new, 1)
        await self._write(path, updated)
        line = text[: text.index(old)].count("\n") + 1
        return Observation(text=f"replaced 1 occurrence in {path} at line {line}", data={"path": path, "line": line})

    async def _apply_patch(self, args: dict[str, Any]) -> Observation:
        patch = args["patch"]
        if not patch.endswith("\n"):
            patch += "\n"
        # A fresh file (mktemp opens it O_EXCL): a fixed name could be the agent's FIFO or symlink.
        res = await self._run(f"f=$(mktemp /tmp/.envhub-patch.XXXXXX) && printf %s {_b64(patch)} | base64 -d "
                              "> \"$f\" && git apply --whitespace=nowarn --verbose \"$f\"; s=$?; rm -f \"$f\"; exit $s")
        if res.exit_code != 0:
            raise AgentError(f"the patch does not apply:\n{res.output.strip()[-2000:]}")
        return Observation(text=res.output.strip() or "patch applied", data={"applied": True})

    async def _bash_tool(self, args: dict[str, Any]) -> Observation:
        return await self._bash(args["command"], args.get("timeout_s"))

    async def _run_tests(self, args: dict[str, Any]) -> Observation:
        assert self.cfg is not None and self.task is not None
        cfg = self.cfg
        test_args = args.get("args", "")
        fixed = {k: v for k, v in FIXED_ENV.items() if k != "PATH"} | {"TEST_ARGS": test_args}
        # The task's own variables may name $HOME or $TMPDIR: double quotes let the shell expand them.
        exports = " ".join(f"{k}={shlex.quote(v)}" for k, v in fixed.items()) + " " + " ".join(
            f'{k}="{v}"' for k, v in cfg.env.items())
        steps = ([cfg.build] if cfg.build else []) + [cfg.test_command]
        body = " && ".join(f"( {s} )" for s in steps)
        # The step limit, never more: the session cuts a step a little past it, and a cut there is an
        # environment fault (masked), where the agent's slow build or tests are its own timeout.
        timeout = self.step_limit
        script = (f"( export HOME=/tmp/.envhub-home TMPDIR=/tmp; export {exports}; mkdir -p /tmp/.envhub-home; "
                  f"export REPORT_DIR=$(mktemp -d /tmp/report.XXXXXX); {body}; s=$?; "
                  f"f=\"$REPORT_DIR\"/{shlex.quote(cfg.report_file)}; "
                  f"if [ -f \"$f\" ]; then printf '\\n@@ENVHUB-REPORT@@'; head -c 8000000 \"$f\" | base64 -w0; fi; "
                  f"rm -rf \"$REPORT_DIR\"; exit $s )")
        res = await self._run(script, timeout=timeout, max_output=16_000_000)
        output, _, report_b64 = res.output.partition("@@ENVHUB-REPORT@@")
        summary, data = "no test report was written", {"exit_code": res.exit_code, "timed_out": res.timed_out}
        if report_b64.strip():
            try:
                statuses = parse(cfg.report_format, base64.b64decode(report_b64.strip()).decode("utf-8", "replace"))
                bad = sorted(t for t, s in statuses.items() if s != PASSED)
                summary = (f"{len(statuses) - len(bad)} passed, {len(bad)} not passing"
                           + ("".join(f"\n  {t}: {statuses[t]}" for t in bad[:50])))
                data.update(passed=len(statuses) - len(bad), not_passing=bad[:200])
            except (ReportError, ValueError) as e:
                summary = f"the test report could not be read: {e}"
        clip = self.ctx.settings.max_output_bytes
        output = output if len(output) <= clip else f"[... output clipped ...]\n{output[-clip:]}"
        state = (f"timed out after {timeout:g}s (the task's step limit) and was killed" if res.timed_out
                 else f"exit code {res.exit_code}")
        return Observation(text=f"{output.rstrip()}\n[{state}]\n\nTest summary: {summary}",
                           is_error=res.timed_out or res.exit_code != 0, timed_out=res.timed_out, data=data)
