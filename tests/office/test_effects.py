"""Office checks judge effects, not presence (issue 36).

Liveness: the inputs a verify changes are drawn afresh at every export from the system's
randomness, at several points, and nothing of them is in the task's public metadata or files, so
a formula keyed to one known point fails. Conditional formats: each rule is evaluated over the
cells it covers and what it highlights is compared with what it should; a rule on the right
column with the wrong condition, or on a range that merely mentions the column, fails.
"""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path

import httpx
import openpyxl
import pytest
import yaml
from openpyxl.formatting.rule import CellIsRule, ColorScaleRule, FormulaRule, Rule
from openpyxl.styles import Font, PatternFill
from openpyxl.styles.differential import DifferentialStyle

from envhub.client.asgi import InProcess
from envhub.config import REPO_ROOT
from envhub.server.app import create_app
from envhub.spec import ResetRequest, StepRequest
from environments.office import liveness, lo
from environments.office.export import refresh_recalc
from environments.office.mutators import MUTATORS
from tests.conftest import make_settings
from verifiers import office_rules

OFFICE = REPO_ROOT / "tasks" / "office"
MODEL = "office/banking/t02-model"
RECON = "office/manufacturing/t04-reconcile"
FILL = PatternFill("solid", start_color="FFC7CE", end_color="FFC7CE")


def _model_tasks() -> list[Path]:
    return sorted(p.parent for p in OFFICE.glob("*/t02-model*/task.yaml"))


# --- liveness: hidden, drawn afresh --------------------------------------------------------------

def test_the_perturbation_is_in_no_public_file():
    """What a verify changes is in the hidden tests only: not in `task.yaml` (served by
    /v1/tasks/{id}), not in the prompt, not in the workspace."""
    tasks = _model_tasks()
    assert len(tasks) == 13
    for task in tasks:
        spec = liveness.load(task / "tests")
        assert spec and set(spec) == {"model.xlsx"}, task
        meta = yaml.safe_load((task / "task.yaml").read_text())["metadata"]
        assert not {"perturb", "perturbed", "liveness"} & set(meta), f"{task}: {sorted(meta)}"
        public = (task / "task.yaml").read_text() + (task / "prompt.md").read_text()
        assert "perturb" not in public and "liveness" not in public, task
        assert sorted(p.name for p in (task / "state").rglob("*")) == ["model.xlsx"], task
        wb = openpyxl.load_workbook(task / "state" / "model.xlsx")
        assert wb.sheetnames == ["Inputs"] and not wb.defined_names, task
        expected = json.loads((task / "tests" / "expected.json").read_text())
        assert "perturbed" not in expected, task


def test_the_task_api_serves_no_perturbation():
    with InProcess(create_app(make_settings(families=["office"], tasks_dir=REPO_ROOT / "tasks"))) as app:
        http = httpx.Client(transport=app.transport(), base_url="http://envhub.test", timeout=60)
        for task in _model_tasks():
            tid = yaml.safe_load((task / "task.yaml").read_text())["id"]
            served = http.get(f"/v1/tasks/{tid}")
            assert served.status_code == 200, served.text
            text = served.text.lower()
            assert "perturb" not in text and "liveness" not in text, tid
            cells = liveness.load(task / "tests")["model.xlsx"]
            widest = max(cells.values(), key=lambda c: c["max"])  # a unit cost's range: no other number has it
            assert '"decimals"' not in text and f'"max": {widest["max"]}' not in text, tid


def test_points_are_drawn_afresh_and_change_several_inputs():
    cells = liveness.load(OFFICE / MODEL.split("/", 1)[1] / "tests")["model.xlsx"]
    draws = [liveness.draw(cells) for _ in range(5)]
    assert all(len(d) == liveness.POINTS >= 3 for d in draws)
    assert len({json.dumps(d, sort_keys=True) for d in draws}) == 5, "the same points were drawn twice"
    for points in draws:
        assert set(points[0]) == set(cells), "the first point changes every input"
        for point in points:
            assert len(point) >= liveness.MIN_CELLS
            for ref, v in point.items():
                c = cells[ref]
                assert c["min"] <= v <= c["max"] and v != c["base"], (ref, v, c)


