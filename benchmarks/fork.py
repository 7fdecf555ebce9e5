"""Fork latency of a live terminal session by workspace size, beside a reset of the same task.

A fork is `SessionManager.fork` in-process (what `POST /v1/sessions/{id}/fork` does minus HTTP):
read the shell's state, copy the workspace with every process paused, start a sandbox over the
copy, replay the shell's state. The source holds `--mb` MiB of random bytes in its workspace; each
fork is closed before the next (close time is not counted). A reset of the same task is the baseline.

    .venv/bin/python benchmarks/fork.py [-n 20] [--mb 0 50] [--json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import time
from typing import Any

from envhub.config import get_settings
from envhub.core.hub import Hub
from envhub.spec import ForkRequest, ResetRequest, StepRequest

TASK = "terminal/count-error-lines"


def pct(xs: list[float], q: float) -> float:
    s = sorted(xs)
    return s[min(len(s) - 1, max(0, round(q * (len(s) - 1))))]


async def measure(n: int, sizes: list[int]) -> list[dict[str, Any]]:
    hub = Hub.build(get_settings().model_copy(update={"families": ["terminal"]}))
    await hub.start()
    rows = []
    try:
        resets = []
        for _ in range(n):
            t = time.perf_counter()
            created = await hub.manager.create(ResetRequest(env="terminal", task_id=TASK))
            resets.append(time.perf_counter() - t)
            await hub.manager.close(created.session_id)
        rows.append({"what": "reset", "mb": 0, "p50_ms": statistics.median(resets) * 1e3,
                     "p90_ms": pct(resets, 0.9) * 1e3})
        for mb in sizes:
            source = (await hub.manager.create(ResetRequest(env="terminal", task_id=TASK))).session_id
            if mb:
                fill = f"head -c {mb}M /dev/urandom > big.bin"
                await hub.manager.step(source, StepRequest.model_validate(
                    {"action": {"tool": "bash", "arguments": {"command": fill}}}))
            forks = []
            for _ in range(n):
                t = time.perf_counter()
                (made,) = await hub.manager.fork(source, ForkRequest())
                forks.append(time.perf_counter() - t)
                await hub.manager.close(made.session_id)
            await hub.manager.close(source)
            rows.append({"what": "fork", "mb": mb, "p50_ms": statistics.median(forks) * 1e3,
                         "p90_ms": pct(forks, 0.9) * 1e3})
    finally:
        await hub.stop()
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-n", type=int, default=20)
    ap.add_argument("--mb", type=int, nargs="+", default=[0, 50])
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    rows = asyncio.run(measure(args.n, args.mb))
    if args.json:
        print(json.dumps(rows, indent=2))
        return
    print(f"{'what':6} {'MiB':>5} {'p50 ms':>9} {'p90 ms':>9}")
    for r in rows:
        print(f"{r['what']:6} {r['mb']:>5} {r['p50_ms']:>9.1f} {r['p90_ms']:>9.1f}")


if __name__ == "__main__":
    main()
