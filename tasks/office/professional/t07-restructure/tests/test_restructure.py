"""T7: headings styled, a tab block turned into a table, the rest of the text unchanged."""
import json
from pathlib import Path

from verifiers import check
from verifiers import office as ov

E = json.loads(Path(__file__).with_name("expected.json").read_text(encoding="utf-8"))



def _doc():
    return ov.docx(E["file"])


@check("heading-styles")
def test_headings():
    got = [[lvl, t] for lvl, t in ov.headings(_doc()) if lvl >= 1]
    assert got == E["headings"], f"headings are {got}, expected {E['headings']}"


@check("title-kept")
def test_title():
    assert (0, E["title"]) in ov.headings(_doc()), "the document title was lost"


@check("table-converted")
def test_table():
    tables = ov.tables(_doc())
    assert E["table"] in tables, f"no table equal to {E['table']}; tables: {tables}"
    assert not any("\t" in p.text for p in _doc().paragraphs), "tab-separated lines remain"


@check("body-text-unchanged", kind="collateral")
def test_body():
    body = [p["text"] for p in ov.paragraphs(_doc()) if p["level"] is None and p["text"].strip()]
    assert body == E["body"], f"body paragraphs changed: {body}"

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
