"""A smoke of benchmarks/branch.py at its smallest sizes: both modes run, every member is judged
alike in both (even members play the oracle), and the CPU read from its cgroup holds what rusage
cannot see (the processes in the sandboxes' pid namespaces)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.skipif(os.geteuid() != 0, reason="the benchmark reads its CPU from a cgroup of its own: root")
def test_branch_bench_smoke() -> None:
    path = os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH", "")) if p)  # this checkout's envhub
    proc = subprocess.run([sys.executable, str(REPO / "benchmarks" / "branch.py"), "-n", "1", "--prefix", "1",
                           "--steps", "1", "--json"], cwd=REPO, env={**os.environ, "PYTHONPATH": path},
                          capture_output=True, text=True, timeout=300)
    if proc.returncode and ("no cgroup v2 here" in proc.stderr or "cannot make a cgroup" in proc.stderr):
        pytest.skip(proc.stderr.strip().splitlines()[-1])  # a machine whose cgroups this root may not write
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    out = json.loads(proc.stdout)
    assert out["rewards"] == [1.0, 0.0] * 4
    assert sorted(r["mode"] for r in out["runs"]) == ["branched", "independent"]
    for run in out["runs"]:
        assert run["others_cpu_s"] > 0 and run["total_cpu_s"] >= run["hub_cpu_s"]
    assert all(v > 0 for v in out["branched_over_independent"].values())
