"""T4: exceptions between two sources, plus a highlighting rule."""
import json
from pathlib import Path

from verifiers import check
from verifiers import office as ov

E = json.loads(Path(__file__).with_name("expected.json").read_text(encoding="utf-8"))



@check("exceptions-exact")
def test_exceptions():
    ws = ov.sheet(ov.values(E["file"]), "Exceptions")
    assert ov.header(ws)[:2] == ["Ref", "Issue"], f"header is {ov.header(ws)}"
    got = [(str(r[0]).strip(), str(r[1]).strip()) for r in ov.rows(ws, min_row=2, max_cols=2)]
    exp = list(E["exceptions"].items())
    assert sorted(got) == sorted(exp), f"exceptions are {got}, expected {exp}"


@check("exceptions-sorted", kind="soft")
def test_sorted():
    ws = ov.sheet(ov.formulas(E["file"]), "Exceptions")
    refs = [r[0] for r in ov.rows(ws, min_row=2, max_cols=1)]
    assert refs == sorted(refs), "exceptions are not sorted by Ref"


@check("conditional-format")
def test_conditional():
    rules = ov.conditional_rules(ov.sheet(ov.formulas(E["file"]), "Ledger"))
    assert any("C" in r["range"] for r in rules), f"no conditional formatting rule on Ledger column C: {rules}"


@check("sources-unchanged", kind="collateral")
def test_sources():
    wb = ov.formulas(E["file"])
    for name in ("Ledger", "Bank"):
        got = [list(r[:3]) for r in ov.rows(ov.sheet(wb, name), min_row=2, max_cols=3)]
        assert got == E[name.lower()], f"the {name} sheet was changed"

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