def test_a_broken_spec_is_the_tasks_fault(tmp_path):
    from envhub.errors import TaskInvalid

    (tmp_path / liveness.SPEC_FILE).write_text(json.dumps({"model.xlsx": {"B2": {"base": 1}}}))
    with pytest.raises(TaskInvalid, match="not a valid liveness spec"):
        liveness.load(tmp_path)
    assert liveness.load(tmp_path / "none") is None


# --- end to end: the oracle passes, the cheats fail ---------------------------------------------

_oracles: dict[str, Path] = {}


async def _oracle_state(hub, task_id: str, root: Path) -> Path:
    if task_id not in _oracles:
        m = hub.manager
        c = await m.create(ResetRequest(env="office", task_id=task_id))
        for a in hub.families["office"].oracle_actions(hub.catalog.get(task_id)):
            r = await m.step(c.session_id, StepRequest(action=a))
            assert not r.observation.is_error, r.observation.text
        dest = root / task_id.replace("/", "__")
        await m.get(c.session_id).env.export_state(dest)
        await m.close(c.session_id)
        _oracles[task_id] = dest
    return _oracles[task_id]


@pytest.fixture(scope="module")
def states_root(tmp_path_factory):
    yield tmp_path_factory.mktemp("oracle-states")
    _oracles.clear()


def _copy(src: Path, dest: Path) -> Path:
    shutil.copytree(src, dest)
    return dest


def _failed(v) -> list[str]:
    return [c.id for c in v.checks if not c.passed]


async def test_two_exports_draw_different_points(hub, states_root, tmp_path):
    oracle = await _oracle_state(hub, MODEL, states_root)
    manifest = json.loads((oracle / ".envhub/recalc/manifest.json").read_text())["model.xlsx"]
    assert len(manifest["perturbed"]) == liveness.POINTS
    again = _copy(oracle, tmp_path / "again")
    refresh_recalc(again, lo.shared(), liveness.load(hub.catalog.get(MODEL).tests_dir))
    other = json.loads((again / ".envhub/recalc/manifest.json").read_text())["model.xlsx"]
    assert other["perturbed"] != manifest["perturbed"]
    assert (await hub.manager.judge(hub.catalog.get(MODEL), again, [])).reward == 1.0


async def test_a_formula_keyed_to_one_known_point_fails(hub, states_root, tmp_path):
    """The cheat is real: were the points known (one fixed draw, as the published perturbation was),
    it would pass; with points drawn afresh it fails the liveness checks."""
    task = hub.catalog.get(MODEL)
    oracle = await _oracle_state(hub, MODEL, states_root)
    assert (await hub.manager.judge(task, _copy(oracle, tmp_path / "o"), [])).reward == 1.0
    state = _copy(oracle, tmp_path / "keyed")
    assert MUTATORS["keyed_to_point"](task, state)
    f = openpyxl.load_workbook(state / "model.xlsx")["Model"]["B2"].value
    rate = json.loads((task.tests_dir / "expected.json").read_text())["layout"]["rate"]
    assert f.startswith("=IF(AND(Inputs!") and f"Inputs!{rate}=" in f, f
    v = await hub.manager.judge(task, state, [])
    assert v.reward == 0.0 and {"cost-formulas-live", "total-formula-live"} <= set(_failed(v)), _failed(v)
    known = _copy(oracle, tmp_path / "keyed-known")
    assert MUTATORS["keyed_to_point"](task, known)
    refresh_recalc(known, lo.shared(), liveness.load(task.tests_dir), rng=random.Random(0))  # the known point
    v = await hub.manager.judge(task, known, [])
    assert v.reward == 1.0, f"at its own point the keyed formula passes: {_failed(v)}"


