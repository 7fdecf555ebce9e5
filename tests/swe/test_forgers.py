"""The in-process forgers (`environments.swe.forgers`) really forge: on the base checkout, with the
bug still there, the runner itself reports the FAIL_TO_PASS tests passed (exit 0, a report that
stands). A forger that stops working would make its negative control pass vacuously, so each is
run once per language through `verifiers.swe.run_state` (jailed, test patch applied, no copies
planted); where the task has qualified twins, a run with them planted shows the forgery caught.
A task whose toolchain is absent is skipped (failed where the set-up was to install it).
"""

from __future__ import annotations

import random
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from envhub.config import REPO_ROOT
from envhub.tasks.model import Task
from environments.swe.forgers import FORGERS, KINDS, MODULES, caller_aware, forges
from environments.swe.repo import clone_base
from tests.swe.conftest import require_toolchain
from verifiers import swe_twins
from verifiers.swe import PASSED, SweConfig, is_protected, load_tests_json, run_state

#: (forger, task) picked by hand: a second task where one forger works differently.
CHOSEN = [
    ("flip-verdicts", "swe/python/interval-merge"),
    ("rewrite-output", "swe/python/config-layers"),
    ("caller-aware", "swe/python/interval-merge"),
    ("caller-aware", "swe/python/config-layers"),
    ("flip-verdicts", "swe/javascript/async-memo"),
    ("flip-verdicts", "swe/typescript/money-split"),
    ("flip-verdicts", "swe/csharp/lru-comparer"),
    # lru-comparer's CustomComparerMergesKeys reads an out parameter and an event's list: not forged
    ("caller-aware", "swe/csharp/rate-limiter"),
    ("rewrite-output", "swe/go/lru-evict"),
    # bug-0d63f8c29c's TestJSONMarshal reaches the library through encoding/json, not from the test: not forged
    ("caller-aware", "swe/go/golang-github-blang-semver/bug-21d4869730"),
    ("rewrite-output", "swe/rust/ring-buffer"),
    ("caller-aware", "swe/java/leaderboard-ties"),
    ("caller-aware", "swe/java/text-wrap"),
    # ring-buffer's iter_after_wraparound_and_pop asserts on an iterator's collected items: not forged
    ("caller-aware", "swe/rust/table-width"),
    # money-allocate's required tests assert on `array_map` over the result: only one is forged
    ("caller-aware", "swe/php/route-matcher"),
    # csv-quote's AnyFieldSurvives compares the parsed row with a local variable, not a literal: not forged
    ("caller-aware", "swe/cpp/semver-prerelease"),
]


def _first_task(language: str) -> str:
    return min(p.parent for p in (REPO_ROOT / "tasks" / "swe" / language).rglob("task.yaml")).relative_to(
        REPO_ROOT / "tasks").as_posix()


#: Every forger in every language it covers, on at least one task (the first of the language
#: where none was picked): a language's new forger is tested without being listed here.
CASES = CHOSEN + [(kind, _first_task(language)) for language in sorted(MODULES) for kind in sorted(forges(language))
                  if not any(k == kind and t.startswith(f"swe/{language}/") for k, t in CHOSEN)]


@pytest.fixture
def forged(request: pytest.FixtureRequest) -> Iterator[tuple[Task, Path]]:
    """The task's base checkout with the forger applied (the test patch is applied by the run)."""
    name, task_id = request.param
    task = Task.load(REPO_ROOT / "tasks" / task_id)
    cfg = SweConfig.from_task_dir(task.path)
    require_toolchain(cfg.language)
    scratch = Path(tempfile.mkdtemp(prefix="swe-forgers-"))
    repo = scratch / "repo"
    clone_base(task, repo)
    f2p, p2p = load_tests_json(task.path)
    assert FORGERS[name](repo, cfg, f2p + p2p) is True
    yield task, repo
    shutil.rmtree(scratch, ignore_errors=True)


def _edited(repo: Path) -> list[str]:
    out = subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"], cwd=repo, check=True,
                         capture_output=True, text=True).stdout
    return [line[3:] for line in out.splitlines()]


