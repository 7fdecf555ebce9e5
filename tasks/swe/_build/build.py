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
import fnmatch
import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import yaml

BUILD = Path(__file__).resolve().parent
TASKS = BUILD.parent
REPO_ROOT = TASKS.parent.parent
GIT_ENV = {
    "GIT_AUTHOR_NAME": "envhub", "GIT_AUTHOR_EMAIL": "envhub@example.invalid",
    "GIT_COMMITTER_NAME": "envhub", "GIT_COMMITTER_EMAIL": "envhub@example.invalid",
    "GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z", "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z",
    "GIT_CONFIG_NOSYSTEM": "1", "HOME": "/tmp",
}

VERIFIER = '''"""Grade the agent's repository: FAIL_TO_PASS and PASS_TO_PASS from tests.json must all pass."""

from verifiers import swe

test_resolved = swe.grade_test()
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


def matches(path: str, patterns: list[str]) -> bool:
    for p in patterns:
        if fnmatch.fnmatch(path, p) or (p.startswith("**/") and fnmatch.fnmatch(path, p[3:])):
            return True
    return False


# ---------- report parsing (fallback when verifiers.swe_reports is not importable) ----------

def _junit_cases(path: Path) -> dict[str, str]:
    root = ET.parse(path).getroot()
    out: dict[str, str] = {}
    for case in root.iter("testcase"):
        cls = case.get("classname") or case.get("class") or ""
        name = case.get("name") or ""
        tid = f"{cls}#{name}" if cls else name
        status = "passed"
        for child in case:
            if child.tag in ("failure", "error"):
                status = "failed"
            elif child.tag == "skipped":
                status = "skipped"
        prev = out.get(tid)
        out[tid] = "failed" if prev == "failed" else status
    return out


def _rspec_cases(path: Path) -> dict[str, str]:
    data = json.loads(path.read_text())
    out: dict[str, str] = {}
    for ex in data.get("examples", []):
        tid = f"{ex['file_path'].removeprefix('./')}::{ex['full_description']}"
        st = ex["status"]
        out[tid] = "passed" if st == "passed" else ("skipped" if st == "pending" else "failed")
    return out


def parse_report(fmt: str, path: Path) -> dict[str, str]:
    """{test id: passed|failed|skipped}; the framework's parser when it exists."""
    try:
        sys.path.insert(0, str(REPO_ROOT))
        from verifiers import swe_reports  # type: ignore[import-not-found]
        return swe_reports.parse_file(fmt, path)  # type: ignore[attr-defined]
    except (ImportError, AttributeError):
        pass
    if fmt == "junit_xml":
        return _junit_cases(path)
    if fmt == "rspec_json":
        return _rspec_cases(path)
    raise SystemExit(f"no fallback parser for {fmt}")


# ---------- runs ----------

def run_state(bundle: Path, sha: str, patches: list[str], meta: dict, work: Path, tag: str
              ) -> tuple[dict[str, str] | None, float, str]:
    """Clone, apply patches, build + test; return (results or None, seconds, log tail)."""
    run_dir = Path(tempfile.mkdtemp(prefix=f"{tag}-", dir=work))
    repo, home, rep = run_dir / "repo", run_dir / "home", run_dir / "report"
    home.mkdir(); rep.mkdir()
    subprocess.run(["git", "clone", "-q", str(bundle), str(repo)], check=True, capture_output=True)
    git(repo, "checkout", "-q", sha)
    for p in patches:
        if p.strip():
            git(repo, "apply", "--whitespace=nowarn", "-", input=p.encode())
    env = {"PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
           "HOME": str(home), "TMPDIR": str(home), "TZ": "UTC", "LC_ALL": "C.UTF-8",
           "REPORT_DIR": str(rep), **{k: str(v) for k, v in (meta.get("env") or {}).items()}}
    t0 = time.monotonic()
    log = ""
    if meta.get("build"):
        b = subprocess.run(["bash", "-c", meta["build"]], cwd=repo, env=env, capture_output=True, timeout=900)
        log += b.stdout.decode(errors="replace") + b.stderr.decode(errors="replace")
        if b.returncode != 0:
            return None, time.monotonic() - t0, log[-3000:]
    r = subprocess.run(["bash", "-c", meta["test_command"]], cwd=repo, env=env, capture_output=True, timeout=900)
    dt = time.monotonic() - t0
    log += r.stdout.decode(errors="replace") + r.stderr.decode(errors="replace")
    report = rep / meta["report"]["file"]
    if not report.is_file():
        return None, dt, log[-3000:] + f"\n[no report {report}; rc={r.returncode}]"
    results = parse_report(meta["report"]["format"], report)
    shutil.rmtree(run_dir, ignore_errors=True)
    return results, dt, log[-3000:]


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
        if line.startswith("+++ b/") and matches(line[6:], protected):
            raise SystemExit(f"gold patch touches protected path {line[6:]}")
    for line in test_patch.splitlines():
        if line.startswith("+++ b/") and not matches(line[6:], protected):
            raise SystemExit(f"test patch touches unprotected path {line[6:]}")
    bundle = work / "repo.bundle"
    git(repo, "bundle", "create", "-q", str(bundle), "main")

    results: dict[str, list] = {"S0": [], "S1": [], "S2": []}
    times: dict[str, list[float]] = {"S0": [], "S1": [], "S2": []}
    plan = [("S0", []), *[("S1", [test_patch]), ("S2", [test_patch, gold_patch])] * runs]
    for tag, patches in plan:
        res, dt, log = run_state(bundle, sha, patches, meta, work, tag)
        results[tag].append(res)
        times[tag].append(round(dt, 2))
        if res is None and tag != "S1":
            raise SystemExit(f"{rel} {tag}: no report\n{log}")
        if res is None:
            print(f"[{rel}] S1: no report (build error?)\n{log[-800:]}")
    s0, s1, s2 = classify(results["S0"]), classify(results["S1"]), classify(results["S2"])
    flaky = sorted(t for c in (s1, s2) for t, v in c.items() if v == "flaky")
    if flaky:
        raise SystemExit(f"{rel}: flaky tests {flaky}")
    f2p = sorted(t for t, v in s2.items() if v == "passed" and s1.get(t, "absent") in ("failed", "absent"))
    p2p = sorted(t for t, v in s2.items() if v == "passed" and s1.get(t) == "passed")
    broken = sorted(t for t, v in s1.items() if v == "passed" and s2.get(t) != "passed")
    bad_base = sorted(t for t, v in s0.items() if v != "passed")
    if broken or bad_base or len(f2p) < 1 or len(p2p) < 5 or len(s2) != len(f2p) + len(p2p):
        raise SystemExit(f"{rel}: rejected: broken={broken} bad_base={bad_base} f2p={f2p} "
                         f"p2p={len(p2p)} s1={s1} s2={s2}")

    if dest.exists():
        for sub in ("state", "tests", "solution"):
            shutil.rmtree(dest / sub, ignore_errors=True)
    for sub in ("state", "tests", "solution"):
        (dest / sub).mkdir(parents=True, exist_ok=True)
    shutil.copy2(bundle, dest / "state" / "repo.bundle")
    (dest / "tests" / "test.patch").write_text(test_patch)
    (dest / "solution" / "gold.patch").write_text(gold_patch)
    (dest / "tests" / "tests.json").write_text(json.dumps({"FAIL_TO_PASS": f2p, "PASS_TO_PASS": p2p}, indent=2) + "\n")
    (dest / "tests" / "test_swe.py").write_text(VERIFIER)
    (dest / "tests" / "protected.tar").write_bytes(protected_tar(repo, protected))
    shutil.copy2(src / "prompt.md", dest / "prompt.md")
    meta = {**meta, "base_commit": sha}
    task = {"id": f"swe/{language}/{name}", "family": "swe", **{k: v for k, v in spec.items() if k != "metadata"},
            "metadata": meta}
    (dest / "task.yaml").write_text(yaml.safe_dump(task, sort_keys=False, width=110))
    summary = {"task": f"swe/{rel}", "base_commit": sha, "f2p": len(f2p), "p2p": len(p2p),
               "seconds": {k: v for k, v in times.items()}}
    print(json.dumps(summary))
    if not keep:
        shutil.rmtree(work, ignore_errors=True)


def protected_tar(repo: Path, patterns: list[str]) -> bytes:
    """The base copies of every protected file, so the grader never trusts the agent's `.git`."""
    buf = io.BytesIO()
    files = [p for p in git(repo, "ls-files").splitlines() if matches(p, patterns)]
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for rel in sorted(files):
            data = (repo / rel).read_bytes()
            info = tarfile.TarInfo(rel)
            info.size, info.mode, info.mtime = len(data), (repo / rel).stat().st_mode & 0o777, 0
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


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
