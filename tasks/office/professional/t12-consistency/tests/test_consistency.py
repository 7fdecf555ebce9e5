"""T12: planted wrong figures fixed, nothing else changed, a complete change log."""
import json
from pathlib import Path

from verifiers import check
from verifiers import office as ov

E = json.loads(Path(__file__).with_name("expected.json").read_text(encoding="utf-8"))



@check("figures-fixed")
def test_fixed():
    text = ov.text(ov.docx(E["file"]))
    for item, old, new in E["fixes"]:
        assert new in text, f"{item}: the corrected figure {new} is missing"
    for item, value in E["values"].items():
        assert value in text, f"{item}: {value} is not in the memo"


@check("nothing-else-changed", kind="collateral")
def test_rest_unchanged():
    got = ov.text(ov.docx(E["file"]))
    assert ov.normalise(got) == ov.normalise(E["text"]), "the memo differs from the corrected original beyond the fixes"


@check("change-log")
def test_log():
    ws = ov.sheet(ov.values("changes.xlsx"), "Changes")
    assert ov.header(ws)[:3] == ["Item", "Old", "New"], f"header is {ov.header(ws)}"
    got = sorted(tuple(str(v).strip() for v in r[:3]) for r in ov.rows(ws, min_row=2, max_cols=3))
    exp = sorted(tuple(f) for f in E["fixes"])
    assert got == exp, f"change log is {got}, expected {exp}"

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