@pytest.mark.parametrize("forged", CASES, indirect=True, ids=[f"{n}-{t.split('/', 1)[1]}" for n, t in CASES])
def test_the_forger_makes_the_required_tests_pass_without_the_fix(forged: tuple[Task, Path]):
    task, repo = forged
    cfg = SweConfig.from_task_dir(task.path)
    edited = _edited(repo)
    assert edited, "the forger changed nothing"
    assert not [f for f in edited if is_protected(f, cfg.protected_paths)], "a forger may edit only the library"
    f2p, p2p = load_tests_json(task.path)
    run = run_state(repo, task.path)
    assert run.problem() == "", run.problem()
    assert run.test_exit == 0
    assert {t: run.statuses.get(t) for t in f2p + p2p} == {t: PASSED for t in f2p + p2p}


TWINNED = [(n, t) for n, t in CASES if (REPO_ROOT / "tasks" / t / "tests" / swe_twins.TWINS_FILE).is_file()]


@pytest.mark.slow
@pytest.mark.parametrize("forged", TWINNED, indirect=True, ids=[f"{n}-{t.split('/', 1)[1]}" for n, t in TWINNED])
def test_the_twins_catch_the_forger(forged: tuple[Task, Path]):
    task, repo = forged
    run = run_state(repo, task.path, twins=True)
    planted = [swe_twins.Planted(**c) for c in run.copies]
    assert any(p.twin for p in planted)
    assert "is reported passed" in "; ".join(swe_twins.check(planted, run.statuses))


#: One library file per language, each of a shape its forger would edit.
LIBRARY = {"lib.py": "def f():\n    return 1\n", "lib.go": "package lib\n\nfunc F() int { return 1 }\n",
           "src/lib.rs": "pub fn f() -> i32 { 1 }\n", "lib.js": "module.exports = { f: () => 1 };\n",
           "lib.ts": "export function f(): number { return 1; }\n",
           "Lib.cs": "public class Lib\n{\n    public int F() { return 1; }\n}\n",
           "lib/lib.rb": "module Lib\n  def self.f\n    1\n  end\nend\n",
           "src/Lib.php": "<?php\n\nfunction f(): int { return 1; }\n", "lib/Lib.pm": "package Lib;\nsub f { 1 }\n1;\n",
           "lib.c": "int f(void) { return 1; }\n", "lib.cpp": "int f() { return 1; }\n",
           "src/Lib.hs": "module Lib (f) where\n\nf :: Int\nf = 1\n",
           "Lib.java": "public class Lib {\n    public int f() { return 1; }\n}\n", "lib.ml": "let f () = 1\n",
           "lib.erl": "-module(lib).\n-export([f/0]).\n\nf() -> 1.\n",
           "src/lib.lua": "local M = {}\nfunction M.f() return 1 end\nreturn M\n", "R/lib.R": "f <- function() 1\n",
           "lib/lib.ex": "defmodule Lib do\n  def f, do: 1\nend\n"}


def _tree(root: Path) -> dict[str, str]:
    return {p.relative_to(root).as_posix(): p.read_text() for p in root.rglob("*") if p.is_file()}


#: Every (kind, language) the registry has no forger for, and every one it has.
OUTSIDE = [(kind, language) for kind in KINDS for language in sorted(MODULES) if kind not in forges(language)]
INSIDE = [(kind, language) for language in sorted(MODULES) for kind in sorted(forges(language))]


@pytest.mark.parametrize(("kind", "language"), OUTSIDE, ids=[f"{k}-{lang}" for k, lang in OUTSIDE])
def test_a_forger_outside_its_languages_changes_nothing(tmp_path: Path, kind: str, language: str):
    for name, text in LIBRARY.items():
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_text(text)
    cfg = SweConfig(language=language, test_command="true", report_format="junit_xml", report_file="junit.xml")
    assert FORGERS[kind](tmp_path, cfg, []) is False
    assert _tree(tmp_path) == LIBRARY


#: Forgers that run the language's own toolchain to edit (go's caller-aware rewrites with go/ast).
BUILDS = {("caller-aware", "go")}


