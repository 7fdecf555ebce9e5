"""Build (and check) one SWE task folder from its written-out sources.

A task's sources live in `tasks/swe/_build/<language>/<name>/`:

    spec.yaml    task.yaml without `id`, `family` and `metadata.base_commit` (filled in here)
    prompt.md    the issue text
    base/        the repository at the base commit: the bug, and a test suite that passes
    test_overlay/  files the test patch adds or replaces (the FAIL_TO_PASS tests live here)
    gold_overlay/  files the gold patch replaces (never a protected path)

`python tasks/swe/_build/build.py php/money-rounding` writes `tasks/swe/<language>/<name>/`:
a git bundle of the base commit (fixed author and dates, so the sha is stable), `test.patch`,
`gold.patch`, `protected.tar` (base copies of the protected files), and `tests.json` computed from
runs: S0 = base, S1 = base + test.patch, S2 = S1 + gold, `--runs` times each in a fresh clone,
offline-style settings (per-run HOME/TMPDIR, TZ=UTC, LC_ALL=C.UTF-8), report outside the repo.
FAIL_TO_PASS = failed (or absent) in every S1 run and passed in every S2 run; PASS_TO_PASS =
passed in every run of S1 and S2. The build stops if a test flips, gold breaks a test, or a set is
too small. Why here and not in the family: the family's validator re-checks all of this; this
script only has to produce a task that will pass it.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

BUILD = Path(__file__).resolve().parent
TASKS = BUILD.parent
REPO_ROOT = TASKS.parent.parent
sys.path.insert(0, str(REPO_ROOT))
from verifiers import swe  # noqa: E402 - the grader's own machinery, from this checkout
GIT_ENV = {
    "GIT_AUTHOR_NAME": "envhub", "GIT_AUTHOR_EMAIL": "envhub@example.invalid",
    "GIT_COMMITTER_NAME": "envhub", "GIT_COMMITTER_EMAIL": "envhub@example.invalid",
    "GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z", "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z",
    "GIT_CONFIG_NOSYSTEM": "1", "HOME": "/tmp",
}

VERIFIER = '''"""Grade the agent's repository: every FAIL_TO_PASS and PASS_TO_PASS test of tests.json passes."""

