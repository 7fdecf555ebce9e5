"""Build a SWE task folder from an authoring folder (how the shipped tasks were made).

    <author>/base/       the repository at the base commit (the bug, tests that pass)
    <author>/test/       overlay: test files as the test patch leaves them (new or changed)
    <author>/gold/       overlay: source files as the fix leaves them
    <author>/task.yaml   task.yaml without `id` and `metadata.base_commit` (filled in here)
    <author>/prompt.md   the issue text

`python -m environments.swe.authoring AUTHOR DEST` writes `DEST` in the task format: the bundle
(base commit only), `test.patch` and `gold.patch` as diffs of the overlays, `protected.tar`, the
two-line verifier, and `tests.json` from one run of base+test and base+test+gold on this host
(FAIL_TO_PASS = not passing before and passing after; PASS_TO_PASS = passing in both). The
validator then checks all of it with repeated sandboxed runs.
"""

from __future__ import annotations

import argparse
import json
import shutil
import tempfile
from pathlib import Path
from typing import Any

import yaml

from environments.swe.repo import BUNDLE, git
from verifiers.swe import PASSED, SweConfig, make_protected_tar, run_state

VERIFIER = '"""Grades the repository with its own tests (see verifiers/swe.py)."""\n' \
           "from verifiers.swe import test_fail_to_pass, test_pass_to_pass, test_report_integrity  # noqa: F401\n"


def _overlay(src: Path, dest: Path) -> None:
    # Plain copies get a new mtime: with the source's mtime and an unchanged size, git's stat
    # cache would take a changed file for unchanged and leave it out of the patch.
    if src.is_dir():
        shutil.copytree(src, dest, dirs_exist_ok=True, symlinks=True, copy_function=shutil.copy)


def _diff_of(repo: Path, overlay: Path) -> str:
    """The patch that turns the committed tree into tree + overlay."""
    _overlay(overlay, repo)
    git("add", "-A", cwd=repo)
    patch = git("diff", "--cached", "--binary", "--no-color", "--no-ext-diff", "HEAD", cwd=repo)
    git("reset", "-q", "--hard", "HEAD", cwd=repo)
    git("clean", "-qfdx", cwd=repo)
    return patch


def write_task_files(dest: Path, *, repo: Path, task_yaml: dict[str, Any], prompt: str, test_patch: str,
                     gold_patch: str, tests_json: dict[str, list[str]] | None) -> None:
    """Write the task folder from a git repository whose HEAD is the base commit."""
    dest = dest.resolve()
    dest.mkdir(parents=True, exist_ok=True)
    (dest / "state").mkdir(exist_ok=True)
    (dest / "tests").mkdir(exist_ok=True)
    (dest / "solution").mkdir(exist_ok=True)
    base = git("rev-parse", "HEAD", cwd=repo).strip()
    task_yaml.setdefault("metadata", {})["base_commit"] = base
    bundle = dest / "state" / BUNDLE
    bundle.unlink(missing_ok=True)
    work = Path(tempfile.mkdtemp(prefix="swe-bundle-"))
    try:
        # A bundle of the base commit's history alone, whatever else the source repository holds.
        git("init", "-q", "-b", "unborn", str(work / "r"))
        git("fetch", "-q", "--no-tags", str(repo), f"{base}:refs/heads/main", cwd=work / "r")
        git("bundle", "create", "-q", str(bundle), "main", cwd=work / "r")
        git("checkout", "-q", "main", cwd=work / "r")
        make_protected_tar(work / "r", task_yaml["metadata"].get("protected_paths") or [],
                           dest / "tests" / "protected.tar")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    (dest / "task.yaml").write_text(yaml.safe_dump(task_yaml, sort_keys=False, width=110), encoding="utf-8")
    (dest / "prompt.md").write_text(prompt.strip() + "\n", encoding="utf-8")
    (dest / "tests" / "test.patch").write_text(test_patch, encoding="utf-8")
    (dest / "solution" / "gold.patch").write_text(gold_patch, encoding="utf-8")
    (dest / "tests" / "test_swe.py").write_text(VERIFIER, encoding="utf-8")
    if tests_json is not None:
        (dest / "tests" / "tests.json").write_text(json.dumps(tests_json, indent=2) + "\n", encoding="utf-8")


def derive_tests_json(task_dir: Path, repo: Path, gold_patch: str) -> tuple[dict[str, list[str]], dict]:
    """F2P/P2P from one run before and one after the gold patch (the validator re-checks 5+5)."""
    from verifiers.swe import apply_patch

    before = run_state(repo, task_dir)
    fixed = Path(tempfile.mkdtemp(prefix="swe-gold-")) / "repo"
    try:
        shutil.copytree(repo, fixed, symlinks=True)
        apply_patch(fixed, gold_patch)
        after = run_state(fixed, task_dir)
    finally:
        shutil.rmtree(fixed.parent, ignore_errors=True)
    for name, r in (("base+test", before), ("base+test+gold", after)):
        if r.toolchain_error or r.patch_error or (r.report_error and name.endswith("gold")):
            raise SystemExit(f"{name}: {r.problem()}")
    f2p = sorted(t for t, s in after.statuses.items() if s == PASSED and before.statuses.get(t) != PASSED)
    p2p = sorted(t for t, s in after.statuses.items() if s == PASSED and before.statuses.get(t) == PASSED)
    return {"FAIL_TO_PASS": f2p, "PASS_TO_PASS": p2p}, {"before": before.statuses, "after": after.statuses}


def build(author: Path, dest: Path, task_id: str) -> dict[str, list[str]]:
    spec = yaml.safe_load((author / "task.yaml").read_text(encoding="utf-8"))
    spec = {"id": task_id, **{k: v for k, v in spec.items() if k != "id"}}
    SweConfig.from_metadata(spec["metadata"])  # fail early on a bad spec
    work = Path(tempfile.mkdtemp(prefix="swe-author-"))
    try:
        repo = work / "repo"
        shutil.copytree(author / "base", repo, symlinks=True)
        git("init", "-q", "-b", "main", cwd=repo)
        git("add", "-A", cwd=repo)
        git("commit", "-q", "-m", "base", cwd=repo)
        test_patch = _diff_of(repo, author / "test")
        gold_patch = _diff_of(repo, author / "gold")
        write_task_files(dest, repo=repo, task_yaml=spec, prompt=(author / "prompt.md").read_text(),
                         test_patch=test_patch, gold_patch=gold_patch, tests_json=None)
        tests_json, _ = derive_tests_json(dest, repo, gold_patch)
        (dest / "tests" / "tests.json").write_text(json.dumps(tests_json, indent=2) + "\n", encoding="utf-8")
        return tests_json
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("author", type=Path)
    ap.add_argument("dest", type=Path)
    ap.add_argument("--id", help="task id (default: swe/<language>/<dest name>)")
    args = ap.parse_args()
    spec = yaml.safe_load((args.author / "task.yaml").read_text())
    task_id = args.id or f"swe/{spec['metadata']['language']}/{args.dest.name}"
    tests = build(args.author, args.dest, task_id)
    print(json.dumps({k: len(v) for k, v in tests.items()}))  # noqa: T201 - a CLI's answer


if __name__ == "__main__":
    main()