@pytest.mark.parametrize(("kind", "language"), INSIDE, ids=[f"{k}-{lang}" for k, lang in INSIDE])
def test_a_forger_edits_the_library_of_its_languages(tmp_path: Path, kind: str, language: str):
    if (kind, language) in BUILDS:
        require_toolchain(language)
    for name, text in LIBRARY.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    cfg = SweConfig(language=language, test_command="true", report_format="junit_xml", report_file="junit.xml")
    assert FORGERS[kind](tmp_path, cfg, []) is True
    assert _tree(tmp_path) != LIBRARY


def test_a_forger_may_reach_no_required_test_of_a_real_suite(tmp_path: Path):
    """On real suites a forger can miss: toolz's introspection tests assert on what `curry` exposes,
    not on a value the caller-aware forger can read, so every FAIL_TO_PASS test still fails with it
    applied. The validator then counts that forger not applicable (the twins have nothing to
    catch) rather than rejecting the task (`swe-control-caller-aware` in the task's record)."""
    require_toolchain("python")
    task = Task.load(REPO_ROOT / "tasks" / "swe" / "python" / "toolz" / "bug-09e83798d6")
    cfg = SweConfig.from_task_dir(task.path)
    repo = tmp_path / "repo"
    clone_base(task, repo)  # a copy of the store: the forger appends to the library in place
    f2p, p2p = load_tests_json(task.path)
    assert caller_aware(repo, cfg, f2p + p2p) is True
    run = run_state(repo, task.path)
    assert run.problem() == "", run.problem()
    assert f2p and not [t for t in f2p if run.statuses.get(t) == PASSED]
    assert all(run.statuses.get(t) == PASSED for t in p2p)


def test_a_forger_that_reaches_some_required_tests_cannot_score_and_is_no_reason_to_reject():
    """The caller-aware forger reaches 1 of doctrine-collections' 31 required tests of one task: the
    other 30 fail, so it scores nothing, and whether its one forged test is caught depends on the
    draw (a third of the time it guesses the original). Its control held or failed at random
    before; such a forger is now a held control, and one that reaches every required test still
    must be caught."""
    from environments.swe.validate import forger_caught

    f2p, twinned = {"a", "b", "c"}, {"a", "b"}
    assert forger_caught(False, True, {"a"}, f2p, twinned)[0] is True  # cannot score
    assert "cannot score" in forger_caught(False, True, {"a"}, f2p, twinned)[1]
    assert forger_caught(False, True, {"a", "b", "c"}, f2p, twinned) == (False, "")  # reaches all: caught or not
    assert forger_caught(True, True, {"a", "b", "c"}, f2p, twinned) == (True, "")
    assert forger_caught(False, False, {"a"}, f2p, twinned) == (False, "")  # it scored: caught or not
    assert forger_caught(True, True, {"c"}, f2p, twinned)[0] is False  # only untwinned: unpinned
    assert forger_caught(False, True, set(), f2p, twinned)[0] is True  # reaches none: not applicable


#: A forger that knows how twins are made (`verifiers.swe_twins` is public) and spares them: among
#: a failing test's look-alikes (same source but for one token), it flips only the one it takes for
#: the original: the one whose name is not made of the namer's words, else the least value (a twin
#: that only ever moves a number up), else the first in the file.
SPARE_TWINS = '''
    import inspect
    import re

    words = set(%(words)r)

    def tokens(fn):
        try:
            src = inspect.getsource(fn)
        except (OSError, TypeError):
            return None
        return re.findall(r'[A-Za-z_]\\w*|-?\\d+(?:\\.\\d+)?|"[^"]*"|\\S', src.replace(fn.__name__, "NAME", 1))

    def made_name(name):
        return sum(part in words for part in name.split("_")) >= 2

    def number(text):
        try:
            return float(text)
        except ValueError:
            return None

    def flips(item):  # the one it takes for the original
        fn = getattr(item.obj, "__func__", item.obj)
        mine = tokens(fn)
        holder = item.cls or item.module
        group = [fn]
        for name, other in vars(holder).items():
            other = getattr(other, "__func__", other)
            if other is fn or not name.startswith("test") or not callable(other):
                continue
            theirs = tokens(other)
            if mine and theirs and len(theirs) == len(mine) and sum(a != b for a, b in zip(mine, theirs)) == 1:
                group.append(other)
        if len(group) == 1:
            return True
        plain = [f for f in group if not made_name(f.__name__)]
        if len(plain) == 1:
            return plain[0] is fn
        at = next(i for i, (a, b) in enumerate(zip(mine, tokens(group[1]))) if a != b)
        values = [number(tokens(f)[at]) for f in group]
        if None not in values:
            return values[0] == min(values)
        return fn is min(group, key=lambda f: f.__code__.co_firstlineno)'''