from verifiers.swe import test_fail_to_pass, test_pass_to_pass  # noqa: F401
'''


def git(cwd: Path, *args: str, input: bytes | None = None) -> str:
    env = {**os.environ, **GIT_ENV}
    r = subprocess.run(["git", *args], cwd=cwd, env=env, input=input, capture_output=True)
    if r.returncode != 0:
        raise SystemExit(f"git {' '.join(args)} failed in {cwd}: {r.stderr.decode()}")
    return r.stdout.decode()


def overlay(src: Path, dest: Path) -> None:
    for f in sorted(src.rglob("*")):
        if f.is_file():
            target = dest / f.relative_to(src)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(f, target)


def diff_of(repo: Path, over: Path) -> str:
    """The patch that turns the committed tree into tree + overlay (new files included)."""
    overlay(over, repo)
    git(repo, "add", "-A")
    patch = git(repo, "diff", "--cached", "--binary", "HEAD")
    git(repo, "reset", "-q", "--hard", "HEAD")
    git(repo, "clean", "-qfdx")
    return patch


def run_once(bundle: Path, sha: str, task_dir: Path, work: Path, *, test_patch: bool, gold: str
             ) -> tuple[dict[str, str] | None, float, str]:
    """Check out the base into a fresh folder, apply gold if given, and grade-run it."""
    run_dir = Path(tempfile.mkdtemp(prefix="state-", dir=work))
    repo = run_dir / "repo"
    subprocess.run(["git", "clone", "-q", str(bundle), str(repo)], check=True, capture_output=True)
    git(repo, "checkout", "-q", sha)
    if gold:
        git(repo, "apply", "--whitespace=nowarn", "-", input=gold.encode())
    t0 = time.monotonic()
    res = swe.run_state(repo, task_dir, apply_test_patch=test_patch)
    dt = time.monotonic() - t0
    shutil.rmtree(run_dir, ignore_errors=True)
    problem = res.problem()
    if problem and not res.statuses:
        return None, dt, problem
    return res.statuses, dt, problem


def classify(runs: list[dict[str, str] | None]) -> dict[str, str]:
    ids = set().union(*[set(r) for r in runs if r is not None])
    out = {}
    for t in ids:
        seen = {(r or {}).get(t, "absent") for r in runs}
        out[t] = seen.pop() if len(seen) == 1 else "flaky"
    return out


def build(rel: str, runs: int, keep: bool) -> None:
    src = BUILD / rel
    language, name = rel.split("/")
    spec = yaml.safe_load((src / "spec.yaml").read_text())
    meta = spec["metadata"]
    dest = TASKS / language / name
    work = Path(tempfile.mkdtemp(prefix=f"swebuild-{language}-{name}-"))
    repo = work / "origin"
    shutil.copytree(src / "base", repo)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", f"{name}: base")
    sha = git(repo, "rev-parse", "HEAD").strip()
    test_patch = diff_of(repo, src / "test_overlay")
    gold_patch = diff_of(repo, src / "gold_overlay")
    protected = meta["protected_paths"]
    for line in gold_patch.splitlines():
        if line.startswith("+++ b/") and swe.is_protected(line[6:], protected):
            raise SystemExit(f"gold patch touches protected path {line[6:]}")
    for line in test_patch.splitlines():
        if line.startswith("+++ b/") and not swe.is_protected(line[6:], protected):
            raise SystemExit(f"test patch touches unprotected path {line[6:]}")
    bundle = work / "repo.bundle"
    git(repo, "bundle", "create", "-q", str(bundle), "main")

    if dest.exists():
        for sub in ("state", "tests", "solution"):
            shutil.rmtree(dest / sub, ignore_errors=True)
    for sub in ("state", "tests", "solution"):
        (dest / sub).mkdir(parents=True, exist_ok=True)
    (dest / "validation.json").unlink(missing_ok=True)
    shutil.copy2(bundle, dest / "state" / "repo.bundle")
    (dest / "tests" / "test.patch").write_text(test_patch)
    (dest / "solution" / "gold.patch").write_text(gold_patch)
    (dest / "tests" / "test_swe.py").write_text(VERIFIER)
    protected_tar(repo, protected, dest / "tests" / "protected.tar")
    shutil.copy2(src / "prompt.md", dest / "prompt.md")
    meta = {**meta, "base_commit": sha}
    task = {"id": f"swe/{language}/{name}", "family": "swe", **{k: v for k, v in spec.items() if k != "metadata"},
            "metadata": meta}
    (dest / "task.yaml").write_text(yaml.safe_dump(task, sort_keys=False, width=110))

    results: dict[str, list] = {"S0": [], "S1": [], "S2": []}
    times: dict[str, list[float]] = {"S0": [], "S1": [], "S2": []}
    plan = [("S0", False, ""), *[("S1", True, ""), ("S2", True, gold_patch)] * runs]
    for tag, with_tests, gold in plan:
        res, dt, problem = run_once(bundle, sha, dest, work, test_patch=with_tests, gold=gold)
        results[tag].append(res)
        times[tag].append(round(dt, 2))
        if res is None and tag != "S1":
            raise SystemExit(f"{rel} {tag}: {problem}")
        if problem and tag != "S1":
            raise SystemExit(f"{rel} {tag}: {problem}")
        if res is None:
            print(f"[{rel}] S1 has no report: {problem[-600:]}")
    s0, s1, s2 = classify(results["S0"]), classify(results["S1"]), classify(results["S2"])
    flaky = sorted(t for c in (s1, s2) for t, v in c.items() if v == "flaky")
    if flaky:
        raise SystemExit(f"{rel}: flaky tests {flaky}")
    f2p = sorted(t for t, v in s2.items() if v == "passed" and s1.get(t, "absent") in ("failed", "error", "absent"))
    p2p = sorted(t for t, v in s2.items() if v == "passed" and s1.get(t) == "passed")
    broken = sorted(t for t, v in s1.items() if v == "passed" and s2.get(t) != "passed")
    bad_base = sorted(t for t, v in s0.items() if v != "passed")
    if broken or bad_base or len(f2p) < 1 or len(p2p) < 5 or len(s2) != len(f2p) + len(p2p):
        raise SystemExit(f"{rel}: rejected: broken={broken} bad_base={bad_base} f2p={f2p} "
                         f"p2p={len(p2p)} s1={s1} s2={s2}")
    (dest / "tests" / "tests.json").write_text(json.dumps({"FAIL_TO_PASS": f2p, "PASS_TO_PASS": p2p}, indent=2) + "\n")
    summary = {"task": f"swe/{rel}", "base_commit": sha, "f2p": len(f2p), "p2p": len(p2p),
               "seconds": {k: v for k, v in times.items()}}
    print(json.dumps(summary))
    if not keep:
        shutil.rmtree(work, ignore_errors=True)


def protected_tar(repo: Path, patterns: list[str], dest: Path) -> None:
    """The base copies of every protected file, so the grader never trusts the agent's `.git`."""
    swe.make_protected_tar(repo, patterns, dest)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("tasks", nargs="+", help="<language>/<name> under tasks/swe/_build")
    ap.add_argument("--runs", type=int, default=3, help="runs of S1 and of S2")
    ap.add_argument("--keep", action="store_true", help="keep the scratch folder")
    a = ap.parse_args()
    for rel in a.tasks:
        build(rel.strip("/"), a.runs, a.keep)


if __name__ == "__main__":
    main()
