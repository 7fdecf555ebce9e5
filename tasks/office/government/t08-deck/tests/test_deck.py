"""T8: a deck with the required slides, chart values and speaker notes."""
import json
from pathlib import Path

from verifiers import check
from verifiers import office as ov

E = json.loads(Path(__file__).with_name("expected.json").read_text(encoding="utf-8"))



def _slides():
    return ov.slides(ov.pptx(E["file"]))


@check("slide-titles")
def test_titles():
    got = [s["title"] for s in _slides()]
    assert got == E["titles"], f"slide titles are {got}, expected {E['titles']}"


@check("chart-values")
def test_chart():
    s = _slides()[E["chart_slide"] - 1]
    assert len(s["charts"]) == 1, f"slide {E['chart_slide']} has {len(s['charts'])} charts, expected 1"
    ch = s["charts"][0]
    assert ch["type"].startswith("COLUMN"), f"chart type is {ch['type']}"
    assert ch["categories"] == list(E["totals"]), f"categories are {ch['categories']}"
    assert len(ch["series"]) == 1, "expected one series"
    for cat, got, exp in zip(ch["categories"], ch["series"][0]["values"], E["totals"].values()):
        ov.assert_close(got, exp, f"chart value for {cat}")


@check("speaker-notes")
def test_notes():
    missing = [s["index"] for s in _slides() if not s["notes"].strip()]
    assert not missing, f"slides without notes: {missing}"

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
