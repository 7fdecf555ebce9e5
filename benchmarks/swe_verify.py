"""SWE verify time per language, and what the trusted harness costs.

For one task per language (or `--task ...`), the gold state (with `--base`: the base, an agent
that did nothing, whose failing tests and their twins may run to their own time limits) is judged
by the production verifier (`VerifierRunner`: verifier sandbox, jailed build and tests, twins)
`-n` times; the median seconds are printed per task. The jail's own cost is measured apart: `true` run `-n` times with
and without the jail.

    .venv/bin/python benchmarks/swe_verify.py [-n 3] [--task swe/go/lru-evict ...] [--json]

With `--split`, each task's gold state also goes through the verifier's phases one by one, timed
(on the host, same code, same jail): restore (copy the state, restore protected paths), patch
(the test patch and the twins), build, test, and parse (toolchain check, run set-up, report
parsing); `verify_s` minus their sum is the verifier's own overhead (sandbox, Python, pytest).

Compare with an older checkout by running the same script with that checkout first on
PYTHONPATH (`PYTHONPATH=/path/to/old .venv/bin/python benchmarks/swe_verify.py`): it measures
whatever `verifiers/` and `envhub/` it imports.
"""

from __future__ import annotations

import argparse
import asyncio
import inspect
import json
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from envhub.config import REPO_ROOT, get_settings
from envhub.core.hub import make_backend
from envhub.tasks.model import Task
from envhub.verify.runner import VerifierRunner
from environments.swe.repo import clone_base
from verifiers import swe


async def verify_gold(task: Task, gold: bool = True) -> tuple[float, float, str]:
    settings = get_settings()
    d = Path(tempfile.mkdtemp(prefix="bench-swe-", dir=settings.data_dir))
    d.chmod(0o755)
    try:
        clone_base(task, d / "repo")
        shutil.rmtree(d / "repo" / ".git")
        if gold:
            swe.apply_patch(d / "repo", task.solution_dir / "gold.patch")
        backend = make_backend(settings)
        started = time.monotonic()
        try:
            # Cold: a runner per run would pay a zygote's start; the build and tests dominate anyway.
            # (Code older than the warm verifier has no `warm`: every runner there is cold.)
            cold = {"warm": False} if "warm" in inspect.signature(VerifierRunner).parameters else {}
            result = await VerifierRunner(settings, backend, **cold).verify(task, d / "repo")
        finally:
            await backend.aclose()
        return time.monotonic() - started, result.reward, result.failure_class.value
    finally:
        shutil.rmtree(d, ignore_errors=True)


def split(task: Task) -> dict[str, float]:
    """Seconds per phase of one gold-state grade, done step by step as `swe.run_state` does it."""
    settings = get_settings()
    d = Path(tempfile.mkdtemp(prefix="bench-swe-", dir=settings.data_dir))
    try:
        clone_base(task, d / "gold")
        shutil.rmtree(d / "gold" / ".git")
        swe.apply_patch(d / "gold", task.solution_dir / "gold.patch")
        cfg = swe.SweConfig.from_task_dir(task.path)
        tests = task.path / "tests"
        repo = d / "scratch" / "repo"
        t0 = time.monotonic()
        swe.copy_repo(d / "gold", repo)
        swe.restore_protected(repo, cfg.protected_paths, tests / "protected.tar")
        t1 = time.monotonic()
        if (tests / "test.patch").is_file():
            swe.apply_patch(repo, tests / "test.patch")
        if hasattr(swe, "swe_twins"):  # twins; an older checkout planted fixed-shape honeypots
            import random

            plan = swe.swe_twins.plan(swe.swe_twins.load(tests), swe.load_tests_json(task.path)[0], random.Random())
            swe.swe_twins.plant(repo, cfg.language, plan.copies)
        else:
            swe.swe_honeypots.plant(repo, cfg.language)
        t2 = time.monotonic()
        run = swe.run_suite(repo, cfg)
        t3 = time.monotonic()
        build, test = run.elapsed_s.get("build", 0.0), run.elapsed_s.get("test", 0.0)
        return {"restore": round(t1 - t0, 3), "patch": round(t2 - t1, 3), "build": build, "test": test,
                "parse": round(max(0.0, t3 - t2 - build - test), 3)}
    finally:
        shutil.rmtree(d, ignore_errors=True)


def jail_cost(n: int) -> dict[str, float]:
    """Median seconds of `true` in bash, with and without the jail ({} for code without one)."""
    out: dict[str, float] = {}
    if not hasattr(swe, "jail_available"):
        return out
    for label, jail in (("plain", None), ("jailed", ())):
        if jail is not None and not swe.jail_available():
            continue
        times = []
        for _ in range(n):
            started = time.monotonic()
            swe._shell("true", cwd=Path("/"), env=dict(swe.FIXED_ENV), timeout=30, jail=jail)
            times.append(time.monotonic() - started)
        out[label] = round(statistics.median(times), 4)
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("-n", type=int, default=3)
    ap.add_argument("--task", action="append", default=[])
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--split", action="store_true", help="also time restore, patch, build, test, parse")
    ap.add_argument("--base", action="store_true", help="judge the base (an agent that did nothing), not the gold fix")
    args = ap.parse_args()
    ids = args.task or [f"swe/{d.name}/{sorted(x.name for x in d.iterdir())[0]}"
                        for d in sorted((REPO_ROOT / "tasks" / "swe").iterdir())]
    rows = []
    for task_id in ids:
        task = Task.load(REPO_ROOT / "tasks" / task_id)
        runs = [asyncio.run(verify_gold(task, gold=not args.base)) for _ in range(args.n)]
        rows.append({"task": task_id, "median_s": round(statistics.median(r[0] for r in runs), 2),
                     "rewards": [r[1] for r in runs], "classes": sorted({r[2] for r in runs})})
        if args.split:
            phases = [split(task) for _ in range(args.n)]
            parts = {k: round(statistics.median(p[k] for p in phases), 3) for k in phases[0]}
            parts["verifier"] = round(max(0.0, rows[-1]["median_s"] - sum(parts.values())), 3)
            rows[-1]["split_s"] = parts
        if not args.json:
            parts = "  ".join(f"{k} {v:.2f}" for k, v in rows[-1].get("split_s", {}).items())
            print(f"{task_id:40} {rows[-1]['median_s']:7.2f} s  rewards {rows[-1]['rewards']}  {parts}", flush=True)
    cost = jail_cost(max(5, args.n * 5))
    if args.json:
        print(json.dumps({"verify": rows, "jail_s": cost, "code": str(Path(swe.__file__).parent.parent)}))
    else:
        print(f"jail cost (median of `true`): {cost}   code: {Path(swe.__file__).parent.parent}")


if __name__ == "__main__":
    main()
