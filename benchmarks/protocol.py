"""Protocol benchmark: envhub vs OpenEnv on the same trivial echo environment, plus live terminal and db sessions.

Both servers run as subprocesses pinned to CPU 0 (`taskset`), the load generator on CPU 1, over
WebSocket (each client one session, on the `websockets` library and again on raw sockets:
`loadgen.py`), taking turns under load (`--rounds`: each figure is a median
over rounds, each ratio the median of same-round ratios), beside a server that only answers (the
most this load generator can measure). envhub serves with its episode store on, a SQLite store that
already holds 100,000 episodes (`prefilled_store`: the same start for every run). Besides pairs/s and
latency it prints the server's CPU time per reset+step pair (user+system from /proc, threads
included): on a shared, noisy machine that ratio moves far less than pairs/s. envhub polls for the
next frame after each answer (`envhub.server.polling`), so with one session its core stays busy and
its CPU per pair is about its time per pair; the 1-session loads also run a second envhub with
polling off (`envhub, polling off`), whose CPU per pair is its own work. Prints a side-by-side table
and a `--json` line.

    .venv/bin/python benchmarks/protocol.py [--quick] [--seconds 8] [--rounds 8]
                                            [--terminal-sessions 1000]
                                            [--db-sessions 5000] [--json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from dataclasses import dataclass
from pathlib import Path

import loadgen  # beside this script
import websockets

ROOT = Path(__file__).resolve().parents[1]
AUTH = {"Authorization": "Bearer benchmark-client-token"}  # sessions belong to their caller (docs/security.md)
PY = sys.executable

OPENENV_APP = textwrap.dedent('''
    import os
    from openenv.core.env_server.http_server import create_app
    from openenv.core.env_server.interfaces import Environment
    from openenv.core.env_server.types import Action, Observation, State

    class EchoAction(Action):
        message: str = ""

    class EchoObservation(Observation):
        text: str = ""

    class Echo(Environment):
        SUPPORTS_CONCURRENT_SESSIONS = True
        def __init__(self):
            self._state = State(step_count=0)
        def reset(self, seed=None, episode_id=None, **kw):
            self._state = State(step_count=0)
            return EchoObservation(text="ready")
        def step(self, action, timeout_s=None, **kw):
            self._state.step_count += 1
            return EchoObservation(text=action.message)
        @property
        def state(self):
            return self._state

    app = create_app(Echo, EchoAction, EchoObservation, max_concurrent_envs=2000)
''')


#: A server that does nothing but answer (picows, the stack under envhub's session socket, polling after
#: each answer as envhub does): the most this load generator can measure, the ceiling of any ratio
#: over OpenEnv in the same run.
PICOWS_APP = textwrap.dedent('''
    import asyncio, os, orjson, uvloop
    from picows import WSListener, WSMsgType, ws_create_server
    from envhub.config import Settings
    from envhub.server.polling import IdlePoll

    REPLY = b'{"id":null,"op":"step","ok":true,"data":{"observation":{"text":"hi"},"reward":null,"done":false}}'
    POLL = IdlePoll(Settings().poll_us / 1e6)  # polls after each answer as envhub does

    class Fixed(WSListener):
        def on_ws_connected(self, transport):
            self.loop = asyncio.get_running_loop()

        def on_ws_frame(self, transport, frame):
            POLL.came()
            if frame.msg_type == WSMsgType.TEXT:
                orjson.loads(frame.get_payload_as_bytes())
                transport.send(WSMsgType.TEXT, REPLY)
                POLL.answered(self.loop)
            elif frame.msg_type == WSMsgType.CLOSE:
                transport.send_close(frame.get_close_code())
                transport.disconnect()

    async def main():
        server = await ws_create_server(lambda request: Fixed(), "127.0.0.1", int(os.environ["PORT"]))
        await server.serve_forever()

    uvloop.run(main())
''')


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start(cmd: list[str], env: dict[str, str], port: int) -> subprocess.Popen:
    proc = subprocess.Popen(["taskset", "-c", "0", *cmd], env={**os.environ, **env}, cwd=ROOT,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 120
    while time.time() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return proc
        except OSError:
            time.sleep(0.2)
    proc.kill()
    raise RuntimeError(f"server {cmd} did not start")


def rss_mb(pid: int) -> float:
    total = 0
    for p in [pid, *children(pid)]:
        try:
            with open(f"/proc/{p}/status") as f:
                total += next(int(line.split()[1]) for line in f if line.startswith("VmRSS"))
        except (FileNotFoundError, StopIteration):
            pass
    return total / 1024


def children(pid: int) -> list[int]:
    out, stack = [], [pid]
    while stack:
        p = stack.pop()
        try:
            with open(f"/proc/{p}/task/{p}/children") as f:
                kids = [int(x) for x in f.read().split()]
        except FileNotFoundError:
            kids = []
        out += kids
        stack += kids
    return out


def cpu_s(pid: int) -> float:
    """User + system CPU seconds of a process and its children so far (all threads)."""
    total = 0.0
    for p in [pid, *children(pid)]:
        try:
            with open(f"/proc/{p}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        except FileNotFoundError:
            pass
    return total


def prefilled_store(path: Path, episodes: int = 100_000) -> str:
    """A SQLite episode store that has served a while: `episodes` past episodes of one step each,
    with random ids as any client could make. The store's cost per write grows with its indexes, so
    envhub is measured on this, the same for every run, not on whatever the default store holds."""
    import random
    import sqlite3

    from envhub.store.db import create_schema, make_engine

    for stale in (path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")):
        # A killed server leaves its WAL beside the file, and SQLite would replay it into the new one.
        stale.unlink(missing_ok=True)
    engine = make_engine(f"sqlite:///{path}")
    create_schema(engine)
    engine.dispose()
    rng = random.Random(7)
    ids = [rng.randbytes(12).hex() for _ in range(episodes)]
    with sqlite3.connect(path) as db:
        db.executemany("INSERT INTO episodes (id, env, task_id, harness, created_at, ended_at, step_count, detail, "
                       "timings, reset_s) VALUES (?, 'echo', 'echo/say-done', 'plain', '2026-11-30 12:00:00.000000', "
                       "'2026-11-30 12:00:00.001000', 1, '', '{}', 0.0001)", [(i,) for i in ids])
        db.executemany("INSERT INTO episode_steps (episode_id, idx, tool, arguments, arguments_cut, observation, "
                       "observation_cut, is_error, failure, elapsed_s) VALUES (?, 1, 'echo', '{\"message\":\"hi\"}', "
                       "0, 'hi', 0, 0, 'ok', 0.0001)", [(i,) for i in ids])
    return f"sqlite:///{path}"


def pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))] * 1000


# -- per-protocol episode loops -----------------------------------------------------------------------
ENVHUB_FRAMES = (json.dumps({"op": "reset", "replace": True, "data": {"env": "echo", "task_id": "echo/say-done"}}),
                 json.dumps({"op": "step", "data": {"action": {"tool": "echo", "arguments": {"message": "hi"}}}}))
OPENENV_FRAMES = (json.dumps({"type": "reset", "data": {}}), json.dumps({"type": "step", "data": {"message": "hi"}}))


@dataclass
class Server:
    """One server under load: where it listens, its process, the reset and step frames of its protocol
    (envhub's reset replaces the connection's previous session, as OpenEnv's reset does), and what
    every answer that is not an error holds."""

    url: str
    pid: int
    frames: tuple[str, str]
    ok: bytes


async def websockets_loop(server: Server, stop: float, lat: list[float]) -> int:
    """One session on the `websockets` client (a Python asyncio client, as an RL loop's would be)."""
    pairs = 0
    reset, step = server.frames
    async with websockets.connect(server.url, max_size=None) as ws:
        while time.perf_counter() < stop:
            t = time.perf_counter()
            await ws.send(reset)
            await ws.recv()
            await ws.send(step)
            await ws.recv()
            lat.append(time.perf_counter() - t)
            pairs += 1
    return pairs


#: The second envhub of the 1-session loads: `ENVHUB_POLL_US=0` (see the module's docstring).
NO_POLL = "envhub, polling off"
#: Each load: its name in the results, its sessions, its client.
LOADS = (("1 session", 1, "websockets"), ("64 sessions", 64, "websockets"),
         ("1 session, raw client", 1, "raw"), ("64 sessions, raw client", 64, "raw"))
#: The clients a load can run on: the `websockets` library, and raw sockets (`loadgen`), whose own cost
#: per pair is a few system calls, so that with one session a pair waits on the server, not the client.
CLIENTS = ("websockets", "raw")


async def throughput(server: Server, clients: int, seconds: float, client: str = "websockets",
                     lat: list[float] | None = None) -> dict[str, float]:
    """pairs/s, latency and server CPU per pair of `clients` sessions for `seconds`; each pair's
    latency is also appended to `lat` when given (to pool rounds)."""
    lat = [] if lat is None else lat
    cpu0 = cpu_s(server.pid)
    if client == "raw":  # blocks this loop, which has nothing else to do meanwhile
        pairs = loadgen.run(server.url, clients, seconds, *server.frames, server.ok, lat=lat)
    else:
        stop = time.perf_counter() + seconds
        pairs = sum(await asyncio.gather(*(websockets_loop(server, stop, lat) for _ in range(clients))))
    await asyncio.sleep(0.5)  # the store's writer drains what these pairs produced: its CPU counts too
    return {"pairs_per_s": pairs / seconds, "p50_ms": pct(lat, 0.5), "p99_ms": pct(lat, 0.99),
            "cpu_us_per_pair": (cpu_s(server.pid) - cpu0) * 1e6 / max(1, pairs)}


async def interleaved(servers: dict[str, Server], clients: int, seconds: float, rounds: int,
                      client: str = "websockets") -> dict[str, dict]:
    """`throughput` of each server in turn, `rounds` times (the order alternating), `seconds` in all
    for each. On a shared machine the load of the neighbours drifts within seconds: measured one
    after the other, two servers can see different machines. Each figure is the median over rounds,
    and `ratio_*` the median of the ratios of one round's envhub and OpenEnv figures."""
    per: dict[str, list[dict[str, float]]] = {label: [] for label in servers}
    lats: dict[str, list[float]] = {label: [] for label in servers}
    order = list(servers)
    for r in range(rounds):
        for label in (order if r % 2 == 0 else order[::-1]):
            per[label].append(await throughput(servers[label], clients, seconds / rounds, client, lats[label]))
    out = {label: {"pairs_per_s": statistics.median(x["pairs_per_s"] for x in rows),
                   "cpu_us_per_pair": statistics.median(x["cpu_us_per_pair"] for x in rows),
                   "p50_ms": pct(lats[label], 0.5), "p99_ms": pct(lats[label], 0.99),
                   "rounds_pairs_per_s": [round(x["pairs_per_s"]) for x in rows]}
           for label, rows in per.items()}
    o = per["openenv"]
    for label in servers.keys() - {"openenv"}:
        for key in ("pairs_per_s", "cpu_us_per_pair"):
            out[label][f"ratio_{key}"] = statistics.median(a[key] / b[key] for a, b in zip(per[label], o, strict=True))
    return out


async def idle_memory(kind: str, url: str, pid: int, sessions: int) -> float:
    before = rss_mb(pid)
    conns = []
    for _ in range(sessions):
        ws = await websockets.connect(url, max_size=None)
        if kind == "envhub":
            await ws.send(json.dumps({"op": "reset", "data": {"env": "echo", "task_id": "echo/say-done"}}))
        else:
            await ws.send(json.dumps({"type": "reset", "data": {}}))
        await ws.recv()
        conns.append(ws)
    await asyncio.sleep(1)
    after = rss_mb(pid)
    for ws in conns:
        await ws.close()
    return (after - before) * 1024 / sessions  # KiB per idle session


async def terminal_figures(base: str, sessions: int) -> dict[str, float]:
    """Reset (sandbox up, workspace ready) and one-command step latencies; then hold `sessions` live."""
    import aiohttp

    resets, steps, created = [], [], []
    async with aiohttp.ClientSession(headers=AUTH) as http:
        async def reset() -> str:
            t = time.perf_counter()
            async with http.post(f"{base}/v1/sessions", json={"env": "terminal", "task_id": "terminal/count-error-lines"}) as r:
                body = await r.json()
                assert r.status == 201, body
            resets.append(time.perf_counter() - t)
            return body["session_id"]

        for _ in range(30):
            sid = await reset()
            for _ in range(5):
                t = time.perf_counter()
                async with http.post(f"{base}/v1/sessions/{sid}/step",
                                     json={"action": {"tool": "bash", "arguments": {"command": "echo hi"}}}) as r:
                    await r.read()
                steps.append(time.perf_counter() - t)
            async with http.delete(f"{base}/v1/sessions/{sid}"):
                pass
        live: list[str] = []
        held_resets = resets[:]
        resets.clear()
        t0 = time.perf_counter()
        for i in range(sessions):
            try:
                live.append(await reset())
            except AssertionError as e:
                print(f"stopped at {i} live sessions: {e}", file=sys.stderr)
                break
        created = resets[:]
        hold_s = time.perf_counter() - t0
        ok = 0
        for sid in live[:: max(1, len(live) // 20)]:
            async with http.post(f"{base}/v1/sessions/{sid}/step",
                                 json={"action": {"tool": "bash", "arguments": {"command": "echo alive"}}}) as r:
                ok += "alive" in (await r.json())["observation"]["text"]
        for sid in live:
            async with http.delete(f"{base}/v1/sessions/{sid}"):
                pass
    return {"reset_p50_ms": pct(held_resets, 0.5), "reset_p99_ms": pct(held_resets, 0.99),
            "step_p50_ms": pct(steps, 0.5), "step_p99_ms": pct(steps, 0.99), "live_sessions": len(live),
            "live_create_p50_ms": pct(created, 0.5), "live_create_p99_ms": pct(created, 0.99),
            "live_create_total_s": hold_s, "live_probe_ok": ok}


async def db_figures(base: str, sessions: int, pid: int) -> dict[str, float]:
    """Hold `sessions` live db sessions (a fresh SQLite database each); the server's RSS before and after."""
    import aiohttp

    before = rss_mb(pid)
    live: list[str] = []
    created: list[float] = []
    async with aiohttp.ClientSession(headers=AUTH) as http:
        for i in range(sessions):
            t = time.perf_counter()
            async with http.post(f"{base}/v1/sessions", json={"env": "db", "task_id": "db/bank/ask-balance-001"}) as r:
                body = await r.json()
            if r.status != 201:
                print(f"db: stopped at {i} live sessions: {body}", file=sys.stderr)
                break
            created.append(time.perf_counter() - t)
            live.append(body["session_id"])
        after = rss_mb(pid)
        ok = 0
        for sid in live[:: max(1, len(live) // 20)]:
            async with http.get(f"{base}/v1/sessions/{sid}") as r:
                ok += r.status == 200
        for sid in live:
            async with http.delete(f"{base}/v1/sessions/{sid}"):
                pass
    return {"live_sessions": len(live), "create_p50_ms": pct(created, 0.5), "create_p99_ms": pct(created, 0.99),
            "server_rss_mb_before": before, "server_rss_mb_live": after,
            "kib_per_live_session": (after - before) * 1024 / max(1, len(live)), "live_probe_ok": ok}


async def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=8, help="load time per server and load, over all rounds")
    ap.add_argument("--rounds", type=int, default=8, help="envhub and OpenEnv take turns this many times")
    ap.add_argument("--terminal-sessions", type=int, default=1000)
    ap.add_argument("--idle-sessions", type=int, default=200)
    ap.add_argument("--db-sessions", type=int, default=5000)
    ap.add_argument("--quick", action="store_true", help="a few minutes: 3 s loads, 100 terminal and 500 db sessions")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    if args.quick:
        args.seconds, args.rounds, args.terminal_sessions, args.db_sessions = 3, 4, 100, 500
    os.sched_setaffinity(0, {1})
    store = prefilled_store(Path(tempfile.gettempdir()) / "envhub_bench_store.sqlite3")
    store_no_poll = prefilled_store(Path(tempfile.gettempdir()) / "envhub_bench_store_no_poll.sqlite3")
    Path("/tmp/envhub_bench_openenv_app.py").write_text(OPENENV_APP)
    Path("/tmp/envhub_bench_picows_ws.py").write_text(PICOWS_APP)
    ep, op, cp, ep_no_poll = free_port(), free_port(), free_port(), free_port()
    procs: list[subprocess.Popen] = []
    try:
        hub = start([PY, "-m", "envhub.cli", "serve", "--port", str(ep), "--env", "echo", "--env", "terminal",
                     "--env", "db", "--log-level", "warning"],
                    {"ENVHUB_MAX_SESSIONS": "8192", "ENVHUB_DATABASE_URL": store}, ep)
        procs.append(hub)
        no_poll = start([PY, "-m", "envhub.cli", "serve", "--port", str(ep_no_poll), "--env", "echo",
                         "--log-level", "warning"],
                        {"ENVHUB_MAX_SESSIONS": "8192", "ENVHUB_DATABASE_URL": store_no_poll, "ENVHUB_POLL_US": "0"},
                        ep_no_poll)
        procs.append(no_poll)
        oe = start([PY, "-m", "uvicorn", "--app-dir", "/tmp", "envhub_bench_openenv_app:app", "--port", str(op),
                    "--log-level", "warning"], {}, op)
        procs.append(oe)
        ceiling = start([PY, "/tmp/envhub_bench_picows_ws.py"], {"PORT": str(cp)}, cp)
        procs.append(ceiling)
        servers = {"envhub": Server(f"ws://127.0.0.1:{ep}/v1/sessions/ws", hub.pid, ENVHUB_FRAMES, b'"ok":true'),
                   "openenv": Server(f"ws://127.0.0.1:{op}/ws", oe.pid, OPENENV_FRAMES, b'"type":"observation"'),
                   "ceiling": Server(f"ws://127.0.0.1:{cp}/", ceiling.pid, ENVHUB_FRAMES, b'"ok":true'),
                   NO_POLL: Server(f"ws://127.0.0.1:{ep_no_poll}/v1/sessions/ws", no_poll.pid, ENVHUB_FRAMES,
                                   b'"ok":true')}
        for server in servers.values():  # warm-up (lazy imports, caches, the store's schema)
            for client in CLIENTS:
                await throughput(server, 8, 1.0, client)
        results: dict[str, dict] = {label: {} for label in servers}
        for load, n, client in LOADS:
            # Polling matters when a pair waits on the server's wake-up: with one session.
            these = servers if n == 1 else {k: v for k, v in servers.items() if k != NO_POLL}
            for label, figures in (await interleaved(these, n, args.seconds, args.rounds, client)).items():
                results[label][load] = figures
        ceiling.kill()
        no_poll.kill()
        for label in ("envhub", "openenv"):
            server = servers[label]
            results[label]["idle_kib_per_session"] = await idle_memory(label, server.url, server.pid,
                                                                       args.idle_sessions)
        oe.kill()
        results["terminal"] = await terminal_figures(f"http://127.0.0.1:{ep}", args.terminal_sessions)
        results["terminal"]["server_rss_mb_after"] = rss_mb(hub.pid)
        results["db"] = await db_figures(f"http://127.0.0.1:{ep}", args.db_sessions, hub.pid)
    finally:
        for proc in procs:
            proc.kill()

    if args.json:
        print(json.dumps(results))
        return
    from rich.console import Console
    from rich.table import Table

    t = Table(title="echo environment, WebSocket, server on CPU 0, client on CPU 1")
    for col in ("", "envhub", "OpenEnv 0.10.0", "ratio"):
        t.add_column(col)
    for load, _, _ in LOADS:
        for key, unit in (("pairs_per_s", "pairs/s"), ("p50_ms", "p50 ms"), ("p99_ms", "p99 ms"),
                          ("cpu_us_per_pair", "server CPU µs/pair")):
            a, b = results["envhub"][load][key], results["openenv"][load][key]
            r = results["envhub"][load].get(f"ratio_{key}", a / b if b else None)
            t.add_row(f"{load} {unit}", f"{a:.1f}", f"{b:.1f}", f"{r:.2f}x" if r else "-")
        if (q := results[NO_POLL].get(load)) is not None:
            for key, unit in (("pairs_per_s", "pairs/s"), ("cpu_us_per_pair", "server CPU µs/pair")):
                t.add_row(f"{load} {unit}, polling off", f"{q[key]:.1f}", f"{results['openenv'][load][key]:.1f}",
                          f"{q[f'ratio_{key}']:.2f}x")
        c = results["ceiling"][load]
        t.add_row(f"{load} pairs/s of a server that only answers", f"{c['pairs_per_s']:.1f}",
                  f"{results['openenv'][load]['pairs_per_s']:.1f}", f"{c['ratio_pairs_per_s']:.2f}x")
    a, b = results["envhub"]["idle_kib_per_session"], results["openenv"]["idle_kib_per_session"]
    t.add_row("idle memory KiB/session", f"{a:.0f}", f"{b:.0f}", f"{a / b:.2f}x" if b else "-")
    Console().print(t)
    for key, title in (("terminal", "terminal sessions (bubblewrap sandbox + persistent bash)"),
                       ("db", "live db sessions (a SQLite database each)")):
        tt = Table(title=title)
        tt.add_column("figure")
        tt.add_column("value")
        for k, v in results[key].items():
            tt.add_row(k, f"{v:.2f}" if isinstance(v, float) else str(v))
        Console().print(tt)
    print(json.dumps(results))


if __name__ == "__main__":
    asyncio.run(main())
