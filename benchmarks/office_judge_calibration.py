"""Calibrate the optional office judge: its scores on oracle outcomes against the mutators'.

    python benchmarks/office_judge_calibration.py --url http://127.0.0.1:8080/v1 [--model M] [--types T05 T08]
                                                 [--per-type 2] [--json]

For a few tasks of each type it runs the oracle, exports the final state, then asks the judge
(`environments/office/judge.py`, the type's rubric from `judge.RUBRICS`) about the oracle's
documents and about each applicable mutant of them (filler prose, visible keyword stuffing,
copied sections, empty slides, "." notes, dressed-up formulas, changed numbers ...). Prints the
mean rubric score per type and variant and the gap between the oracle and the best-scored mutant:
a usable judge scores the oracle high and every mutant clearly lower. The judge only ever scales a
reward the mechanical gate granted, so a poorly calibrated one costs signal, not integrity.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import statistics
import tempfile
from pathlib import Path

from envhub.config import Settings
from envhub.core.hub import Hub
from envhub.spec import ResetRequest, StepRequest
from environments.office import judge
from environments.office.mutators import MUTATORS
from environments.office.tasktypes import TYPES


async def _calibrate(url: str, model: str | None, types: list[str], per_type: int) -> list[dict]:
    hub = Hub.build(Settings(families=["office"]))
    await hub.start()
    rows: list[dict] = []
    try:
        tasks = [t for t in hub.catalog.tasks.values() if t.family == "office"]
        with tempfile.TemporaryDirectory(prefix="judge-cal-") as d:
            for ttype in types:
                chosen = [t for t in tasks if t.config.metadata.get("task_type") == ttype][:per_type]
                scores: dict[str, list[float]] = {}
                for task in chosen:
                    m = hub.manager
                    c = await m.create(ResetRequest(env="office", task_id=task.id))
                    for a in hub.families["office"].oracle_actions(task):
                        await m.step(c.session_id, StepRequest(action=a))
                    oracle = Path(d) / task.id.replace("/", "__")
                    await m.get(c.session_id).env.export_state(oracle)
                    await m.close(c.session_id)
                    variants = {"oracle": oracle}
                    for name, mutate in MUTATORS.items():
                        state = oracle.with_name(oracle.name + "-" + name)
                        shutil.copytree(oracle, state)
                        if await asyncio.to_thread(mutate, task, state):
                            variants[name] = state
                    rubric = judge.rubric_for(ttype)
                    files = task.config.metadata.get("deliverables", [])
                    for name, state in variants.items():
                        got = await asyncio.to_thread(judge.judge, url, model, task.prompt, rubric,
                                                      [state / f for f in files])
                        scores.setdefault(name, []).append(sum(got.values()) / len(got))
                for name, vals in scores.items():
                    rows.append({"type": ttype, "variant": name, "n": len(vals),
                                 "mean": round(statistics.mean(vals), 3)})
    finally:
        await hub.stop()
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--url", required=True, help="OpenAI-compatible endpoint (…/v1)")
    ap.add_argument("--model", default=None)
    ap.add_argument("--types", nargs="*", default=sorted(TYPES))
    ap.add_argument("--per-type", type=int, default=2)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    rows = asyncio.run(_calibrate(args.url, args.model, args.types, args.per_type))
    if args.json:
        print(json.dumps(rows, indent=1))  # noqa: T201 - benchmark output
        return
    print(f"{'type':<5} {'variant':<18} {'n':>3} {'mean':>6}")  # noqa: T201
    for r in rows:
        print(f"{r['type']:<5} {r['variant']:<18} {r['n']:>3} {r['mean']:>6}")  # noqa: T201
    for ttype in args.types:
        mine = {r["variant"]: r["mean"] for r in rows if r["type"] == ttype}
        if "oracle" in mine and len(mine) > 1:
            best = max(v for k, v in mine.items() if k != "oracle")
            gap = mine["oracle"] - best
            print(f"{ttype}: oracle {mine['oracle']} vs best mutant {best}: gap {gap:+.3f}")  # noqa: T201


if __name__ == "__main__":
    main()
