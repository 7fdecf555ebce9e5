"""Environment CPU of an 8-way branch group against 8 independent episodes with the same prefix.

Both modes drive an in-process `Hub` through `SessionManager`, as `rollout_group` would over HTTP,
the G members concurrently:

- independent: G episodes, each a reset, the k prefix steps, its own m steps, verify, close
  (`rollout_group` without `branch_at`);
- branched: one reset, the k prefix steps once, `fork(n=G)`, each fork its m steps, verify, close,
  then the source closed unverified (`rollout_group(branch_at=k)`, `_branched` in envhub/rl/rollout.py).

The steps are deterministic shell work (files listed, hashed, archived, small computations in awk
and python3); member i's steps differ by i, and even members end with the task's oracle, so the
group's rewards differ and each mode's must equal the other's member by member (checked, as is
that every verify answers a reward rather than a fault).

Environment CPU is that of this process and every process it started, read from a cgroup v2 that
the script moves itself into first (`cpu.stat`), so the neighbours' own CPU is left out. RUSAGE_CHILDREN
would miss most of it: bubblewrap with its own pid namespace exits with its command's status before
it reaps the namespace's pid 1, so the time of what ran inside (the sandboxes' shells and commands,
cold verifiers) never reaches this process. The columns split the total: this process
(RUSAGE_SELF), the warm verifier's long-lived zygotes (utime and stime, theirs and their reaped
children's, from /proc), and the rest: sandboxes, cold verifiers, copies. Before each reading the
script waits until zygotes started by a mode are up and their standbys made, and checks that no
other process is left. The modes alternate for `-n` rounds after one unmeasured warm-up round;
figures are medians, ratios the median of same-round ratios. Needs a writable cgroup v2 (root).

    .venv/bin/python benchmarks/branch.py [-n 3] [--prefix 6] [--steps 4] [--env terminal]
        [--task terminal/count-error-lines] [--json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import statistics
import sys
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from envhub.config import get_settings
from envhub.core.hub import Hub
from envhub.core.sessions import SessionManager
from envhub.errors import FailureClass
from envhub.sandbox.process import descendants
from envhub.spec import ForkRequest, ResetRequest, StepRequest, ToolCall, VerifyResult

G = 8
CLK_TCK = os.sysconf("SC_CLK_TCK")

PREFIX = (  # the first step makes what the members read: they go on from any prefix of one step or more
    "mkdir -p work && find . -path ./work -prune -o -type f -print | sort > work/files.txt "
    "&& xargs -r -d '\\n' -a work/files.txt sha256sum > work/sums.txt && seq 1 200000 > work/numbers.txt "
    "&& wc -l work/*",
    "awk '{s += $1 * $1} END {print s}' work/numbers.txt",
    "python3 - <<'EOF'\nimport hashlib\nh = hashlib.sha256()\nfor i in range(200_000):\n"
    "    h.update(str(i).encode())\nprint(h.hexdigest(), file=open('work/digest.txt', 'w'))\nEOF\n"
    "cat work/digest.txt",
    "tar czf work/tree.tgz --exclude=./work . && tar tzf work/tree.tgz | wc -l",
    "grep -rIhoE '[A-Za-z]{4,}' --exclude-dir=work . | sort | uniq -c | sort -rn | head -n 5",
    "gzip -kf work/numbers.txt && wc -c < work/numbers.txt.gz",
)


def member_command(i: int, j: int) -> str:
    """Member i's step j: the same kinds of work as the prefix, on inputs that differ by member."""
    return (
        f"awk 'NR % {G} == {i} {{s += $1}} END {{print s}}' work/numbers.txt > work/member-{i}.txt "
        f"&& cat work/member-{i}.txt",
        f"python3 -c 'print(sum(n * n for n in range({(i + 1) * 50_000})))'",
        f"sort -k2 work/sums.txt | head -n {i + 1} | cut -c1-16",
        f"head -n {(i + 1) * 10_000} work/numbers.txt | gzip -{1 + i % 9} | wc -c",
    )[j % 4]


def plan(hub: Hub, env: str, task_id: str, k: int, m: int) -> tuple[list[ToolCall], list[list[ToolCall]]]:
    """The prefix's k actions and each member's m: shell work where the task has `bash`, messages
    where it has only `echo`; even members end with the oracle's actions."""
    family = hub.families[env]
    task = hub.catalog.get(task_id)
    tools = {t.name for t in family.task_tool_specs(task)}
    if "bash" in tools:
        def work(command: str) -> ToolCall:
            return ToolCall(tool="bash", arguments={"command": command})
        prefix = [work(PREFIX[j % len(PREFIX)]) for j in range(k)]
        own = [[work(member_command(i, j)) for j in range(m)] for i in range(G)]
    elif "echo" in tools:
        prefix = [ToolCall(tool="echo", arguments={"message": f"prefix step {j}"}) for j in range(k)]
        own = [[ToolCall(tool="echo", arguments={"message": f"member {i} step {j}"}) for j in range(m)]
               for i in range(G)]
    else:
        raise SystemExit(f"{task_id}: no bash or echo tool to play ({sorted(tools)})")
    oracle = family.oracle_actions(task)
    if len(oracle) > m:
        raise SystemExit(f"{task_id}'s oracle takes {len(oracle)} steps: --steps must be at least that")
    members = [steps[:m - len(oracle)] + oracle if i % 2 == 0 else steps for i, steps in enumerate(own)]
    return prefix, members


