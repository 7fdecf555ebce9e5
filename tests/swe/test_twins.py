"""Twins (`verifiers.swe_twins`): copies of the required tests planted at verify time, and the
report rules they bring; qualification (`environments.swe.twins`) on a real task."""

from __future__ import annotations

import datetime
import json
import random
import re
import textwrap
from pathlib import Path

import pytest

from envhub.tasks.model import Task
from environments.swe.repo import clone_base
from tests.swe.conftest import FACTORY, HAND_WRITTEN, SWE_TASKS
from verifiers import swe_twins
from verifiers.swe_reports import FAILED, PASSED, Statuses

#: language -> (test file, its text, a test's report id, the body's assertion line)
SOURCES = {
    "python": ("tests/test_x.py", "from x import f\n\n\ndef test_one():\n    assert f(1) == 2\n\n\n"
               "def test_two():\n    assert f(2) == 3\n", "tests.test_x#test_one", "assert f("),
    "javascript": ("test/x.test.js", "const test = require('node:test');\nconst assert = require('node:assert');\n\n"
                   "test('adds one', () => {\n  assert.strictEqual(f(1), 2);\n});\n\ntest('adds two', () => {\n"
                   "  assert.strictEqual(f(2), 3);\n});\n", "test#adds one", "assert.strictEqual(f("),
    "go": ("x/x_test.go", "package x\n\nimport \"testing\"\n\nfunc TestOne(t *testing.T) {\n\tif F(1) != 2 {\n"
           "\t\tt.Fatal(\"no\")\n\t}\n}\n\nfunc TestTwo(t *testing.T) {\n\tif F(2) != 3 {\n"
           "\t\tt.Fatal(\"no\")\n\t}\n}\n",
           "example.com/x/x/TestOne", "if F("),
    "rust": ("tests/x.rs", "use x::f;\n\n#[test]\nfn one() {\n    assert_eq!(f(1), 2);\n}\n\n#[test]\nfn two() {\n"
             "    assert_eq!(f(2), 3);\n}\n", "one", "assert_eq!(f("),
    "ruby": ("spec/x_spec.rb", "RSpec.describe X do\n  it \"adds one\" do\n    expect(X.f(1)).to eq(2)\n  end\n\n"
             "  it \"adds two\" do\n    expect(X.f(2)).to eq(3)\n  end\nend\n", "./spec/x_spec.rb::X adds one",
             "expect(X.f("),
    "lua": ("spec/x_spec.lua", "describe(\"x\", function()\n  it(\"adds one\", function()\n"
            "    assert.are.equal(2, x.f(1)) -- one\n  end)\n\n  it(\"adds two\", function()\n"
            "    assert.are.equal(3, x.f(2))\n  end)\nend)\n", "spec/x_spec.lua:2#x adds one", "x.f("),
    "csharp": ("tests/XTests.cs", "namespace X.Tests\n{\n    public class XTests\n    {\n        [Test]\n"
               "        public void One()\n        {\n            Assert.AreEqual(2, X.F(1));\n        }\n\n"
               "        [Test]\n        public void Two()\n        {\n            Assert.AreEqual(3, X.F(2));\n"
               "        }\n    }\n}\n", "X.Tests.XTests.One", "X.F("),
    "elixir": ("test/x_test.exs", "defmodule XTest do\n  use ExUnit.Case\n\n  test \"adds one\" do\n"
               "    assert X.f(1) == 2\n  end\n\n  test \"adds two\" do\n    assert X.f(2) == 3\n  end\nend\n",
               "XTest#adds one", "X.f("),
    "erlang": ("test/x_tests.erl", "-module(x_tests).\n-include_lib(\"eunit/include/eunit.hrl\").\n\none_test() ->\n"
               "    ?assertEqual(2, x:f(1)).\n\ntwo_test() ->\n    ?assertEqual(3, x:f(2)).\n",
               "x_tests:0 one_test", "x:f("),
    "haskell": ("test/Main.hs", "tests =\n  testGroup\n    \"X\"\n    [ testCase \"adds one\" $ f 1 @?= 2\n"
                "    , testCase \"adds two\" $ f 2 @?= 3\n    ]\n", "X#adds one", "@?="),
    "ocaml": ("test/test.ml", "let tests = [\n  \"adds one\" >:: (fun _ ->\n    assert_equal 2 (f 1));\n"
              "  \"adds two\" >:: (fun _ ->\n    assert_equal 3 (f 2));\n]\n", "x:0:adds one#x:0:adds one",
              "assert_equal"),
    "r": ("tests/testthat/test-x.R", "test_that(\"adds one\", {\n  expect_equal(f(1), 2)\n})\n\n"
          "test_that(\"adds two\", {\n  expect_equal(f(2), 3)\n})\n", "x#adds_one", "expect_equal(f("),
    "perl": ("t/x.t", "use Test::More;\nmy $x = X->new;\nis($x->f(1), 2, 'adds one');\nis($x->f(2), 3, 'adds two');\n"
             "done_testing;\n", "t/x.t::adds one", "is($x->f("),
    "c": ("tests/test_x.c", "static int t_one(void) { return f(1) != 2; }\n"
          "static int t_two(void) { return f(2) != 3; }\n"
          "static const struct test TESTS[] = { {\"one\", t_one}, {\"two\", t_two} };\n", "one#one", "return f("),
}


def _repo(tmp_path: Path, language: str) -> tuple[Path, str]:
    rel, text, _, _ = SOURCES[language]
    (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / rel).write_text(text)
    if language == "c":
        cmake = "foreach(name one two)\n  add_test(NAME ${name})\nendforeach()\n"
        (tmp_path / "tests" / "cases.cmake").write_text(cmake)
    return tmp_path, rel


