"""CI's smoke of benchmarks/train_grpo.py: SmolLM2, one SFT step and one async GRPO step against a
real db server, end to end (the full run is a benchmark, not a test)."""

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
    proc = subprocess.run([sys.executable, str(REPO / "benchmarks" / "train_grpo.py"), "--profile", "smoke",
                           "--out", str(out)], cwd=REPO, env={**os.environ, "COLUMNS": "160"},
                          capture_output=True, text=True, timeout=1800)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    m = json.loads((out / "metrics.json").read_text())
    grpo = m["grpo"]
    assert grpo["steps"] == 1 and grpo["rollouts"] >= 2
    assert grpo["faults_with_a_reward"] == 0
    assert all(0.0 <= r <= 1.0 for r in grpo["reward_per_step"])
    assert math.isfinite(m["sft"]["loss_last"])
    assert (out / "reward_curve.png").stat().st_size > 0
    lines = (out / "trajectories.jsonl").read_text().splitlines()
    assert len(lines) == grpo["rollouts"]
    t = json.loads(lines[0])
    assert len(t["token_ids"]) == len(t["loss_mask"]) == len(t["logprobs"]) == len(t["policy_version"])
