"""Session reset latency by sandbox backend: local (bubblewrap), Docker with and without the warm pool.

A reset is `SessionManager.create` on a terminal task, in-process (what `POST /v1/sessions`
does minus HTTP): load the task, start a sandbox over a copy of its state, first observation.
Resets run one at a time with a pause between them (`--gap`), so a warm pool has time to refill
as it would between an RL worker's episodes; close time is not counted.

    .venv/bin/python benchmarks/sandbox_reset.py [-n 20] [--task terminal/count-error-lines] [--json]

Docker rows need root, a running engine and the `envhub-sandbox` image (docker/build-images.sh);
they are skipped with the reason otherwise.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import time
from typing import Any

from envhub.config import get_settings
from envhub.core.hub import Hub
from envhub.spec import ResetRequest


def pct(xs: list[float], q: float) -> float:
    s = sorted(xs)
    return s[min(len(s) - 1, max(0, round(q * (len(s) - 1))))]


async def measure(name: str, sandbox: str, pool: int, n: int, task: str, gap: float) -> dict[str, Any]:
    os.environ["ENVHUB_DOCKER_POOL"] = str(pool)
    settings = get_settings().model_copy(update={"sandbox": sandbox, "families": ["terminal"]})
    hub = Hub.build(settings)
    try:
        hub.backend.check()
    except Exception as e:  # noqa: BLE001 - report and skip this row
        return {"backend": name, "skipped": str(getattr(e, "detail", e))}
    await hub.start()
    lat: list[float] = []
    try:
        warm = getattr(hub.backend, "warm", None)
        first = await hub.manager.create(ResetRequest(env="terminal", task_id=task))  # imports, caches, limits shape
        await hub.manager.close(first.session_id)
        if warm is not None and pool > 0:
            await asyncio.sleep(gap)
        for _ in range(n):
            t0 = time.perf_counter()
            created = await hub.manager.create(ResetRequest(env="terminal", task_id=task))
            lat.append(time.perf_counter() - t0)
            await hub.manager.close(created.session_id)
            await asyncio.sleep(gap)
    finally:
        await hub.stop()
    return {"backend": name, "n": n, "p50_ms": round(1000 * pct(lat, 0.5), 1), "p99_ms": round(1000 * pct(lat, 0.99), 1),
            "mean_ms": round(1000 * statistics.fmean(lat), 1), "max_ms": round(1000 * max(lat), 1)}


async def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-n", type=int, default=20, help="resets per backend")
    ap.add_argument("--task", default="terminal/count-error-lines")
    ap.add_argument("--gap", type=float, default=1.5, help="seconds between resets (pool refill time)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    rows = [await measure("local (bubblewrap)", "local", 0, args.n, args.task, args.gap),
            await measure("docker, warm pool", "docker", 2, args.n, args.task, args.gap),
            await measure("docker, no pool", "docker", 0, args.n, args.task, args.gap)]
    if args.json:
        sys.stdout.write(json.dumps({"task": args.task, "gap_s": args.gap, "rows": rows}, indent=2) + "\n")
        return
    sys.stdout.write(f"session reset latency, {args.task}, {args.n} resets each, {args.gap}s apart\n")
    sys.stdout.write(f"{'backend':<22}{'p50 ms':>10}{'p99 ms':>10}{'mean ms':>10}{'max ms':>10}\n")
    for r in rows:
        if "skipped" in r:
            sys.stdout.write(f"{r['backend']:<22}  skipped: {r['skipped']}\n")
        else:
            sys.stdout.write(f"{r['backend']:<22}{r['p50_ms']:>10}{r['p99_ms']:>10}{r['mean_ms']:>10}{r['max_ms']:>10}\n")


if __name__ == "__main__":
    asyncio.run(main())
