"""Starting a child from a server-sized process: the event loop's own start against `envhub.sandbox.spawn`.

    .venv/bin/python benchmarks/spawn.py [--n 200] [--ballast-mb 150] [--loop uvloop|asyncio] [--json]

A process holding `--ballast-mb` of touched heap (a server's size) starts `cp -a` of a small tree
n times, in alternating rounds of each way: `asyncio.create_subprocess_exec` on the loop (uvloop
forks on the loop's thread and waits there for the exec) and `envhub.sandbox.spawn` (Python's
subprocess, vfork where it may, on a worker thread). Prints, per start, this process's CPU (the
fork's page-table copy is the parent's), the wall time, and how late a 1 ms timer on the same loop
fired (p99 and max): how long every other connection waited.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

from envhub.sandbox.spawn import spawn


async def own(argv: list[str]) -> None:
    proc = await asyncio.create_subprocess_exec(*argv, stdin=asyncio.subprocess.DEVNULL,
                                                stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE)
    await proc.communicate()


async def envhub_spawn(argv: list[str]) -> None:
    proc = await spawn(argv, stdin=asyncio.subprocess.DEVNULL)
    assert proc.stdout is not None
    await proc.stdout.read()
    await proc.wait()


async def measure(start: Callable[[list[str]], Awaitable[None]], src: Path, scratch: Path, n: int) -> dict[str, float]:
    lags: list[float] = []
    stop = False

    async def ticker() -> None:
        while not stop:
            t = time.perf_counter()
            await asyncio.sleep(0.001)
            lags.append(time.perf_counter() - t - 0.001)

    tick = asyncio.create_task(ticker())
    cpu, wall = time.process_time(), time.perf_counter()
    for i in range(n):
        await start(["cp", "-a", "--no-target-directory", str(src), str(scratch / str(i))])
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    stop = True
    await tick
    shutil.rmtree(scratch)
    scratch.mkdir()
    lags.sort()
    return {"cpu_ms": cpu / n * 1000, "wall_ms": wall / n * 1000,
            "lag_p99_ms": lags[int(len(lags) * 0.99)] * 1000, "lag_max_ms": lags[-1] * 1000}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=200, help="starts per way and round")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--ballast-mb", type=int, default=150)
    ap.add_argument("--loop", choices=("uvloop", "asyncio"), default="uvloop")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    ballast = [bytearray(1024) for _ in range(args.ballast_mb * 1024)]  # touched pages, like a server's heap
    runner: Callable[..., object] = asyncio.run
    if args.loop == "uvloop":
        import uvloop

        runner = uvloop.run
    with tempfile.TemporaryDirectory() as tmp:
        src, scratch = Path(tmp) / "src", Path(tmp) / "out"
        src.mkdir()
        scratch.mkdir()
        for i in range(20):
            (src / f"f{i}").write_text(str(i))
        rows: dict[str, list[dict[str, float]]] = {"loop's own": [], "envhub spawn": []}
        for _ in range(args.rounds):
            for name, start in (("loop's own", own), ("envhub spawn", envhub_spawn)):
                rows[name].append(runner(measure(start, src, scratch, args.n)))  # type: ignore[arg-type]
    summary = {name: {k: round(statistics.median(r[k] for r in runs), 2) for k in runs[0]}
               for name, runs in rows.items()}
    del ballast
    if args.json:
        print(json.dumps({"loop": args.loop, "n": args.n, "ballast_mb": args.ballast_mb, **summary}))
        return
    print(f"starting `cp -a` from a {args.ballast_mb} MB process on {args.loop}, n={args.n}, "
          f"median of {args.rounds} rounds (ms per start)")
    print(f"{'way':<14}{'CPU':>8}{'wall':>8}{'loop lag p99':>14}{'max':>8}")
    for name, s in summary.items():
        print(f"{name:<14}{s['cpu_ms']:>8.2f}{s['wall_ms']:>8.2f}{s['lag_p99_ms']:>14.1f}{s['lag_max_ms']:>8.1f}")


if __name__ == "__main__":
    main()
