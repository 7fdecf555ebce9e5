"""What the WebSocket stack alone costs per reset+step pair, beside envhub and OpenEnv.

`protocol.py` compares envhub with OpenEnv; this script says how much of either is the stack under
them. Each server answers every frame with a fixed JSON reply: a bare FastAPI app served as OpenEnv
is (uvicorn's defaults, per-message deflate on), the same app through uvicorn's own WebSocket
protocol as envhub serves its other routes, and a bare picows server, the stack under envhub's
session socket (`envhub.server.native_ws`). Same load generator and pinning as `protocol.py`:
server on CPU 0, client on CPU 1, each pair two frames out and two answers back.

The picows row is the most a server can get out of this load generator: with one session each pair
waits for the client and the wake-ups of both CPUs, so no server, however fast, goes much past it.
Divide it by OpenEnv's figure in `protocol.py` for the highest ratio a 1-session run can show.

    .venv/bin/python benchmarks/ws_floor.py [--seconds 4] [--json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import textwrap
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import protocol  # noqa: E402

BARE_APP = textwrap.dedent('''
    import os, orjson, uvicorn
    from fastapi import FastAPI, WebSocket, WebSocketDisconnect

    app = FastAPI()
    REPLY = '{"id":null,"op":"step","ok":true,"data":{"observation":{"text":"hi"},"reward":null,"done":false}}'

    @app.websocket("/ws")
    async def ws(sock: WebSocket) -> None:
        await sock.accept()
        try:
            while True:
                orjson.loads(await sock.receive_text())
                await sock.send_text(REPLY)
        except WebSocketDisconnect:
            pass

    if __name__ == "__main__":
        port = int(os.environ["PORT"])
        if os.environ.get("AS") == "uvicorn-sansio":  # envhub's settings for every route but its session socket
            uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning", ws="websockets-sansio",
                        ws_per_message_deflate=False)
        else:  # as OpenEnv's benchmark server runs: uvicorn's defaults
            uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")
''')


async def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=4)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    os.sched_setaffinity(0, {1})
    app_file, picows_file = Path("/tmp/envhub_bench_bare_ws.py"), Path("/tmp/envhub_bench_picows_ws.py")
    app_file.write_text(BARE_APP)
    picows_file.write_text(protocol.PICOWS_APP)
    results: dict[str, dict] = {}
    for label, script, env in (("FastAPI, uvicorn defaults (OpenEnv's stack)", app_file, {}),
                               ("FastAPI, uvicorn websockets-sansio", app_file, {"AS": "uvicorn-sansio"}),
                               ("picows (envhub's session socket)", picows_file, {})):
        port = protocol.free_port()
        proc = protocol.start([protocol.PY, str(script)], {**env, "PORT": str(port)}, port)
        try:
            # envhub's two frames; the bare servers ignore what they say
            server = protocol.Server(f"ws://127.0.0.1:{port}/ws", proc.pid, protocol.ENVHUB_FRAMES, b'"ok":true')
            await protocol.throughput(server, 8, 1.0)
            results[label] = {load: await protocol.throughput(server, n, args.seconds)
                              for load, n in (("1 session", 1), ("64 sessions", 64))}
        finally:
            proc.kill()
    if args.json:
        print(json.dumps(results))  # noqa: T201 - the --json line for machines
        return
    from rich.console import Console
    from rich.table import Table

    t = Table(title="the WebSocket stack alone (a fixed reply per frame), server on CPU 0, client on CPU 1")
    for col in ("", "pairs/s, 1 session", "CPU µs/pair, 1", "pairs/s, 64 sessions", "CPU µs/pair, 64"):
        t.add_column(col, justify="right")
    for label, r in results.items():
        t.add_row(label, f"{r['1 session']['pairs_per_s']:,.0f}", f"{r['1 session']['cpu_us_per_pair']:.0f}",
                  f"{r['64 sessions']['pairs_per_s']:,.0f}", f"{r['64 sessions']['cpu_us_per_pair']:.0f}")
    Console().print(t)


if __name__ == "__main__":
    asyncio.run(main())
