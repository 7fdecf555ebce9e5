"""What an environment page offers besides its tasks: copy-paste snippets for each way in, the
version (of envhub, and of the code that grades the environment), the licence and the history.

The snippets are generated from the family's real tools and a real task, and the registry's
browser tests run them against a live server, so what a user copies works.
"""

from __future__ import annotations

import hashlib
import json
import shlex
import subprocess
from functools import cache
from importlib import metadata
from pathlib import Path
from typing import Any

from envhub.config import REPO_ROOT
from envhub.env import Family
from envhub.spec import ToolSpec
from envhub.tasks.digest import tree_sha256
from envhub.tasks.model import Task, short_title

PLACEHOLDER = {"string": "...", "integer": 0, "number": 0, "boolean": False, "array": [], "object": {}}


def example_arguments(tool: ToolSpec) -> dict[str, Any]:
    """The tool's required arguments with placeholder values of the right type."""
    schema = tool.input_schema
    props = schema.get("properties") or {}
    return {name: PLACEHOLDER.get(str((props.get(name) or {}).get("type")), "...")
            for name in schema.get("required") or []}


def snippets(base: str, env: str, task: Task | None, tool: ToolSpec | None) -> dict[str, str]:
    """HTTP, Python client, OpenEnv client and MCP: one episode (or the tool list) each."""
    task_arg = f', task_id="{task.id}"' if task else ""
    reset_body = json.dumps({"env": env, **({"task_id": task.id} if task else {})})
    name, args = (tool.name, example_arguments(tool)) if tool else ("TOOL", {})
    action = json.dumps({"action": {"tool": name, "arguments": args}}, ensure_ascii=False)
    kwargs = ", ".join(f"{k}={v!r}" for k, v in args.items())
    http = "\n".join([
        f"R=$(curl -s -X POST {base}/v1/sessions -H 'content-type: application/json' \\",
        f"     -d {shlex.quote(reset_body)})",
        "S=$(echo \"$R\" | jq -r .session_id)",
        "A=\"Authorization: Bearer $(echo \"$R\" | jq -r .client_token)\"  # the session is yours: say so",
        f"curl -s -X POST {base}/v1/sessions/$S/step -H \"$A\" -H 'content-type: application/json' \\",
        f"     -d {shlex.quote(action)}",
        f"curl -s -X POST {base}/v1/sessions/$S/verify -H \"$A\"    # reward, checks, failure_class",
        f"curl -s -X DELETE {base}/v1/sessions/$S -H \"$A\""])
    python = "\n".join([
        "from envhub.client import EnvClient",
        "",
        f'with EnvClient("{base}") as hub, hub.session("{env}"{task_arg}) as s:',
        "    print(s.created.observation.text)  # the task's prompt",
        f'    s.step("{name}"{", " + kwargs if kwargs else ""})',
        "    print(s.verify().reward)"])
    openenv = "\n".join([
        "from openenv.core.generic_client import GenericEnvClient",
        "",
        f'with GenericEnvClient(base_url="{base}/envs/{env}").sync() as env:',
        f"    env.reset({task_arg.lstrip(', ')})",
        f"    env.step({json.dumps({'tool': name, 'arguments': args}, ensure_ascii=False)})",
        '    print(env.step({"tool": "submit"}).reward)  # submit ends the episode with the verdict'])
    mcp = "\n".join([
        "# Every session is an MCP server (streamable HTTP), for any MCP client or agent harness.",
        "import asyncio",
        "from mcp import ClientSession",
        "from mcp.client.streamable_http import streamablehttp_client",
        "from envhub.client import EnvClient",
        "",
        "async def main():",
        f'    created = EnvClient("{base}").reset("{env}"{task_arg})',
        f'    url = f"{base}/v1/sessions/{{created.session_id}}/mcp"',
        '    owner = {"Authorization": f"Bearer {created.client_token}"}',
        "    async with streamablehttp_client(url, headers=owner) as (read, write, _), ClientSession(read, write) as s:",
        "        await s.initialize()",
        f"        await s.call_tool({name!r}, {args!r})",
        '        print((await s.call_tool("verify", {})).structuredContent["reward"])',
        "",
        "asyncio.run(main())"])
    return {"HTTP": http, "Python client": python, "OpenEnv client": openenv, "MCP": mcp}


def judge_version(family: type[Family]) -> str:
    """A short hash of the code that grades this environment (the runner and the family's judging
    files): validation records are keyed by it, so it changes exactly when grading may have."""
    h = hashlib.sha256()
    for part in (REPO_ROOT / "envhub" / "verify", *family.judge_files()):
        h.update(f"{part.name}:{tree_sha256(part) if part.exists() else '-'}".encode())
    return h.hexdigest()[:12]


@cache
def about(family: type[Family]) -> dict[str, Any]:
    """Version, licence and recent history; computed once per server process."""
    try:
        dist = metadata.metadata("envhub")
        version, licence = dist["Version"], dist.get("License") or dist.get("License-Expression") or "see the project"
    except metadata.PackageNotFoundError:
        version, licence = "unknown", "see the project"
    return {"version": version, "judge": judge_version(family), "licence": licence,
            "changelog": changelog(family.package_dir())}


def changelog(folder: Path, n: int = 8) -> list[dict[str, str]]:
    """The last commits that touched the family's code, from git when this is a checkout."""
    try:
        out = subprocess.run(["git", "-C", str(folder), "log", f"-n{n}", "--format=%h%x09%as%x09%s", "--", "."],
                             capture_output=True, text=True, timeout=10, check=True).stdout
    except (OSError, subprocess.SubprocessError):
        return []  # an installed copy without its history
    rows = [line.split("\t", 2) for line in out.splitlines() if line.count("\t") >= 2]
    return [{"commit": c, "date": d, "summary": short_title(s, 140)} for c, d, s in rows]
