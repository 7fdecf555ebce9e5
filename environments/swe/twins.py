"""Qualify the twins of a SWE task (`envhub swe twins`): which perturbed copies of its required
tests fail with the gold patch while an exact copy in the same place passes.

Each required test's assertion literals are the candidates (`verifiers.swe_twins.candidates`),
each with its alternatives (a number moved both ways, a string changed at one character, a
boolean flipped). A first run plants an exact copy of every test beside it, over the gold state,
jailed like grading; run k then plants every alternative of the k-th literal of every test whose
copy passed. An alternative qualifies when, in its run, its twin does not pass while the original
does: the copy's place is sound and the changed literal is what fails it. Per test, the literal
whose qualified alternatives hide the original best (`swe_twins.hides`: a number with twins on
both sides of it) is kept. A batch whose run yields no report (a twin that does not compile, or
crashes the runner) is split until the culprit is alone, and dropped. The last runs plant every
qualified twin at once in random places, the FAIL_TO_PASS originals renamed, as grading does, and
keep those that hold there without failing any required test. The result is `tests/twins.json`; validation
checks it again (`SweValidator.twins`).
"""

from __future__ import annotations

import random
import re
import shutil
import tempfile
from pathlib import Path

from envhub.tasks.model import Task
from environments.swe.repo import clone_base
from verifiers import swe_twins
from verifiers.swe import PASSED, RunResult, SweConfig, apply_patch, load_tests_json, restore_protected, run_state

#: Candidates tried per test (one suite run each over the gold state).
RANKS = 3
#: Runs with every qualified copy planted at once, each in fresh random places.
TOGETHER = 4
#: A string literal that formats a message (printf's verbs, `{}` and `{0}`, Ruby's `#{`).
_MESSAGE = re.compile(r"%[-+ #0-9.]*[a-zA-Z]|\{\d*\}|#\{")


def literals_of(repo: Path, language: str, tests: list[str]
                ) -> tuple[dict[str, list[swe_twins.Literal]], dict[str, list[int]]]:
    """Each found test's candidate literals, read once as `swe_twins.plant` reads them; and which
    of them to try, best first: those of the body's assertion lines, then those of its own pytest
    case (the values its id carries: the definition's other cases do not run under this id), then
    the body's others (a table's rows, set-up values); a message's text after all of them."""
    out, tried = {}, {}
    for test in tests:
        found = swe_twins.find_styled(repo, language, test)
        if found is None:
            continue
        block, text, style = found
        body = text[block.start:block.end]
        span = (block.name_start - block.start, block.name_end - block.start)
        out[test] = lits = swe_twins.candidates(body, span, style, swe_twins.seed_of(body))
        header = body.rfind("\n", 0, span[0]) + 1
        ranked = []
        for i, lit in enumerate(lits):
            if lit.offset < header:  # a case's value: only those of the id's own case run under it
                if swe_twins.case_has(test, lit.text):
                    ranked.append((1, i))
                continue
            line = body[body.rfind("\n", 0, lit.offset) + 1:].partition("\n")[0]
            ranked.append((0 if swe_twins.ASSERT_WORDS.search(line) else 2, i))
        # a message's text (`"expected %q, got %q"`) changed fails nothing: tried after the rest
        tried[test] = [i for _, i in sorted(ranked, key=lambda r: (_MESSAGE.search(lits[r[1]].text) is not None, r))]
    return out, tried


