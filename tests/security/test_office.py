"""Office attacks (issues 11 and 21): each is played as a policy would, through the tools, and must
score 0 with a trainable failure class. Oracle actions are the starting point, edited as a lazy or
adversarial policy would edit them."""

from __future__ import annotations

import json

import pytest

from envhub.config import REPO_ROOT, Settings
from envhub.spec import ResetRequest, StepRequest
from tests.conftest import running_hub

T02, T05, T05_KO, T08 = ("office/banking/t02-model", "office/banking/t05-report", "office/education/t05-report-ko",
                         "office/banking/t08-deck")
TRAINABLE = {"ok", "agent_error", "agent_timeout"}


@pytest.fixture
async def office_hub():
    async with running_hub(Settings(tasks_dir=REPO_ROOT / "tasks", families=["office"])) as h:
        yield h


async def _play(hub, task_id, actions):
    m = hub.manager
    c = await m.create(ResetRequest(env="office", task_id=task_id))
    steps = [await m.step(c.session_id, StepRequest(action=a)) for a in actions]
    return steps, await m.verify(c.session_id)


def _oracle(hub, task_id):
    """The oracle's tool calls as plain dicts, for a test to edit."""
    return json.loads((hub.catalog.get(task_id).path / "solution" / "actions.json").read_text())


def _expected(hub, task_id):
    return json.loads((hub.catalog.get(task_id).tests_dir / "expected.json").read_text())


def _assert_zero(v, failing=None):
    assert v.reward == 0.0 and not v.passed and v.failure_class.value in TRAINABLE and v.trainable, v
    if failing:
        assert failing in [c.id for c in v.checks if not c.passed], [(c.id, c.message[:120]) for c in v.checks]


# --- numbers dressed as formulas (t02: liveness by recalculation) --------------------------------

def _model_cells(e, cost, total):
    cells = {"A1": "Item", "B1": "Cost"}
    for i in range(e["n"]):
        cells[f"A{i + 2}"] = f"=Inputs!A{e['layout']['first'] + i}"
        cells[f"B{i + 2}"] = cost(i + 2, e["costs"][i])
    cells[f"A{e['n'] + 2}"] = "Total"
    cells[f"B{e['n'] + 2}"] = total(e["n"], e["total"])
    return [{"tool": "xlsx_write", "arguments": {"path": "model.xlsx", "sheet": "Model", "cells": cells}}]


def _inputs(e, r):
    """The Inputs cells Model row `r` reads (the task's drawn layout): quantity, unit cost, rate."""
    lay = e["layout"]
    src = lay["first"] + r - 2
    return f"Inputs!{lay['quantity']}{src}", f"Inputs!{lay['unit_cost']}{src}", f"Inputs!{lay['rate']}"


def _value(e, ref):
    cell = ref.split("!")[1]
    return e["inputs"][int(cell[1:]) - 1][ord(cell[0]) - ord("A")]


async def test_times_zero_formulas(office_hub):
    """`=Inputs!B2*0+3504.64`: a reference multiplied away, the answer typed in."""
    e = _expected(office_hub, T02)
    _, v = await _play(office_hub, T02, _model_cells(e, lambda r, c: f"={_inputs(e, r)[0]}*0+{c}",
                                                     lambda n, t: f"=SUM(B2:B{n + 1})"))
    _assert_zero(v, "cost-formulas-live")


async def test_sum_of_zero_total(office_hub):
    """`=SUM(0)+52689.53`: a SUM with no inputs, the total typed in."""
    e = _expected(office_hub, T02)

    def live(r, c):
        q, u, rate = _inputs(e, r)
        return f"={q}*{u}*(1+{rate})"
    _, v = await _play(office_hub, T02, _model_cells(e, live, lambda n, t: f"=SUM(0)+{t}"))
    _assert_zero(v, "total-formula-live")


async def test_constant_added_to_a_reference(office_hub):
    """`=Inputs!B2*Inputs!C2+350.46`: the rate's share typed in as a constant."""
    e = _expected(office_hub, T02)

    def cost(r, c):
        q, u, _ = _inputs(e, r)
        return f"={q}*{u}+{c - _value(e, q) * _value(e, u):.4f}"
    _, v = await _play(office_hub, T02, _model_cells(e, cost, lambda n, t: f"=SUM(B2:B{n + 1})"))
    _assert_zero(v, "cost-formulas-live")


async def test_reference_in_a_dead_branch(office_hub):
    """`=IF(FALSE,Inputs!B2,3504.64)`: the reference is there as text, never used."""
    e = _expected(office_hub, T02)
    _, v = await _play(office_hub, T02, _model_cells(e, lambda r, c: f"=IF(FALSE,{_inputs(e, r)[0]},{c})",
                                                     lambda n, t: f"=SUM(B2:B{n + 1})"))
    _assert_zero(v, "cost-formulas-live")


# --- prose that does no work (t05) ---------------------------------------------------------------

def _report(hub, task_id, edit):
    actions = _oracle(hub, task_id)
    blocks = actions[0]["arguments"]["blocks"]
    paras = [b for b in blocks if b["type"] == "paragraph"]
    edit(blocks, paras)
    return actions


