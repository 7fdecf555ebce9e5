"""`benchmarks/episodes.py` against a real `envhub serve` process: the JSON holds every figure, the
episodes it counts are the ones played (episodes/s times the load's wall time), and an episode that
does not earn 1.0 is a failure with its reason, never dropped."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

_SPEC = importlib.util.spec_from_file_location("episodes_bench", REPO / "benchmarks" / "episodes.py")
assert _SPEC is not None and _SPEC.loader is not None
episodes_bench = importlib.util.module_from_spec(_SPEC)
sys.modules[_SPEC.name] = episodes_bench  # its dataclasses look their module up by name
_SPEC.loader.exec_module(episodes_bench)


def test_echo_at_one_client_counts_its_episodes() -> None:
    path = os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH", "")) if p)  # this checkout's envhub
    proc = subprocess.run([sys.executable, str(REPO / "benchmarks" / "episodes.py"), "--families", "echo",
                           "--clients", "1", "--seconds", "2", "--json"], cwd=REPO,
                          env={**os.environ, "PYTHONPATH": path}, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    out = json.loads(proc.stdout)
    assert out["servers"] == ["new"] and out["seconds"] == 2
    echo = out["families"]["echo"]
    assert echo["tasks"] == ["echo/say-done"]
    x = echo["levels"]["1"]["new"]
    assert x["episodes"] > 0 and x["failures"] == 0, x["failure_reasons"]
    assert x["wall_s"] >= 2 and abs(x["episodes_per_s"] * x["wall_s"] - x["episodes"]) < 0.1
    assert 0 < x["p50_ms"] <= x["p99_ms"] < 30_000
    cpu = x["server_cpu_ms"]
    assert cpu["total"] > 0
    assert abs(cpu["total"] - (cpu["process"] + cpu["reaped_children"] + cpu["live_descendants"])) < 0.5
    assert x["loadgen_cpu_ms"] > 0
    phases = x["phases_cpu_ms"]
    assert set(phases) == {"reset", "steps", "verify", "close", "other"}
    assert abs(sum(phases.values()) - cpu["total"]) < 0.5  # the phases and the rest add up to the whole


def test_an_episode_below_full_reward_is_a_failure() -> None:
    """The oracle's steps left out: echo/say-done earns 0, and each such episode is counted as a
    failure with its reason, none as an episode."""
    async def load() -> dict:
        return await episodes_bench.run_load(server, "echo", [{"id": "echo/say-done", "actions": []}], 1, 1.0)

    with episodes_bench.serve("new", REPO, "echo", "local") as server:
        out = asyncio.run(load())
    assert out["episodes"] == 0 and out["failures"] > 0
    assert all(reason.startswith("verify: reward 0") for reason in out["failure_reasons"]), out["failure_reasons"]
