"""Episode throughput per family: RL-shaped episodes (reset, the task's oracle steps, verify, close)
against an `envhub serve` process, C clients at a time.

    .venv/bin/python benchmarks/episodes.py [--families terminal db office swe] [--clients 1 8 64]
        [--seconds 20] [--seed 0] [--swe-languages python go javascript] [--against REF]
        [--rounds N] [--backend local|docker] [--quick] [--json]

For each family F a server is started as its own process (`envhub serve --env F`, a free port, a
fresh data folder under /var/tmp that borrows the installed verifier site, the fetched SWE sources
and the materialised task sets, so nothing is fetched or generated during a load). Eight tasks of F
are drawn by `--seed` from the validated tasks the server can run (SWE: spread over
`--swe-languages`), and each task's oracle actions are read from the same checkout's family code
(`Family.oracle_actions`, what `envhub run --agent oracle` plays). At each concurrency level C, C
client coroutines of one `AsyncEnvClient` (its retries off: a failed call is a failed episode) loop
for `--seconds`, client i starting at task i, over the 8 tasks.

What each number means, and its limits:

- **episodes/s**: episodes that ended with reward 1.0, over the wall time from the load's start to
  the end of its last episode (episodes started before the deadline finish; a long SWE episode can
  run past it). A load is warmed up first: each task played once, C at a time up to 8.
- **failures**: every episode that did not end with reward 1.0: an error answer at any call (the
  phase is named), a step answered `env_error`, or a verdict below 1.0. They are counted and their
  most common reasons printed, never dropped; they are not in episodes/s nor in the latencies.
- **p50 / p99 ms**: the wall time of one whole episode, reset to close, as its client saw it.
- **server CPU ms per episode**: the server process's user+system time (all threads,
  `/proc/PID/stat` utime+stime), plus its reaped children's (cutime+cstime: sandboxes and verifier
  processes that exited and were waited for), plus the live descendants' (each its own and its
  reaped children's: persistent shells, warm verifier zygotes; counted by what they used during
  the load), over the load's episodes (failed ones included: they cost CPU too). Limit: a process
  that runs in a sandbox's pid namespace is reaped by that namespace's pid 1, and bubblewrap exits
  before it reaps its pid 1, so that CPU never reaches the server's counters (see branch.py).
  Hence **cgroup CPU ms per episode**: where a cgroup v2 can be made (root), the server runs in one
  of its own, whose `usage_usec` holds everything it and every process it started ran. Both figures
  include the episode store's writer and the server's idle polling (`ENVHUB_POLL_US`).
- **load generator CPU ms per episode**: this process's user+system time during the load (the
  client's HTTP and JSON work; at C = 1 also the /proc reads of the phase split).
- **CPU by phase** (C = 1 only): the same counters read before and after each call, so each phase
  holds what the server used while answering it. Exact at one client, up to work the server does
  after it answers (a sandbox torn down after close answers, the store's writer): that lands in the
  next phase or between episodes (the rest, `other`).
- **--against REF**: a second server from a detached git worktree of REF (same Python, its own
  tasks and family code, the same task ids), loaded in the same rounds, the two taking turns
  (`--rounds`, the order alternating), so that both see the same neighbours. Figures are medians over
  rounds, each ratio (new/old) the median of same-round ratios. Tasks are drawn among those both
  checkouts have (REF may predate a task set); each plays its own checkout's oracle. REF's server
  uses this Python environment and the installed verifier site: a REF that needs other packages or
  another verifier site fails at start or at verify, and says so.
- **/proc counters** tick at 1/CLK_TCK (10 ms here): per-episode figures are averages over many
  episodes, meaningful only for loads of dozens of episodes or more.
- **--backend docker**: sandboxes in Docker; where the backend cannot run (no engine, no image),
  the family's row says why instead.

The servers are not pinned to CPUs: sandboxes and verifiers inherit a pinning, which would cap the
many-client loads at one core. On a shared machine read the ratios and the CPU figures, not the
absolute episodes/s.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import contextlib
import json
import os
import random
import resource
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # this checkout's client and settings, whatever envhub the venv installed
PY = sys.executable
CLK_TCK = os.sysconf("SC_CLK_TCK")
N_TASKS = 8
LEVELS = {"echo": [1, 8, 64], "terminal": [1, 8, 64], "db": [1, 8, 64], "office": [1, 4], "swe": [1, 2]}
QUICK_LEVELS = {"echo": [1, 8], "terminal": [1, 8], "db": [1, 8], "office": [1], "swe": [1]}
DEFAULT_FAMILIES = ["terminal", "db", "office", "swe"]
QUICK_FAMILIES = ["terminal", "db", "office"]
SWE_LANGUAGES = ["python", "go", "javascript"]
PHASES = ("reset", "steps", "verify", "close")

#: Run in a checkout's own Python path (ours, or REF's worktree): the tasks to play and their oracle
#: actions, from that checkout's catalogue and family code, so each server plays its own oracle.
PLAN = r'''
import json, random, sys
from envhub import families
from envhub.config import get_settings
from envhub.tasks.catalog import Catalog

req = json.load(sys.stdin)
fam = req["family"]
settings = get_settings()
try:
    catalog = Catalog(settings.tasks_dir, families=[fam])  # only this family's task sets
except TypeError:  # an older checkout's catalogue
    catalog = Catalog(settings.tasks_dir)
ids = req.get("ids")
if req.get("list"):  # the family's task ids this checkout has
    print(json.dumps(sorted(t.id for t in catalog.tasks.values() if t.family == fam)))
    sys.exit(0)
if ids is None:
    from envhub.records import validation_status

    available = set(req["available"])
    pool = sorted(t.id for t in catalog.tasks.values() if t.family == fam and t.id in available
                  and validation_status(t) == "validated")
    rng = random.Random(req["seed"])
    if req["languages"]:  # spread over the languages, in turn, each language's tasks in a seeded order
        by_lang = [[i for i in pool if catalog.get(i).config.metadata.get("language") == lang]
                   for lang in req["languages"]]
        for group in by_lang:
            rng.shuffle(group)
        ids = [g[k] for k in range(req["n"]) for g in by_lang if k < len(g)][:req["n"]]
    else:
        ids = rng.sample(pool, min(req["n"], len(pool)))
family = families.load([fam])[fam]
print(json.dumps([{"id": i, "actions": [a.model_dump(mode="json") for a in family.oracle_actions(catalog.get(i))]}
                  for i in ids]))
'''

#: Whether this checkout's Docker backend can run here (engine, image); prints why not, or nothing.
DOCKER_CHECK = r'''
from envhub.config import get_settings
from envhub.core.hub import Hub
try:
    Hub.build(get_settings().model_copy(update={"sandbox": "docker", "families": ["terminal"]})).backend.check()
except Exception as e:
    print(str(getattr(e, "detail", e)) or type(e).__name__)
'''


# --- CPU counters -------------------------------------------------------------------------------

def _stat(pid: int) -> list[str] | None:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()
    except (FileNotFoundError, ProcessLookupError):
        return None


def _children(pid: int) -> list[int]:
    """Direct children, whichever of the process's threads started them."""
    out: list[int] = []
    with contextlib.suppress(FileNotFoundError):
        for tid in os.listdir(f"/proc/{pid}/task"):
            with contextlib.suppress(FileNotFoundError), open(f"/proc/{pid}/task/{tid}/children") as f:
                out += [int(c) for c in f.read().split()]
    return out


