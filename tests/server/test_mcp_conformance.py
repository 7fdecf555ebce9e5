"""The official MCP conformance suite (`@modelcontextprotocol/conformance`, pinned by
`scripts/install-mcp-conformance.sh`) against a session's endpoint, as its owner.

Every server scenario that applies to an envhub session runs, at each revision we serve; the
README's conformance table is `SCENARIOS` and `NOT_APPLICABLE`. A check the suite can only make
with its own reference tools (`test_missing_capability`, `test_logging_tool`, ...) or features
envhub sessions do not have (prompts, resources) is listed in `UNTESTABLE` with the reason; every
other check must pass. The suite sends no credential, so it reaches the session through a small
proxy that adds the owner's token and passes everything else (Host and Origin included) as sent.

Skipped, with the reason, where the suite is not installed; `ENVHUB_MCP_CONFORMANCE_REQUIRED=1`
(CI) turns that skip into a failure.
"""

from __future__ import annotations

import json
import os
import subprocess
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest
import uvicorn

from envhub.server.thread import free_port, serve_in_thread
from tests.conftest import make_settings

SUITE_DIR = Path(os.environ.get("ENVHUB_MCP_CONFORMANCE_DIR")
                 or Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "envhub/mcp-conformance")
NODE = SUITE_DIR / "node_modules/.bin/node"
CLI = SUITE_DIR / "node_modules/@modelcontextprotocol/conformance/dist/index.js"
TOKEN = "conformance-suite-owner-token-01"
LEGACY, MODERN = "2025-11-25", "2026-07-28"

#: (scenario, revision): what runs. Every check of each must pass, but those in UNTESTABLE.
SCENARIOS = [
    ("server-initialize", LEGACY), ("server-session-lifecycle", LEGACY), ("ping", LEGACY),
    ("logging-set-level", LEGACY), ("tools-list", LEGACY), ("dns-rebinding-protection", LEGACY),
    ("server-sse-polling", LEGACY), ("server-sse-multiple-streams", LEGACY),
    ("server-stateless", MODERN), ("tools-list", MODERN), ("dns-rebinding-protection", MODERN),
    ("http-header-validation", MODERN), ("caching", MODERN), ("server-sse-multiple-streams", MODERN),
]
REFERENCE_TOOL = "needs the suite's own diagnostic tool, which an envhub session does not offer"
#: Checks that cannot apply to an envhub session, by check id: why.
UNTESTABLE = {
    "sep-2575-server-rejects-undeclared-capability": REFERENCE_TOOL + " (test_missing_capability)",
    "sep-2575-missing-capability-http-400": REFERENCE_TOOL + " (test_missing_capability)",
    "sep-2575-http-server-no-independent-requests-on-stream": REFERENCE_TOOL + " (test_streaming_elicitation)",
    "sep-2575-server-no-log-without-loglevel": REFERENCE_TOOL + " (test_logging_tool)",
    "sep-2549-prompts-list-caching-hints": "an envhub session serves no prompts",
    "sep-2549-resources-list-caching-hints": "an envhub session serves no resources",
    "sep-2549-resources-templates-list-caching-hints": "an envhub session serves no resources",
}
#: Server scenarios not run: why (README's table lists them too).
NOT_APPLICABLE = {
    "tools-call-simple-text, -image, -audio, -embedded-resource, -mixed-content, -with-logging, -error, "
    "-with-progress, -sampling, -elicitation": "call the suite's reference tools (test_simple_text, ...)",
    "json-schema-2020-12": "calls the suite's reference tool json_schema_2020_12_tool",
    "elicitation-sep1034-defaults, elicitation-sep1330-enums": "call the suite's reference elicitation tools",
    "input-required-result-*": "call the suite's reference tools (multi-round-trip input requests)",
    "http-custom-header-server-validation": "needs a tool with x-mcp-header parameters; envhub's tools have none",
    "completion-complete": "completions complete prompt or resource arguments; a session serves neither",
    "resources-*, sep-2164-resource-not-found, prompts-*": "a session serves tools only: no resources, no prompts",
    "tasks-*, sep-2640-*": "optional extensions envhub does not implement",
}
PASSING = {"SUCCESS", "INFO", "SKIPPED", "WARNING"}


def _installed() -> bool:
    return NODE.is_file() and CLI.is_file()