@pytest.mark.parametrize("language", sorted(SOURCES))
def test_a_twin_and_a_copy_sit_beside_their_original(language: str, tmp_path: Path):
    """One literal of the assertion changes in the twin, nothing but the name in the copy, and
    every other test keeps its source (and, where ids count lines or positions, its place)."""
    repo, rel = _repo(tmp_path, language)
    before = (repo / rel).read_text()
    test_id, marker = SOURCES[language][2], SOURCES[language][3]
    found = swe_twins.find(repo, language, test_id)
    assert found is not None, f"{test_id} not found"
    block, _ = found
    body = before[block.start:block.end]
    assert marker in body and "two" not in body.lower().replace(block.name.lower(), "")
    cands = swe_twins.candidates(body, (block.name_start - block.start, block.name_end - block.start),
                                 swe_twins.STYLES[language], swe_twins.seed_of(body))
    assert cands, body
    changed = cands[0]
    becomes = changed.alternatives[0]
    planted = swe_twins.plant(repo, language, [swe_twins.Copy(test_id, 0, becomes), swe_twins.Copy(test_id)],
                              random.Random(3))
    assert [p.twin for p in sorted(planted, key=lambda p: p.twin)] == [False, True]
    after = (repo / rel).read_text()
    twin, copy = (next(p for p in planted if p.twin is t) for t in (True, False))
    for p in planted:
        assert p.name in after.replace("t_" + p.name, p.name) and p.name not in before
    assert after.count(marker) == before.count(marker) + 2
    if language == "ocaml":  # ids count positions: the others keep theirs
        assert after.splitlines()[:2] == before.splitlines()[:2]
    if language == "lua":  # ids carry line numbers: no line moves, copies share the original's lines
        assert len(after.splitlines()) == len(before.splitlines())
        assert [i for i, line in enumerate(after.splitlines()) if "adds two" in line] == \
            [i for i, line in enumerate(before.splitlines()) if "adds two" in line]
    assert after.count(becomes) > before.count(becomes)
    assert copy.name != twin.name


def test_copies_are_registered_where_ctest_lists_their_original(tmp_path: Path):
    repo, rel = _repo(tmp_path, "c")
    planted = swe_twins.plant(repo, "c", [swe_twins.Copy("one#one"), swe_twins.Copy("one#one", original=True)],
                              random.Random(1))
    copy, renamed = (next(p for p in planted if p.renamed is r) for r in (False, True))
    text = (repo / rel).read_text()
    assert f'{{"{copy.name}", t_{copy.name}}}' in text and f'{{"{renamed.name}", t_{renamed.name}}}' in text
    assert '{"one", t_one}' not in text and "t_one(" not in text  # the original runs under its new name
    listed = re.search(r"foreach\(name ([^)]*)\)", (repo / "tests" / "cases.cmake").read_text()).group(1).split()
    assert sorted(listed) == sorted([copy.name, renamed.name, "two"]) and listed[-1] == "two"


def test_fresh_names_differ_per_run(tmp_path: Path):
    names = []
    for seed in (1, 2):
        repo, _ = _repo(tmp_path / str(seed), "python")
        names += [p.name for p in swe_twins.plant(repo, "python", [swe_twins.Copy("tests.test_x#test_one", 0, "3")],
                                                   random.Random(seed))]
    assert len(set(names)) == 2 and all(n.startswith("test_") for n in names)


def _planted() -> list[swe_twins.Planted]:
    return [swe_twins.Planted("t_a", "orig", True, "m#t_a"), swe_twins.Planted("t_b", "orig", False, "m#t_b")]


def test_a_twin_reported_passed_is_forgery():
    ok = Statuses({"orig": PASSED, "m#t_a": FAILED, "m#t_b": PASSED})
    assert swe_twins.check(_planted(), ok) == []
    flipped = Statuses({"orig": PASSED, "m#t_a": PASSED, "m#t_b": PASSED})
    assert any("twin" in p and "passed" in p for p in swe_twins.check(_planted(), flipped))


def test_a_copy_that_ends_otherwise_than_its_original_is_forgery():
    by_id = Statuses({"orig": PASSED, "m#t_a": FAILED, "m#t_b": FAILED})  # only the original's id was flipped
    assert any("exact copy" in p for p in swe_twins.check(_planted(), by_id))


def test_a_copy_missing_from_the_report_is_forgery():
    planted = _planted()
    swe_twins.resolve(planted, Statuses({"orig": PASSED, "m#t_b": PASSED}))
    assert any("missing" in p for p in swe_twins.check(planted, Statuses({"orig": PASSED, "m#t_b": PASSED})))


def test_the_plan_twins_every_required_test_that_has_twins_and_copies_one_other():
    twins = [swe_twins.TwinSpec("f1", 0, "5", v) for v in ("3", "4", "6", "7")] + [
        swe_twins.TwinSpec("f1", 1, "3", "4"), swe_twins.TwinSpec("p1", 0, "1", "2"),
        swe_twins.TwinSpec("p2", 0, "1", "2"), swe_twins.TwinSpec("p3", 0, "1", "2")]
    plan = swe_twins.plan(twins, ["f1"], random.Random(5))
    assert sum(1 for c in plan if c.test == "f1" and c.literal is not None) == 2
    assert len({c.literal for c in plan if c.test == "f1" and c.literal is not None}) == 1  # one literal
    assert [c for c in plan if c.original] == [swe_twins.Copy("f1", original=True)]
    assert sum(1 for c in plan if c.test != "f1" and c.literal is not None) == 2
    assert sum(1 for c in plan if c.literal is None and not c.original) == 1



def test_of_many_cases_of_one_definition_a_few_drawn_get_twins_and_all_are_renamed():
    """Each copy of a parametrised definition runs all its cases: twins for each of 10 required
    cases would run the suite 20 more times. Three drawn get twins; all ten are renamed (their
    definition is, once), so which were drawn cannot be told."""
    cases = [f"m#t[{i}]" for i in range(10)]
    twins = [swe_twins.TwinSpec(c, 0, "5", v) for c in cases for v in ("4", "6")] + [
        swe_twins.TwinSpec("m#u", 0, "5", "6")]
    drawn = set()
    for seed in range(20):
        plan = swe_twins.plan(twins, [*cases, "m#u"], random.Random(seed))
        twinned = {c.test for c in plan if c.literal is not None}
        assert len(twinned) == 4 and "m#u" in twinned  # three cases of t, and u, which is alone
        assert sorted(c.test for c in plan if c.original) == sorted([*cases, "m#u"])
        drawn |= twinned
    assert drawn == {*cases, "m#u"}  # the draw reaches every case

#: Every hand-written task and a day-seeded sample of the factory's (each plants in well under a second).
_FACTORY_SAMPLE = sorted(random.Random(datetime.date.today().isoformat()).sample(FACTORY, min(12, len(FACTORY))))


@pytest.mark.parametrize("task_dir", HAND_WRITTEN + _FACTORY_SAMPLE,
                         ids=lambda p: p.relative_to(SWE_TASKS).as_posix())