def qualify(task: Task, *, ranks: int = RANKS, log=print,  # noqa: ANN001
            data_dir: Path | None = None, max_p2p: int | None = None,
            timeout_s: float | None = None) -> list[swe_twins.TwinSpec]:
    """Find the task's qualifying twins (runs the suite about `ranks` + 3 times over the gold state,
    more when a batch of copies breaks the run and is split). With `max_p2p`, only that many
    PASS_TO_PASS tests (a seeded draw) get twins beside every FAIL_TO_PASS one: grading plants two
    of them (`swe_twins.plan`), and a package's suite of hundreds would double every run.
    `timeout_s`: a run's budget (default: the task's); a copy that hangs the suite (a changed
    literal that loops) costs it once in every batch it is split through."""
    cfg = SweConfig.from_task_dir(task.path)
    if cfg.language not in swe_twins.STYLES:
        return []
    f2p, p2p = load_tests_json(task.path)
    work = Path(tempfile.mkdtemp(prefix="swe-twins-"))
    try:
        gold = work / "gold"
        clone_base(task, gold, data_dir)
        apply_patch(gold, task.solution_dir / "gold.patch")
        # base + gold, its tests as grading restores them (a factory task's checkout lacks its
        # FAIL_TO_PASS tests) + test patch: where candidates are read, as plant() reads them
        view = work / "view"
        shutil.copytree(gold, view, symlinks=True)
        restore_protected(view, cfg.protected_paths, task.tests_dir / "protected.tar")
        if (task.tests_dir / "test.patch").is_file():  # a factory task's tests are the package's own
            apply_patch(view, task.tests_dir / "test.patch")
        if max_p2p is not None and len(p2p) > max_p2p:
            p2p_twinned = sorted(random.Random(task.id).sample(p2p, max_p2p))
        else:
            p2p_twinned = p2p
        literals, tried = literals_of(view, cfg.language, f2p + p2p_twinned)
        Copy = swe_twins.Copy
        exact = [Copy(t) for t in literals]
        copy_ok = {p.original for run, planted in _runs(gold, task, exact, log, f2p + p2p, timeout_s)
                   for p in planted if p.id and run.statuses.get(p.id) == PASSED == run.statuses.get(p.original)}
        found: set[tuple[str, int, str]] = set()
        for rank in range(ranks):  # every alternative of every test's rank-th literal at once
            copies = [Copy(t, tried[t][rank], alt) for t, lits in literals.items()
                      if rank < len(tried[t]) and t in copy_ok for alt in lits[tried[t][rank]].alternatives]
            for run, planted in _runs(gold, task, copies, log, f2p + p2p, timeout_s):
                found |= _failing_twins(run, planted)
        found = _best_literal(found, literals)
        for _ in range(TOGETHER):  # all at once, as validation plants them, in random places, the
            # FAIL_TO_PASS originals renamed: a copy that upsets the runner now and then, or whose
            # side effects fail another test, goes
            tests = sorted({t for t, _, _ in found})
            copies = ([Copy(t, i, b) for t, i, b in sorted(found)] + [Copy(t) for t in tests]
                      + [Copy(t, original=True) for t in tests if t in f2p])
            sound: set[str] = set()  # tests whose exact copy held (a batch split apart may part them)
            renamed: set[str] = set()  # FAIL_TO_PASS tests renamed in a run that kept every required test
            failing: set[tuple[str, int, str]] = set()
            for run, planted in _runs(gold, task, copies, log, f2p + p2p, timeout_s):
                sound |= {p.original for p in planted if not p.twin and not p.renamed
                          and run.statuses.get(p.id) == PASSED}
                renamed |= {p.original for p in planted if p.renamed and run.statuses.get(p.id) == PASSED}
                failing |= _failing_twins(run, planted)
            # grading renames every twinned FAIL_TO_PASS test: one whose rename upsets the run keeps no twin
            found = {t for t in failing if t[0] in sound and (t[0] not in f2p or t[0] in renamed)}
        return [swe_twins.TwinSpec(test=test, literal=i, was=literals[test][i].text, becomes=b)
                for test, i, b in sorted(found)]
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _runs(gold: Path, task: Task, copies: list[swe_twins.Copy], log,  # noqa: ANN001
          required: list[str] = (), timeout_s: float | None = None) -> list[tuple[RunResult, list[swe_twins.Planted]]]:
    """Runs of the gold state with `copies` planted; a batch whose run yields no usable report (a
    copy that does not build, or crashes the runner) or fails a `required` test (a copy whose side
    effects reach another test: Perl's statements share their objects; one that breaks its whole
    module's collection) is split in halves until the culprits are alone, and dropped."""
    if not copies:
        return []
    run = run_state(gold, task.path, copies=copies, timeout_s=timeout_s)
    broken = [t for t in required if run.statuses.get(t) != PASSED]
    problem = run.problem() or (f"{len(broken)} required test(s) fail with these copies: {broken[:3]}"
                                if broken else "")
    log(f"  {task.id}: {len(copies)} copies: {problem[:160] or 'ran'}")
    if not problem:
        return [(run, [swe_twins.Planted(**c) for c in run.copies])]
    if run.toolchain_error or run.harness_error or len(copies) == 1:
        return []
    half = len(copies) // 2
    return (_runs(gold, task, copies[:half], log, required, timeout_s)
            + _runs(gold, task, copies[half:], log, required, timeout_s))


def _failing_twins(run: RunResult, planted: list[swe_twins.Planted]) -> set[tuple[str, int, str]]:
    """The twins of this run (test, literal, what it became) that did not pass while their original did."""
    return {(p.original, p.literal, p.becomes) for p in planted
            if p.twin and p.literal is not None and p.becomes is not None and p.id
            and run.statuses.get(p.original) == PASSED and run.statuses.get(p.id) not in (None, PASSED)}


def _best_literal(found: set[tuple[str, int, str]], literals: dict[str, list[swe_twins.Literal]]
                  ) -> set[tuple[str, int, str]]:
    """Per test, the twins of one literal: the one whose qualified alternatives hide the original
    among the most look-alikes (`swe_twins.hides`), the first in the source on a tie."""
    by_test: dict[str, dict[int, list[swe_twins.TwinSpec]]] = {}
    for test, i, becomes in found:
        spec = swe_twins.TwinSpec(test=test, literal=i, was=literals[test][i].text, becomes=becomes)
        by_test.setdefault(test, {}).setdefault(i, []).append(spec)
    out = set()
    for test, by_literal in by_test.items():
        best = max(by_literal, key=lambda i: (swe_twins.hides(by_literal[i]), -i))
        out |= {(test, best, s.becomes) for s in by_literal[best]}
    return out


def write(task: Task, log=print, data_dir: Path | None = None,  # noqa: ANN001
          max_p2p: int | None = None, timeout_s: float | None = None) -> list[swe_twins.TwinSpec]:
    twins = qualify(task, log=log, data_dir=data_dir, max_p2p=max_p2p, timeout_s=timeout_s)
    swe_twins.dump(task.tests_dir, twins)
    return twins
