"""Reset throughput and latency through the Ray pool's entry point (docker/ray, 1, 2 and 3 worker
containers) against the compose pool's router (compose.yaml) on the same machine, in one run.

Each setup serves the terminal family with one replica per worker (Ray: `--min N --max N`, spread
over the N workers; compose: `--scale terminal=N`). `--clients` concurrent clients each loop
`POST /v1/sessions` (a reset: task copy, bubblewrap sandbox, first observation) then `DELETE`, for
`--seconds`; a warm-up round is not counted. Printed: sessions/s (reset+close pairs), reset p50/p99.
With one replica the same load also goes straight to the replica (no proxy at all): the bound any
standard proxy could reach, to weigh the router's own cost.

    .venv/bin/python benchmarks/ray_pool.py [--workers 1 2 3] [--clients 8] [--seconds 20] [--json]

Needs root, a Docker engine, envhub-hub (docker/build-images.sh) and envhub-ray (docker/ray/build.sh).
All setups share this machine's CPUs, so more workers add isolation, not cores: compare the rows
side by side, not with another machine's numbers.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx

REPO = Path(__file__).resolve().parents[1]
TASK = "terminal/count-error-lines"
HEADERS = {"Authorization": "Bearer benchmark-ray-pool-client-token"}


def pct(xs: list[float], q: float) -> float:
    s = sorted(xs)
    return s[min(len(s) - 1, max(0, round(q * (len(s) - 1))))] if s else float("nan")


def compose(file: str, project: str, *args: str, env: dict[str, str] | None = None) -> None:
    subprocess.run(["docker-compose", "-f", file, "-p", project, *args], cwd=REPO, check=True,
                   env={**os.environ, **(env or {})}, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def wait_ready(url: str, replicas: int, path: str, attempts: int = 200) -> None:
    for _ in range(attempts):
        try:
            r = httpx.get(url + path, timeout=5).json()
            if path == "/ray/replicas":
                n = sum(1 for x in r if x["state"] == "live")
            else:
                n = sum(1 for x in r if x["ready"] and "terminal" in x["families"])
            if n >= replicas:
                return
        except (httpx.HTTPError, ValueError, KeyError, TypeError):
            pass
        time.sleep(2)
    raise SystemExit(f"{url}: {replicas} replica(s) never became ready")


async def load(url: str, clients: int, seconds: float) -> dict[str, Any]:
    resets: list[float] = []
    refused = 0
    stop = time.monotonic() + seconds

    async def client(c: httpx.AsyncClient) -> None:
        nonlocal refused
        while time.monotonic() < stop:
            t0 = time.perf_counter()
            r = await c.post("/v1/sessions", json={"env": "terminal", "task_id": TASK})
            if r.status_code != 201:
                refused += 1
                await asyncio.sleep(0.2)
                continue
            resets.append(time.perf_counter() - t0)
            await c.delete(f"/v1/sessions/{r.json()['session_id']}")

    async with httpx.AsyncClient(base_url=url, headers=HEADERS, timeout=60,
                                 limits=httpx.Limits(max_connections=clients * 2)) as c:
        started = time.monotonic()
        await asyncio.gather(*(client(c) for _ in range(clients)))
        elapsed = time.monotonic() - started
    return {"sessions_per_s": round(len(resets) / elapsed, 1), "reset_p50_ms": round(pct(resets, 0.5) * 1000, 1),
            "reset_p99_ms": round(pct(resets, 0.99) * 1000, 1), "resets": len(resets), "refused": refused}


def bench(name: str, url: str, clients: int, seconds: float) -> dict[str, Any]:
    asyncio.run(load(url, clients, min(5.0, seconds)))  # warm-up: first sandboxes, connections
    row = {"setup": name, **asyncio.run(load(url, clients, seconds))}
    sys.stderr.write(json.dumps(row) + "\n")  # progress
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--workers", type=int, nargs="+", default=[1, 2, 3])
    ap.add_argument("--clients", type=int, default=8)
    ap.add_argument("--seconds", type=float, default=20)
    ap.add_argument("--port", type=int, default=18480)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    url = f"http://127.0.0.1:{args.port}"
    rows = []
    for n in args.workers:
        env = {"ENVHUB_PORT": str(args.port), "ENVHUB_MAX_SESSIONS": "64"}
        try:
            compose("compose.yaml", "envhub-bench", "up", "-d", "--no-build", "--scale", f"terminal={n}",
                    "router", "terminal", env=env)
            wait_ready(url, n, "/router/replicas")
            rows.append(bench(f"compose router, {n} terminal replica(s)", url, args.clients, args.seconds))
            if n == 1:
                replica = httpx.get(url + "/router/replicas", timeout=5).json()
                direct = next(r["url"] for r in replica if "terminal" in r["families"])
                rows.append(bench("no proxy: straight to the 1 replica", direct, args.clients, args.seconds))
        finally:
            compose("compose.yaml", "envhub-bench", "down", "-t", "2", "--remove-orphans", env=env)
        env = {"ENVHUB_RAY_PORT": str(args.port), "ENVHUB_RAY_MIN": str(n), "ENVHUB_RAY_MAX": str(n),
               "ENVHUB_RAY_ENVS": "--env terminal", "ENVHUB_MAX_SESSIONS": "64"}
        try:
            compose("docker/ray/compose.yaml", "envhub-bench-ray", "up", "-d", "--scale", f"worker={n}", env=env)
            wait_ready(url, n, "/ray/replicas")
            rows.append(bench(f"Ray entry point, {n} worker(s)", url, args.clients, args.seconds))
        finally:
            compose("docker/ray/compose.yaml", "envhub-bench-ray", "down", "-t", "2", env=env)
    if args.json:
        sys.stdout.write(json.dumps(rows, indent=1) + "\n")
        return
    lines = [f"{'setup':44} {'sessions/s':>10} {'reset p50 ms':>12} {'reset p99 ms':>12} {'resets':>7} {'503s':>5}"]
    lines += [f"{r['setup']:44} {r['sessions_per_s']:>10} {r['reset_p50_ms']:>12} {r['reset_p99_ms']:>12} "
              f"{r['resets']:>7} {r['refused']:>5}" for r in rows]
    sys.stdout.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