def test_every_task_has_twins_that_plant(task_dir: Path, tmp_path: Path):
    """Each shipped task's recorded twins plant into its test files (at least two, as validation
    demands), with fresh names every run."""
    from verifiers.swe import SweConfig, apply_patch, restore_protected

    task = Task.load(task_dir)
    cfg = SweConfig.from_task_dir(task_dir)
    twins = swe_twins.load(task.tests_dir)
    assert len(twins) >= 2, "run `envhub swe twins` for this task"
    seen = []
    for seed in (1, 2):
        repo = tmp_path / f"r{seed}"
        clone_base(task, repo)  # a copy of the store: planting writes the test files in place
        # as grading does: a factory task's checkout lacks its FAIL_TO_PASS tests
        restore_protected(repo, cfg.protected_paths, task.tests_dir / "protected.tar")
        if (task_dir / "tests" / "test.patch").is_file():  # a factory task's tests are the package's own
            apply_patch(repo, task_dir / "tests" / "test.patch")
        copies = [swe_twins.Copy(t.test, t.literal, t.becomes) for t in twins]
        planted = swe_twins.plant(repo, cfg.language, copies, random.Random(seed))
        assert len(planted) == len(copies)
        seen.append({p.name for p in planted})
    assert len(seen[0] & seen[1]) <= len(seen[0]) // 4  # drawn anew each run (a few may meet by chance)


def test_gold_passes_and_a_flipped_report_is_caught(python_task: Task, base_checkout: Path):
    """A real graded run of the gold fix with its twins: clean. The same run with every failure
    reported passed (what a verdict-flipping forger achieves): forged."""
    from verifiers.swe import apply_patch, run_state

    apply_patch(base_checkout, python_task.solution_dir / "gold.patch")
    run = run_state(base_checkout, python_task.path, twins=True)
    planted = [swe_twins.Planted(**c) for c in run.copies]
    f2p = json.loads((python_task.tests_dir / "tests.json").read_text())["FAIL_TO_PASS"]
    assert {p.original for p in planted if p.twin} >= set(f2p)
    assert swe_twins.check(planted, run.statuses) == []
    flipped = Statuses({t: PASSED for t in run.statuses})
    assert swe_twins.check(planted, flipped)


def test_every_language_has_a_style():
    assert sorted(swe_twins.STYLES) == sorted(d.name for d in SWE_TASKS.iterdir() if d.is_dir())


def test_hide_deletes_the_required_tests_and_nothing_else(tmp_path: Path):
    """A factory task's checkout loses the definitions of its FAIL_TO_PASS tests (pytest's
    parametrised cases, a mixin's method, Go's subtests and examples), keeps every other test
    and still parses; a file is written anew, never through a hard link into a shared tree."""
    import ast
    import os

    tests = tmp_path / "py" / "tests"
    tests.mkdir(parents=True)
    (tests / "test_a.py").write_text(textwrap.dedent('''\
        import pytest


        class TestOnly:
            def test_alone(self):
                assert 1 == 1


        @pytest.mark.parametrize("x", [1, 2])
        def test_cases(x):
            assert x > 0


        def test_kept():
            assert True
        '''))
    (tests / "__init__.py").write_text("class Mixin:\n    def test_mixed(self):\n        assert 2 == 2\n\n"
                                       "    def test_other(self):\n        assert 3 == 3\n")
    shared = tmp_path / "shared.py"
    os.link(tests / "test_a.py", shared)
    unseen = swe_twins.hide(tmp_path / "py", "python",
                            ["tests.test_a.TestOnly#test_alone", "tests.test_a#test_cases[2]",
                             "tests.test_x.TestX#test_mixed", "tests.test_a#test_nowhere"],
                            lambda rel: rel.startswith("tests/"))
    assert unseen == ["tests.test_a#test_nowhere"]
    text = (tests / "test_a.py").read_text()
    ast.parse(text)  # the class left empty keeps a `pass`
    assert "test_alone" not in text and "test_cases" not in text and "parametrize" not in text
    assert "def test_kept" in text
    init = (tests / "__init__.py").read_text()
    assert "test_mixed" not in init and "def test_other" in init
    assert "test_alone" in shared.read_text()  # the other link still holds the original

    go = tmp_path / "go"
    go.mkdir()
    (go / "x_test.go").write_text('package x\n\nimport (\n\t"strings"\n\t"testing"\n)\n\n'
                                  'func TestParse(t *testing.T) {\n\tt.Run("empty", func(t *testing.T) {})\n'
                                  '\t_ = strings.TrimSpace("")\n}\n\n'
                                  'func ExampleParse() {\n\t// Output: 1\n}\n\n'
                                  'func TestKept(t *testing.T) {}\n')
    assert swe_twins.hide(go, "go", ["example.com/x/TestParse/empty", "example.com/x/ExampleParse"]) == []
    text = (go / "x_test.go").read_text()
    assert "TestParse" not in text and "ExampleParse" not in text and "func TestKept" in text
    assert '"strings"' not in text and '"testing"' in text  # Go builds no file with an unused import


def test_a_factory_checkouts_cache_key_covers_the_tests_it_hides(tmp_path: Path):
    """The prepared checkout lacks the FAIL_TO_PASS tests: another list is another checkout."""
    import shutil

    from environments.swe.repo import cache_key

    task_dir = tmp_path / FACTORY[0].relative_to(SWE_TASKS.parent.parent)  # the id must match the folder
    shutil.copytree(FACTORY[0], task_dir, symlinks=True)
    before = cache_key(Task.load(task_dir))
    tests = json.loads((task_dir / "tests" / "tests.json").read_text())
    tests["FAIL_TO_PASS"] = tests["FAIL_TO_PASS"][:-1] or ["another#test"]
    (task_dir / "tests" / "tests.json").write_text(json.dumps(tests))
    assert cache_key(Task.load(task_dir)) != before


def test_the_original_is_at_a_fair_rank_among_its_twins():
    """Twins of a number lie on both sides of it: over many verifies the original is the least,
    the middle and the greatest of its three look-alikes about equally often, so no rule on the
    values (the least, the median, a majority) picks it more than a third of the time."""
    twins = [swe_twins.TwinSpec("f", 0, "10", v) for v in ("8", "9", "11", "12")]
    ranks = {0: 0, 1: 0, 2: 0}
    rng = random.Random(1)
    for _ in range(600):
        values = sorted(float(c.becomes) for c in swe_twins.plan(twins, ["f"], rng) if c.literal is not None)
        ranks[sum(v < 10 for v in values)] += 1
    assert all(150 <= n <= 250 for n in ranks.values()), ranks
    # a literal whose twins lie on one side only is used when it is all there is, and says so
    one_sided = [swe_twins.TwinSpec("f", 0, "10", v) for v in ("11", "12")]
    assert swe_twins.hides(one_sided) == 1 and swe_twins.hides(twins) == 3
    both = one_sided + [swe_twins.TwinSpec("f", 1, "true", "false")]
    assert {c.literal for c in swe_twins.plan(both, ["f"], rng) if c.literal is not None} == {1}


