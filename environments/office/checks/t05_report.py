"""T5: a business report written from data, with required structure and figures."""
import json
from pathlib import Path

from verifiers import check
from verifiers import office as ov
from verifiers import office_prose as op

E = json.loads(Path(__file__).with_name("expected.json").read_text(encoding="utf-8"))



def _doc():
    return ov.docx(E["file"])


@check("title")
def test_title():
    heads = ov.headings(_doc())
    assert heads and heads[0] == (0, E["title"]), f"first heading is {heads[:1]}, expected Title {E['title']!r}"


@check("sections-in-order")
def test_sections():
    h1 = [t for lvl, t in ov.headings(_doc()) if lvl == 1]
    assert h1 == E["headings"], f"Heading 1 sections are {h1}, expected {E['headings']}"


@check("sections-have-body")
def test_bodies():
    d = _doc()
    for h in E["headings"]:
        assert ov.words(ov.section_text(d, h)) >= 3 or h == E["headings"][1], f"section {h!r} has no body text"


PROSE = [E["headings"][0], E["headings"][2]]  # the sections that must be written prose


def _sections():
    d = _doc()
    return {h: ov.section_text(d, h) for h in E["headings"]}


@check("prose-not-filler")
def test_prose_not_filler():
    """Summary and Recommendations read as the task's language, repeat nothing, copy no prompt, stuff no keywords."""
    secs = _sections()
    bad = {h: op.filler_problems(secs[h], E["language"], E["prompt"]) for h in PROSE}
    bad = {h: p for h, p in bad.items() if p}
    assert not bad, f"filler, not prose: {bad}"


@check("sections-own-sentences")
def test_own_sentences():
    """Each prose section holds at least one sentence of its own (not pasted from another section)."""
    secs = _sections()
    empty = [h for h in PROSE if not op.own_sentences(secs[h], [t for k, t in secs.items() if k != h])]
    assert not empty, f"sections with no sentence of their own: {empty}"


@check("figures-right-entities")
def test_figures_right_entities():
    """A sentence naming one category cites that category's figure, not another's."""
    figures = {k: f"{v:,.2f}" for k, v in E["totals"].items()}
    wrong = [w for h in PROSE for w in op.misattributed(_sections()[h], figures)]
    assert not wrong, f"figures given to the wrong category: {wrong[:3]}"


@check("recommendation-cites-figure")
def test_recommendation_cites_figure():
    """The recommendation names the category it concerns and, in the same sentence, the figure it rests on."""
    figures = {k: f"{v:,.2f}" for k, v in E["totals"].items()}
    sents = op.sentences(_sections()[E["headings"][2]])
    grounded = [s for s in sents for c in op.mentions(s, list(figures)) if figures[c] in s]
    assert grounded, "no recommendation names a category together with that category's total"


@check("grand-total-in-summary")
def test_grand_total():
    body = ov.section_text(_doc(), E["headings"][0])
    want = f"{E['grand']:,.2f}"
    assert want in body, f"the summary does not state the grand total {want}"


@check("key-figures-table")
def test_table():
    tables = ov.tables(_doc())
    match = [t for t in tables if t and t[0][:2] == ["Category", "Total"]]
    assert match, f"no table with header Category, Total (tables: {[t[0] for t in tables if t]})"
    rows = match[0][1:]
    assert [r[0] for r in rows] == list(E["totals"]), f"table categories are {[r[0] for r in rows]}"
    for r in rows:
        exp = E["totals"][r[0]]
        assert r[1] == f"{exp:,.2f}", f"{r[0]}: {r[1]!r}, expected {exp:,.2f}"


@check("length-bounds")
def test_length():
    n = ov.words(ov.text(_doc()))
    assert E["min_words"] <= n <= E["max_words"], f"{n} words, expected {E['min_words']}..{E['max_words']}"


@check("no-wrong-figures")
def test_no_wrong_figures():
    import re

    allowed = {f"{v:,.2f}" for v in E["totals"].values()} | {f"{E['grand']:,.2f}"}
    found = set(re.findall(r"\d{1,3}(?:,\d{3})*\.\d{2}", ov.text(_doc())))
    wrong = sorted(found - allowed)
    assert not wrong, f"figures not supported by the data: {wrong}"