async def play(manager: SessionManager, sid: str, actions: list[ToolCall]) -> None:
    for action in actions:
        result = await manager.step(sid, StepRequest(action=action))
        if result.observation.data.get("exit_code", 0) != 0 or result.done:
            raise SystemExit(f"step {action.arguments} failed or ended the episode:\n{result.observation.text}")


async def independent(manager: SessionManager, env: str, task_id: str, prefix: list[ToolCall],
                      members: list[list[ToolCall]]) -> list[VerifyResult]:
    async def episode(own: list[ToolCall]) -> VerifyResult:
        sid = (await manager.create(ResetRequest(env=env, task_id=task_id))).session_id
        try:
            await play(manager, sid, prefix + own)
            return await manager.verify(sid)
        finally:
            await manager.close(sid)

    return list(await asyncio.gather(*(episode(own) for own in members)))


async def branched(manager: SessionManager, env: str, task_id: str, prefix: list[ToolCall],
                   members: list[list[ToolCall]]) -> list[VerifyResult]:
    source = (await manager.create(ResetRequest(env=env, task_id=task_id))).session_id
    try:
        await play(manager, source, prefix)
        forks = await manager.fork(source, ForkRequest(n=len(members)))

        async def member(sid: str, own: list[ToolCall]) -> VerifyResult:
            try:
                await play(manager, sid, own)
                return await manager.verify(sid)
            finally:
                await manager.close(sid)

        return list(await asyncio.gather(*(member(f.session_id, own) for f, own in zip(forks, members, strict=True))))
    finally:
        await manager.close(source)  # last, as `_branched` does: the members may fork it again on a retry


def live_cpu_s() -> float:
    """CPU seconds of this process's live descendants and of the children they reaped."""
    total = 0
    for pid in descendants(os.getpid()):
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except FileNotFoundError:  # gone since it was listed: its parent's counters have it now
            continue
        total += sum(int(f) for f in fields[11:15])  # utime, stime, cutime, cstime
    return total / CLK_TCK


@contextmanager
def own_cgroup() -> Iterator[Path]:
    """A cgroup v2 of this process's own, which every process it starts from now on is in too."""
    mounts = [line.split()[1] for line in Path("/proc/self/mounts").read_text().splitlines()
              if line.split()[2] == "cgroup2"]
    ours = next((line[3:] for line in Path("/proc/self/cgroup").read_text().splitlines() if line.startswith("0::")),
                None)
    if not mounts or ours is None:
        raise SystemExit("no cgroup v2 here: this benchmark reads its CPU from one")
    home = Path(mounts[0]) / ours.lstrip("/")
    group = home / f"envhub-branch-{os.getpid()}"
    try:
        group.mkdir()
        (group / "cgroup.procs").write_text(str(os.getpid()))
    except OSError as e:
        raise SystemExit(f"cannot make a cgroup of this benchmark's own under {home} ({e}): run it as root") from e
    try:
        yield group
    finally:
        (home / "cgroup.procs").write_text(str(os.getpid()))
        for _ in range(30):  # after a failure, processes killed at the hub's stop may take a moment to go
            try:
                group.rmdir()
                break
            except OSError:
                time.sleep(0.1)
        else:
            print(f"{group} kept: a process in it outlived the hub", file=sys.stderr)


def cpu_parts(group: Path) -> dict[str, float]:
    """CPU seconds so far: the cgroup's total, this process's and the live zygotes'."""
    stat = dict(line.split() for line in (group / "cpu.stat").read_text().splitlines())
    own = resource.getrusage(resource.RUSAGE_SELF)
    return {"total": int(stat["usage_usec"]) / 1e6, "hub": own.ru_utime + own.ru_stime, "zygotes": live_cpu_s()}


def children() -> set[int]:
    """Direct children of this process, whichever thread started them."""
    out: set[int] = set()
    for tid in os.listdir("/proc/self/task"):
        with open(f"/proc/self/task/{tid}/children") as f:
            out.update(int(c) for c in f.read().split())
    return out


async def settle(hub: Hub) -> None:
    """Wait until nothing of a mode runs on: zygotes it started are up, and their standbys (forked
    after each verify) are made; then every child left must be a zygote, the rest reaped."""
    await hub.verifier.warmed()
    last = -1.0
    for _ in range(50):
        if (now := live_cpu_s()) == last:
            break
        last = now
        await asyncio.sleep(0.1)
    zygotes = {z.service.proc.pid for z in hub.verifier.warm.idle} if hub.verifier.warm else set()
    if stray := children() - zygotes:
        names = {p: Path(f"/proc/{p}/cmdline").read_bytes().replace(b"\0", b" ")[:80] for p in stray}
        raise SystemExit(f"processes left after every session closed (not reaped): {names}")