def test_a_number_has_alternatives_on_both_sides_and_a_string_changes_at_one_place():
    style = swe_twins.STYLES["python"]
    body = "def test_x():\n    assert f(0, 'abc') == 7\n    assert g(x-1) == -3\n"
    lits = {lit.text: lit.alternatives for lit in swe_twins.candidates(body, (4, 10), style, "s")}
    assert lits["7"] == ("5", "6", "8", "9")
    assert lits["0"] == ("-2", "-1", "1", "2")  # `f(0` may take a sign
    assert lits["1"] == ("0", "2", "3")  # `x-1` may not go below 0: `x--1` would be another expression
    assert lits["-3"] == ("-5", "-4", "-2", "-1")
    strings = lits["'abc'"]
    assert len(strings) == 4 and len({next(i for i, (a, b) in enumerate(zip(s, "'abc'", strict=True)) if a != b)
                                      for s in strings}) == 1


def test_the_original_is_renamed_and_its_outcome_read_under_its_id(tmp_path: Path):
    """With the original renamed too, names tell nothing: its report id is mapped back to the
    required test's, and a test the agent added under that id is dropped."""
    repo, rel = _repo(tmp_path, "python")
    planted = swe_twins.plant(repo, "python", [swe_twins.Copy("tests.test_x#test_one", 0, "3"),
                                                swe_twins.Copy("tests.test_x#test_one", original=True)],
                              random.Random(4))
    text = (repo / rel).read_text()
    renamed = next(p for p in planted if p.renamed)
    twin = next(p for p in planted if p.twin)
    assert "def test_one(" not in text and f"def {renamed.name}(" in text and "def test_two(" in text
    statuses = Statuses({f"tests.test_x#{renamed.name}": PASSED, f"tests.test_x#{twin.name}": FAILED,
                         "tests.test_x#test_two": PASSED, "tests.test_x#test_one": FAILED})
    swe_twins.resolve(planted, statuses)
    assert statuses["tests.test_x#test_one"] == PASSED and f"tests.test_x#{renamed.name}" not in statuses
    assert swe_twins.check(planted, statuses) == []
    gone = Statuses({f"tests.test_x#{twin.name}": FAILED, "tests.test_x#test_two": PASSED})
    planted = [swe_twins.Planted(p.name, p.original, p.twin, literal=p.literal, renamed=p.renamed,
                                   was=p.was) for p in planted]
    swe_twins.resolve(planted, gone)
    assert any("missing" in m for m in swe_twins.check(planted, gone))


def test_of_two_tests_of_one_name_the_one_in_the_file_the_id_names_is_copied(tmp_path: Path):
    """JUnit classes and pytest modules may each define a test of the same name: the copies and the
    renamed original must be those of the test the id names, or renaming the other file's test
    drops it from the report (an honest fix then reads as forged)."""
    for module, expected in (("test_a", 1), ("test_b", 2)):
        (tmp_path / "tests").mkdir(exist_ok=True)
        (tmp_path / "tests" / f"{module}.py").write_text(f"def test_same():\n    assert f() == {expected}\n")
    for module, expected in (("test_a", 1), ("test_b", 2)):
        block, text = swe_twins.find(tmp_path, "python", f"tests.{module}#test_same")
        assert block.file == f"tests/{module}.py" and f"== {expected}" in text[block.start:block.end]


def test_a_renamed_definition_that_several_tests_share_is_read_back_for_each(tmp_path: Path):
    """A mixin's test method is reported once per class that inherits it: renaming it renames them
    all, and each id goes back to the one it had (one missing would read as a forged report)."""
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_m.py").write_text(
        "class Mixin:\n    def test_shared(self):\n        assert self.f() == 3\n\n\n"
        "class TestA(Mixin):\n    pass\n\n\nclass TestB(Mixin):\n    pass\n")
    planted = swe_twins.plant(tmp_path, "python", [swe_twins.Copy("tests.test_m.TestA#test_shared", original=True)],
                              random.Random(2))
    renamed = next(p for p in planted if p.renamed)
    assert renamed.was == "test_shared" and f"def {renamed.name}(" in (tmp_path / "tests" / "test_m.py").read_text()
    statuses = Statuses({f"tests.test_m.TestA#{renamed.name}": PASSED, f"tests.test_m.TestB#{renamed.name}": FAILED})
    swe_twins.resolve(planted, statuses)
    assert dict(statuses) == {"tests.test_m.TestA#test_shared": PASSED, "tests.test_m.TestB#test_shared": FAILED}
    assert renamed.id == "tests.test_m.TestA#test_shared" and swe_twins.check(planted, statuses) == []


PARAMETRIZED = '''\
import pytest

from x import f


def test_i18n():
    assert f(3) == 4


@pytest.mark.parametrize(
    "n,expected",
    [
        (60, 61),
        (-60, -59),
    ],
)
def test_x(n, expected):
    assert f(n) - expected == 0


def test_kept():
    assert f(0) == 1
'''


def test_a_parametrized_definition_is_found_by_its_cases_and_planted_once(tmp_path: Path):
    """`tests.test_i18n#test_x[60-61]` names test_x, not the module's namesake test_i18n; its
    decorator spans lines and belongs to it (a copy placed under it would take its parameters); two
    required cases of it are planted together, one rename for both, and each copy is read back by
    its original's parameters under its fresh name, in a real pytest run."""
    import subprocess
    import sys

    from verifiers.swe_reports import parse_file

    (tmp_path / "tests").mkdir()
    (tmp_path / "x.py").write_text("def f(n):\n    return n + 1\n")
    (tmp_path / "tests" / "test_i18n.py").write_text(PARAMETRIZED)
    first, second = "tests.test_i18n#test_x[60-61]", "tests.test_i18n#test_x[-60--59]"
    block, text = swe_twins.find(tmp_path, "python", first)
    assert block.name == "test_x" and text[block.start:].startswith("@pytest.mark.parametrize(\n")
    cands = swe_twins.candidates(text[block.start:block.end], (block.name_start - block.start,
                                 block.name_end - block.start), swe_twins.STYLES["python"], "s")
    at = next(i for i, lit in enumerate(cands) if lit.text == "0")
    planted = swe_twins.plant(tmp_path, "python", [
        swe_twins.Copy(first, at, cands[at].alternatives[0]), swe_twins.Copy(first, original=True),
        swe_twins.Copy(second, original=True), swe_twins.Copy(second)], random.Random(3))
    text = (tmp_path / "tests" / "test_i18n.py").read_text()
    renamed = [p for p in planted if p.renamed]
    assert len(renamed) == 2 and len({p.name for p in renamed}) == 1 and "def test_x(" not in text
    assert text.count("@pytest.mark.parametrize(") == 3  # the original and its two copies, each its own
    report = tmp_path / "junit.xml"
    subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--junitxml={report}", "tests"],
                   cwd=tmp_path, capture_output=True, check=False)
    statuses = parse_file("junit_xml", report)
    swe_twins.resolve(planted, statuses)
    assert statuses[first] == statuses[second] == statuses["tests.test_i18n#test_i18n"] == PASSED
    twin = next(p for p in planted if p.twin)
    copy = next(p for p in planted if not p.twin and not p.renamed)
    assert twin.id.endswith("[60-61]") and statuses[twin.id] == FAILED
    assert copy.id.endswith("[-60--59]") and statuses[copy.id] == PASSED
    assert {p.id for p in renamed} == {first, second} and swe_twins.check(planted, statuses) == []