@pytest.mark.parametrize(("task_id", "mutator", "check_id"), [
    (MODEL, "formula_to_value", "total-formula-live"),
    (MODEL, "sum_of_zero", "total-formula-live"),
    (RECON, "cf_wrong_condition", "conditional-format"),
    (RECON, "cf_cell_value", "conditional-format"),
    (RECON, "cf_column_mentioned", "conditional-format"),
])
async def test_the_cheat_fails_its_check(hub, states_root, tmp_path, task_id, mutator, check_id):
    task = hub.catalog.get(task_id)
    oracle = await _oracle_state(hub, task_id, states_root)
    assert (await hub.manager.judge(task, _copy(oracle, tmp_path / "o"), [])).reward == 1.0
    state = _copy(oracle, tmp_path / "m")
    assert MUTATORS[mutator](task, state)
    v = await hub.manager.judge(task, state, [])
    assert v.failure_class.value == "ok" and v.reward == 0.0 and check_id in _failed(v), _failed(v)


async def test_another_rule_with_the_same_effect_passes(hub, states_root, tmp_path):
    """Effect, not form: a MATCH-based rule spelled differently from the oracle's highlights the same cells."""
    task = hub.catalog.get(RECON)
    state = _copy(await _oracle_state(hub, RECON, states_root), tmp_path / "alt")
    p = state / "recon.xlsx"
    wb = openpyxl.load_workbook(p)
    ws = wb["Ledger"]
    n = ws.max_row
    ws.conditional_formatting = type(ws.conditional_formatting)()
    ws.conditional_formatting.add(f"C2:C{n}", FormulaRule(formula=["ISNUMBER(MATCH($A2,Exceptions!$A$2:$A$40,0))"],
                                                          font=Font(bold=True, color="9C0006")))
    wb.save(p)
    refresh_recalc(state, lo.shared(), None)
    v = await hub.manager.judge(task, state, [])
    assert v.reward == 1.0, _failed(v)


# --- what a conditional format highlights ---------------------------------------------------------

@pytest.fixture
def ledger(tmp_path):
    """A Ledger sheet of five amounts (X-2 and X-4 are exceptions) and a saver that reopens it."""
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "Ledger"
    ws.append(["Ref", "Date", "Amount"])
    for i in range(1, 6):
        ws.append([f"X-{i}", "2024-01-01", 100.0 * i])
    ex = wb.create_sheet("Exceptions")
    for row in (["Ref", "Issue"], ["X-2", "amount_mismatch"], ["X-4", "missing_in_bank"], ["X-9", "missing_in_ledger"]):
        ex.append(row)

    def lit(*rules: tuple[str, object]) -> office_rules.Highlights:
        ws.conditional_formatting = type(ws.conditional_formatting)()
        for rng, rule in rules:
            ws.conditional_formatting.add(rng, rule)
        p = tmp_path / "cf.xlsx"
        wb.save(p)
        return office_rules.highlighted(openpyxl.load_workbook(p)["Ledger"], openpyxl.load_workbook(p, data_only=True),
                                        [f"C{r}" for r in range(2, 7)])
    return lit


RIGHT = {"C3", "C5"}


@pytest.mark.parametrize("formula", [
    "COUNTIF(Exceptions!$A:$A,$A2)>0", "ISNUMBER(MATCH($A2,Exceptions!$A$2:$A$10,0))",
    "NOT(ISNA(VLOOKUP(A2,Exceptions!A:B,2,FALSE)))", 'OR($A2="X-2",$A2="x-4")', "COUNTIFS(Exceptions!A:A,$A2)",
    'IFERROR(MATCH($A2&"",Exceptions!$A:$A,0)>0,FALSE)',
])
def test_rules_that_highlight_the_exceptions(ledger, formula):
    got = ledger(("C2:C6", FormulaRule(formula=[formula], fill=FILL)))
    assert got.cells == RIGHT and not got.problems, (formula, got)


