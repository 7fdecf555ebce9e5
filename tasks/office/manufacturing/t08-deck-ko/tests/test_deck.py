"""T8: a deck with the required slides, chart values and speaker notes."""
import json
from pathlib import Path

from verifiers import check
from verifiers import office as ov
from verifiers import office_prose as op

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


def _body(s):
    """What a slide says besides its title: text, table cells, chart categories and values."""
    texts = [t for t in s["texts"] if t.strip() != s["title"]]
    cells = [c for t in s["tables"] for r in t for c in r]
    charts = [x for ch in s["charts"] for x in ch["categories"] + [f"{v:,.2f}" for se in ch["series"]
                                                                  for v in se["values"] if v is not None]]
    return "\n".join(texts + cells + charts)


@check("slides-have-content")
def test_slides_have_content():
    """Every slide past the title slide carries body text of its own, a table or a chart."""
    thin = [s["index"] for s in _slides()[1:]
            if not s["tables"] and not s["charts"] and op.words(_body(s)).__len__() < 3]
    assert not thin, f"slides with no body text, table or chart: {thin}"


@check("notes-about-slide")
def test_notes_about_slide():
    """Each slide's speaker notes are a real remark (a few words) that shares a name, word or figure with its slide."""
    bad = []
    for s in _slides():
        notes = s["notes"]
        if len(op.words(notes)) < 3 or op.language_problems(notes * 3, E["language"]):
            bad.append((s["index"], "too short or not prose"))
            continue
        own = set(op.words(s["title"] + "\n" + _body(s)))
        shared = {w for w in own if (len(w) >= 3 or not w.isascii()) and w not in op.EN_FUNCTION} & set(op.words(notes))
        if not shared and not any(w in notes for w in own if len(w) >= 2 and not w.isascii()):
            bad.append((s["index"], "says nothing about its slide"))
    assert not bad, f"speaker notes that do not speak to their slide: {bad}"

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
