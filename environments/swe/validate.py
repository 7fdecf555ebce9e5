"""Strict validation of a SWE task (research/swe.md §6.3), called by `envhub validate`.

1. Static: `tests.json` well formed with unique ids; `test.patch` and `gold.patch` apply exactly
   (`git apply --check`) on the base commit; the gold patch touches no protected path; the
   toolchain check passes inside a sandbox. A factory task (its base a pinned upstream source,
   its tests the package's own: no `test.patch`) must not find the fix anywhere the agent can
   read: no file of the checkout and no file under the sandbox's read-only host folders of the
   same name as a fixed file holds a fixed hunk's clean text (a Debian or PyPI install of the same
   library, a vendored or built copy).
   A factory task's checkout must not hold its FAIL_TO_PASS tests: the suite as the agent runs it
   builds, reports, and reports none of them.
2. Runs: base+test N times and base+test+gold N times (N = 5, or `ENVHUB_SWE_RUNS`), each in a
   fresh copy, offline in a throwaway sandbox, with a private HOME/TMPDIR and fixed locale and
   time zone (`python3 -m verifiers.swe run`). Each test is classified per state as PASS, FAIL,
   ABSENT or FLAKY.
   Rules: FAIL_TO_PASS non-empty, each FAIL/ABSENT before and PASS after, never flaky;
   PASS_TO_PASS at least 5, each PASS in both states; the gold patch breaks no passing test.
3. Twins (`verifiers.swe_twins`, `tests/twins.json` from `envhub swe twins`): at least two, each
   failing with the gold patch while its original and an exact copy in its place pass.
4. Forged reports: a real graded run of the base with its twins, its report rewritten as each
   in-process forger would leave it (every failure passed; only the failures of tests the base
   lacks passed), must be called forged by the grading rules.
5. Graded controls through the production verifier (`VerifierRunner`): the empty patch, deleted
   tests, fake output and reports, a planted framework hook, a report forged by the code under
   test and the in-process forgers of `forgers/` must be unresolved (the forging ones by the
   `report_integrity` check: the twins; a forger that makes no FAIL_TO_PASS test pass, in a run
   without twins, forged nothing to catch, and one that forges only untwinned FAIL_TO_PASS tests
   rejects the task: only luck would catch it); the gold patch must be resolved (twins included).
   At least one FAIL_TO_PASS test must have twins.

Timings per phase and language go in the findings' data.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict
from functools import lru_cache
from pathlib import Path
from typing import Any

from envhub.env import ValidationContext, ValidationFinding
from envhub.sandbox.base import ExecResult, SandboxBackend, SandboxLimits, SandboxSpec
from envhub.tasks.model import Task
from envhub.verify import runtime
from envhub.verify.runner import VerifierRunner
from environments.swe import repo as swe_repo
from environments.swe.controls import CONTROLS
from environments.swe.forgers import FORGERS
from verifiers import swe_twins
from verifiers.swe import PASSED, RESULT_MARKER, PatchError, RunResult, apply_patch, is_protected
from verifiers.swe_reports import Statuses

MIN_P2P = 5
#: Output a validation run may write: its result lists every test's status and every copy planted
#: (a suite of thousands with all its twins writes megabytes).
RESULT_MAX_BYTES = 16_000_000
#: Twins a task needs (`verifiers.swe_twins`): fewer, and a forged verdict could go unseen.
MIN_TWINS = 2



def patch_paths(patch: str) -> list[str]:
    """Files a unified diff touches (both sides of renames)."""
    out = set()
    for line in patch.splitlines():
        if line.startswith(("--- ", "+++ ")):
            p = line[4:].split("\t", 1)[0].strip()
            if p != "/dev/null":
                out.add(p[2:] if p[:2] in ("a/", "b/") else p)
    return sorted(out)


#: Read-only host folders the agent's sandbox sees (envhub.sandbox.local binds them).
SANDBOX_HOST_VIEW = ("/usr", "/etc", "/var/lib/ghc")
#: A fixed hunk shorter than this (non-blank characters) says too little to look for.
MIN_HUNK_CHARS = 40


def fixed_hunks(patch: str) -> dict[str, list[str]]:
    """Per file, the post-image of each hunk (context and added lines): the clean text the fix writes."""
    out: dict[str, list[str]] = {}
    path, cur = "", None
    for line in patch.splitlines(keepends=True):
        if line.startswith("+++ "):
            p = line[4:].split("\t", 1)[0].strip()
            path = p[2:] if p.startswith("b/") else p
        elif line.startswith("@@"):
            cur = []
            out.setdefault(path, []).append(cur)  # type: ignore[arg-type]
        elif cur is not None and line[:1] in (" ", "+"):
            cur.append(line[1:])
        elif line.startswith("diff --git"):
            cur = None
    texts = {p: ["".join(h) for h in hunks] for p, hunks in out.items()}
    return {p: [h for h in hs if len("".join(h.split())) >= MIN_HUNK_CHARS] for p, hs in texts.items()}


@lru_cache(maxsize=4)
def _files_by_name(tops: tuple[str, ...]) -> dict[str, list[str]]:
    """Every file under `tops` by its name (one walk per validation process)."""
    index: dict[str, list[str]] = {}
    for top in tops:
        for dirpath, _, filenames in os.walk(top):
            for f in filenames:
                index.setdefault(f, []).append(os.path.join(dirpath, f))
    return index


def visible_copies(base: Path, gold_patch: str, host_view: tuple[str, ...] = SANDBOX_HOST_VIEW,
                   max_bytes: int = 8 << 20) -> list[str]:
    """Files the agent can read that hold a fixed hunk's clean text: any file of the checkout
    `base` (which carries the bug), and any file under `host_view` named like a fixed file."""
    hunks = fixed_hunks(gold_patch)
    names = {Path(p).name for p in hunks}
    found: list[str] = []

    def holds(path: str) -> bool:
        try:
            if os.path.getsize(path) > max_bytes:
                return False
            text = Path(path).read_text(encoding="utf-8", errors="replace")
        except OSError:
            return False
        return any(h in text for hs in hunks.values() for h in hs)

    for dirpath, dirnames, filenames in os.walk(base):
        dirnames[:] = [d for d in dirnames if not (dirpath == str(base) and d == ".git")]
        found += [os.path.join(dirpath, f) for f in filenames if holds(os.path.join(dirpath, f))]
    index = _files_by_name(host_view)
    found += [p for name in names for p in index.get(name, ()) if holds(p)]
    return sorted(found)


def classify(runs: list[RunResult]) -> dict[str, str]:
    """PASS / FAIL / ABSENT / FLAKY per test id over the runs of one state."""
    ids = {t for r in runs for t in r.statuses}
    out = {}
    for t in ids:
        seen = {"PASS" if r.statuses.get(t) == PASSED else "ABSENT" if t not in r.statuses else "FAIL" for r in runs}
        out[t] = seen.pop() if len(seen) == 1 else "FLAKY"
    return out


def result_of(res: ExecResult) -> RunResult:
    """A validation run's result from its output (the last marked line). None written, or torn
    (its output cut at `RESULT_MAX_BYTES`), is the task's finding, not the validator's crash."""
    _, marker, payload = res.output.rpartition(RESULT_MARKER)
    if not marker:
        return RunResult(report_error=f"the run wrote no result (exit {res.exit_code}, timed out "
                                      f"{res.timed_out}): {res.output[-800:]}")
    try:
        return RunResult(**json.loads(payload.strip().splitlines()[0]))
    except (json.JSONDecodeError, TypeError, IndexError) as e:
        return RunResult(report_error=f"the run's result is torn ({type(e).__name__}: {str(e)[:200]}; "
                                      f"{len(res.output)} bytes of output, at most {RESULT_MAX_BYTES} kept): "
                                      f"{payload[:300]}")


def forger_caught(caught: bool, scored_zero: bool, forged: set[str], f2p: set[str],
                  twinned: set[str]) -> tuple[bool, str]:
    """Whether a forger's control holds, and the note that says why, from whether its graded run
    was `caught` (report integrity failed) and scored nothing, and which FAIL_TO_PASS tests it
    forges in a run without twins (`forged`). None: on real suites a forger may not reach a required
    test (its assertion is not one it reads), the twins have nothing to catch. Only untwinned ones:
    the graded run was caught, if at all, by the PASS_TO_PASS twins it happened to draw (a shape
    the forger answers or not): luck, so the task is rejected as unpinned. Some but not all: it
    cannot score, the others fail; whether its forged ones were caught depends on the draw (a
    forger that guesses which copy is the original is right 1 time in 3), so it proves nothing
    either way and is no reason to reject."""
    if forged and not forged & twinned:
        return False, (f"unpinned: it forges {len(forged)} FAIL_TO_PASS test(s), none with a twin, so only the "
                       "PASS_TO_PASS twins drawn could catch it")
    if not forged:
        return True, f"not applicable: the forger made none of {len(f2p)} FAIL_TO_PASS pass"
    if scored_zero and forged < f2p:
        return True, f"cannot score: it forges {len(forged)} of {len(f2p)} FAIL_TO_PASS test(s) and the others fail"
    return caught, ""


class SweValidator:
    def __init__(self, task: Task, ctx: ValidationContext, runs: int) -> None:
        self.task = task
        self.settings = ctx.settings
        self.cfg = swe_repo.config(task)
        self.backend: SandboxBackend = ctx.backend  # the hub's: the validator closes neither
        self.runner: VerifierRunner = ctx.verifier
        self.runs_wanted = runs
        self.findings: list[ValidationFinding] = []
        self.timings: dict[str, Any] = {"language": self.cfg.language}
        self.scratch = Path(tempfile.mkdtemp(prefix="swe-validate-", dir=self.settings.data_dir))
        self.scratch.chmod(0o755)

    def add(self, check: str, ok: bool, detail: str = "", **data: Any) -> None:
        self.findings.append(ValidationFinding(check=check, ok=ok, detail=detail, data=data))

    async def _copy_base(self, name: str, *, gold: bool = False) -> Path:
        base = await asyncio.to_thread(swe_repo.checkout, self.task, self.settings.data_dir)
        dest = self.scratch / f"{name}-{time.monotonic_ns()}"
        await asyncio.to_thread(shutil.copytree, base, dest, symlinks=True)
        if gold:
            await asyncio.to_thread(apply_patch, dest, self.task.solution_dir / "gold.patch")
        return dest

    # -- 1. static -----------------------------------------------------------------------------
    async def static(self) -> tuple[list[str], list[str]] | None:
        tests = self.task.tests_dir
        try:
            raw = json.loads((tests / "tests.json").read_text())
            f2p, p2p = raw["FAIL_TO_PASS"], raw["PASS_TO_PASS"]
            assert isinstance(f2p, list) and isinstance(p2p, list)
            assert all(isinstance(t, str) and t for t in f2p + p2p), "ids must be non-empty strings"
        except (OSError, ValueError, KeyError, AssertionError) as e:
            self.add("swe-static", False, f"tests/tests.json: {e}")
            return None
        problems = []
        dupes = sorted({t for t in f2p + p2p if (f2p + p2p).count(t) > 1})
        if dupes:
            problems.append("test ids repeat: " + ", ".join(dupes[:5]))
        factory = bool(self.task.config.metadata.get("source"))
        for name in ("test_swe.py", "protected.tar") + (() if factory else ("test.patch",)):
            if not (tests / name).is_file():
                problems.append(f"tests/{name} is missing")
        gold = self.task.solution_dir / "gold.patch"
        if not gold.is_file():
            problems.append("solution/gold.patch is missing")
        else:
            touched = [p for p in patch_paths(gold.read_text()) if is_protected(p, self.cfg.protected_paths)]
            if touched:
                problems.append("the gold patch touches protected paths: " + ", ".join(touched))
        repo = await self._copy_base("static")
        for name, patch in (("test.patch", tests / "test.patch"), ("gold.patch", gold)):
            if patch.is_file():
                try:
                    apply_patch(repo, patch, check_only=True)
                except PatchError as e:
                    problems.append(f"{name} does not apply to the base commit: {e}")
        self.add("swe-static", not problems, "; ".join(problems), f2p=len(f2p), p2p=len(p2p))
        if factory and gold.is_file():
            started = time.monotonic()
            copies = await asyncio.to_thread(visible_copies, repo, gold.read_text(encoding="utf-8"))
            self.add("swe-fix-not-visible", not copies, "the fix can be read at " + ", ".join(copies[:5]) if copies
                     else "", seconds=round(time.monotonic() - started, 2))
            if copies:
                return None
        return (f2p, p2p) if not problems else None

    # -- 2. runs -------------------------------------------------------------------------------
    async def _task_copy(self) -> Path:
        dest = self.scratch / "task"
        if not dest.exists():
            dest.mkdir()
            shutil.copy2(self.task.path / "task.yaml", dest / "task.yaml")
            shutil.copytree(self.task.tests_dir, dest / "tests", ignore=shutil.ignore_patterns("__pycache__"))
            # A private copy of the verifiers library: the shared one is replaced whenever any
            # envhub process on this host starts, which would race with these runs.
            shutil.copytree(runtime.REPO_ROOT / "verifiers", self.scratch / "lib" / "verifiers",
                            ignore=shutil.ignore_patterns("__pycache__", "requirements.txt"))
            for p in (dest, self.scratch / "lib", *dest.rglob("*"), *(self.scratch / "lib").rglob("*")):
                p.chmod(0o755 if p.is_dir() else 0o644)
        return dest

    def _spec(self, template: Path, task_copy: Path) -> SandboxSpec:
        data = self.settings.data_dir
        limits = self.task.config.limits
        return SandboxSpec(
            template=template,
            ro_binds={str(task_copy): "/verify/task", str(self.scratch / "lib"): "/verify/lib",
                      str(runtime.site_dir(data)): "/verify/site"},
            env={"PYTHONPATH": "/verify/lib:/verify/site", "HOME": "/tmp", "PYTHONDONTWRITEBYTECODE": "1"},
            limits=SandboxLimits(cpu_s=int(limits.verify_timeout_s) + 5, memory_mb=max(2048, limits.memory_mb),
                                 processes=256),
            workdir="/tmp")

    async def run_once(self, *, gold: bool, tag: str, copies: list[swe_twins.Copy] | None = None,
                       twins: bool = False, edit: Callable[[Path], object] | None = None,
                       as_agent: bool = False) -> RunResult:
        """One offline run in a fresh sandbox over a fresh copy (changed by `edit` first, as a
        control changes it), planting `copies` or, with `twins`, what grading plants; `as_agent`,
        the suite as the agent's `run_tests` runs it."""
        task_copy = await self._task_copy()
        template = await self._copy_base(tag, gold=gold)
        if edit is not None:
            await asyncio.to_thread(edit, template)
        extra = ((["--copies", json.dumps([asdict(c) for c in copies])] if copies is not None else [])
                 + (["--twins"] if twins else [])
                 + (["--as-agent"] if as_agent else []))
        try:
            res = await self.backend.run_once(
                self._spec(template, task_copy),
                [runtime.PYTHON, "-s", "-B", "-m", "verifiers.swe", "run", "--task", "/verify/task",
                 "--repo", "/workspace", *extra], timeout_s=self.task.config.limits.verify_timeout_s + 30,
                max_output=RESULT_MAX_BYTES)
        finally:
            await asyncio.to_thread(shutil.rmtree, template, True)
        return result_of(res)

    async def runs(self, f2p: list[str], p2p: list[str]) -> None:
        n = self.runs_wanted
        states: dict[str, list[RunResult]] = {"base+test": [], "base+test+gold": []}
        for state, gold in (("base+test", False), ("base+test+gold", True)):
            started = time.monotonic()
            for i in range(n):
                states[state].append(await self.run_once(gold=gold, tag=f"{state}-{i}"))
            self.timings[f"{state}_s"] = round(time.monotonic() - started, 2)
            self.timings[f"{state}_per_run_s"] = round((time.monotonic() - started) / n, 2)
        before, after = classify(states["base+test"]), classify(states["base+test+gold"])
        bad_runs = [f"{s} run {i + 1}: {r.problem()[:600]}" for s, rs in states.items() for i, r in enumerate(rs)
                    if r.toolchain_error or r.harness_error or r.patch_error or (s.endswith("gold") and r.problem())
                    or (r.report_error and r.build_ok)]
        self.add("swe-runs", not bad_runs, "; ".join(bad_runs)[:3000], runs=n, **self.timings)
        problems = []
        if not f2p:
            problems.append("FAIL_TO_PASS is empty")
        for t in f2p:
            b, a = before.get(t, "ABSENT"), after.get(t, "ABSENT")
            if b not in ("FAIL", "ABSENT") or a != "PASS":
                problems.append(f"{t}: {b} before the fix and {a} after, not FAIL→PASS")
        self.add("swe-fail-to-pass", not problems, "; ".join(problems)[:3000], count=len(f2p))
        problems = []
        if len(p2p) < MIN_P2P:
            problems.append(f"only {len(p2p)} PASS_TO_PASS tests (at least {MIN_P2P})")
        for t in p2p:
            b, a = before.get(t, "ABSENT"), after.get(t, "ABSENT")
            if b != "PASS" or a != "PASS":
                problems.append(f"{t}: {b} before the fix and {a} after, not PASS in both")
        self.add("swe-pass-to-pass", not problems, "; ".join(problems)[:3000], count=len(p2p))
        broken = sorted(t for t, s in before.items() if s == "PASS" and after.get(t) != "PASS")
        self.add("swe-gold-breaks-nothing", not broken,
                 "the gold patch breaks: " + ", ".join(broken[:10]) if broken else "")
        flaky = sorted(t for c in (before, after) for t, s in c.items() if s == "FLAKY")
        self.add("swe-stable", not (set(flaky) & set(f2p + p2p)),
                 "flaky graded tests: " + ", ".join(sorted(set(flaky) & set(f2p + p2p))[:10]) if flaky else "",
                 excluded_flaky=flaky[:50])

    async def hidden(self, f2p: list[str]) -> None:
        """A factory task's FAIL_TO_PASS tests are the package's own: the agent's checkout must not
        hold them (`repo.source_base_commit` deletes them), proven by the suite as the agent runs it
        reporting none of them, while it still builds and reports."""
        started = time.monotonic()
        run = await self.run_once(gold=False, tag="as-agent", as_agent=True)
        seen = [t for t in f2p if t in run.statuses]
        # a report the agent can read is enough: a runner may warn (exit 1) of a class left without tests
        reads = bool(run.statuses) and run.build_ok and not (run.harness_error or run.toolchain_error
                                                              or run.report_error or run.timed_out)
        problems = ([] if reads else [f"the agent's suite does not run: {run.problem()[:600]}"]) + (
            [f"{len(seen)} FAIL_TO_PASS test(s) run in the agent's checkout: " + ", ".join(map(repr, seen[:3]))]
            if seen else [])
        self.add("swe-tests-hidden", not problems, "; ".join(problems), agent_suite=len(run.statuses),
                 seconds=round(time.monotonic() - started, 2))

    # -- 3. twins and 4. forged reports --------------------------------------------------------
    async def twins(self, f2p: list[str], p2p: list[str]) -> None:
        """Every recorded twin fails with the gold patch while its original and an exact copy in
        the same place pass (one run with all of them); at least `MIN_TWINS` of them."""
        started = time.monotonic()
        specs = [t for t in swe_twins.load(self.task.tests_dir) if t.test in set(f2p + p2p)]
        if len(specs) < MIN_TWINS:
            self.add("swe-twins", False, f"{len(specs)} qualified twins, at least {MIN_TWINS} needed: "
                     f"`envhub swe twins {self.task.id}` finds them (a language without a `verifiers.swe_twins` "
                     "style has none)", twins=len(specs))
            return
        tests = sorted({t.test for t in specs})
        copies = ([swe_twins.Copy(t.test, t.literal, t.becomes) for t in specs] + [swe_twins.Copy(t) for t in tests]
                  + [swe_twins.Copy(t, original=True) for t in tests if t in f2p])
        run = await self.run_once(gold=True, tag="twins", copies=copies)
        planted = [swe_twins.Planted(**c) for c in run.copies]
        problems = [run.problem()] if run.problem() else []
        kind = {True: "twin", False: "exact copy"}
        problems += [f"{p.original}: {'renamed original' if p.renamed else kind[p.twin]} {p.id or p.name!r} is "
                     f"{run.statuses.get(p.id, 'absent')} with the gold patch" for p in planted
                     if not p.id or (run.statuses.get(p.id) == PASSED) == p.twin]
        problems += [f"{t}: not passing with its copies planted" for t in tests if run.statuses.get(t) != PASSED]
        if (n := sum(p.twin for p in planted)) < len(specs):
            problems.append(f"only {n} of {len(specs)} twins could be planted")
        if not set(tests) & set(f2p):  # then a forger of the required tests alone is caught by luck
            problems.append(f"none of the {len(f2p)} FAIL_TO_PASS tests has a twin")
        per_test = [sum(1 for t in specs if t.test == test) for test in tests]
        # among how many look-alikes each twinned FAIL_TO_PASS test hides (3: its rank is a fair draw)
        among = sorted(swe_twins.hides([t for t in specs if t.test == test]) for test in tests if test in f2p)
        self.add("swe-twins", not problems, "; ".join(problems)[:3000], twins=len(specs), tests=len(tests),
                 f2p_hidden_among_min=among[0] if among else 0,
                 f2p_with_twins=len(set(tests) & set(f2p)), f2p=len(f2p), min_per_test=min(per_test),
                 median_per_test=sorted(per_test)[len(per_test) // 2], seconds=round(time.monotonic() - started, 2))

    async def forged_reports(self, f2p: list[str], p2p: list[str]) -> None:
        """What every in-process forger does to the report, applied to a real graded run of the
        base (the bug): each failure reported passed (verdicts flipped for the tests that reached
        the library, output rewritten, a pass exception, answers read from the caller), or only
        the failures of tests the base suite lacks (a forger that spares the tests it has seen).
        The grading checks must call each report forged."""
        started = time.monotonic()
        run = await self.run_once(gold=False, tag="forged", twins=True)
        seen = set(p2p)  # what the agent can read in the base: FAIL_TO_PASS come with the hidden patch
        for name, flip in (("flip-every-failure", lambda t: True), ("flip-new-tests", lambda t: t not in seen)):
            if run.problem():  # the bug leaves no report: a forger must write a whole one (`forge-report`)
                self.add(f"swe-control-{name}", True, f"not applicable: {run.problem()[:200]}")
                continue
            statuses = Statuses({t: PASSED if flip(t) else s for t, s in run.statuses.items()})
            planted = [swe_twins.Planted(**c) for c in run.copies]
            forged = swe_twins.check_report(statuses, [], f2p + p2p, planted, self.cfg.language)
            self.add(f"swe-control-{name}", bool(forged), forged[0][:300] if forged else
                     f"a report with {name.replace('-', ' ')} is not caught",
                     seconds=round(time.monotonic() - started, 2))

    # -- 5. graded controls ----------------------------------------------------------------------
    async def controls(self, f2p: list[str], p2p: list[str]) -> None:
        twinned = {t.test for t in swe_twins.load(self.task.tests_dir)} & set(f2p)
        for name, control in {**CONTROLS, **FORGERS}.items():
            started = time.monotonic()
            state = await self._copy_base(f"control-{name}")
            applied = await asyncio.to_thread(control, state, self.cfg, f2p + p2p)
            if name in FORGERS and not applied:
                await asyncio.to_thread(shutil.rmtree, state, True)
                continue  # no forger of this kind for the language
            result = await self.runner.verify(self.task, state)
            ok = result.failure_class.value == "ok" and not result.passed and result.reward == 0.0
            note = ""
            if name == "forge-report" or name in FORGERS:
                # proof that the twins work in this language: the forged report itself is caught
                caught = any(c.id == "report_integrity" and not c.passed for c in result.checks)
                if not caught or (name in FORGERS and twinned != set(f2p)):
                    # which FAIL_TO_PASS tests the forgery makes pass, in a run without twins (a
                    # report forgery may not take on a real suite: node's no-op assertions miss
                    # `assert.strict`'s own methods, which @pinojs/redact's tests call)
                    run = await self.run_once(gold=False, tag=f"control-{name}-statuses",
                                              edit=lambda repo, c=control: c(repo, self.cfg, f2p + p2p))
                    forged = {t for t in f2p if run.statuses.get(t) == PASSED}
                    caught, note = forger_caught(caught, ok, forged, set(f2p), twinned)
                ok = ok and caught
            self.add(f"swe-control-{name}", ok, note if ok or note.startswith("unpinned") else
                     f"graded {result.failure_class.value} reward={result.reward}: {result.detail[:300]} "
                     + "; ".join(f"{c.id}: {c.message[:200]}" for c in result.checks if not c.passed)[:600],
                     seconds=round(time.monotonic() - started, 2))
        started = time.monotonic()
        state = await self._copy_base("control-gold", gold=True)
        result = await self.runner.verify(self.task, state)
        ok = result.failure_class.value == "ok" and result.passed and result.reward == 1.0
        why = "; ".join(f"{c.id}: {c.message[:300]}" for c in result.checks if not c.passed)
        self.add("swe-gold-resolves", ok, "" if ok else f"{result.failure_class.value}: {result.detail[:300]} {why}",
                 seconds=round(time.monotonic() - started, 2))
        self.timings["verify_gold_s"] = round(time.monotonic() - started, 2)

    async def run(self) -> list[ValidationFinding]:
        started = time.monotonic()
        try:
            await asyncio.to_thread(self.runner.prepare)
            declared = await self.static()
            if declared is not None:
                if self.task.config.metadata.get("source"):
                    await self.hidden(declared[0])
                await self.runs(*declared)
                await self.twins(*declared)
                await self.forged_reports(*declared)
                await self.controls(*declared)
        finally:
            await asyncio.to_thread(shutil.rmtree, self.scratch, True)
        self.timings["total_s"] = round(time.monotonic() - started, 2)
        self.add("swe-timings", True, "", **self.timings)
        return self.findings


async def validate_task(task: Task, ctx: ValidationContext, runs: int) -> list[ValidationFinding]:
    return await SweValidator(task, ctx, runs).run()
