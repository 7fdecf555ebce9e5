"""`envhub swe synth`: SWE tasks made from one pinned package by mutation and execution.

For a package (`packages.py`), fetched (`fetch.py`):

1. The clean source runs its suite `RUNS` times, graded as a task is (protected paths restored,
   jailed, offline): every test that passes in every run is a candidate PASS_TO_PASS; a package
   whose clean suite does not pass is refused.
2. Candidate bugs (`mutate_py`, `mutate_ts`) in its source files, drawn with the seed round-robin
   over files (tasks spread over the package's modules), never on a line a task of the package
   already uses, and pairs of them from two functions for harder tasks.
3. A candidate is kept when the suite with the bug builds and reports, some clean-passing tests
   fail (FAIL_TO_PASS: at least one, at most half of the suite: a bug that fails everything says
   nothing about where it is) and every other passes, identically over `RUNS` runs.
4. The task folder is written (`task.yaml` pinning the source, the gold patch, `tests.json`, the
   prompt from what the failing tests observed; the base the agent gets lacks those tests,
   `repo.source_base_commit`), its twins are qualified (`envhub swe twins`) and a
   task with fewer than two is dropped, and so is one whose twins would catch an in-process forger
   only by chance (`pinned.py`: no FAIL_TO_PASS test twinned, or a forger that forges only
   untwinned ones).
5. The gate, `envhub validate` with every check the family has (as for a hand-written task),
   judges it and writes its record; a rejected task is deleted and its failed checks counted.
"""

from __future__ import annotations

import hashlib
import json
import random
import shutil
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

import yaml

from envhub.errors import TaskInvalid
from envhub.tasks.model import Task
from environments.swe import source as swe_source
from environments.swe.authoring import VERIFIER
from environments.swe.factory import prompts, shared_builds
from environments.swe.factory.mutation import Mutation, apply
from environments.swe.factory.packages import Package
from environments.swe.factory.pinned import unpinned
from environments.swe.repo import git
from verifiers.swe import PASSED, RunResult, is_protected, make_protected_tar, run_state

#: Runs of the clean suite and of every bug before it is kept: a filter (the validator runs each
#: state 5 times again, in its sandbox, and rejects what is not stable).
RUNS = 5  # the issue's bar: clean, bug and gold statuses identical over 5 runs
#: PASS_TO_PASS tests given twins beside the FAIL_TO_PASS ones (grading plants two of them).
TWINNED_P2P = 12
#: Share of the suite a bug may fail at most.
MAX_F2P_SHARE = 0.5
#: A factory run's budget: this many times the clean suite's time, and at least this many seconds.
RUN_BUDGET_TIMES = 10
RUN_BUDGET_MIN_S = 30.0
#: Candidates tried per task wanted, at most (most mutants are caught or survive within a few).
TRIES_PER_TASK = 8
#: Report formats that are the runner's console as a stream of events (`go test -json`): the
#: synthesiser's runs print the report's events that carry what a check said (no start, run, pass
#: or skip events: in a suite of hundreds of tests they would push the failures out of the output's
#: tail, as gods' 304 did), so the prompt can quote it.
CONSOLE_IN_REPORT = {"go_test_json": r"""grep -v -e '"Action":"\(run\|pass\|pause\|cont\|start\|skip\)"' """
                                     r"""-e '"Output":"\(=== \|--- PASS\|PASS\\n\|ok \)'"""}
PACKAGE_DIR = "_package"  # beside the package's tasks: what they share (the protected files)
MIN_TWINS = 2

Log = Callable[[str], None]
#: The gate a written task must pass to be kept: task folder -> (status, {failed check: why}).
#: `envhub swe synth` passes `envhub validate`'s (the record is written with the task).
Gate = Callable[[Path], tuple[str, dict[str, str]]]


class SynthError(RuntimeError):
    """The package cannot make tasks here (not fetched, clean suite failing, no candidates)."""


class MuteIssue(SynthError):
    """The failing tests print nothing an issue could quote: with the tests hidden from the
    checkout, the task would give the agent nothing to go on."""


@dataclass
class Attempt:
    mutations: list[dict[str, Any]]
    #: kept | survived | broke-build | no-report | too-many | unstable | no-base (the base cannot be
    #: rebuilt, or its FAIL_TO_PASS tests hidden) | mute (the issue could quote nothing) | no-twins |
    #: unpinned | rejected
    outcome: str
    f2p: int = 0
    seconds: float = 0.0
    task: str = ""
    rejected_by: list[str] = field(default_factory=list)  # the gate's failed checks