@pytest.mark.parametrize(("rng", "rule", "cells"), [
    ("C2:C6", FormulaRule(formula=["$C2<>0"], fill=FILL), {"C2", "C3", "C4", "C5", "C6"}),
    # relative to the range's top-left A2: C3 looks at C3, its own amount, never a Ref
    ("A2:C6", FormulaRule(formula=["COUNTIF(Exceptions!$A:$A,A2)>0"], fill=FILL), set()),
    ("AC2:AC6", FormulaRule(formula=["COUNTIF(Exceptions!$A:$A,$A2)>0"], fill=FILL), set()),
    ("C1", FormulaRule(formula=["TRUE"], fill=FILL), set()),
    ("C2:C6", FormulaRule(formula=["COUNTIF(Exceptions!$A:$A,$A2)>0"]), set()),  # no visible format
    ("C2:C6", CellIsRule(operator="greaterThan", formula=["AVERAGE($C$2:$C$6)"], fill=FILL), {"C5", "C6"}),
    ("C2:C6", CellIsRule(operator="between", formula=["200", "400"], fill=FILL), {"C3", "C4", "C5"}),
    ("C2:C6", Rule(type="top10", rank=2, dxf=DifferentialStyle(fill=FILL)), {"C5", "C6"}),
    ("C2:C6", Rule(type="top10", rank=2, bottom=True, dxf=DifferentialStyle(fill=FILL)), {"C2", "C3"}),
    ("C2:C6", Rule(type="duplicateValues", dxf=DifferentialStyle(fill=FILL)), set()),
    ("C2:C6", Rule(type="aboveAverage", dxf=DifferentialStyle(fill=FILL)), {"C5", "C6"}),
])
def test_what_other_rules_highlight(ledger, rng, rule, cells):
    got = ledger((rng, rule))
    assert got.cells == cells and not got.problems, got


def test_stop_if_true_and_priority(ledger):
    first = FormulaRule(formula=["$A2=\"X-2\""], stopIfTrue=True)  # no format: it hides X-2 from the next rule
    got = ledger(("C2:C6", first), ("C2:C6", FormulaRule(formula=["COUNTIF(Exceptions!$A:$A,$A2)>0"], fill=FILL)))
    assert got.cells == {"C5"}


def test_what_cannot_be_evaluated_is_a_problem_never_a_match(ledger):
    for rule in (FormulaRule(formula=["SUMPRODUCT(--(Exceptions!$A$2:$A$9=$A2))>0"], fill=FILL),
                 FormulaRule(formula=["Listed"], fill=FILL),
                 ColorScaleRule(start_type="min", start_color="FF0000", end_type="max", end_color="00FF00")):
        got = ledger(("C2:C6", rule))
        assert got.cells == set() and len(got.problems) == 1 and "cannot be evaluated" in got.problems[0], got


def test_formula_engine_follows_spreadsheet_rules():
    wb = openpyxl.Workbook()
    ctx = office_rules.Context(wb, wb.active.title)

    def ev(f: str):
        return office_rules.evaluate(office_rules.parse(f), ctx)
    assert ev("-2^2") == 4.0 and ev("2+3*4") == 14.0 and ev("50%") == 0.5
    assert ev('"abc"="ABC"') is True and ev('1<"a"') is True and ev("1/0") == office_rules.XlError("#DIV/0!")
    assert ev('1&"x"') == "1x" and ev("AND(TRUE,1>0)") is True and ev("ISNA(MATCH(1,A1:A3,0))") is True


def test_a_rule_too_large_to_evaluate_is_a_problem_and_ends_quickly(ledger):
    import time

    for rng, formula in (("C2:C6", "COUNTIF($A$1:$XFD$1048576,$A2)>0"), ("C2:C6", "(" * 3000 + "1" + ")" * 3000)):
        started = time.monotonic()
        got = ledger((rng, FormulaRule(formula=[formula], fill=FILL)))
        assert got.cells == set() and got.problems and time.monotonic() - started < 5, got
