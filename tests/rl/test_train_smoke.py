"""CI's smoke of benchmarks/train_grpo.py: SmolLM2, one SFT step and one async GRPO step against a
real db server, end to end (the full run is a benchmark, not a test); the held-out comparison's
paired difference and bootstrap CI."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_train_grpo_smoke(tmp_path, smollm2) -> None:  # smollm2: the model cache exists before the subprocess
    out = tmp_path / "out"
    # this checkout's envhub, also where the interpreter's own install points elsewhere (a worktree)
    path = os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH", "")) if p)
    proc = subprocess.run([sys.executable, str(REPO / "benchmarks" / "train_grpo.py"), "--profile", "smoke",
                           "--out", str(out)], cwd=REPO, env={**os.environ, "COLUMNS": "160", "PYTHONPATH": path},
                          capture_output=True, text=True, timeout=1800)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    m = json.loads((out / "metrics.json").read_text())
    grpo = m["grpo"]
    assert grpo["steps"] == 1 and grpo["rollouts"] >= 2
    assert grpo["faults_with_a_reward"] == 0 and grpo["retried"] == 0  # a clean server: nothing to retry
    assert [d["step"] for d in grpo["per_step"]] == [1]
    assert all(0.0 <= r <= 1.0 for r in grpo["reward_per_step"])
    assert math.isfinite(m["sft"]["loss_last"])
    assert (out / "reward_curve.png").stat().st_size > 0
    lines = (out / "trajectories.jsonl").read_text().splitlines()
    assert len(lines) == grpo["rollouts"]
    t = json.loads(lines[0])
    assert len(t["token_ids"]) == len(t["loss_mask"]) == len(t["logprobs"]) == len(t["policy_version"])


def _train_grpo_module():
    import importlib.util

    spec = importlib.util.spec_from_file_location("train_grpo", REPO / "benchmarks" / "train_grpo.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # its dataclasses look their module up
    spec.loader.exec_module(mod)
    return mod


def test_paired_difference_and_its_bootstrap_ci() -> None:
    """The held-out comparisons: per-episode differences of episodes judged in both evaluations
    (same task, same seed), their mean and a 95 % bootstrap CI that resamples within each task."""
    tg = _train_grpo_module()
    before = {"rewards": {"a": [0.0, 0.0, 1.0, 1.0, None, 0.0], "b": [1.0, 1.0, 1.0, 0.0]}}
    after = {"rewards": {"a": [1.0, 0.0, 1.0, 1.0, 1.0, 1.0], "b": [1.0, 1.0, 1.0, 1.0]}}
    c = tg.paired(before, after)
    assert c["n"] == 9 and c["changed"] == 3 and c["up"] == 3 and c["down"] == 0  # the masked pair is left out
    assert math.isclose(c["mean_diff"], 3 / 9)
    lo, hi = c["ci95"]
    assert 0.0 <= lo < c["mean_diff"] < hi <= 1.0
    assert tg.paired(before, after) == c  # a fixed bootstrap seed
    same = tg.paired(after, after)
    assert same["mean_diff"] == 0.0 and same["ci95"] == [0.0, 0.0]
    assert tg.eval_seeds("t", 3, 0) == tg.eval_seeds("t", 3, 0) != tg.eval_seeds("u", 3, 0)