@dataclass
class SynthReport:
    package: str
    language: str
    clean_tests: int = 0
    clean_s: float = 0.0
    candidates: int = 0
    tried: int = 0
    kept: list[str] = field(default_factory=list)
    attempts: list[Attempt] = field(default_factory=list)
    seconds: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["outcomes"] = {}
        d["outcome_seconds"] = {}  # where the run's time went: what to make cheaper next
        d["rejected_by"] = {}
        for a in self.attempts:
            d["outcomes"][a.outcome] = d["outcomes"].get(a.outcome, 0) + 1
            d["outcome_seconds"][a.outcome] = round(d["outcome_seconds"].get(a.outcome, 0) + a.seconds, 1)
            for check in a.rejected_by:
                d["rejected_by"][check] = d["rejected_by"].get(check, 0) + 1
        return d


def _read(path: Path) -> str:
    """A source file's text exactly (CRLF kept: offsets, mutants and patches must see its bytes)."""
    with open(path, encoding="utf-8", newline="") as f:
        return f.read()


def _write(path: Path, text: str) -> None:
    with open(path, "w", encoding="utf-8", newline="") as f:
        f.write(text)


def engine(language: str) -> Callable[[str, str, str], list[Mutation]]:
    if language == "python":
        from environments.swe.factory import mutate_py

        return mutate_py.candidates
    from environments.swe.factory import mutate_ts  # tree-sitter: the other 17 languages

    if language not in mutate_ts.LANGUAGES:
        raise SynthError(f"no mutation engine for {language}")
    return mutate_ts.candidates


def _task_yaml(pkg: Package, task_id: str, meta: dict[str, Any], title: str, difficulty: str,
               tags: list[str]) -> dict[str, Any]:
    verify = max(180, int(pkg.suite_s * 6) + 120)
    return {"id": task_id, "family": "swe", "title": title[:200], "difficulty": difficulty, "tags": tags,
            "limits": {"step_timeout_s": max(60, int(pkg.suite_s * 3) + 30), "verify_timeout_s": verify,
                       "memory_mb": 2048}, "metadata": meta}


