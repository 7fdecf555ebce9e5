"""Reset latency of the db family: a fresh per-session database from the domain template.

    python benchmarks/db_reset.py [--n 200] [--postgres URL] [--json]

SQLite: a file copy of the prebuilt template (target p50 <= 10 ms). PostgreSQL:
`CREATE DATABASE ... TEMPLATE` (when a URL is given, or ENVHUB_TEST_POSTGRES_URL is set).
Measures `Store.create` (what `reset` does) and, separately, the drop on close.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from pathlib import Path

from environments.db import domains as registry
from environments.db.store import PgStore, SqliteStore, Store


def pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(q * (len(xs) - 1))))]


def measure(store: Store, n: int, workdir: Path) -> dict[str, float]:
    resets: list[float] = []
    drops: list[float] = []
    doms = list(registry.domains().values())
    for d in doms:  # build templates outside the timing
        store.create(d, workdir, tag="w").drop()
    for i in range(n):
        d = doms[i % len(doms)]
        t0 = time.perf_counter()
        h = store.create(d, workdir)
        t1 = time.perf_counter()
        h.drop()
        t2 = time.perf_counter()
        resets.append((t1 - t0) * 1000)
        drops.append((t2 - t1) * 1000)
    return {"n": n, "reset_p50_ms": round(statistics.median(resets), 3), "reset_p99_ms": round(pct(resets, 0.99), 3),
            "drop_p50_ms": round(statistics.median(drops), 3)}


def main() -> None:
    ap = argparse.ArgumentParser(description="db family reset latency")
    ap.add_argument("--n", type=int, default=200)
    ap.add_argument("--postgres", default=os.environ.get("ENVHUB_TEST_POSTGRES_URL"))
    ap.add_argument("--json", action="store_true", help="also print one JSON line")
    args = ap.parse_args()
    rows: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory(prefix="db-bench-") as tmp:
        rows["sqlite"] = measure(SqliteStore(Path(tmp) / "data"), args.n, Path(tmp))
        if args.postgres:
            pg = PgStore(args.postgres)
            try:
                rows["postgresql"] = measure(pg, max(10, args.n // 5), Path(tmp))
            finally:
                pg.close()
    print(f"{'engine':<12}{'n':>6}{'reset p50 ms':>15}{'reset p99 ms':>15}{'drop p50 ms':>14}")  # noqa: T201
    for engine, r in rows.items():
        print(f"{engine:<12}{r['n']:>6}{r['reset_p50_ms']:>15.3f}{r['reset_p99_ms']:>15.3f}"  # noqa: T201
              f"{r['drop_p50_ms']:>14.3f}")
    if args.json:
        print(json.dumps({"benchmark": "db_reset", **rows}))  # noqa: T201


if __name__ == "__main__":
    main()