def _live_tree_s(pid: int) -> float:
    """CPU seconds of the live descendants of `pid`: each one's own and its reaped children's. A
    descendant that exits moves its total into its parent's cutime, so the sum stays consistent."""
    total = 0
    stack = _children(pid)
    while stack:
        p = stack.pop()
        if (fields := _stat(p)) is not None:
            total += sum(int(x) for x in fields[11:15])  # utime, stime, cutime, cstime
            stack += _children(p)
    return total / CLK_TCK


@dataclass
class Counters:
    """A server's CPU counters at one moment (seconds)."""

    own: float
    reaped: float
    live: float
    cgroup: float | None

    @property
    def total(self) -> float:
        return self.own + self.reaped + self.live

    def __sub__(self, other: Counters) -> Counters:
        cg = None if self.cgroup is None or other.cgroup is None else self.cgroup - other.cgroup
        return Counters(self.own - other.own, self.reaped - other.reaped, self.live - other.live, cg)


def counters(pid: int, cgroup: Path | None) -> Counters:
    fields = _stat(pid) or ["0"] * 15
    cg = None
    if cgroup is not None:
        stat = dict(line.split() for line in (cgroup / "cpu.stat").read_text().splitlines())
        cg = int(stat["usage_usec"]) / 1e6
    return Counters(own=(int(fields[11]) + int(fields[12])) / CLK_TCK,
                    reaped=(int(fields[13]) + int(fields[14])) / CLK_TCK, live=_live_tree_s(pid), cgroup=cg)


