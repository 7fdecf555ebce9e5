"""T6: one filled letter per record; placeholders filled with the record's values."""
import json
from pathlib import Path

from verifiers import check
from verifiers import office as ov

E = json.loads(Path(__file__).with_name("expected.json").read_text(encoding="utf-8"))



@check("one-letter-per-record")
def test_letters_exist():
    for rel in E["letters"]:
        ov.docx(rel)


@check("no-placeholders-left")
def test_no_placeholders():
    for rel in E["letters"]:
        text = ov.text(ov.docx(rel))
        assert "{{" not in text and "}}" not in text, f"{rel} still has placeholders"


@check("letters-filled-correctly")
def test_filled():
    for rel, expected in E["letters"].items():
        got = [p.text for p in ov.docx(rel).paragraphs if p.text.strip()]
        assert got == expected, f"{rel}: paragraphs are {got}, expected {expected}"

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
