"""T3: a per-category summary and a column chart over it."""
import json
from pathlib import Path

from verifiers import check
from verifiers import office as ov

E = json.loads(Path(__file__).with_name("expected.json").read_text(encoding="utf-8"))

K = len(E["totals"])


@check("summary-values")
def test_summary_values():
    ws = ov.sheet(ov.values(E["file"]), "Summary")
    assert (ws["A1"].value, ws["B1"].value) == ("Category", "Total"), "Summary!A1:B1 must be Category, Total"
    got = ov.rows(ws, min_row=2, max_cols=2)
    assert [r[0] for r in got] == list(E["totals"]), f"categories are {[r[0] for r in got]}"
    for (cat, val), exp in zip(got, E["totals"].values()):
        ov.assert_close(val, exp, f"total for {cat}")


@check("column-chart")
def test_chart():
    charts = ov.charts(ov.sheet(ov.formulas(E["file"]), "Summary"))
    assert len(charts) == 1, f"expected one chart on Summary, found {len(charts)}"
    ch = charts[0]
    assert ch["type"] == "barChart", f"chart type is {ch['type']}"
    assert ch["title"] == E["chart_title"], f"chart title is {ch['title']!r}"
    assert len(ch["series"]) == 1, "expected one series"
    s = ch["series"][0]
    assert s["values"] and s["values"].replace("$", "").replace("'", "") == f"Summary!B2:B{K + 1}",         f"series values are {s['values']}"
    assert s["categories"] and s["categories"].replace("$", "").replace("'", "") == f"Summary!A2:A{K + 1}",         f"series categories are {s['categories']}"


@check("column-not-bar")
def test_column_direction():
    ch = ov.sheet(ov.formulas(E["file"]), "Summary")._charts
    assert ch and getattr(ch[0], "type", None) == "col", "the chart must be a column (vertical bar) chart"


@check("data-sheet-unchanged", kind="collateral")
def test_data_unchanged():
    ws = ov.sheet(ov.formulas(E["file"]), "Data")
    assert len(ov.rows(ws)) == E["data_rows"] + 1, "the Data sheet was changed"

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
