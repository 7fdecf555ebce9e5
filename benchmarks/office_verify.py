"""Verify latency of the office family, per deliverable type (xlsx, docx, pptx, pdf).

    python benchmarks/office_verify.py [--n 10] [--json]

For each document type it runs the oracle of a few tasks whose main deliverable has that type,
then times, separately: `export_state` (copy + LibreOffice recalculation of every workbook with
the server's warm office, and the judge when configured) and the verifier run (a fresh bubblewrap
sandbox with Debian's python3, pytest and the document parsers). Prints p50/p99 in milliseconds.
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
from envhub.spec import ResetRequest, StepRequest

TASKS = {
    "xlsx": ["office/banking/t02-model", "office/retail/t03-summary", "office/education/t10-extract"],
    "docx": ["office/retail/t05-report", "office/government/t07-restructure", "office/banking/t12-consistency-ko"],
    "pptx": ["office/professional/t08-deck", "office/media/t09-update"],
    "pdf": ["office/transport/t11-packet", "office/healthcare/t11-packet"],
}


def pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(q * (len(xs) - 1))))]


async def measure(hub: Hub, task_ids: list[str], n: int, scratch: Path) -> dict[str, float]:
    m = hub.manager
    family = hub.families["office"]
    exports: list[float] = []
    verifies: list[float] = []
    for i in range(n):
        task = hub.catalog.get(task_ids[i % len(task_ids)])
        created = await m.create(ResetRequest(env="office", task_id=task.id))
        for action in family.oracle_actions(task):
            await m.step(created.session_id, StepRequest(action=action))
        session = m.get(created.session_id)
        state = scratch / f"state-{i}"
        t0 = time.perf_counter()
        await session.env.export_state(state)
        t1 = time.perf_counter()
        result = await m.judge(task, state, list(session.log))
        t2 = time.perf_counter()
        assert result.reward == 1.0, (task.id, result.detail, [c for c in result.checks if not c.passed])
        exports.append((t1 - t0) * 1000)
        verifies.append((t2 - t1) * 1000)
        await m.close(created.session_id)
        shutil.rmtree(state, ignore_errors=True)
    return {"n": n, "export_p50_ms": round(statistics.median(exports), 1), "export_p99_ms": round(pct(exports, .99), 1),
            "verify_p50_ms": round(statistics.median(verifies), 1), "verify_p99_ms": round(pct(verifies, .99), 1),
            "total_p50_ms": round(statistics.median([a + b for a, b in zip(exports, verifies)]), 1)}


async def run(n: int) -> dict[str, dict[str, float]]:
    hub = Hub.build(Settings(families=["office"]))
    await hub.start()
    scratch = Path(tempfile.mkdtemp(prefix="office-bench-"))
    try:
        # Warm the office and the page cache outside the timing.
        await measure(hub, TASKS["xlsx"][:1], 1, scratch)
        return {kind: await measure(hub, ids, n, scratch) for kind, ids in TASKS.items()}
    finally:
        await hub.stop()
        shutil.rmtree(scratch, ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser(description="office family verify latency per document type")
    ap.add_argument("--n", type=int, default=10, help="verifications per document type")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    results = asyncio.run(run(args.n))
    if args.json:
        print(json.dumps(results, indent=2))  # noqa: T201
        return
    cols = ["n", "export_p50_ms", "export_p99_ms", "verify_p50_ms", "verify_p99_ms", "total_p50_ms"]
    print(f"{'type':6s}" + "".join(f"{c:>15s}" for c in cols))  # noqa: T201
    for kind, r in results.items():
        print(f"{kind:6s}" + "".join(f"{r[c]:>15}" for c in cols))  # noqa: T201


if __name__ == "__main__":
    main()
