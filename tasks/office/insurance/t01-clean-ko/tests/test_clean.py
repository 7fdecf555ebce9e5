"""T1: a cleaned, deduplicated copy of a raw extract."""
import json
from pathlib import Path

from verifiers import check
from verifiers import office as ov

E = json.loads(Path(__file__).with_name("expected.json").read_text(encoding="utf-8"))


def _sheet():
    return ov.sheet(ov.formulas(E["file"]), E["sheet"])


@check("sheet-and-header")
def test_sheet_and_header():
    wb = ov.formulas(E["file"])
    assert wb.sheetnames == [E["sheet"]], f"sheets are {wb.sheetnames}, expected only {E['sheet']!r}"
    assert ov.header(_sheet()) == E["header"], f"header is {ov.header(_sheet())}"


@check("one-row-per-id-sorted")
def test_ids():
    ids = [r[0] for r in ov.rows(_sheet(), min_row=2)]
    assert ids == [r[0] for r in E["rows"]], f"IDs are {ids}"


@check("values-normalised")
def test_values():
    got = ov.rows(ov.sheet(ov.values(E["file"]), E["sheet"]), min_row=2, max_cols=5)
    assert len(got) == len(E["rows"]), f"{len(got)} data rows, expected {len(E['rows'])}"
    for g, e in zip(got, E["rows"]):
        assert g[1] == e[1], f"{e[0]}: name {g[1]!r}, expected {e[1]!r}"
        assert g[2] == e[2], f"{e[0]}: category {g[2]!r}, expected {e[2]!r}"
        assert str(g[3]) == e[3], f"{e[0]}: date {g[3]!r}, expected text {e[3]!r}"
        assert isinstance(g[4], (int, float)) and not isinstance(g[4], bool), f"{e[0]}: amount {g[4]!r} is not a number"
        ov.assert_close(g[4], e[4], f"{e[0]} amount")

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
