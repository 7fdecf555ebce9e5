"""Property-based fuzzing of every tool of every family, through HTTP, from the tools' declarations.

Arguments drawn from each tool's declaration (valid) and broken on purpose (an extra key, a
missing one, a value of any JSON type, lone surrogates, NUL, huge or non-finite numbers) must
never produce an `env_error`, an HTTP 500 or a lost store event: the agent's input is the
agent's error. A short profile runs with the tests; `ENVHUB_FUZZ=long` runs the long one and
`ENVHUB_FUZZ_REPORT=path` writes the counts (calls, classes seen, per family) as JSON
and `ENVHUB_FUZZ_TRACE=1` prints every call.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from envhub.config import REPO_ROOT, Settings, get_settings
from envhub.errors import AgentError
from envhub.server.thread import ThreadedServer, serve_in_thread
from envhub.store import OPERATOR
from envhub.tools import DATE_MAX, DATE_MIN, Param, Tool
from envhub.verify import runtime

LONG = os.environ.get("ENVHUB_FUZZ") == "long"
EXAMPLES = 300 if LONG else 25
#: One task per family: the fuzz is about tools, and each family's tools are the same for its tasks
#: (db: one domain per task; the domains' tools share one vocabulary).
TASKS = {"echo": "echo/say-done", "terminal": "terminal/count-error-lines", "db": "db/bank/ask-balance-001",
         "office": "office/banking/t01-clean", "swe": "swe/python/interval-merge"}
COUNTS: dict[str, Counter] = {}
#: Paths worth trying besides random text: the workspace's own files (from the reset) and new ones
#: of each kind, so valid calls reach the tools' real work instead of "no such file".
PATHS = ["out.xlsx", "out.docx", "out.pptx", "out.pdf", "notes.txt", "src/new.py", "."]

TEXT_CHARS = st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00")
TEXT = st.text(alphabet=TEXT_CHARS, max_size=40)
JSON = st.recursive(st.none() | st.booleans() | st.integers(-10**6, 10**6) | st.floats(-1e6, 1e6, allow_nan=False)
                    | TEXT, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(TEXT, inner, max_size=4),
                    max_leaves=12)
#: What a hostile policy sends where a schema says something else.
HOSTILE = st.one_of(
    JSON,
    st.sampled_from(["\ud800", "a\udfffb", "\x00", "x\x00y", 10**30, -(10**30), 1e308, -1e308, float("inf"),
                     float("nan"), "9999-12-31T23:59", "0000-01-01", "2025-02-30", "", " ", "A" * 100_001,
                     [], {}, [[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]], True, None]),
)


def valid(p: Param, depth: int = 0, name: str = "") -> st.SearchStrategy[Any]:
    """Values the declaration accepts."""
    if p.enum is not None:
        return st.sampled_from(p.enum)
    options = []
    for t in (p.types if p.type != "any" else ("any",)):
        if t == "any" or depth > 2:
            options.append(JSON)
        elif t == "string":
            if p.format == "date":
                options.append(st.dates(DATE_MIN, DATE_MAX).map(lambda d: d.isoformat()))
            elif p.format == "date-time":
                options.append(st.datetimes(min_value=dt.datetime(1900, 1, 1), max_value=dt.datetime(2100, 12, 31))
                               .map(lambda d: d.isoformat(timespec="minutes")))
            elif p.pattern:
                options.append(st.from_regex(p.pattern).filter(
                    lambda s: p.min_len <= len(s) <= p.max_len and "\x00" not in s
                    and not any(0xD800 <= ord(c) <= 0xDFFF for c in s)))
            else:
                options.append(st.text(alphabet=TEXT_CHARS, min_size=p.min_len, max_size=min(p.max_len, 60)))
                if name in ("path", "source", "dest"):
                    options.append(st.sampled_from(PATHS))
        elif t == "integer":
            lo, hi = p._bounds()
            options.append(st.integers(int(lo), int(hi)))
        elif t == "number":
            lo, hi = p._bounds()
            if p.exclusive_minimum is not None:
                lo = max(lo, p.exclusive_minimum + 1e-3)
            if p.decimals is not None:
                scale = 10 ** p.decimals
                options.append(st.integers(int(lo * scale), int(hi * scale)).map(lambda c, k=scale: c / k))
            else:
                options.append(st.floats(lo, hi, allow_nan=False, allow_infinity=False))
        elif t == "boolean":
            options.append(st.booleans())
        elif t == "null":
            options.append(st.none())
        elif t == "array":
            item = p.items or Param("any")
            options.append(st.lists(valid(item, depth + 1), min_size=p.min_items, max_size=min(p.max_items, 4)))
        elif t == "object":
            if p.properties is not None:
                options.append(arguments(p.properties, depth + 1))
            else:
                options.append(st.dictionaries(TEXT, valid(p.values or Param("any"), depth + 1), max_size=4))
    return st.one_of(options)


def arguments(params: dict[str, Param], depth: int = 0) -> st.SearchStrategy[dict[str, Any]]:
    required = {k: valid(p, depth, k) for k, p in params.items() if p.required}
    optional = {k: valid(p, depth, k) for k, p in params.items() if not p.required}
    return st.fixed_dictionaries(required, optional=optional)


@st.composite
def broken(draw: st.DrawFn, params: dict[str, Param]) -> dict[str, Any]:
    """Arguments with one thing wrong (or, sometimes, a hostile value that happens to be allowed)."""
    args = dict(draw(arguments(params)))
    how = draw(st.sampled_from(["extra", "drop", "value"] if params else ["extra"]))
    if how == "extra":
        args[draw(st.sampled_from(["\ud800", "extra", "__class__", "x" * 300]) | TEXT)] = draw(HOSTILE)
    elif how == "drop" and any(p.required for p in params.values()):
        args.pop(draw(st.sampled_from([k for k, p in params.items() if p.required])))
    else:
        args[draw(st.sampled_from(sorted(params)))] = draw(HOSTILE)
    return args


def _safe_bash(tool: Tool, args: dict[str, Any]) -> dict[str, Any]:
    """Fuzzed shell commands run for real; keep each one short (the fuzz is about arguments)."""
    if tool.name == "bash" and isinstance(args.get("timeout_s"), int | float) and not isinstance(
            args.get("timeout_s"), bool) and args["timeout_s"] > 1:
        args = {**args, "timeout_s": 1}
    return args


@pytest.fixture(scope="module")
def server():
    # Sandboxes run as other uids: their data folder must be reachable (pytest's tmp is 0700).
    data = Path(tempfile.mkdtemp(prefix="envhub-fuzz-", dir="/var/tmp"))
    data.chmod(0o755)
    shared = get_settings().data_dir
    runtime.install(shared)
    (data / "verifier").mkdir()
    (data / "verifier").chmod(0o755)
    os.symlink(runtime.site_dir(shared), runtime.site_dir(data))
    settings = Settings(data_dir=data, tasks_dir=REPO_ROOT / "tasks", families=list(TASKS), store_enabled=True)
    with serve_in_thread(settings) as live:
        yield live
    if os.environ.get("ENVHUB_FUZZ_REPORT"):
        Path(os.environ["ENVHUB_FUZZ_REPORT"]).write_text(json.dumps({f: dict(c) for f, c in COUNTS.items()},
                                                                     indent=1))
    shutil.rmtree(data, ignore_errors=True)


def _accepts(tool: Tool, args: dict[str, Any]) -> bool:
    try:
        tool.check(args)
    except AgentError:
        return False
    return True


def _step(client: httpx.Client, sid: str, tool: str, args: dict[str, Any]) -> httpx.Response:
    # json.dumps escapes lone surrogates (\ud800) and writes NaN/Infinity: what a hostile client can send.
    body = json.dumps({"action": {"tool": tool, "arguments": args}})
    return client.post(f"/v1/sessions/{sid}/step", content=body, headers={"content-type": "application/json"})


@pytest.mark.parametrize("family", list(TASKS))
def test_no_tool_input_is_an_environment_fault(server: ThreadedServer, family: str) -> None:
    counts = COUNTS.setdefault(family, Counter())
    hub = server.app.state.hub
    made: dict[str, int] = {}  # session id -> steps made in it
    # Sessions belong to their creator: every call sends this client token (docs/security.md).
    token = {"Authorization": "Bearer envhub-fuzz-client-token-0123456789"}
    with httpx.Client(base_url=server.url, timeout=120, headers=token) as client:
        current: list[str] = []

        def session() -> str:
            """The live session; a fresh one once the step budget is spent or the agent ended its shell."""
            if not current:
                created = client.post("/v1/sessions", json={"env": family, "task_id": TASKS[family]})
                assert created.status_code == 201, created.text
                current.append(created.json()["session_id"])
                PATHS.extend(f for f in created.json()["observation"]["data"].get("files", []) if f not in PATHS)
                made[current[0]] = 0
            return current[0]

        def retire() -> None:
            client.delete(f"/v1/sessions/{current.pop()}")

        sid = session()
        # The session's own declarations: what the server checks this session's calls against.
        # run_tests builds and runs a test suite per call: only the long profile fuzzes it.
        tools = [t for t in hub.manager.sessions[sid].tools.values() if LONG or t.name != "run_tests"]

        @settings(max_examples=EXAMPLES * len(tools), deadline=None, database=None,
                  suppress_health_check=list(HealthCheck))
        @given(data=st.data())
        def fuzz(data: st.DataObject) -> None:
            tool = data.draw(st.sampled_from(tools))
            bad = data.draw(st.booleans())
            args = data.draw(broken(tool.params) if bad else arguments(tool.params))
            sid = session()
            args = _safe_bash(tool, args)
            answer = _step(client, sid, tool.name, args)
            assert answer.status_code == 200, (tool.name, args, answer.status_code, answer.text[:500])
            result = answer.json()
            made[sid] += 1
            counts[result["failure"]] += 1
            counts["calls"] += 1
            code = result["observation"]["data"].get("code")
            counts[f"{result['failure']}:{code or tool.name}"] += 1
            if os.environ.get("ENVHUB_FUZZ_TRACE"):
                print(family, sid[:6], tool.name, ascii(args)[:120], result["failure"],  # noqa: T201
                      ascii(result["observation"]["text"][:200]))
            assert result["failure"] not in ("env_error", "verifier_error"), (tool.name, args, result)
            # The server enforces the declaration before the tool runs.
            if bad and not result["truncated"] and not _accepts(tool, args):
                assert result["failure"] == "agent_error" and code == "invalid_arguments", (tool.name, args, result)
            if result["truncated"] or code in ("sandbox_gone", "shell_wedged"):
                retire()

        fuzz()
        if current:
            retire()
    deadline = time.monotonic() + 60  # the store's writer batches in the background
    for sid, steps in made.items():
        while (recorded := hub.store.steps(sid, viewer=OPERATOR)[1]) < steps and time.monotonic() < deadline:
            time.sleep(0.1)
        assert recorded == steps, f"{steps} steps made in {sid}, {recorded} recorded"
