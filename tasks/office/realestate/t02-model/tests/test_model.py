"""T2: a calculation model with live formulas, checked after LibreOffice recalculation."""
import json
from pathlib import Path

from verifiers import check
from verifiers import office as ov

E = json.loads(Path(__file__).with_name("expected.json").read_text(encoding="utf-8"))

N = E["n"]
TOTAL = f"B{N + 2}"


def _model(values=False):
    return ov.sheet(ov.values(E["file"]) if values else ov.formulas(E["file"]), "Model")


@check("model-sheet")
def test_model_sheet():
    ws = _model()
    assert (ws["A1"].value, ws["B1"].value) == ("Item", "Cost"), "Model!A1:B1 must be Item, Cost"


def _model_at(point):
    """The task's model at an input point: each row's cost = quantity × unit cost × (1 + rate), and
    their total, with the point's inputs ({"Inputs!C4": 31, ...}) in place of the originals. Where
    the inputs sit is the task's own (E["layout"]: the first item row, the quantity and unit cost
    columns, the rate's cell)."""
    lay = E["layout"]
    rate = f"Inputs!{lay['rate']}"
    rows = range(lay["first"], lay["first"] + N)
    inputs = {rate: _given(lay["rate"])}
    for r in rows:
        for col in (lay["quantity"], lay["unit_cost"]):
            inputs[f"Inputs!{col}{r}"] = _given(f"{col}{r}")
    inputs |= point
    costs = [inputs[f"Inputs!{lay['quantity']}{r}"] * inputs[f"Inputs!{lay['unit_cost']}{r}"] * (1 + inputs[rate])
             for r in rows]
    return costs, sum(costs)


def _given(ref):
    """A cell's value in the Inputs sheet as the task gave it."""
    return E["inputs"][int(ref[1:]) - 1][ord(ref[0]) - ord("A")]


def _points():
    """(inputs set, Model sheet recalculated there, the model's costs and total) per drawn point."""
    return [(point, ov.sheet(wb, "Model"), *_model_at(point)) for point, wb in ov.perturbed(E["file"])]


def _shown(point):
    return ", ".join(f"{k}={v:g}" for k, v in sorted(point.items()))


@check("cost-formulas-live")
def test_cost_formulas():
    """Live means it recalculates: at input points drawn afresh for this verify (in copies, by
    LibreOffice) each cost must follow quantity × unit cost × (1 + rate); a typed-in number, `*0`, a
    constant added or a formula keyed to particular inputs does not."""
    ws = _model()
    for r in range(2, N + 2):
        assert ov.formula(ws, f"B{r}") is not None, f"Model!B{r} is not a formula"
    for point, moved, costs, _ in _points():
        for r, cost in enumerate(costs, 2):
            assert ov.close(moved[f"B{r}"].value, cost), (
                f"Model!B{r} = {ws[f'B{r}'].value} is not live: with the inputs changed ({_shown(point)}) it gives "
                f"{moved[f'B{r}'].value!r}, the model gives {round(cost, 2)}")


@check("total-formula-live")
def test_total_formula():
    f = ov.formula(_model(), TOTAL)
    assert f is not None and "SUM" in f.upper(), f"Model!{TOTAL} must be a SUM formula, got {_model()[TOTAL].value!r}"
    for point, moved, _, total in _points():
        got = moved[TOTAL].value
        assert ov.close(got, total), (
            f"Model!{TOTAL} = {f} is not live: with the inputs changed ({_shown(point)}) it gives {got!r}, "
            f"the model gives {round(total, 2)}")


@check("costs-correct")
def test_costs():
    ws = _model(values=True)
    for r, (item, cost) in enumerate(zip(E["items"], E["costs"]), 2):
        assert ws[f"A{r}"].value == item, f"Model!A{r} is {ws[f'A{r}'].value!r}, expected {item!r}"
        ov.assert_close(ws[f"B{r}"].value, cost, f"Model!B{r}")


@check("total-correct")
def test_total():
    ov.assert_close(_model(values=True)[TOTAL].value, E["total"], f"Model!{TOTAL}")


@check("inputs-sheet-unchanged", kind="collateral")
def test_inputs_unchanged():
    got = ov.rows(ov.sheet(ov.formulas(E["file"]), "Inputs"))
    exp = E["inputs"]
    same = len(got) == len(exp) and all(list(g[:len(e)]) == e and all(v is None for v in g[len(e):])
                                        for g, e in zip(got, exp))
    assert same, "the Inputs sheet was changed"

# --- checks every OfficeVerse task has (appended to each task's verifier by the generator) ---


@check("no-hidden-content", kind="anti_hack")
def test_no_hidden_content():
    for rel in E["deliverables"]:
        ov.assert_no_hidden_content(rel)


if E.get("unchanged"):
    @check("inputs-unchanged", kind="collateral")
    def test_inputs_unchanged():
        ov.assert_unchanged(E["unchanged"])


_JUDGE = ov.judge_scores()
if _JUDGE:  # only when the server-side judge ran (ENVHUB_JUDGE_URL); otherwise reward is mechanical only
    @check("quality-rubric", kind="quality")
    def test_quality_rubric(request):
        score = sum(_JUDGE.values()) / len(_JUDGE)
        request.node.user_properties.append(("score", score))
