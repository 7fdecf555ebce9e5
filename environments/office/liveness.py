"""Liveness of a workbook's formulas: input points drawn afresh at every verify.

A task that asks for live formulas keeps, in its hidden tests (`tests/liveness.json`), the input
cells a verifier may change and the range each may take:

    {"model.xlsx": {"Inputs!B2": {"base": 25, "min": 1, "max": 80, "decimals": 0}, ...}}

At export `draw` picks `POINTS` input points from the operating system's randomness, never from a
seed a task or an agent could know: the first changes every listed input, each later one a
random subset of at least `MIN_CELLS` of them; each changed cell gets a fresh value in its range,
clearly away from its base. Export recalculates the agent's workbook once per point and records
the points in its manifest, where the verifier reads them and computes what the task's own model
gives there. The public metadata and the workspace hold none of this, so neither a formula keyed
to one input point nor a number typed in can follow.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

from envhub.errors import TaskInvalid

SPEC_FILE = "liveness.json"
#: Input points per verify; the first changes every input (a constant added to a reference, or an
#: input left out, shows), the others a subset (an output must also stay put when its inputs do).
POINTS = 3
MIN_CELLS = 3
#: A drawn value differs from its base by at least this share of its range (never a no-op).
MIN_CHANGE = 0.05

#: {workbook: {"Sheet!A1": {"base", "min", "max", "decimals"}}}
Spec = dict[str, dict[str, dict[str, float]]]


def load(tests_dir: Path) -> Spec | None:
    """The task's liveness spec from its hidden tests, or None when it asks for no live formulas."""
    p = tests_dir / SPEC_FILE
    if not p.is_file():
        return None
    try:
        spec = json.loads(p.read_text(encoding="utf-8"))
        for rel, cells in spec.items():
            if not isinstance(rel, str) or not isinstance(cells, dict) or not cells:
                raise ValueError(f"{rel!r} must map to a non-empty object of cells")
            for ref, c in cells.items():
                if "!" not in ref:
                    raise ValueError(f"{ref!r} is not Sheet!A1")
                lo, hi, dec = float(c["min"]), float(c["max"]), int(c["decimals"])
                if not lo < hi or dec < 0 or not lo <= float(c["base"]) <= hi:
                    raise ValueError(f"{ref}: needs min <= base <= max, min < max and decimals >= 0")
    except (OSError, ValueError, TypeError, KeyError, AttributeError) as e:
        raise TaskInvalid(f"{p}: not a valid liveness spec ({e})") from e
    return spec


def _value(cell: dict[str, float], rng: random.Random) -> float:
    lo, hi, base, dec = float(cell["min"]), float(cell["max"]), float(cell["base"]), int(cell["decimals"])
    gap = max(10.0 ** -dec, MIN_CHANGE * (hi - lo))
    for _ in range(1000):
        v = round(rng.uniform(lo, hi), dec)
        if abs(v - base) >= gap and lo <= v <= hi:
            return int(v) if dec == 0 else v
    raise TaskInvalid(f"no value in [{lo}, {hi}] is {gap} away from {base}")


def draw(cells: dict[str, dict[str, float]], rng: random.Random | None = None) -> list[dict[str, float]]:
    """`POINTS` input points ({"Sheet!A1": value}) for one workbook; `rng` only for tests."""
    rng = rng or random.SystemRandom()
    names = sorted(cells)
    points = []
    for i in range(POINTS):
        chosen = names if i == 0 else sorted(rng.sample(names, rng.randint(min(MIN_CELLS, len(names)), len(names))))
        points.append({ref: _value(cells[ref], rng) for ref in chosen})
    return points
