"""`/v1/episodes` over a real server and store, through both clients; the client's own docstring.

Episodes belong to whoever ran them: the fixture's episodes are one client token's, and another
token (a second tenant) sees none of them, only the aggregates of `/v1/episodes/summary`."""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

import envhub.client
from envhub.client import AsyncEnvClient, EnvClient
from envhub.config import REPO_ROOT
from envhub.errors import NotFound
from envhub.server.thread import serve_in_thread
from tests.store.conftest import echo_settings
from tests.web.conftest import wait_recorded

#: The client token the fixture's episodes are recorded under (the server runs without keys).
OWNER = "episodes-api-owner-token-0001"
OTHER = "episodes-api-second-tenant-002"


@pytest.fixture
def recorded_server(data_dir: Path):
    """An echo server with its own store, holding three finished episodes of OWNER under two policies."""
    with serve_in_thread(echo_settings(data_dir)) as server, EnvClient(server.url, api_key=OWNER) as client:
        ids = {}
        for name, policy, messages in (("p1-ok", "p1", ["hello", "done"]), ("p1-wrong", "p1", ["nope"]),
                                       ("p2-ok", "p2", ["done"])):
            with client.session("echo", task_id="echo/say-done", policy_version=policy) as s:
                for m in messages:
                    s.step("echo", message=m)
                s.verify()
            ids[name] = (s.id, len(messages))
        for sid, steps in ids.values():
            wait_recorded(echo_settings(data_dir).store_url, sid, steps=steps)
        yield server, {k: v[0] for k, v in ids.items()}


def test_episodes_filter_and_carry_the_trajectory(recorded_server) -> None:
    server, ids = recorded_server
    with EnvClient(server.url, api_key=OWNER) as client:
        everything = client.episodes()
        assert everything["total"] == 3 and {e["id"] for e in everything["episodes"]} == set(ids.values())
        p1 = client.episodes(policy_version="p1")
        assert p1["total"] == 2 and {e["id"] for e in p1["episodes"]} == {ids["p1-ok"], ids["p1-wrong"]}
        assert client.episodes(policy_version="p1", failure_class="ok")["total"] == 2  # a wrong answer is `ok`, 0
        assert client.episodes(env="echo", task_id="echo/say-done", harness="plain")["total"] == 3
        assert client.episodes(harness="nosuch")["total"] == 0
        assert client.episodes(env="terminal")["total"] == 0
        assert len(client.episodes(limit=1)["episodes"]) == 1

        detail = client.episode(ids["p1-ok"])
        assert detail["policy_version"] == "p1" and detail["reward"] == 1.0 and detail["failure_class"] == "ok"
        assert [(s["tool"], s["arguments"]) for s in detail["steps"]] == [
            ("echo", {"message": "hello"}), ("echo", {"message": "done"})]
        assert detail["steps"][1]["observation"] == "done" and detail["steps_total"] == 2
        assert detail["checks"] and all(c["passed"] for c in detail["checks"])
        assert client.episode(ids["p1-wrong"])["reward"] == 0.0
        page = client.episode(ids["p1-ok"], step_offset=1, step_limit=1)
        assert [s["step"] for s in page["steps"]] == [2] and page["steps_total"] == 2
        with pytest.raises(NotFound, match="no episode"):
            client.episode("nosuch")


def test_a_second_tenant_sees_nothing_of_the_first_but_counts(recorded_server) -> None:
    """Another client token lists none of the owner's episodes and gets 404 for each; anyone reads the
    aggregates, which hold no id, owner, policy or action."""
    server, ids = recorded_server
    with EnvClient(server.url, api_key=OTHER) as other:
        assert other.episodes() == {"protocol": other.episodes()["protocol"], "episodes": [], "total": 0}
        for sid in ids.values():
            with pytest.raises(NotFound, match="no episode"):
                other.episode(sid)
    anonymous = httpx.get(f"{server.url}/v1/episodes/{ids['p1-ok']}")
    assert anonymous.status_code == 404  # without a token: a fresh identity, which owns nothing
    summary = httpx.get(f"{server.url}/v1/episodes/summary", params={"env": "echo"})
    assert summary.status_code == 200, summary.text
    body = summary.json()
    assert body["episodes"] == 3 and body["failure_classes"] == {"ok": 3}
    assert body["mean_reward"] == round(2 / 3, 4) and (body["verified"], body["solved"]) == (3, 2)
    assert body["latency"]["episodes"] == 3
    text = summary.text
    assert not any(sid in text for sid in ids.values()) and "p1" not in text and "hello" not in text


def test_cli_episodes_filters_by_policy(recorded_server, data_dir: Path) -> None:
    """`envhub episodes` reads the same store, with the same filters, and says which store it read."""
    _, ids = recorded_server
    env = {**os.environ, "ENVHUB_DATA_DIR": str(data_dir), "ENVHUB_TASKS_DIR": str(REPO_ROOT / "tasks")}
    run = [sys.executable, "-m", "envhub.cli", "episodes"]
    listed = subprocess.run([*run, "--policy", "p2", "--json"], env=env, capture_output=True, text=True, timeout=60)
    assert [e["id"] for e in json.loads(listed.stdout)["episodes"]] == [ids["p2-ok"]], listed.stderr
    table = subprocess.run([*run, "--harness", "plain"], env={**env, "COLUMNS": "80"}, capture_output=True,
                           text=True, timeout=60)
    assert "3 of 3 episodes" in table.stdout and str(echo_settings(data_dir).store_path) in table.stdout
    rows = [line.split() for line in table.stdout.splitlines() if "echo/say-done" in line]
    assert {word for row in rows for word in row} >= set(ids.values())  # ids whole at 80 columns


def test_async_client_lists_tasks_and_episodes(recorded_server) -> None:
    server, ids = recorded_server

    async def main() -> tuple[list, dict, dict]:
        async with AsyncEnvClient(server.url, api_key=OWNER) as client:
            return (await client.tasks(env="echo"), await client.episodes(policy_version="p2"),
                    await client.episode(ids["p2-ok"]))

    tasks, p2, detail = asyncio.run(main())
    assert [t["id"] for t in tasks] == ["echo/say-done"]
    assert [e["id"] for e in p2["episodes"]] == [ids["p2-ok"]]
    assert [s["arguments"] for s in detail["steps"]] == [{"message": "done"}]


def test_episodes_route_without_a_store_says_so(data_dir: Path) -> None:
    with serve_in_thread(echo_settings(data_dir, store_enabled=False)) as server, EnvClient(server.url) as client:
        with pytest.raises(NotFound, match="records no episodes"):
            client.episodes()


def test_the_client_docstring_example_solves_its_task(live_server) -> None:
    """The example a new user copies first names a real task and earns the full reward."""
    code = re.search(r"\n((?:    .*\n)+)", envhub.client.__doc__ or "").group(1)  # type: ignore[union-attr]
    code = "\n".join(line[4:] for line in code.splitlines()).replace("http://127.0.0.1:8000", live_server.url)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(code, {"EnvClient": EnvClient})  # noqa: S102 - our own docstring
    assert out.getvalue().strip() == "1.0"