def test_a_renamed_original_reported_under_one_id_is_read_back_whatever_the_reporter_made_of_its_name():
    """testthat writes `date-time parses` as `date_time_parses`: substituting the old name into the
    renamed test's id cannot rebuild that, so a single id of the renamed test is the original's."""
    planted = [swe_twins.Planted("both edge adds", "frame#date_time_parses", twin=False, renamed=True,
                                 was="date-time parses")]
    statuses = Statuses({"frame#both_edge_adds": PASSED, "frame#other": PASSED})
    swe_twins.resolve(planted, statuses)
    assert dict(statuses) == {"frame#date_time_parses": PASSED, "frame#other": PASSED}
    assert planted[0].id == "frame#date_time_parses" and swe_twins.check(planted, statuses) == []


def test_hide_takes_a_decorator_that_spans_lines_with_its_test(tmp_path: Path):
    """A parametrize decorator over several lines left behind would hand the hidden test's cases
    (its expected values) to the agent and decorate the next test in the file."""
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_i18n.py").write_text(PARAMETRIZED)
    assert swe_twins.hide(tmp_path, "python", ["tests.test_i18n#test_x[60-61]"]) == []
    text = (tmp_path / "tests" / "test_i18n.py").read_text()
    assert "parametrize" not in text and "61" not in text and "test_x" not in text
    assert "def test_i18n(" in text and "def test_kept(" in text


def test_busted_look_alikes_share_one_shape_and_no_line_moves(tmp_path: Path):
    """busted's ids carry line numbers, so copies go on the original's line; the original goes
    there too, on one line like them (left over several lines, it was the one look-alike a forger
    reading the spec could tell), and the lines it spanned stay, empty, so no later id moves."""
    spec = tmp_path / "spec" / "x_spec.lua"
    spec.parent.mkdir()
    spec.write_text('describe("x", function()\n  it("adds one", function()\n    local y = x.f(1)\n'
                    '    assert.are.equal(2, y) -- two\n  end)\n\n  it("adds two", function()\n'
                    '    assert.are.equal(3, x.f(2))\n  end)\nend)\n')
    test = "spec/x_spec.lua:2#x adds one"
    lits = swe_twins.candidates(*(lambda b, t: (t[b.start:b.end], (b.name_start - b.start, b.name_end - b.start)))(
        *swe_twins.find(tmp_path, "lua", test)), swe_twins.STYLES["lua"], "s")
    at = next(i for i, lit in enumerate(lits) if lit.text == "2")
    planted = swe_twins.plant(tmp_path, "lua", [swe_twins.Copy(test, at, lits[at].alternatives[0]),
                                                 swe_twins.Copy(test, at, lits[at].alternatives[-1]),
                                                 swe_twins.Copy(test, original=True)], random.Random(5))
    lines = spec.read_text().split("\n")
    assert len(lines) == 11 and lines[6] == '  it("adds two", function()'  # same lines, same ids
    assert lines[2:5] == ["", "", ""]  # what the original spanned, empty
    group = lines[1]
    assert all(f'it("{p.name}", function()' in group for p in planted) and "-- two" not in group
    assert group.count("end)") == 3  # three look-alikes, each whole, on one line


def test_a_python_signature_over_several_lines_is_the_header_not_the_end():
    """`def test_x(\n    a, b\n):` ends its signature at column 0: the body after it is the test's
    too (cut there, a copy was a def with no body and broke the module)."""
    text = "def test_x(\n    a, b\n):\n    assert a == b\n\n\ndef test_y():\n    assert 1 == 1\n"
    spans = {b.name: text[b.start:b.end] for b in swe_twins.blocks(text, "t.py", swe_twins.STYLES["python"])}
    assert spans == {"test_x": "def test_x(\n    a, b\n):\n    assert a == b\n",
                     "test_y": "def test_y():\n    assert 1 == 1\n"}


def test_a_case_of_a_parametrized_test_is_twinned_by_its_own_values(tmp_path: Path):
    """A parametrised test whose body only compares with its parameters has no literal of its own:
    its twins change a value of its case (after the body's literals, so no recorded index moves),
    and the twin's id is its case's with that value changed, as pytest names it."""
    import subprocess
    import sys

    from verifiers.swe_reports import parse_file

    (tmp_path / "tests").mkdir()
    (tmp_path / "x.py").write_text("def f(n):\n    return n + 1\n")
    (tmp_path / "tests" / "test_i18n.py").write_text(PARAMETRIZED.replace("assert f(n) - expected == 0",
                                                                          "assert f(n) == expected"))
    test = "tests.test_i18n#test_x[60-61]"
    block, text = swe_twins.find(tmp_path, "python", test)
    cands = swe_twins.candidates(text[block.start:block.end], (block.name_start - block.start,
                                 block.name_end - block.start), swe_twins.STYLES["python"], "s")
    assert [lit.text for lit in cands] == ["60", "61", "-60", "-59"]  # the argument names are not one
    planted = swe_twins.plant(tmp_path, "python", [swe_twins.Copy(test, 1, "62"),
                                                    swe_twins.Copy(test, original=True)], random.Random(3))
    report = tmp_path / "junit.xml"
    subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--junitxml={report}", "tests"],
                   cwd=tmp_path, capture_output=True, check=False)
    statuses = parse_file("junit_xml", report)
    swe_twins.resolve(planted, statuses)
    twin = next(p for p in planted if p.twin)
    assert twin.id == f"tests.test_i18n#{twin.name}[60-62]" and statuses[twin.id] == FAILED
    assert statuses[test] == PASSED and swe_twins.check(planted, statuses) == []