Mode = Callable[[SessionManager, str, str, list[ToolCall], list[list[ToolCall]]], Awaitable[list[VerifyResult]]]
MODES: dict[str, Mode] = {"independent": independent, "branched": branched}


async def measure(group: Path, env: str, task_id: str, k: int, m: int, rounds: int) -> dict[str, Any]:
    hub = Hub.build(get_settings().model_copy(update={"families": [env]}))
    await hub.start()
    try:
        prefix, members = plan(hub, env, task_id, k, m)
        expected: list[float] | None = None
        runs: list[dict[str, Any]] = []
        for r in range(rounds + 1):  # round 0 warms up: zygotes, page cache, python3 in the sandboxes
            for name in (MODES if r % 2 else reversed(MODES)):
                await settle(hub)
                before, started = cpu_parts(group), time.perf_counter()
                results = await MODES[name](hub.manager, env, task_id, prefix, members)
                wall = time.perf_counter() - started
                await settle(hub)
                after = cpu_parts(group)
                if faults := [(i, v.failure_class.value, v.detail[:200]) for i, v in enumerate(results)
                              if v.failure_class is not FailureClass.ok]:
                    raise SystemExit(f"{name}: verify answered a fault, not a reward: {faults}")
                rewards = [v.reward for v in results]
                if expected is None:
                    expected = rewards
                elif rewards != expected:
                    raise SystemExit(f"{name} round {r}: rewards {rewards} differ from {expected} member by member")
                if r:
                    cpu = {p: after[p] - before[p] for p in after}
                    cpu["others"] = cpu["total"] - cpu["hub"] - cpu["zygotes"]
                    runs.append({"round": r, "mode": name, "wall_s": wall, **{f"{p}_cpu_s": v for p, v in cpu.items()},
                                 "warm_verifies": sum(int(v.timings.get("verify_warm", 0)) for v in results)})
    finally:
        await hub.stop()
    return {"env": env, "task": task_id, "group": G, "prefix_steps": k, "member_steps": m, "rounds": rounds,
            "rewards": expected, "runs": runs}


def summarise(out: dict[str, Any]) -> dict[str, Any]:
    keys = ("wall_s", "total_cpu_s", "hub_cpu_s", "zygotes_cpu_s", "others_cpu_s", "warm_verifies")
    by = {mode: [r for r in out["runs"] if r["mode"] == mode] for mode in MODES}
    medians = {mode: {key: statistics.median(r[key] for r in runs) for key in keys} for mode, runs in by.items()}
    ratios = {key: statistics.median(b[key] / i[key] for i, b in zip(by["independent"], by["branched"], strict=True))
              for key in ("wall_s", "total_cpu_s")}
    return {**out, "median": medians, "branched_over_independent": ratios}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-n", type=int, default=3, help="measured rounds of each mode")
    ap.add_argument("--prefix", type=int, default=6, help="steps shared by the group (k)")
    ap.add_argument("--steps", type=int, default=4, help="steps of each member after the prefix (m)")
    ap.add_argument("--env", default="terminal")
    ap.add_argument("--task", default="terminal/count-error-lines")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    if args.prefix < 1 or args.steps < 1:
        ap.error("--prefix and --steps must be at least 1")
    load_before = os.getloadavg()
    with own_cgroup() as group:  # before the hub starts: its threads and children are in it from the first
        out = summarise(asyncio.run(measure(group, args.env, args.task, args.prefix, args.steps, args.n)))
    out["loadavg"] = {"before": load_before, "after": os.getloadavg()}
    if args.json:
        print(json.dumps(out, indent=2))
        return
    load = " / ".join(" ".join(f"{x:.2f}" for x in out["loadavg"][w]) for w in ("before", "after"))
    print(f"{args.task}: G={G}, prefix {args.prefix} steps, {args.steps} steps a member, {args.n} rounds "
          f"(medians); load average before / after {load}; rewards {out['rewards']}")
    print(f"{'mode':12} {'wall s':>7} {'CPU s':>7} {'hub':>7} {'zygotes':>7} {'others':>7} {'warm':>5}")
    for mode, s in out["median"].items():
        print(f"{mode:12} {s['wall_s']:>7.2f} {s['total_cpu_s']:>7.2f} {s['hub_cpu_s']:>7.2f} "
              f"{s['zygotes_cpu_s']:>7.2f} {s['others_cpu_s']:>7.2f} {s['warm_verifies']:>3.0f}/{G}")
    ratio = out["branched_over_independent"]
    print(f"branched/independent (median of same-round ratios): wall {ratio['wall_s']:.2f}×, "
          f"CPU {ratio['total_cpu_s']:.2f}×")


if __name__ == "__main__":
    main()
