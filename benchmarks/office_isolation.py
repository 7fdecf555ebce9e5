"""LibreOffice isolation: how long other sessions wait while one agent's document is a recalculation bomb.

    python benchmarks/office_isolation.py [--deadline 15] [--sessions 3] [--json]

Three layouts, each with one session recalculating the bomb of issue 11 (thousands of
`=SUMPRODUCT(ROW($A$1:$A$1000000)*i)`) while `--sessions` other sessions each recalculate a small
workbook once the bomb is running:

- shared: one warm office for the server (the layout before the pool);
- pool:   `OfficePool(size=2)`, warm (what the server runs);
- per-session: a fresh office per session, started when the session first needs it.

Prints, per layout, the other sessions' latency (p50 and max, seconds), the bomb's outcome and
the cost of a cold start (what per-session pays on every session). Numbers, not assertions.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import threading
import time
from pathlib import Path

import openpyxl

from environments.office.lo import LibreOffice, OfficePool


def _small(path: Path) -> Path:
    wb = openpyxl.Workbook()
    wb.active["A1"], wb.active["A2"] = 6, "=A1*7"
    wb.save(path)
    return path


def _bomb(path: Path, n: int = 3000) -> Path:
    wb = openpyxl.Workbook()
    for i in range(1, n + 1):
        wb.active[f"B{i}"] = f"=SUMPRODUCT(ROW($A$1:$A$1000000)*{i})"
    wb.save(path)
    return path


def _scenario(name: str, office_for: callable, tmp: Path, sessions: int, warm: list) -> dict:
    small, bomb = _small(tmp / "small.xlsx"), _bomb(tmp / "bomb.xlsx")
    for o in warm:  # warm offices answer once before the clock starts
        o.recalc(small, tmp / "warm.xlsx")
    outcome: list[str] = []

    def run_bomb() -> None:
        t = time.monotonic()
        try:
            office_for(0).recalc(bomb, tmp / "bomb-out.xlsx")
            outcome.append(f"finished in {time.monotonic() - t:.1f}s")
        except Exception as e:  # noqa: BLE001 - the class is the result
            outcome.append(f"{type(e).__name__} after {time.monotonic() - t:.1f}s")
    waits: list[float] = []
    lock = threading.Lock()

    def run_small(i: int) -> None:
        t = time.monotonic()
        office_for(i).recalc(small, tmp / f"small-{i}.xlsx")
        with lock:
            waits.append(time.monotonic() - t)
    b = threading.Thread(target=run_bomb)
    b.start()
    time.sleep(1.0)  # the bomb is computing
    others = [threading.Thread(target=run_small, args=(i,)) for i in range(1, sessions + 1)]
    for t in others:
        t.start()
    for t in others:
        t.join()
    b.join()
    return {"layout": name, "others_p50_s": round(statistics.median(waits), 2), "others_max_s": round(max(waits), 2),
            "bomb": outcome[0] if outcome else "?"}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--deadline", type=float, default=15.0)
    ap.add_argument("--sessions", type=int, default=3)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory(prefix="office-iso-") as d:
        tmp = Path(d)
        shared = LibreOffice(tmp / "shared", deadline_s=args.deadline)
        try:
            rows.append(_scenario("shared", lambda i: shared, tmp, args.sessions, [shared]))
        finally:
            shared.kill()
        pool = OfficePool(tmp / "pool", size=2, deadline_s=args.deadline)
        try:
            rows.append(_scenario("pool(2)", lambda i: pool, tmp, args.sessions, [pool.workers[0], pool.workers[1]]))
        finally:
            pool.kill()
        own = [LibreOffice(tmp / f"own{i}", deadline_s=args.deadline) for i in range(args.sessions + 1)]
        try:
            rows.append(_scenario("per-session (cold)", lambda i: own[i], tmp, args.sessions, []))
        finally:
            for o in own:
                o.kill()
        cold = LibreOffice(tmp / "cold", deadline_s=args.deadline)
        try:
            t = time.monotonic()
            cold.recalc(_small(tmp / "c.xlsx"), tmp / "c-out.xlsx")
            cold_s = time.monotonic() - t
            t = time.monotonic()
            cold.recalc(tmp / "c.xlsx", tmp / "c-out2.xlsx")
            warm_s = time.monotonic() - t
        finally:
            cold.kill()
    summary = {"layouts": rows, "cold_start_s": round(cold_s, 2), "warm_call_s": round(warm_s, 3)}
    if args.json:
        print(json.dumps(summary, indent=1))  # noqa: T201 - benchmark output
        return
    print(f"{'layout':<20} {'others p50 s':>12} {'others max s':>12}  bomb")  # noqa: T201
    for r in rows:
        print(f"{r['layout']:<20} {r['others_p50_s']:>12} {r['others_max_s']:>12}  {r['bomb']}")  # noqa: T201
    print(f"cold start + first call: {summary['cold_start_s']} s; warm call: {summary['warm_call_s']} s")  # noqa: T201


if __name__ == "__main__":
    main()
