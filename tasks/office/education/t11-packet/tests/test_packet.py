"""T11: one PDF with the parts in order, a bookmark per part, and nothing else."""
import json
from pathlib import Path

from verifiers import check
from verifiers import office as ov

E = json.loads(Path(__file__).with_name("expected.json").read_text(encoding="utf-8"))



def _pdf():
    return ov.pdf(E["file"])


@check("page-count")
def test_pages():
    n = len(_pdf().pages)
    assert n == E["pages"], f"{n} pages, expected {E['pages']}"


@check("parts-in-order")
def test_parts():
    pages = ov.pdf_pages(_pdf())
    for part in E["parts"]:
        text = ov.normalise(pages[part["first_page"] - 1]) if len(pages) >= part["first_page"] else ""
        assert part["token"] in text, f"part {part['title']!r} (reference {part['token']}) is not on page "             f"{part['first_page']}"


@check("bookmarks")
def test_outline():
    got = [(t, p) for t, p in ov.pdf_outline(_pdf())]
    exp = [(part["title"], part["first_page"]) for part in E["parts"]]
    assert got == exp, f"bookmarks are {got}, expected {exp}"

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