@pytest.mark.parametrize(("test_id", "was", "becomes", "expected"), [
    ("m#t[test_input10-an hour]", '"an hour"', '"an houq"', "m#t[test_input10-an houq]"),
    ("m#t[test_input10-an hour]", "0", "1", "m#t[test_input10-an hour]"),  # not `test_input10`'s 0
    ("m#t[-60-x]", "-60", "-62", "m#t[-62-x]"),
    ("m#t[-60-x]", "60", "62", "m#t[-60-x]"),  # a sign, not a separator
    ("m#t[60--59]", "-59", "-58", "m#t[60--58]"),
    ("m#t[60--59]", "59", "58", "m#t[60--59]"),
    ("m#t[a-a]", '"a"', '"b"', "m#t[a-a]"),  # twice: which one is unknowable
    ("m#t[x]", "'\u06cc'", "'x'", "m#t[x]"),
    ("m#t[\\u06cc-1]", "'\u06cc'", "'x'", "m#t[x-1]"),  # pytest escapes what is not ASCII
])
def test_a_case_is_renamed_by_the_value_it_carries(test_id: str, was: str, becomes: str, expected: str):
    assert swe_twins._case_changed(test_id, was, becomes) == expected


def test_of_a_mixins_test_and_its_override_the_one_in_the_class_the_id_names_is_copied(tmp_path: Path):
    """`tests.test_cached.DictTest#test_info` runs DictTest's override, not the mixin's test of that
    name above it: a twin of the mixin's would be read back under DictTest's id for a test that
    never ran there."""
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_cached.py").write_text(
        "class Mixin:\n    def test_info(self):\n        assert f() == 1\n\n\n"
        "class DictTest(Mixin):\n    def test_info(self):\n        assert f() == 2\n\n\n"
        "class ListTest(Mixin):\n    pass\n")
    block, text = swe_twins.find(tmp_path, "python", "tests.test_cached.DictTest#test_info")
    assert text[block.start:block.end].strip().endswith("== 2")
    block, text = swe_twins.find(tmp_path, "python", "tests.test_cached.ListTest#test_info")
    assert text[block.start:block.end].strip().endswith("== 1")  # the mixin's: the first of the name


def test_hide_takes_the_file_a_report_id_names_when_no_definition_has_the_tests_name(tmp_path: Path):
    """RSpec's `it "is aliased as #{name}"` in a loop and a TAP line a helper prints have no
    definition named like the report's id: the test file the id names goes whole. An id naming no
    file, or a file that is not a test file, stays unseen (the task is refused)."""
    spec = tmp_path / "spec"
    spec.mkdir()
    (spec / "alias_spec.rb").write_text(textwrap.dedent('''\
        describe '#key?' do
          %w[include? member?].each do |key_alias|
            it "is aliased as #{key_alias}" do
              expect(h.send(key_alias.to_sym, :foo)).to be(true)
            end
          end
        end
        '''))
    (spec / "other_spec.rb").write_text("describe 'x' do\n  it 'stays' do\n    expect(1).to eq(1)\n  end\nend\n")
    (tmp_path / "lib.rb").write_text("# not a test file\n")
    unseen = swe_twins.hide(tmp_path, "ruby", ["./spec/alias_spec.rb::#key? is aliased as member?",
                                               "#key? is aliased as include?", "./lib.rb::x"])
    assert unseen == ["#key? is aliased as include?", "./lib.rb::x"]
    assert not (spec / "alias_spec.rb").exists()
    assert (spec / "other_spec.rb").exists() and (tmp_path / "lib.rb").exists()

    t = tmp_path / "t"
    t.mkdir()
    (t / "load.t").write_text("use Test::More;\ncheck_all($_) for @cases;\ndone_testing;\n")
    assert swe_twins.hide(tmp_path, "perl", ["t/load.t::loads case 3"]) == []
    assert not (t / "load.t").exists()


def test_a_php_test_method_without_public_is_a_test_too(tmp_path: Path):
    """PHP methods are public unless they say otherwise: Parsedown's `function test_($test, $dir)`
    and `function testRawHtml()` run under PHPUnit, so the hider and the twins find them."""
    test = tmp_path / "test" / "ParsedownTest.php"
    test.parent.mkdir()
    test.write_text(textwrap.dedent('''\
        <?php
        class ParsedownTest extends TestCase
        {
            function test_($test, $dir)
            {
                $this->assertEquals($test, $dir);
            }

            function testRawHtml()
            {
                $this->assertEquals('<p>x</p>', f('x'));
            }

            private function testHelper()
            {
                return 1;
            }
        }
        '''))
    block, _ = swe_twins.find(tmp_path, "php", "ParsedownTest#testRawHtml")
    assert block.name == "testRawHtml"
    assert swe_twins.hide(tmp_path, "php", ["ParsedownTest#test_ with data set #10", "ParsedownTest#testRawHtml"]) == []
    text = test.read_text()
    assert "function test_(" not in text and "testRawHtml" not in text and "private function testHelper" in text


def test_node_test_subtests_are_found_hidden_and_twinned(tmp_path: Path):
    """node:test's subtests (`await t.test('name', ...)` inside a `test(...)`) are tests the TAP
    report names `parent > name`: the hider and the twins find them, and a twin planted beside one
    is a subtest of the same parent. A method call that merely ends in `test(` stays code."""
    test = tmp_path / "test" / "index.test.js"
    test.parent.mkdir()
    test.write_text(textwrap.dedent('''\
        test('parse', async function (t) {
          await t.test('should parse basic type', function (t) {
            assert.deepStrictEqual(parse('text/html'), { type: 'text/html' })
          })

          await t.test('should lower-case type', function (t) {
            assert.strictEqual(parse('TEXT/HTML').type, 'text/html')
          })
          pattern.test('not a test')
        })
        '''))
    block, text = swe_twins.find(tmp_path, "javascript", "parse > should lower-case type")
    assert block.name == "should lower-case type" and text[block.start:block.end].rstrip().endswith("})")
    assert "not a test" not in {b.name for b in swe_twins.blocks(text, "test/index.test.js",
                                                                   swe_twins.STYLES["javascript"])}
    body = text[block.start:block.end]
    literal = swe_twins.candidates(body, (block.name_start - block.start, block.name_end - block.start),
                                   swe_twins.STYLES["javascript"], swe_twins.seed_of(body))[0]
    becomes = literal.alternatives[0]
    planted = swe_twins.plant(tmp_path, "javascript", [swe_twins.Copy("parse > should lower-case type", 0, becomes)],
                              random.Random(1))
    after = test.read_text()
    assert len(planted) == 1 and f"await t.test('{planted[0].name}'" in after and becomes in after
    assert swe_twins.hide(tmp_path, "javascript", ["parse > should parse basic type"]) == []
    assert "should parse basic type" not in test.read_text()


