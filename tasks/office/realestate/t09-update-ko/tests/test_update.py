"""T9: new figures on slide 3 (table and chart), every other slide unchanged."""
import json
from pathlib import Path

from verifiers import check
from verifiers import office as ov

E = json.loads(Path(__file__).with_name("expected.json").read_text(encoding="utf-8"))



def _slides():
    return ov.slides(ov.pptx(E["file"]))


@check("slides-and-order")
def test_titles():
    got = [s["title"] for s in _slides()]
    assert got == E["titles"], f"slide titles are {got}, expected {E['titles']}"


@check("table-updated")
def test_table():
    s = _slides()[2]
    assert s["tables"], "slide 3 has no table"
    rows = s["tables"][0][1:]
    assert [r[0] for r in rows] == E["categories"], f"table categories are {[r[0] for r in rows]}"
    for r, v in zip(rows, E["new"]):
        assert r[1] == f"{v:,.2f}", f"{r[0]}: {r[1]!r}, expected {v:,.2f}"


@check("chart-updated")
def test_chart():
    s = _slides()[2]
    assert s["charts"], "slide 3 has no chart"
    ch = s["charts"][0]
    assert ch["categories"] == E["categories"], f"chart categories are {ch['categories']}"
    for got, exp in zip(ch["series"][0]["values"], E["new"]):
        ov.assert_close(got, exp, "chart value")


@check("other-slides-unchanged", kind="collateral")
def test_untouched():
    slides = {str(s["index"]): s for s in _slides()}
    for idx, text in E["untouched"].items():
        assert idx in slides and ov.slide_text(slides[idx]) == text, f"slide {idx} was changed"

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
