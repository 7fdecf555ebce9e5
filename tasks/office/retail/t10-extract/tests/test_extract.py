"""T10: records extracted from PDFs into a workbook, field by field."""
import json
from pathlib import Path

from verifiers import check
from verifiers import office as ov

E = json.loads(Path(__file__).with_name("expected.json").read_text(encoding="utf-8"))



@check("records-sheet")
def test_sheet():
    ws = ov.sheet(ov.formulas(E["file"]), "Records")
    assert ov.header(ws) == E["header"], f"header is {ov.header(ws)}"


@check("records-exact")
def test_records():
    got = ov.rows(ov.sheet(ov.values(E["file"]), "Records"), min_row=2, max_cols=4)
    assert [r[0] for r in got] == [r[0] for r in E["rows"]], f"Refs are {[r[0] for r in got]}"
    for g, e in zip(got, E["rows"]):
        assert str(g[1]) == e[1], f"{e[0]}: date {g[1]!r}, expected {e[1]!r}"
        assert str(g[2]).strip() == e[2], f"{e[0]}: party {g[2]!r}, expected {e[2]!r}"
        assert isinstance(g[3], (int, float)) and not isinstance(g[3], bool), f"{e[0]}: amount is not a number"
        ov.assert_close(g[3], e[3], f"{e[0]} amount")

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
