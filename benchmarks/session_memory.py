"""Memory the session manager holds per idle echo session, without any connection (tracemalloc).

    .venv/bin/python benchmarks/session_memory.py [--n 2000] [--json]

`protocol.py` measures RSS per idle session over WebSocket, which counts the connection as well
(the server's protocol objects, the ASGI task, buffers); this counts only what a `Session` and its
environment keep, with the episode store on, and prints the largest allocation sites.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import tracemalloc

from envhub.config import get_settings
from envhub.core.hub import Hub
from envhub.spec import ResetRequest


async def measure(n: int) -> dict:
    settings = get_settings().model_copy(update={"families": ["echo"], "max_sessions": n + 100})
    hub = Hub.build(settings)
    await hub.start()
    req = ResetRequest(env="echo", task_id="echo/say-done")
    try:
        for _ in range(50):  # warm caches (skin classes, tool schemas, metric children)
            await hub.manager.create(req)
        if hub.store is not None:
            await hub.store.writer.flush()
        gc.collect()
        tracemalloc.start(1)
        before = tracemalloc.take_snapshot()
        for _ in range(n):
            await hub.manager.create(req)
        if hub.store is not None:
            await hub.store.writer.flush()
        gc.collect()
        stats = tracemalloc.take_snapshot().compare_to(before, "lineno")
        tracemalloc.stop()
        return {"sessions": n, "bytes_per_session": sum(s.size_diff for s in stats) / n,
                "top": [(str(s.traceback[0]), s.size_diff / n) for s in stats[:10]]}
    finally:
        await hub.stop()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=2000)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    result = asyncio.run(measure(args.n))
    if args.json:
        print(json.dumps(result))
        return
    print(f"{result['bytes_per_session']:.0f} bytes per idle echo session ({args.n} sessions, tracemalloc)")
    for where, size in result["top"]:
        print(f"{size:8.0f} B  {where}")


if __name__ == "__main__":
    main()