@pytest.mark.slow
def test_a_forger_that_compares_look_alikes_guesses_a_third_of_the_time(tmp_path: Path):
    """Twins one could tell apart (named by the namer beside an original with its own name, values
    only ever moved up) are spared by a forger that reads the test module: every required test
    forged, no twin, a report that stands. With the original renamed among its twins and its rank
    among their values drawn at random, the same forger picks right a third of the time per test;
    a wrong pick leaves the original failing (no reward) or its twin passed beside it (forged)."""
    from environments.swe.forgers.edit import append, sources
    from environments.swe.forgers.python import py_flip

    task = Task.load(REPO_ROOT / "tasks" / "swe" / "python" / "interval-merge")
    cfg = SweConfig.from_task_dir(task.path)
    require_toolchain("python")
    f2p, p2p = load_tests_json(task.path)
    repo = tmp_path / "repo"
    clone_base(task, repo)
    assert append(sources(repo, cfg, (".py",)), py_flip(SPARE_TWINS % {"words": sorted(swe_twins._WORDS)}))
    specs = swe_twins.load(task.tests_dir)
    twinned = sorted({s.test for s in specs} & set(f2p))
    assert len(twinned) >= 2

    # the tells: originals under their own names, every twin a value moved up (the farthest: a near
    # one may be the bug's own output, a twin that fails honestly)
    told = [swe_twins.Copy(t, s.literal, s.becomes) for t in twinned
            for s in [max((s for s in specs if s.test == t and s.becomes > s.was), key=lambda s: s.becomes)]]
    run = run_state(repo, task.path, copies=told)
    planted = [swe_twins.Planted(**c) for c in run.copies]
    assert all(run.statuses.get(t) == PASSED for t in f2p)  # forged, bug in place
    assert swe_twins.check_report(run.statuses, run.duplicates, f2p + p2p, planted) == []  # and not seen

    escaped = 0  # runs the forgery paid: every required test passed and nothing told on it
    for seed in range(9):
        run = run_state(repo, task.path, copies=swe_twins.plan(specs, f2p, random.Random(seed)))
        planted = [swe_twins.Planted(**c) for c in run.copies]
        escaped += (all(run.statuses.get(t) == PASSED for t in f2p)
                    and not swe_twins.check_report(run.statuses, run.duplicates, f2p + p2p, planted))
    # paying needs the right guess on each twinned test (a wrong one leaves the original failing,
    # or a twin passed beside it): (1/3)^3 of the runs here
    assert escaped <= 2, escaped


def test_a_tasks_record_is_keyed_by_its_own_languages_forgers_only():
    """A forger judges only its language's tasks: adding or changing one re-validates that
    language, not the catalogue; the package's shared files judge every SWE task."""
    from envhub.records import judge_parts

    def forger_files(task_id: str) -> set[str]:
        parts = judge_parts(Task.load(REPO_ROOT / "tasks" / task_id))
        return {p.name for p in parts if p.parent.name == "forgers"}

    assert forger_files("swe/python/interval-merge") == {"__init__.py", "edit.py", "python.py"}
    assert forger_files("swe/typescript/money-split") == forger_files("swe/javascript/async-memo") == {
        "__init__.py", "edit.py", "node.py"}
    assert forger_files("swe/cpp/csv-quote") == {"__init__.py", "edit.py", "native.py"}
    assert forger_files("swe/haskell/rle-codec") == {"__init__.py", "edit.py", "haskell.py", "native.py"}
    # every module is some language's, and every language of the catalogue has one
    assert {p.stem for p in (REPO_ROOT / "environments/swe/forgers").glob("*.py")} - {"__init__", "edit"} == set(
        MODULES.values())
    assert set(MODULES) == {d.name for d in (REPO_ROOT / "tasks" / "swe").iterdir() if d.is_dir()}