@pytest.fixture(scope="module")
def suite() -> None:
    if _installed():
        return
    why = (f"the MCP conformance suite is not installed in {SUITE_DIR} "
           "(run scripts/install-mcp-conformance.sh; ENVHUB_MCP_CONFORMANCE_DIR names another folder)")
    if os.environ.get("ENVHUB_MCP_CONFORMANCE_REQUIRED") == "1":
        pytest.fail(why + ", and ENVHUB_MCP_CONFORMANCE_REQUIRED=1 requires it")
    pytest.skip(why)


def owner_proxy(upstream: str) -> object:
    """An ASGI app that forwards every request to `upstream` with the owner's token added."""
    client: list[httpx.AsyncClient] = []

    async def app(scope: dict, receive, send) -> None:
        if scope["type"] != "http":
            return
        if not client:
            client.append(httpx.AsyncClient(timeout=60))
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        skip = (b"authorization", b"content-length", b"connection", b"transfer-encoding")
        headers = [(k, v) for k, v in scope["headers"] if k.lower() not in skip]
        headers.append((b"authorization", f"Bearer {TOKEN}".encode()))
        query = scope["query_string"].decode()
        r = await client[0].request(scope["method"], upstream + scope["path"] + (f"?{query}" if query else ""),
                                    headers=headers, content=body)
        out = [(k.encode(), v.encode()) for k, v in r.headers.items()
               if k.lower() not in ("content-length", "transfer-encoding", "connection")]
        await send({"type": "http.response.start", "status": r.status_code,
                    "headers": [*out, (b"content-length", str(len(r.content)).encode())]})
        await send({"type": "http.response.body", "body": r.content})

    return app


@pytest.fixture(scope="module")
def endpoint(suite: None) -> Iterator[str]:
    """A session's MCP URL, through the owner's proxy, on a keyless loopback server (the suite's DNS-
    rebinding scenario needs a loopback URL)."""
    with serve_in_thread(make_settings(families=["echo"], store_enabled=False, auth="off")) as server:
        created = httpx.post(server.url + "/v1/sessions", json={"env": "echo", "task_id": "echo/say-done"},
                             headers={"Authorization": f"Bearer {TOKEN}"})
        assert created.status_code == 201, created.text
        port = free_port()
        proxy = uvicorn.Server(uvicorn.Config(owner_proxy(server.url), host="127.0.0.1", port=port, lifespan="off",
                                              log_level="warning"))
        thread = threading.Thread(target=proxy.run, name="mcp-conformance-proxy", daemon=True)
        thread.start()
        while not proxy.started:
            assert thread.is_alive(), "the proxy did not start"
            time.sleep(0.02)
        try:
            yield f"http://127.0.0.1:{port}/v1/sessions/{created.json()['session_id']}/mcp"
        finally:
            proxy.should_exit = True
            thread.join(timeout=10)


def _run(url: str, scenario: str, revision: str, out: Path) -> list[dict]:
    out.mkdir(parents=True)
    done = subprocess.run([str(NODE), str(CLI), "server", "--url", url, "--scenario", scenario,
                           "--spec-version", revision, "-o", str(out), "--timeout", "20000"],
                          capture_output=True, text=True, timeout=120, env={**os.environ, "NO_COLOR": "1"})
    found = list(out.glob("*/checks.json"))
    assert found, f"{scenario} at {revision} wrote no results:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}"
    return json.loads(found[0].read_text())


def test_every_applicable_scenario_passes(endpoint: str, tmp_path: Path) -> None:
    """The conformance table: each scenario at each revision passes every check that applies."""
    with ThreadPoolExecutor(4) as pool:
        runs = {(s, r): pool.submit(_run, endpoint, s, r, tmp_path / f"{s}-{r}") for s, r in SCENARIOS}
    bad = []
    for (scenario, revision), future in runs.items():
        checks = future.result()
        assert checks, f"{scenario} at {revision} made no checks"
        bad += [f"{scenario} ({revision}) {c['id']}: {c['status']} {(c.get('errorMessage') or '')[:200]}"
                for c in checks if c["status"] not in PASSING and c["id"] not in UNTESTABLE]
    assert not bad, "\n".join(bad)


def test_the_readme_lists_the_table() -> None:
    """README's conformance table names every scenario run and every one not applicable."""
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    table = readme.split("### MCP conformance", 1)[1].split("\n## ", 1)[0]
    for scenario, revision in SCENARIOS:
        assert f"| `{scenario}` | {revision} |" in table, (scenario, revision)
    for names in NOT_APPLICABLE:
        assert f"`{names.split(',')[0]}" in table, names
