"""Verify latency per family, warm (zygote fork) against cold (a new bubblewrap sandbox), one run.

    python benchmarks/verify.py [--n 20] [--families terminal,db,office] [--json]

For each family it runs the oracle of a few tasks once and exports their final states (timed:
the `export` phase), then verifies copies of those states n times, alternating cold and warm so
both see the same machine load. The verify step alone is timed, and split into its phases from
the result plugin's stamps: prepare (copy the state and tests in), start (sandbox and Python start,
or the zygote's fork and mounts), collect (pytest collection), tests, result (the result coming
back and the sandbox ending). Prints p50/p95 in milliseconds and the cold/warm ratio of p50s.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from envhub.config import Settings
from envhub.core.hub import Hub
from envhub.episode import trajectory
from envhub.spec import ResetRequest, StepRequest
from envhub.verify.runner import VerifierRunner

TASKS = {
    "terminal": ["terminal/archive-site", "terminal/checksum-verify", "terminal/csv-join"],
    "db": ["db/bank/ask-balance-001", "db/bank/ask-fees-001", "db/clinic/ask-booked-count-001"],
    "office": ["office/banking/t02-model", "office/retail/t05-report", "office/professional/t08-deck"],
}
PHASES = ("verify_prepare_s", "verify_start_s", "verify_collect_s", "verify_tests_s", "verify_result_s")


def pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(q * (len(xs) - 1))))]


def summary(xs: list[float]) -> dict[str, float]:
    return {"p50": round(statistics.median(xs), 1), "p95": round(pct(xs, .95), 1)}


async def family_states(hub: Hub, family_name: str, scratch: Path) -> tuple[list[tuple], list[float]]:
    """Oracle episodes of the family's benchmark tasks: their exported states, and export times (ms)."""
    m = hub.manager
    family = hub.families[family_name]
    states, exports = [], []
    for task_id in TASKS[family_name]:
        try:
            task = hub.catalog.get(task_id)
        except Exception:  # noqa: BLE001 - a task renamed since: skip it
            continue
        created = await m.create(ResetRequest(env=family_name, task_id=task.id))
        for action in family.oracle_actions(task):
            await m.step(created.session_id, StepRequest(action=action))
        session = m.get(created.session_id)
        state = scratch / task.id.replace("/", "__")
        t0 = time.perf_counter()
        await session.env.export_state(state)
        exports.append((time.perf_counter() - t0) * 1000)
        states.append((task, state, trajectory(session.log)))  # the step log as the verifier reads it
        await m.close(created.session_id)
    return states, exports


async def measure(runners: dict[str, VerifierRunner], states: list[tuple], n: int, scratch: Path) -> dict:
    samples: dict[str, dict[str, list[float]]] = {mode: {"verify": [], **{p: [] for p in PHASES}} for mode in runners}
    for i in range(n):
        task, state, log = states[i % len(states)]
        for mode, runner in runners.items():  # alternate: both modes see the same load
            copy = scratch / f"copy-{mode}-{i}"
            shutil.copytree(state, copy, symlinks=True)
            t0 = time.perf_counter()
            result = await runner.verify(task, copy, log)
            samples[mode]["verify"].append((time.perf_counter() - t0) * 1000)
            assert result.reward == 1.0, (mode, task.id, result.failure_class, result.detail)
            assert result.timings.get("verify_warm", 0.0) == (1.0 if mode == "warm" else 0.0), (mode, result.timings)
            for p in PHASES:
                samples[mode][p].append(result.timings.get(p, 0.0) * 1000)
    return {mode: {k: summary(v) for k, v in s.items()} for mode, s in samples.items()}


async def run(n: int, families: list[str]) -> dict:
    hub = Hub.build(Settings(families=families))
    await hub.start()
    runners = {"cold": VerifierRunner(hub.settings, hub.backend, warm=False),
               "warm": VerifierRunner(hub.settings, hub.backend, warm=True)}
    scratch = Path(tempfile.mkdtemp(prefix="verify-bench-", dir=hub.settings.data_dir))
    out: dict = {}
    try:
        for r in runners.values():
            r.prepare()
        for name in families:
            states, exports = await family_states(hub, name, scratch)
            assert await runners["warm"].warmed(), "the warm verifier cannot start here"
            await measure(runners, states, 2, scratch)  # warm-up: page cache
            out[name] = {"n": n, "export": summary(exports), **await measure(runners, states, n, scratch)}
    finally:
        for r in runners.values():
            await r.aclose()
        await hub.stop()
        shutil.rmtree(scratch, ignore_errors=True)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description="verify latency per family, warm against cold")
    ap.add_argument("--n", type=int, default=20, help="verifies per family and mode")
    ap.add_argument("--families", default="terminal,db,office")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    results = asyncio.run(run(args.n, args.families.split(",")))
    if args.json:
        print(json.dumps(results, indent=2))  # noqa: T201
        return
    cols = ("verify", *PHASES)
    head = "".join(f"{c.removeprefix('verify_').removesuffix('_s'):>16s}" for c in cols)
    print(f"{'family':9s}{'mode':6s}{head}   (p50/p95 ms)")  # noqa: T201
    for fam, r in results.items():
        for mode in ("cold", "warm"):
            row = "".join(f"{r[mode][c]['p50']:>9}/{r[mode][c]['p95']:<6}" for c in cols)
            print(f"{fam:9s}{mode:6s}{row}")  # noqa: T201
        ratio = r["cold"]["verify"]["p50"] / max(r["warm"]["verify"]["p50"], 1e-9)
        line = (f"{fam:9s}export p50 {r['export']['p50']} ms, p95 {r['export']['p95']} ms; "
                f"verify p50 cold/warm = {ratio:.1f}x (n={r['n']})")
        print(line)  # noqa: T201


if __name__ == "__main__":
    main()