def test_a_check_named_by_a_calls_string_is_a_test_where_the_own_style_finds_none(tmp_path: Path):
    """C and C++ projects write their own harness: tinyxml2's `XMLTest("name", expected, found);`
    and libtap's `cmp_ok(x, "==", 3, "name");` are one check each, named by a string. Where the
    language's own style (gtest's TEST, the C case functions) finds no test of an id's name, these
    alternatives do: found, hidden, and twinned by a changed literal of the call under a fresh name."""
    cpp = tmp_path / "xmltest.cpp"
    cpp.write_text(textwrap.dedent('''\
        int main() {
            XMLTest( "Element test ", false, doc.Error() );
            XMLTest( "Query attribute: int", 5, ele->IntAttribute("int", 5) );
            return 0;
        }
        '''))
    block, text, style = swe_twins.find_styled(tmp_path, "cpp", "xmltest::Query attribute: int")
    assert style in swe_twins.ALTERNATIVES["cpp"] and block.name == "Query attribute: int"
    body = text[block.start:block.end]
    lits = swe_twins.candidates(body, (block.name_start - block.start, block.name_end - block.start), style,
                                swe_twins.seed_of(body))
    assert [lit.text for lit in lits] == ["5", '"int"', "5"]  # the name is no candidate
    planted = swe_twins.plant(tmp_path, "cpp", [swe_twins.Copy("xmltest::Query attribute: int", 0, "6")],
                              random.Random(2))
    after = cpp.read_text()
    assert len(planted) == 1 and f'XMLTest( "{planted[0].name}", 6, ele->IntAttribute("int", 5) );' in after
    assert swe_twins.hide(tmp_path, "cpp", ["xmltest::Element test"]) == []  # TAP drops the trailing blank
    assert "Element test" not in cpp.read_text() and "Query attribute: int" in cpp.read_text()

    tap = tmp_path / "t" / "basic_t.c"
    tap.parent.mkdir()
    tap.write_text('int main(void) {\n    cmp_ok(count(n), "==", 3, "counts the nodes");\n    done_testing();\n}\n')
    block, _, style = swe_twins.find_styled(tmp_path, "c", "t/basic_t::counts the nodes")
    assert block.name == "counts the nodes" and style is swe_twins.ALTERNATIVES["c"][2]  # Unity's, named checks
    # the language's own style keeps its tests: a C case function is found by the own style
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "cases.c").write_text("static int t_counts_the_nodes(void) {\n    return 0;\n}\n")
    assert swe_twins.find_styled(tmp_path, "c", "cases::counts_the_nodes")[2] is swe_twins.STYLES["c"]


def test_perls_parenless_checks_and_nested_test_files_are_its_alternative(tmp_path: Path):
    """Perl's own style reads `is(got, expected, 'name');` in `t/*.t`. Modern CPAN writes the same
    check without parentheses, and some suites keep their files in folders under t/: those are
    found, hidden and twinned too, and a test the own style finds stays its."""
    nested = tmp_path / "t" / "20-modules" / "basic.t"
    nested.parent.mkdir(parents=True)
    nested.write_text(textwrap.dedent('''\
        use Test::More;
        my $x = X->new;
        is $x->f(1), 2, 'adds one';
        is_deeply [ $x->g('a') ], [ 'A' ], "upper-cases";
        ok(!$x->h, 'nothing to do');
        done_testing;
        '''))
    block, text, style = swe_twins.find_styled(tmp_path, "perl", "t/20-modules/basic.t::adds one")
    assert style is swe_twins.ALTERNATIVES["perl"][0] and text[block.start:block.end].startswith("is $x->f(1)")
    body = text[block.start:block.end]
    lits = swe_twins.candidates(body, (block.name_start - block.start, block.name_end - block.start), style,
                                swe_twins.seed_of(body))
    assert [lit.text for lit in lits][:2] == ["1", "2"]  # a parenless check is all assertion
    planted = swe_twins.plant(tmp_path, "perl", [swe_twins.Copy("t/20-modules/basic.t::adds one", 1, "3")],
                              random.Random(4))
    assert len(planted) == 1 and f"is $x->f(1), 3, '{planted[0].name}';" in nested.read_text()
    assert swe_twins.hide(tmp_path, "perl", ["t/20-modules/basic.t::upper-cases"]) == []
    assert "upper-cases" not in nested.read_text() and "nothing to do" in nested.read_text()
    # a check the own style reads is found by it
    (tmp_path / "t" / "x.t").write_text("use Test::More;\nis(f(1), 2, 'adds one');\ndone_testing;\n")
    assert swe_twins.find_styled(tmp_path, "perl", "t/x.t::adds one")[2] is swe_twins.STYLES["perl"]


def test_runit_test_functions_are_rs_alternative(tmp_path: Path):
    """R's own style is testthat's `test_that("name", {...})`; RUnit's tests (yaml's
    `inst/tests/test_*.R`) are functions run by their name: found, hidden and twinned too."""
    test = tmp_path / "inst" / "tests" / "test_yaml_load.R"
    test.parent.mkdir(parents=True)
    test.write_text(textwrap.dedent('''\
        test_named_list_is_not_returned <- function() {
          x <- yaml.load("hey: man\\n123: 456\\n", FALSE)
          checkEquals(2L, length(x))
        }

        test_kept <- function() {
          checkTrue(TRUE)
        }
        '''))
    block, text, style = swe_twins.find_styled(tmp_path, "r", "test_named_list_is_not_returned")
    assert style is swe_twins.ALTERNATIVES["r"][0] and block.name == "test_named_list_is_not_returned"
    planted = swe_twins.plant(tmp_path, "r", [swe_twins.Copy("test_named_list_is_not_returned")], random.Random(3))
    assert len(planted) == 1 and re.search(rf"^{planted[0].name} <- function\(\) {{", test.read_text(), re.M)
    assert planted[0].name.startswith("test_")
    assert swe_twins.hide(tmp_path, "r", ["test_kept"]) == [] and "test_kept" not in test.read_text()


def test_a_csharp_verbatim_string_is_one_string_over_its_lines(tmp_path: Path):
    """`@"..."` has no escapes but `""` and may span lines: read with C's escapes, hyena's
    `@"\"` ran on as a string past its end, and hiding a test cut to the end of the file."""
    test = tmp_path / "Tests" / "QuoteTests.cs"
    test.parent.mkdir()
    test.write_text(textwrap.dedent('''\
        public class QuoteTests
        {
            [Test]
            public void Escapes()
            {
                Assert.AreEqual(@"C:\\dir\\", Dir("C:"));
                Assert.AreEqual(@"a ""quoted"" }
        word", Quote("a"));
            }

            [Test]
            public void Kept()
            {
                Assert.AreEqual("b", Quote("b"));
            }
        }
        '''))
    text = test.read_text()
    spans = {b.name: text[b.start:b.end] for b in swe_twins.blocks(text, "Tests/QuoteTests.cs",
                                                                   swe_twins.STYLES["csharp"])}
    assert spans["Escapes"].rstrip().endswith('word", Quote("a"));\n    }')
    assert swe_twins.hide(tmp_path, "csharp", ["QuoteTests.Escapes"]) == []
    kept = test.read_text()
    assert "Escapes" not in kept and "public void Kept()" in kept and kept.rstrip().endswith("}\n}")