class Synthesiser:
    def __init__(self, pkg: Package, *, tasks_root: Path, data_dir: Path, seed: int = 0, log: Log = lambda _: None,
                 runs: int = RUNS, gate: Gate | None = None) -> None:
        self.pkg = pkg
        self.gate = gate
        self.root = tasks_root / "swe" / pkg.language / pkg.slug
        self.data_dir = data_dir
        self.seed = seed
        self.log = log
        self.runs = runs
        self.work = Path(tempfile.mkdtemp(prefix="swe-synth-", dir=data_dir))
        self.work.chmod(0o755)
        self.report = SynthReport(pkg.id, pkg.language)

    # -- the package ------------------------------------------------------------------------------
    def prepare(self) -> None:
        """The clean tree, the shared protected files and a task folder to run suites with."""
        if lacking := swe_source.missing(self.pkg.source, self.data_dir):
            raise SynthError(f"{self.pkg.id} is not fetched ({', '.join(f.name for f in lacking)}): "
                             f"run `{swe_source.fetch_command(self.pkg.source)}`")
        if self.pkg.prebuilt and not shared_builds.present(self.pkg):
            self.log(f"{self.pkg.id}: making its shared dependency build (once)")
            try:
                shared_builds.build(self.pkg, self.data_dir)
            except (shared_builds.PrebuiltError, OSError) as e:  # not root: every suite builds cold
                self.log(f"{self.pkg.id}: no shared dependency build ({e})")
        self.clean = self.work / "clean"
        shutil.copytree(swe_source.tree(self.pkg.source, self.data_dir), self.clean, symlinks=True)
        shared = self.root / PACKAGE_DIR
        shared.mkdir(parents=True, exist_ok=True)
        make_protected_tar(self.clean, self.pkg.protected_paths, shared / "protected.tar")
        self.runner_task = self.work / "task"
        (self.runner_task / "tests").mkdir(parents=True)
        meta = self.pkg.metadata()
        if meta["report"]["format"] in CONSOLE_IN_REPORT:  # the failing checks' messages, for the prompt
            said = CONSOLE_IN_REPORT[meta["report"]["format"]]
            meta["test_command"] = (f"( {meta['test_command']} ); s=$?; "
                                    f"{said} \"$REPORT_DIR\"/{meta['report']['file']} | head -c 4000000; exit $s")
        (self.runner_task / "task.yaml").write_text(yaml.safe_dump(_task_yaml(self.pkg, "swe/x/y", meta, "x",
                                                                                "medium", [])), encoding="utf-8")
        shutil.copy(shared / "protected.tar", self.runner_task / "tests" / "protected.tar")

    def run(self, state: Path) -> RunResult:
        return run_state(state, self.runner_task, apply_test_patch=False, timeout_s=self.budget_s)

    @property
    def budget_s(self) -> float | None:
        """A factory run's budget once the clean suite is timed: a mutant or a twin that hangs the
        suite costs that, not the task's whole verify budget, in every run it is in (the twins'
        batches are split through several). None before: the task's."""
        return max(RUN_BUDGET_MIN_S, RUN_BUDGET_TIMES * self.report.clean_s) if self.report.clean_s else None

    def clean_suite(self) -> dict[str, str]:
        started = time.monotonic()
        runs = [self.run(self.clean) for _ in range(self.runs)]
        self.report.clean_s = round((time.monotonic() - started) / len(runs), 2)
        for r in runs:
            if r.problem():
                raise SynthError(f"{self.pkg.id}: the clean suite cannot be graded: {r.problem()[:600]}")
        # an id the report lists twice (node's junit reporter drops describe() paths) reads as forged
        # at grading: never one to grade
        repeated = set().union(*(set(r.duplicates) for r in runs))
        passing = set.intersection(*({t for t, s in r.statuses.items() if s == PASSED} for r in runs)) - repeated
        total = set().union(*(set(r.statuses) for r in runs))
        if len(passing) < max(10, int(0.9 * len(total))):
            raise SynthError(f"{self.pkg.id}: only {len(passing)} of {len(total)} tests pass in every clean run")
        self.passing = passing
        self.report.clean_tests = len(passing)
        self.log(f"{self.pkg.id}: clean suite {len(passing)} tests, {self.report.clean_s} s a run")
        return {t: PASSED for t in passing}

    # -- candidates -------------------------------------------------------------------------------
    def source_files(self) -> list[str]:
        out = []
        for p in sorted(self.clean.rglob("*")):
            rel = p.relative_to(self.clean).as_posix()
            if p.is_file() and not p.is_symlink() and is_protected(rel, self.pkg.source_globs) \
                    and not is_protected(rel, self.pkg.test_globs) and not is_protected(rel, self.pkg.protected_paths) \
                    and b"\r" not in p.read_bytes():  # patches are applied as text: a CRLF hunk never applies
                out.append(rel)
        return out

    def used_lines(self) -> set[tuple[str, int]]:
        """Lines the package's tasks already mutate (kept on a rerun, never a second time)."""
        used = set()
        for y in self.root.glob("*/task.yaml"):
            meta = (yaml.safe_load(y.read_text(encoding="utf-8")) or {}).get("metadata") or {}
            for m in (meta.get("factory") or {}).get("mutations") or []:
                used.add((m["path"], int(m["line"])))
        return used

    def candidates(self) -> list[list[Mutation]]:
        """Single mutations round-robin over files in seeded order (pairs are drawn from the rest)."""
        find = engine(self.pkg.language)
        rng = random.Random(f"{self.pkg.id}/{self.seed}")
        per_file: list[list[Mutation]] = []
        for rel in self.source_files():
            text = _read(self.clean / rel)
            found = find(self.pkg.language, rel, text)
            rng.shuffle(found)
            if found:
                per_file.append(found)
        rng.shuffle(per_file)
        self.report.candidates = sum(len(f) for f in per_file)
        out: list[list[Mutation]] = []
        while any(per_file):
            for f in per_file:
                if f:
                    out.append([f.pop()])
        return out

    def pairs(self, pool: list[list[Mutation]], count: int) -> list[list[Mutation]]:
        rng = random.Random(f"{self.pkg.id}/{self.seed}/pairs")
        singles = [c[0] for c in pool]
        out = []
        for _ in range(count * 20):
            if len(out) >= count or len(singles) < 2:
                break
            a, b = rng.sample(singles, 2)
            if (a.path, a.function) != (b.path, b.function):
                out.append([a, b])
        return out

    # -- one candidate ----------------------------------------------------------------------------
    def _mutant(self, mutations: list[Mutation], name: str) -> Path:
        state = self.work / name
        shutil.copytree(self.clean, state, symlinks=True)
        by_file: dict[str, list[Mutation]] = {}
        for m in mutations:
            by_file.setdefault(m.path, []).append(m)
        for rel, ms in by_file.items():
            path = state / rel
            _write(path, apply(_read(path), ms))
        return state

    def judge(self, mutations: list[Mutation], used: set[tuple[str, int]]) -> tuple[str, list[str], RunResult | None]:
        """('kept', FAIL_TO_PASS, the first buggy run) or (why not, [], None)."""
        if any((m.path, m.line) in used for m in mutations):
            return "line-used", [], None
        state = self._mutant(mutations, f"m-{time.monotonic_ns()}")
        try:
            first = self.run(state)
            if first.problem():
                return ("broke-build" if not first.build_ok else "no-report"), [], None
            f2p = sorted(t for t in self.passing if first.statuses.get(t) != PASSED)
            if not f2p:
                return "survived", [], None
            if len(f2p) > MAX_F2P_SHARE * len(self.passing):
                return "too-many", [], None
            if why := self.screen(f2p):
                return why, [], None
            for _ in range(self.runs - 1):
                again = self.run(state)
                if again.problem() or sorted(t for t in self.passing if again.statuses.get(t) != PASSED) != f2p:
                    return "unstable", [], None
            return "kept", f2p, first
        finally:
            shutil.rmtree(state, ignore_errors=True)

    def screen(self, f2p: list[str]) -> str | None:
        """Why a bug failing `f2p` cannot become a task, told from the source alone, before its
        stability runs, task folder, base and twins cost anything: "no-base" when a FAIL_TO_PASS
        test cannot be hidden from the checkout (`swe_twins.hide` on a scratch copy of the tests),
        "unpinned" when none has a definition with a literal a twin could change (qualifying
        twins may still find none; this only skips the candidates that surely have none)."""
        from verifiers import swe_twins

        scratch = self.work / f"s-{time.monotonic_ns()}"
        try:
            for rel in self._test_paths:
                (scratch / rel).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(self.clean / rel, scratch / rel)
            if unseen := swe_twins.hide(scratch, self.pkg.language, f2p,
                                        lambda rel: is_protected(rel, self.pkg.protected_paths)):
                self.log(f"    {len(unseen)} FAIL_TO_PASS test(s) found by no name or file, e.g. {unseen[0]!r}")
                return "no-base"
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
        from environments.swe.twins import literals_of

        _, tried = literals_of(self.clean, self.pkg.language, f2p)
        if any(tried.values()):
            return None
        self.log(f"    none of the {len(f2p)} FAIL_TO_PASS tests has a literal a twin could change, e.g. {f2p[0]!r}")
        return "unpinned"

    @cached_property
    def _test_paths(self) -> list[str]:
        """The clean tree's files that `hide` may edit: the protected ones (the tests and what
        defines them)."""
        rels = (p.relative_to(self.clean).as_posix() for p in sorted(self.clean.rglob("*"))
                if p.is_file() and not p.is_symlink())
        return [rel for rel in rels if is_protected(rel, self.pkg.protected_paths)]

    # -- the task folder --------------------------------------------------------------------------
    def _gold(self, mutations: list[Mutation], dest: Path) -> None:
        """Write `dest/solution/gold.patch`: the diff from the bug (committed) back to the clean source."""
        repo = self._mutant(mutations, f"g-{time.monotonic_ns()}")
        try:
            git("init", "-q", "-b", "main", cwd=repo)
            for rel in {m.path for m in mutations}:
                git("add", "--force", "--", rel, cwd=repo)
            git("commit", "-q", "--no-verify", "-m", "bug", cwd=repo)
            for rel in {m.path for m in mutations}:
                shutil.copy(self.clean / rel, repo / rel)
            (dest / "solution").mkdir(parents=True, exist_ok=True)
            # git writes the file itself: a CRLF source's patch keeps its CRs (text mode would not)
            git("diff", "--no-color", "--no-ext-diff", f"--output={dest / 'solution' / 'gold.patch'}", cwd=repo)
        finally:
            shutil.rmtree(repo, ignore_errors=True)

    def _base(self, gold: Path, f2p: list[str]) -> str:
        """The base commit as `repo.checkout` will build it: the bug, its FAIL_TO_PASS tests hidden."""
        from environments.swe.repo import source_base_commit

        scratch = self.work / f"b-{time.monotonic_ns()}"
        try:
            return source_base_commit(self.pkg.source, gold, self.data_dir, scratch, hidden=f2p,
                                      language=self.pkg.language, protected=self.pkg.protected_paths)
        finally:
            shutil.rmtree(scratch, ignore_errors=True)

    def task_name(self, mutations: list[Mutation]) -> str:
        """An opaque name: a task id can reach the policy (TRL's prompt column holds ids), so it
        must not say where the bug is; the metadata's `factory.mutations` does, for people."""
        key = json.dumps([self.pkg.id, [[m.path, m.line, m.operator] for m in mutations]])  # no two share a line
        return "bug-" + hashlib.sha256(key.encode()).hexdigest()[:10]

    def write_task(self, mutations: list[Mutation], f2p: list[str], run: RunResult) -> Path | None:
        name = self.task_name(mutations)
        dest = self.root / name
        if dest.exists():
            return None
        dest.mkdir(parents=True)
        try:
            self._gold(mutations, dest)
            p2p = sorted(self.passing - set(f2p))
            (dest / "tests").mkdir()
            (dest / "tests" / "test_swe.py").write_text(VERIFIER, encoding="utf-8")
            (dest / "tests" / "tests.json").write_text(json.dumps({"FAIL_TO_PASS": f2p, "PASS_TO_PASS": p2p},
                                                                  indent=2) + "\n", encoding="utf-8")
            (dest / "tests" / "protected.tar").symlink_to(Path("..") / ".." / PACKAGE_DIR / "protected.tar")
            self._describe(dest, [m.as_dict() for m in mutations], f2p, run, self.seed)
            return dest
        except Exception:
            shutil.rmtree(dest, ignore_errors=True)
            raise

    def _describe(self, dest: Path, mutations: list[dict[str, Any]], f2p: list[str], run: RunResult,
                  seed: int) -> None:
        """`prompt.md` and `task.yaml` of the task in `dest` (its gold patch written): the issue
        from what the failing run `run` saw, the base with the FAIL_TO_PASS tests hidden."""
        gold = _read(dest / "solution" / "gold.patch")
        base = self._base(dest / "solution" / "gold.patch", f2p)
        issue = prompts.write(self.pkg, f2p, run, {m["function"] for m in mutations if m.get("function")}, gold,
                              self.clean, random.Random(f"{self.pkg.id}/{dest.name}/{seed}"))
        if not issue.informative:
            raise MuteIssue(f"{dest.name}: the failing tests print nothing the issue could quote")
        (dest / "prompt.md").write_text(issue.text.strip() + "\n", encoding="utf-8")
        gold_lines = len(prompts.changed_lines(gold))
        meta = {**self.pkg.metadata(), "base_commit": base, "factory": {
            "package": self.pkg.id, "seed": seed, "style": issue.style,
            "mutations": [{k: m[k] for k in ("path", "line", "function", "operator")} for m in mutations],
            "difficulty": {"fail_to_pass": len(f2p), "gold_lines": gold_lines, "mutations": len(mutations),
                           "files": len({m["path"] for m in mutations}),
                           "called_by_failing_tests": issue.called_directly}}}
        difficulty = "hard" if len(mutations) > 1 else "easy" if issue.called_directly and len(f2p) >= 3 \
            else "medium"
        tags = [self.pkg.language, "factory", self.pkg.slug, *dict.fromkeys(m["operator"] for m in mutations)]
        task_id = "/".join(dest.relative_to(self.root.parents[2]).parts)
        (dest / "task.yaml").write_text(yaml.safe_dump(_task_yaml(self.pkg, task_id, meta, issue.title, difficulty,
                                                                  tags), sort_keys=False, width=110),
                                        encoding="utf-8")

    def rewrite(self, dest: Path) -> None:
        """Make a task of this package anew from its recorded bug, as today's factory makes one:
        its base, prompt and `task.yaml` (its gold patch, tests and twins stay). `prepare` first."""
        from verifiers.swe import apply_patch, load_tests_json

        factory = (yaml.safe_load((dest / "task.yaml").read_text(encoding="utf-8"))["metadata"])["factory"]
        f2p, _ = load_tests_json(dest)
        state = self.work / f"r-{time.monotonic_ns()}"
        shutil.copytree(self.clean, state, symlinks=True)
        try:
            apply_patch(state, dest / "solution" / "gold.patch", reverse=True)
            run = self.run(state)
        finally:
            shutil.rmtree(state, ignore_errors=True)
        if run.problem():
            raise SynthError(f"{dest.name}: the bug's suite cannot be graded: {run.problem()[:300]}")
        self._describe(dest, factory["mutations"], f2p, run, int(factory.get("seed", 0)))

    def twins(self, task: Task) -> int:
        from environments.swe.twins import write

        return len(write(task, log=lambda _: None, data_dir=self.data_dir, max_p2p=TWINNED_P2P,
                         timeout_s=self.budget_s))

    # -- the whole package ------------------------------------------------------------------------
    def synth(self, count: int, *, pairs: float = 0.2, cap: int = 60,
              progress: Callable[[int, int, str], None] = lambda *_: None) -> SynthReport:
        started = time.monotonic()
        try:
            self.prepare()
            self.clean_suite()
            used = self.used_lines()
            have = len(list(self.root.glob("*/task.yaml")))
            want = max(0, min(count, cap - have))
            singles = self.candidates()
            n_pairs = int(round(want * pairs))
            order = singles[: max(0, len(singles) // 2)]
            rest = singles[len(order):]
            plan = order + self.pairs(rest, n_pairs * 4)  # pairs come after singles, from other candidates
            budget = want * TRIES_PER_TASK
            kept = 0
            kept_pairs = 0
            for mutations in plan:
                if kept >= want or self.report.tried >= budget:
                    break
                if len(mutations) > 1 and kept_pairs >= n_pairs:
                    continue
                if len(mutations) == 1 and kept >= want - (n_pairs - kept_pairs):
                    continue  # leave room for the pairs
                self.report.tried += 1
                t0 = time.monotonic()
                outcome, f2p, run = self.judge(mutations, used)
                attempt = Attempt([m.as_dict() for m in mutations], outcome, len(f2p))
                if outcome == "kept" and run is not None:
                    why = "no-base"
                    try:
                        dest = self.write_task(mutations, f2p, run)
                    except (TaskInvalid, MuteIssue) as e:  # no exact base, tests not hidable, or mute
                        self.log(f"  {e}"[:300])
                        dest, why = None, "mute" if isinstance(e, MuteIssue) else why
                    if dest is None:
                        attempt.outcome = "name-taken" if (self.root / self.task_name(mutations)).exists() else why
                    elif self.twins(task := Task.load(dest)) < MIN_TWINS:
                        attempt.outcome = "no-twins"
                        shutil.rmtree(dest, ignore_errors=True)
                    elif why := unpinned(task, self.data_dir):
                        attempt.outcome = "unpinned"
                        self.log("  unpinned: " + "; ".join(why)[:300])
                        shutil.rmtree(dest, ignore_errors=True)
                    elif self.gate and (verdict := self.gate(dest))[0] != "validated":
                        attempt.outcome, attempt.rejected_by = "rejected", list(verdict[1])
                        self.log("  rejected: " + "; ".join(f"{k}: {v[:240]}" for k, v in verdict[1].items()))
                        shutil.rmtree(dest, ignore_errors=True)
                    else:
                        attempt.task = "/".join(dest.relative_to(self.root.parents[2]).parts)
                        self.report.kept.append(attempt.task)
                        used |= {(m.path, m.line) for m in mutations}
                        kept += 1
                        kept_pairs += len(mutations) > 1
                attempt.seconds = round(time.monotonic() - t0, 2)
                if attempt.outcome == "line-used":
                    self.report.tried -= 1
                    continue
                self.report.attempts.append(attempt)
                self.log(f"{mutations[0].path}:{mutations[0].line} {'+'.join(m.operator for m in mutations)}: "
                         f"{attempt.outcome}" + (f" ({attempt.f2p} failing)" if attempt.f2p else ""))
                progress(kept, want, attempt.outcome)
            return self.report
        finally:
            self.report.seconds = round(time.monotonic() - started, 1)
            shutil.rmtree(self.work, ignore_errors=True)
            self._log_run()

    def _log_run(self) -> None:
        """Append this run's summary to the package's `_package/synth.json` (how its tasks were made)."""
        path = self.root / PACKAGE_DIR / "synth.json"
        if not path.parent.is_dir():
            return
        runs = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else []
        d = self.report.as_dict()
        runs.append({k: d[k] for k in ("package", "clean_tests", "clean_s", "candidates", "tried", "kept",
                                       "outcomes", "outcome_seconds", "rejected_by", "seconds")} | {"seed": self.seed})
        path.write_text(json.dumps(runs, indent=1) + "\n", encoding="utf-8")