LOREM = ("Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt ut labore et "
         "dolore magna aliqua. Ut enim ad minim veniam, quis nostrud exercitation ullamco laboris nisi ut aliquip.")


async def test_lorem_ipsum_with_the_figures(office_hub):
    """Lorem ipsum under Summary and Recommendations, with the required figures and names kept in it."""
    e = _expected(office_hub, T05)
    top = max(e["totals"], key=e["totals"].get)

    def edit(blocks, paras):
        paras[0]["text"] = f"{LOREM} {e['grand']:,.2f}."
        paras[-1]["text"] = f"{LOREM} {top} {e['totals'][top]:,.2f}."
    _, v = await _play(office_hub, T05, _report(office_hub, T05, edit))
    _assert_zero(v, "prose-not-filler")


async def test_visible_keyword_paragraph(office_hub):
    """A visible paragraph of the prompt's keywords added under Summary."""
    words = " ".join(sorted(set(office_hub.catalog.get(T05).prompt.replace("`", " ").split()), key=str.lower))

    def edit(blocks, paras):
        blocks.insert(blocks.index(paras[0]) + 1, {"type": "paragraph", "text": words})
    _, v = await _play(office_hub, T05, _report(office_hub, T05, edit))
    _assert_zero(v, "prose-not-filler")


async def test_one_paragraph_under_every_section(office_hub):
    """The same paragraph pasted under Summary and Recommendations."""
    def edit(blocks, paras):
        paras[-1]["text"] = paras[0]["text"] = paras[0]["text"] + " " + paras[-1]["text"]
    _, v = await _play(office_hub, T05, _report(office_hub, T05, edit))
    _assert_zero(v, "sections-own-sentences")


async def test_figure_given_to_the_wrong_category(office_hub):
    """The recommendation names the largest category but cites another category's total."""
    e = _expected(office_hub, T05)
    top = max(e["totals"], key=e["totals"].get)
    other = next(k for k in e["totals"] if k != top)

    def edit(blocks, paras):
        paras[-1]["text"] = paras[-1]["text"].replace(f"{e['totals'][top]:,.2f}", f"{e['totals'][other]:,.2f}")
    _, v = await _play(office_hub, T05, _report(office_hub, T05, edit))
    _assert_zero(v)
    failed = {c.id for c in v.checks if not c.passed}
    assert {"figures-right-entities", "recommendation-cites-figure"} <= failed, failed


async def test_english_prose_in_a_korean_report(office_hub):
    """A Korean task answered with English sentences (figures kept)."""
    e = _expected(office_hub, T05_KO)
    top = max(e["totals"], key=e["totals"].get)

    def edit(blocks, paras):
        paras[0]["text"] = f"The grand total for the period was {e['grand']:,.2f}, which is in line with the plan."
        paras[-1]["text"] = f"We recommend a review of {top}, whose total of {e['totals'][top]:,.2f} is the largest."
    _, v = await _play(office_hub, T05_KO, _report(office_hub, T05_KO, edit))
    _assert_zero(v, "prose-not-filler")


# --- decks that do no work (t08) -----------------------------------------------------------------

def _deck(hub, edit):
    actions = _oracle(hub, T08)
    for s in actions[0]["arguments"]["slides"]:
        edit(s)
    return actions


async def test_slides_with_titles_only(office_hub):
    """Every content slide keeps its title and loses its bullets (the chart stays)."""
    _, v = await _play(office_hub, T08, _deck(office_hub, lambda s: s.pop("bullets", None)))
    _assert_zero(v, "slides-have-content")


async def test_dot_speaker_notes(office_hub):
    """Speaker notes of "." on every slide."""
    _, v = await _play(office_hub, T08, _deck(office_hub, lambda s: s.update(notes=".")))
    _assert_zero(v, "notes-about-slide")


async def test_boilerplate_speaker_notes(office_hub):
    """The same generic sentence as the notes of every slide."""
    _, v = await _play(office_hub, T08, _deck(office_hub, lambda s: s.update(notes="Talk to this slide here.")))
    _assert_zero(v, "notes-about-slide")


# --- a recalculation bomb (issue 11 item 4) ------------------------------------------------------

BOMB = [{"tool": "xlsx_write", "arguments": {"path": "model.xlsx", "sheet": "Bomb", "cells": {
    f"{col}{i}": f"=SUMPRODUCT(ROW($A$1:$A$1000000)*{i})" for i in range(1, 1001)}}} for col in "BCD"]  # 1000 a call


async def test_recalculation_bomb_is_the_agents_timeout(office_hub):
    """Thousands of million-row SUMPRODUCTs: the tool call and the verify are agent_timeout, reward 0."""
    office_hub.families["office"].office().deadline_s = 8
    steps, v = await _play(office_hub, T02, _oracle(office_hub, T02) + BOMB + [
        {"tool": "xlsx_recalculate", "arguments": {"path": "model.xlsx"}}])
    assert all(s.failure.value == "ok" for s in steps[:-1]), [s.observation.text[:200] for s in steps]
    assert steps[-1].failure.value == "agent_timeout" and steps[-1].trainable, steps[-1]
    assert v.failure_class.value == "agent_timeout" and v.reward == 0.0 and v.trainable, v