def own_cpu_s() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


# --- servers ------------------------------------------------------------------------------------

def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def shared_data_dir() -> Path:
    from envhub.config import get_settings

    return get_settings().data_dir


@contextlib.contextmanager
def fresh_data_dir() -> Iterator[Path]:
    """An empty data folder (its own episode store, sessions, db templates) that borrows what an
    install step made once: the verifier site and the fetched SWE sources (as tests/conftest.py)."""
    shared = shared_data_dir()
    root = Path(tempfile.mkdtemp(prefix="envhub-bench-episodes-", dir="/var/tmp"))
    root.chmod(0o755)  # sandbox uids must reach it
    try:
        (root / "verifier").mkdir(mode=0o755)
        if (site := shared / "verifier" / "site").exists():
            os.symlink(site.resolve(), root / "verifier" / "site")
        if (sources := shared / "swe-sources").exists():
            os.symlink(sources.resolve(), root / "swe-sources")
        yield root
    finally:
        shutil.rmtree(root, ignore_errors=True)


def make_cgroup(name: str) -> Path | None:
    """A cgroup v2 for one server (None where none can be made: not root, no cgroup v2)."""
    try:
        mounts = [line.split()[1] for line in Path("/proc/self/mounts").read_text().splitlines()
                  if line.split()[2] == "cgroup2"]
        ours = next(line[3:] for line in Path("/proc/self/cgroup").read_text().splitlines() if line.startswith("0::"))
        group = Path(mounts[0]) / ours.lstrip("/") / f"envhub-episodes-{os.getpid()}-{name}"
        group.mkdir()
        return group
    except (OSError, StopIteration, IndexError):
        return None


@dataclass
class Server:
    label: str  # "new", or the REF measured against
    tree: Path
    url: str
    proc: subprocess.Popen
    cgroup: Path | None
    log: Path

    def counters(self) -> Counters:
        return counters(self.proc.pid, self.cgroup)


def tree_env(tree: Path, extra: dict[str, str] | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "ENVHUB_DATABASE_URL"}  # the fresh folder's store
    env["PYTHONPATH"] = str(tree)  # that checkout's envhub and families, never another's
    return {**env, **(extra or {})}


@contextlib.contextmanager
def serve(label: str, tree: Path, family: str, backend: str) -> Iterator[Server]:
    """`envhub serve --env family` from `tree`, ready, in a fresh data folder and a cgroup of its own."""
    from envhub.config import get_settings

    port = free_port()
    with fresh_data_dir() as data:
        log = data / "server.log"
        env = tree_env(tree, {"ENVHUB_DATA_DIR": str(data), "ENVHUB_SANDBOX": backend,
                              # the materialised task sets: immutable, named by their generator's digest
                              "ENVHUB_TASK_SETS_DIR": str(get_settings().task_sets_cache)})
        cgroup = make_cgroup(label.replace("/", "_"))
        with open(log, "wb") as out:
            proc = subprocess.Popen([PY, "-m", "envhub.cli", "serve", "--port", str(port), "--env", family,
                                     "--log-level", "warning"], cwd=tree, env=env, stdout=out, stderr=out)
        if cgroup is not None:  # before it starts anything: every process it starts is in it too
            try:
                (cgroup / "cgroup.procs").write_text(str(proc.pid))
            except OSError:
                cgroup.rmdir()
                cgroup = None
        server = Server(label, tree, f"http://127.0.0.1:{port}", proc, cgroup, log)
        try:
            wait_ready(server)
            yield server
        finally:
            proc.terminate()
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            if cgroup is not None:
                for _ in range(50):  # sandboxes go on the server's death signal, a moment later
                    try:
                        cgroup.rmdir()
                        break
                    except OSError:
                        time.sleep(0.1)