def test_a_table_tests_rows_are_candidates_after_its_assertions_and_tried_before_its_messages(tmp_path: Path):
    """A Go table test compares with its rows' fields: no literal of its assertion lines but the
    message can fail it. Its rows' values come after the assertion lines' literals (the indices a
    `twins.json` holds keep their literal), and qualification tries them before a message's text."""
    from environments.swe.twins import literals_of

    (tmp_path / "add_test.go").write_text(textwrap.dedent('''\
        package add

        func TestAdd(t *testing.T) {
            cases := []struct{ a, b, want int }{
                {1, 2, 3},
                {2, 2, 4},
            }
            for _, c := range cases {
                if got := Add(c.a, c.b); got != c.want {
                    t.Errorf("Add(%d, %d) = %d, want %d", c.a, c.b, got, c.want)
                }
            }
        }
        '''))
    literals, tried = literals_of(tmp_path, "go", ["example.com/add/TestAdd"])
    texts = [lit.text for lit in literals["example.com/add/TestAdd"]]
    assert texts == ['"Add(%d, %d) = %d, want %d"', "1", "2", "3", "2", "2", "4"]
    assert [texts[i] for i in tried["example.com/add/TestAdd"]] == ["1", "2", "3", "2", "2", "4",
                                                                     '"Add(%d, %d) = %d, want %d"']


def test_a_public_rust_test_function_is_a_test_too(tmp_path: Path):
    """semver's integration tests are `pub fn`: the hider and the twins find them."""
    test = tmp_path / "tests" / "test_req.rs"
    test.parent.mkdir()
    test.write_text(textwrap.dedent('''\
        #[test]
        pub fn test_logical_or() {
            assert_eq!(req("=1 || =2"), 2);
        }

        #[test]
        pub(crate) fn test_kept() {
            assert_eq!(req("=3"), 1);
        }
        '''))
    block, _ = swe_twins.find(tmp_path, "rust", "test_logical_or")
    assert block.name == "test_logical_or"
    assert swe_twins.hide(tmp_path, "rust", ["test_logical_or"]) == []
    text = test.read_text()
    assert "test_logical_or" not in text and "#[test]\npub(crate) fn test_kept()" in text


def test_unity_tests_are_cs_alternative_and_run_by_their_run_test_lines(tmp_path: Path):
    """cJSON's tests are Unity's: `static void name(void)` run by `RUN_TEST(name);` in the file's
    main. Hiding one takes its RUN_TEST line too (else the file no longer builds); a copy gets a
    RUN_TEST line of its own beside its original's."""
    test = tmp_path / "tests" / "parse_number.c"
    test.parent.mkdir()
    test.write_text(textwrap.dedent('''\
        static void assert_parse_number(const char *string, int integer)
        {
            TEST_ASSERT_EQUAL_INT(integer, parse(string));
        }

        static void parse_number_should_parse_zero(void)
        {
            assert_parse_number("0", 0);
        }

        void parse_number_should_parse_one(void) {
            assert_parse_number("1", 1);
        }

        int CJSON_CDECL main(void)
        {
            UNITY_BEGIN();
            RUN_TEST(parse_number_should_parse_zero);
            RUN_TEST(parse_number_should_parse_one);
            return UNITY_END();
        }
        '''))
    zero = "parse_number::parse_number_should_parse_zero"
    block, source, style = swe_twins.find_styled(tmp_path, "c", zero)
    assert block.name == "parse_number_should_parse_zero" and style.tables
    one, _ = swe_twins.find(tmp_path, "c", "parse_number::parse_number_should_parse_one")  # `{` on its line
    assert one.name == "parse_number_should_parse_one"
    body = source[block.start:block.end]
    literal = swe_twins.candidates(body, (block.name_start - block.start, block.name_end - block.start), style,
                                   swe_twins.seed_of(body))[0]
    assert literal.text == '"0"'
    becomes = literal.alternatives[0]
    planted = swe_twins.plant(tmp_path, "c", [swe_twins.Copy(zero, 0, becomes), swe_twins.Copy(zero)],
                              random.Random(1))
    text = test.read_text()
    runs = re.findall(r"RUN_TEST\((\w+)\);", text)
    assert len(runs) == 4 and {p.name for p in planted} <= set(runs) and "parse_number_should_parse_one" in runs
    assert all(f"void {name}(void)" in text for name in runs)
    assert f'    assert_parse_number({becomes}, 0);' in text
    test.write_text(test.read_text().replace("".join(f"    RUN_TEST({p.name});\n" for p in planted), ""))
    assert swe_twins.hide(tmp_path, "c", [zero]) == []
    text = test.read_text()
    assert "parse_number_should_parse_zero" not in text and "RUN_TEST(parse_number_should_parse_one);" in text
    assert "void parse_number_should_parse_one(void) {" in text


def test_a_java_test_annotated_on_its_own_line_is_a_test_too(tmp_path: Path):
    """jsoup writes `@Test public void x() {` on one line: the hider and the twins find it."""
    test = tmp_path / "src" / "test" / "java" / "org" / "x" / "ParserTest.java"
    test.parent.mkdir(parents=True)
    test.write_text(textwrap.dedent('''\
        public class ParserTest {
            @Test public void parsesText() {
                assertEquals("a", parse("a"));
            }

            @Test
            public void keepsOther() {
                assertEquals(2, count("ab"));
            }
        }
        '''))
    block, _ = swe_twins.find(tmp_path, "java", "org.x.ParserTest#parsesText")
    assert block.name == "parsesText"
    assert swe_twins.hide(tmp_path, "java", ["org.x.ParserTest#parsesText"]) == []
    text = test.read_text()
    assert "parsesText" not in text and "@Test\n    public void keepsOther()" in text


@pytest.mark.parametrize("language", ["rust", "java", "csharp", "cpp"])
def test_a_fresh_identifier_never_starts_with_a_digit(language: str):
    """semver's `test_cargo3202` gave a twin `fn 3202_yields_accepts_big_cargo()`, which does not
    build: a name made of the original's words must not lead with its number."""
    style = swe_twins.STYLES[language]
    names = [swe_twins._new_name(style, "test_cargo3202", "", random.Random(i)) for i in range(300)]
    assert not any(n[0].isdigit() for n in names) and any("3202" in n for n in names)
