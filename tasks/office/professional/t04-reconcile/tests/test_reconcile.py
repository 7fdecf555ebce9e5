"""T4: exceptions between two sources, plus a highlighting rule."""
import json
from pathlib import Path

from verifiers import check
from verifiers import office as ov
from verifiers import office_rules

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
    """What the rules do, not where they sit: each rule on the Ledger sheet is evaluated over the
    amounts it covers (verifiers.office_rules), and exactly the amounts whose Ref is an exception
    must come out highlighted; a rule that cannot be evaluated counts as not matching."""
    n = len(E["ledger"]) + 1
    amounts = [f"C{r}" for r in range(2, n + 1)]
    want = {f"C{r}" for r, row in enumerate(E["ledger"], 2) if row[0] in E["exceptions"]}
    got = office_rules.highlighted(ov.sheet(ov.formulas(E["file"]), "Ledger"), ov.values(E["file"]), amounts)
    assert not got.problems, f"cannot tell what the conditional formats on Ledger highlight: {got.problems}"
    missing, extra = sorted(want - got.cells), sorted(got.cells - want)
    assert not missing and not extra, (
        f"the conditional formats on Ledger!C2:C{n} highlight the wrong amounts: not highlighted {missing}, "
        f"highlighted but no exception {extra}")


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