def wait_ready(server: Server, timeout: float = 900) -> None:
    """Until `/ready` answers 200 (a first start may materialise the family's task sets: minutes)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if server.proc.poll() is not None:
            raise RuntimeError(f"server {server.label} exited ({server.proc.returncode}):\n"
                               + server.log.read_text(errors="replace")[-3000:])
        with contextlib.suppress(OSError):
            with urllib.request.urlopen(f"{server.url}/ready", timeout=2) as r:
                if r.status == 200:
                    return
        time.sleep(0.3)
    raise RuntimeError(f"server {server.label} not ready after {timeout:.0f} s")


def plan(tree: Path, req: dict[str, Any]) -> Any:
    """The tasks and their oracle actions (or with `list`, the family's task ids), from `tree`'s own
    catalogue and family code."""
    proc = subprocess.run([PY, "-c", PLAN], input=json.dumps(req), cwd=tree, env=tree_env(tree),
                          capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"planning {req['family']} in {tree} failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def docker_unavailable() -> str | None:
    proc = subprocess.run([PY, "-c", DOCKER_CHECK], cwd=ROOT, env=tree_env(ROOT), capture_output=True, text=True)
    if proc.returncode != 0:
        return proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else "the check failed"
    return proc.stdout.strip() or None


@contextlib.contextmanager
def worktree(ref: str) -> Iterator[Path]:
    """A detached git worktree of `ref`, removed at the end."""
    path = Path(tempfile.mkdtemp(prefix="envhub-bench-ref-"))
    path.rmdir()
    subprocess.run(["git", "worktree", "add", "--detach", str(path), ref], cwd=ROOT, check=True,
                   capture_output=True)
    try:
        yield path
    finally:
        subprocess.run(["git", "worktree", "remove", "--force", str(path)], cwd=ROOT, capture_output=True)
        shutil.rmtree(path, ignore_errors=True)


# --- load ---------------------------------------------------------------------------------------

@dataclass
class Load:
    """One load's tallies on one server."""

    ok_latencies: list[float] = field(default_factory=list)
    failures: collections.Counter = field(default_factory=collections.Counter)
    phases: dict[str, float] | None = None  # server CPU seconds by phase (one client only)

    @property
    def failed(self) -> int:
        return sum(self.failures.values())


class Failed(Exception):
    pass


async def episode(client: Any, family: str, task: dict[str, Any], server: Server, load: Load) -> None:
    """Reset, the oracle's steps, verify, close; a Failed names the phase and why.

    The calls go through `AsyncEnvClient`'s transport and error mapping (`_call`) with the bodies its
    `reset`/`step`/`verify` send, but the answers are read as plain JSON, not as this checkout's
    response models: an older server (`--against`) answers fewer fields, and the same client must
    drive both."""
    split = load.phases is not None
    mark = server.counters() if split else None

    def phase_done(name: str) -> None:
        nonlocal mark
        if split:
            now = server.counters()
            used = now - mark  # type: ignore[operator]
            load.phases[name] += used.total  # type: ignore[index]
            if used.cgroup is not None:
                load.phases[f"cgroup_{name}"] = load.phases.get(f"cgroup_{name}", 0.0) + used.cgroup  # type: ignore[union-attr]
            mark = now

    try:
        created = await client._call("POST", "/v1/sessions", {"env": family, "task_id": task["id"]})
    except Exception as e:  # noqa: BLE001 - any error answer is this episode's failure
        raise Failed(f"reset: {type(e).__name__}: {str(e)[:150]}") from e
    phase_done("reset")
    sid = created["session_id"]
    failed: Failed | None = None
    try:
        for action in task["actions"]:
            result = await client._call("POST", f"/v1/sessions/{sid}/step",
                                        {"action": action, "idempotency_key": uuid.uuid4().hex})
            if result.get("failure") == "env_error":
                raise Failed(f"step: env_error: {str(result.get('observation'))[:150]}")
        phase_done("steps")
        verdict = await client._call("POST", f"/v1/sessions/{sid}/verify", {})
        phase_done("verify")
        if verdict.get("reward") != 1.0:
            failed = Failed(f"verify: reward {verdict.get('reward')} ({verdict.get('failure_class')}) "
                            f"{task['id']}: {str(verdict.get('detail'))[:120]}")
    except Failed as e:
        failed = e
    except Exception as e:  # noqa: BLE001
        failed = Failed(f"step or verify: {type(e).__name__}: {str(e)[:150]}")
    try:  # closed whatever happened: a failed episode must not hold its sandbox for the rest of the load
        await client._call("DELETE", f"/v1/sessions/{sid}")
    except Exception as e:  # noqa: BLE001
        failed = failed or Failed(f"close: {type(e).__name__}: {str(e)[:150]}")
    phase_done("close")
    if failed is not None:
        raise failed


async def client_loop(client: Any, family: str, tasks: list[dict[str, Any]], start: int, stop: float,
                      server: Server, load: Load) -> None:
    k = start
    while time.perf_counter() < stop:
        t0 = time.perf_counter()
        try:
            await episode(client, family, tasks[k % len(tasks)], server, load)
            load.ok_latencies.append(time.perf_counter() - t0)
        except Failed as e:
            load.failures[str(e)] += 1
            await asyncio.sleep(0.05)  # a dead server answers at once: no hot loop of failures
        k += 1


async def run_load(server: Server, family: str, tasks: list[dict[str, Any]], clients: int,
                   seconds: float) -> dict[str, Any]:
    """`clients` coroutines for `seconds`: the figures of one load on one server (one round)."""
    from envhub.client import AsyncEnvClient

    load = Load(phases=dict.fromkeys(PHASES, 0.0) if clients == 1 else None)
    async with AsyncEnvClient(server.url, retries=0, max_connections=max(64, clients)) as client:
        before, gen0, t0 = server.counters(), own_cpu_s(), time.perf_counter()
        stop = t0 + seconds
        await asyncio.gather(*(client_loop(client, family, tasks, i, stop, server, load) for i in range(clients)))
        wall = time.perf_counter() - t0
        used, gen = server.counters() - before, own_cpu_s() - gen0
    ok, n = len(load.ok_latencies), len(load.ok_latencies) + load.failed
    per = 1000 / max(1, n)  # ms per episode played, failed ones too
    out: dict[str, Any] = {
        "episodes": ok, "failures": load.failed, "wall_s": wall, "episodes_per_s": ok / wall,
        "latencies": load.ok_latencies,
        "server_cpu_ms": {"process": used.own * per, "reaped_children": used.reaped * per,
                          "live_descendants": used.live * per, "total": used.total * per,
                          "cgroup": None if used.cgroup is None else used.cgroup * per},
        "loadgen_cpu_ms": gen * per, "failure_reasons": dict(load.failures.most_common(5))}
    if load.phases is not None:
        out["phases_cpu_ms"] = {k: load.phases[k] * per for k in PHASES}
        out["phases_cpu_ms"]["other"] = used.total * per - sum(out["phases_cpu_ms"].values())
        if used.cgroup is not None:
            cg = {k: load.phases.get(f"cgroup_{k}", 0.0) * per for k in PHASES}
            out["phases_cgroup_cpu_ms"] = {**cg, "other": used.cgroup * per - sum(cg.values())}
    return out


def pct(xs: list[float], q: float) -> float | None:
    if not xs:
        return None
    s = sorted(xs)
    return s[min(len(s) - 1, round(q * (len(s) - 1)))] * 1000


def combine(rounds: list[dict[str, Any]]) -> dict[str, Any]:
    """A load's rounds on one server: sums of counts, medians of rates and CPU, pooled latencies."""
    lat = [x for r in rounds for x in r["latencies"]]
    reasons: collections.Counter = collections.Counter()
    for r in rounds:
        reasons.update(r["failure_reasons"])

    def med(get: Any) -> float | None:
        vals = [v for r in rounds if (v := get(r)) is not None]
        return statistics.median(vals) if vals else None

    out = {"episodes": sum(r["episodes"] for r in rounds), "failures": sum(r["failures"] for r in rounds),
           "rounds": len(rounds), "wall_s": round(sum(r["wall_s"] for r in rounds), 2),
           "episodes_per_s": med(lambda r: r["episodes_per_s"]),
           "p50_ms": pct(lat, 0.5), "p99_ms": pct(lat, 0.99),
           "server_cpu_ms": {k: med(lambda r, k=k: r["server_cpu_ms"][k]) for k in rounds[0]["server_cpu_ms"]},
           "loadgen_cpu_ms": med(lambda r: r["loadgen_cpu_ms"]), "failure_reasons": dict(reasons.most_common(5))}
    for key in ("phases_cpu_ms", "phases_cgroup_cpu_ms"):
        if key in rounds[0]:
            out[key] = {k: med(lambda r, k=k, key=key: r[key][k]) for k in rounds[0][key]}
    return out


def same_round_ratios(new: list[dict[str, Any]], old: list[dict[str, Any]]) -> dict[str, float | None]:
    """new/old of one round's figures, the median over rounds."""
    def ratio(get: Any) -> float | None:
        rs = [a / b for x, y in zip(new, old, strict=True) if (a := get(x)) is not None and (b := get(y))]
        return statistics.median(rs) if rs else None

    return {"episodes_per_s": ratio(lambda r: r["episodes_per_s"]),
            "p50_ms": ratio(lambda r: pct(r["latencies"], 0.5)),
            "server_cpu_ms": ratio(lambda r: r["server_cpu_ms"]["total"]),
            "cgroup_cpu_ms": ratio(lambda r: r["server_cpu_ms"]["cgroup"])}


async def warm_up(server: Server, family: str, tasks: list[dict[str, Any]], clients: int) -> dict[str, Any]:
    """Each task once, up to 8 at a time: first sandboxes, verifier zygotes, db templates, caches."""
    from envhub.client import AsyncEnvClient

    load = Load()
    sem = asyncio.Semaphore(min(clients, N_TASKS))

    async def one(task: dict[str, Any]) -> None:
        async with sem:
            try:
                await episode(client, family, task, server, load)
            except Failed as e:
                load.failures[str(e)] += 1

    async with AsyncEnvClient(server.url, retries=0) as client:
        await asyncio.gather(*(one(t) for t in tasks))
    return {"failures": load.failed, "failure_reasons": dict(load.failures.most_common(5))}


async def available_tasks(server: Server, family: str) -> list[str]:
    from envhub.client import AsyncEnvClient

    async with AsyncEnvClient(server.url, retries=0) as client:
        return [t["id"] for t in await client.tasks(env=family, limit=5000) if t.get("unavailable") is None]


async def measure_family(family: str, levels: list[int], seconds: float, rounds: int, seed: int,
                         languages: list[str], trees: dict[str, Path], backend: str,
                         say: Any) -> dict[str, Any]:
    with contextlib.ExitStack() as stack:
        servers = {label: stack.enter_context(serve(label, tree, family, backend)) for label, tree in trees.items()}
        first = next(iter(servers.values()))
        available = set(await available_tasks(first, family))
        for label in servers.keys() - {"new"}:  # only tasks every checkout has (REF may predate a task set)
            available &= set(plan(trees[label], {"family": family, "list": True}))
        req = {"family": family, "seed": seed, "n": N_TASKS, "available": sorted(available),
               "languages": languages if family == "swe" else []}
        tasks = {"new": plan(trees["new"], req)}
        ids = [t["id"] for t in tasks["new"]]
        if not ids:
            return {"not_run": "no validated task this server can run"}
        for label in servers:
            if label != "new":
                tasks[label] = plan(trees[label], {"family": family, "ids": ids})
        say(f"{family}: tasks {', '.join(ids)}")
        out: dict[str, Any] = {"tasks": ids, "levels": {}}
        for label, server in servers.items():
            warm = await warm_up(server, family, tasks[label], max(levels))
            out.setdefault("warm_up_failures", {})[label] = warm
        for c in levels:
            per: dict[str, list[dict[str, Any]]] = {label: [] for label in servers}
            order = list(servers)
            for r in range(rounds):
                for label in order if r % 2 == 0 else order[::-1]:  # alternate: each server leads in turn
                    per[label].append(await run_load(servers[label], family, tasks[label], c, seconds / rounds))
            level = {label: combine(rows) for label, rows in per.items()}
            for label in servers.keys() - {"new"}:
                level[f"new/{label}"] = same_round_ratios(per["new"], per[label])
            out["levels"][str(c)] = level
            n = level["new"]
            say(f"{family} C={c}: {n['episodes_per_s']:.2f} episodes/s, {n['failures']} failures")
        return out


# --- output -------------------------------------------------------------------------------------

def rounded(x: Any) -> Any:
    """Floats to 4 significant digits, for a JSON line people read too."""
    if isinstance(x, float):
        return float(f"{x:.4g}")
    if isinstance(x, dict):
        return {k: rounded(v) for k, v in x.items()}
    if isinstance(x, list):
        return [rounded(v) for v in x]
    return x


def fmt(v: float | None, digits: int = 1) -> str:
    return "–" if v is None else f"{v:,.{digits}f}"


def fmt_ratio(v: float | None) -> str:
    return "" if v is None else f" ({v:.2f}×)"


def print_tables(results: dict[str, Any]) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console(width=None if sys.stdout.isatty() else 160)  # a pipe or a log: keep the rows whole
    labels = results["servers"]
    refs = [label for label in labels if label != "new"]
    title = (f"episodes (reset, oracle steps, verify, close), {results['seconds']:g} s a load, seed {results['seed']}, "
             f"backend {results['backend']}" + (f"; (ratio new/{refs[0]})" if refs else ""))
    t = Table(title=title, caption="CPU in ms per episode: server = process + reaped children + live descendants; "
              "cgroup = everything the server started; client = this load generator")
    for col in ("family", "C", "server", "episodes", "episodes/s", "p50 ms", "p99 ms", "failures",
                "server CPU", "cgroup CPU", "client CPU"):
        t.add_column(col, justify="left" if col in ("family", "server") else "right", no_wrap=True)
    for fam, r in results["families"].items():
        if "not_run" in r:
            t.add_row(fam, "", "", "not run (below)")
            continue
        for c, level in r["levels"].items():
            for label in labels:
                x = level[label]
                q = level.get(f"new/{refs[0]}", {}) if refs and label == "new" else {}  # ratios on the new row
                fails = str(x["failures"]) if not x["failures"] else f"[red]{x['failures']}[/red]"
                t.add_row(fam, c, label, str(x["episodes"]), fmt(x["episodes_per_s"], 2) + fmt_ratio(q.get("episodes_per_s")),
                          fmt(x["p50_ms"]) + fmt_ratio(q.get("p50_ms")), fmt(x["p99_ms"]), fails,
                          fmt(x["server_cpu_ms"]["total"]) + fmt_ratio(q.get("server_cpu_ms")),
                          fmt(x["server_cpu_ms"]["cgroup"]) + fmt_ratio(q.get("cgroup_cpu_ms")),
                          fmt(x["loadgen_cpu_ms"]))
    console.print(t)
    p = Table(title="server CPU ms per episode by phase, 1 client",
              caption="/proc: process + reaped children + live descendants (10 ms ticks: an average over "
              "episodes); cgroup: everything the server started (µs)")
    for col in ("family", "server", "counters", *PHASES, "other", "total"):
        p.add_column(col, justify="left" if col in ("family", "server", "counters") else "right")
    for fam, r in results["families"].items():
        for label in labels:
            x = r.get("levels", {}).get("1", {}).get(label) or {}
            for key, name, total in (("phases_cpu_ms", "/proc", "total"), ("phases_cgroup_cpu_ms", "cgroup", "cgroup")):
                if key in x:
                    p.add_row(fam, label, name, *(fmt(x[key][k]) for k in (*PHASES, "other")),
                              fmt(x["server_cpu_ms"][total]))
    if p.row_count:
        console.print(p)
    for fam, r in results["families"].items():
        if "not_run" in r:
            console.print(f"[yellow]{fam}: not run: {r['not_run']}[/yellow]", highlight=False)
        for c, level in r.get("levels", {}).items():
            for label in labels:
                for reason, n in level[label]["failure_reasons"].items():
                    console.print(f"[red]{fam} C={c} {label}: {n} × {reason}[/red]", highlight=False)
        for label, warm in r.get("warm_up_failures", {}).items():
            for reason, n in warm["failure_reasons"].items():
                console.print(f"[red]{fam} warm-up {label}: {n} × {reason}[/red]", highlight=False)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--families", nargs="+", default=None, help=f"default: {' '.join(DEFAULT_FAMILIES)}")
    ap.add_argument("--clients", nargs="+", type=int, default=None,
                    help="concurrency levels for every family (default: per family, e.g. 1 8 64)")
    ap.add_argument("--seconds", type=float, default=20, help="load time per level and server, over all rounds")
    ap.add_argument("--rounds", type=int, default=None, help="turns of the servers (default 1; 4 with --against)")
    ap.add_argument("--seed", type=int, default=0, help="draws the 8 tasks of each family")
    ap.add_argument("--swe-languages", nargs="+", default=SWE_LANGUAGES)
    ap.add_argument("--against", metavar="REF", help="also serve a git worktree of REF; print new/REF ratios")
    ap.add_argument("--backend", choices=("local", "docker"), default="local")
    ap.add_argument("--quick", action="store_true", help="3 s loads, fewer levels, no SWE (for make bench)")
    ap.add_argument("--json", action="store_true", help="print one JSON line instead of tables")
    args = ap.parse_args()
    families = args.families or (QUICK_FAMILIES if args.quick else DEFAULT_FAMILIES)
    if args.quick and args.seconds == ap.get_default("seconds"):
        args.seconds = 3
    rounds = args.rounds or (4 if args.against else 1)
    say = (lambda msg: print(msg, file=sys.stderr, flush=True))  # progress: stderr, so --json stays one line

    results: dict[str, Any] = {"seconds": args.seconds, "seed": args.seed, "rounds": rounds,
                               "backend": args.backend, "servers": ["new"], "families": {},
                               "load_before": Path("/proc/loadavg").read_text().split()[:3]}
    with contextlib.ExitStack() as stack:
        trees = {"new": ROOT}
        if args.against:
            trees[args.against] = stack.enter_context(worktree(args.against))
            results["servers"].append(args.against)
        why_not = docker_unavailable() if args.backend == "docker" else None
        for fam in families:
            if why_not:
                results["families"][fam] = {"not_run": f"docker backend: {why_not}"}
                continue
            levels = args.clients or (QUICK_LEVELS if args.quick else LEVELS).get(fam, [1])
            try:
                results["families"][fam] = asyncio.run(measure_family(
                    fam, levels, args.seconds, rounds, args.seed, args.swe_languages, trees, args.backend, say))
            except RuntimeError as e:  # a server that would not start, a plan that failed: say so, go on
                results["families"][fam] = {"not_run": str(e)[-500:]}
                say(f"{fam}: not run: {e}")
    results["load_after"] = Path("/proc/loadavg").read_text().split()[:3]
    if args.json:
        print(json.dumps(rounded(results)))
    else:
        print_tables(results)


if __name__ == "__main__":
    main()
