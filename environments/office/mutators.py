"""Validation mutators: each perturbs an exported (oracle) final state in place; the verifier must fail.

The generator records in `task.yaml` `metadata.deliverables` and, under `metadata.mutate`, where a
checked number, live formula and required section live, so each mutator edits something the task
really checks. A mutator returns False when it does not apply to the task. Workbooks are
recalculated again after an edit (as export would), so value checks, not the stale-copy guard,
are what must catch the change.
"""

from __future__ import annotations

import random
import re
import shutil
import tempfile
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import docx
import openpyxl
import pptx
import pypdf
from openpyxl.formatting.rule import CellIsRule, FormulaRule
from openpyxl.styles import PatternFill
from pptx.chart.data import CategoryChartData
from pptx.util import Inches

from environments.office import liveness, lo
from environments.office.export import RECALC, refresh_recalc
from envhub.tasks.model import Task


def _meta(task: Task) -> dict[str, Any]:
    return task.config.metadata


def _deliverable(task: Task, state: Path) -> Path | None:
    files = _meta(task).get("deliverables") or []
    p = state / files[0] if files else None
    return p if p is not None and p.is_file() else None


def _recalc(task: Task, state: Path) -> None:
    refresh_recalc(state, lo.shared(), liveness.load(task.tests_dir))


def _bump(s: str) -> str:
    """A number string changed in its first digit (keeps its format)."""
    m = re.search(r"\d", s)
    assert m, s
    d = int(m.group())
    return s[:m.start()] + str((d + 3) % 10 if d + 3 < 10 else d - 3) + s[m.end():]


def change_number(task: Task, state: Path) -> bool:
    hint = _meta(task).get("mutate", {}).get("number")
    if not hint:
        return False
    p = state / hint["file"]
    if not p.is_file():
        return False
    if p.suffix == ".xlsx":
        wb = openpyxl.load_workbook(p)
        ws = wb[hint["sheet"]]
        cell = ws[hint["cell"]]
        if isinstance(cell.value, int | float):
            cell.value = cell.value * 1.37 + 11
        elif isinstance(cell.value, str) and cell.value.startswith("="):
            cell.value = f"={cell.value[1:]}*1.37+11"
        else:
            return False
        wb.save(p)
        _recalc(task, state)
        return True
    if hint.get("chart") and p.suffix == ".pptx":
        prs = pptx.Presentation(str(p))
        charts = [sh.chart for sh in prs.slides[int(hint["slide"]) - 1].shapes
                  if getattr(sh, "has_chart", False) and sh.has_chart]
        if not charts:
            return False
        chart = charts[0]
        cd = CategoryChartData()
        cd.categories = list(chart.plots[0].categories)
        for i, s in enumerate(chart.plots[0].series):
            vals = list(s.values)
            if i == 0:
                vals[0] = (vals[0] or 0) * 1.37 + 11
            cd.add_series(s.name, vals)
        chart.replace_data(cd)
        prs.save(str(p))
        return True
    find = str(hint["find"])
    return _replace_text(p, find, _bump(find))


def _replace_text(p: Path, find: str, repl: str) -> bool:
    if p.suffix == ".docx":
        d = docx.Document(str(p))
        pars = list(d.paragraphs) + [q for t in d.tables for r in t.rows for c in r.cells for q in c.paragraphs]
        for par in pars:
            if find in par.text:
                new = par.text.replace(find, repl, 1)
                par.runs[0].text = new
                for r in par.runs[1:]:
                    r.text = ""
                d.save(str(p))
                return True
        return False
    if p.suffix == ".pptx":
        prs = pptx.Presentation(str(p))
        for s in prs.slides:
            for sh in s.shapes:
                frames = [sh.text_frame] if sh.has_text_frame else []
                if getattr(sh, "has_table", False) and sh.has_table:
                    frames += [c.text_frame for r in sh.table.rows for c in r.cells]
                for tf in frames:
                    for par in tf.paragraphs:
                        if find in par.text and par.runs:
                            new = par.text.replace(find, repl, 1)
                            par.runs[0].text = new
                            for r in par.runs[1:]:
                                r.text = ""
                            prs.save(str(p))
                            return True
        return False
    return False


def formula_to_value(task: Task, state: Path) -> bool:
    hint = _meta(task).get("mutate", {}).get("formula")
    if not hint:
        return False
    p = state / hint["file"]
    recalc = state / RECALC / hint["file"]
    if not p.is_file() or not recalc.is_file():
        return False
    value = openpyxl.load_workbook(recalc, data_only=True)[hint["sheet"]][hint["cell"]].value
    wb = openpyxl.load_workbook(p)
    cell = wb[hint["sheet"]][hint["cell"]]
    if cell.data_type != "f":
        return False
    cell.value = value
    wb.save(p)
    _recalc(task, state)
    return True


# --- numbers dressed as formulas (issue 11 item 3): each keeps today's value, none is live --------

_REF = re.compile(r"(?:'?([^'!=()*+]+)'?!)?\$?([A-Z]{1,3})\$?(\d+)")


def _dress(task: Task, state: Path, which: str, make: Callable[[str, float, Any], str | None]) -> bool:
    """Replace the hinted live formula by `make(formula, value, wb_values)`, keeping the value."""
    hint = _meta(task).get("mutate", {}).get(which)
    if not hint or not liveness.load(task.tests_dir):
        return False
    p, recalc = state / hint["file"], state / RECALC / hint["file"]
    if not p.is_file() or not recalc.is_file():
        return False
    vals = openpyxl.load_workbook(recalc, data_only=True)
    value = vals[hint["sheet"]][hint["cell"]].value
    wb = openpyxl.load_workbook(p)
    cell = wb[hint["sheet"]][hint["cell"]]
    if cell.data_type != "f" or not isinstance(value, int | float):
        return False
    new = make(str(cell.value), float(value), vals)
    if new is None:
        return False
    cell.value = new
    wb.save(p)
    _recalc(task, state)
    return True


def _first_ref(formula: str, default_sheet: str, vals: Any) -> tuple[str, float] | None:
    for m in _REF.finditer(formula):
        sheet = m.group(1) or default_sheet
        if sheet in vals.sheetnames:
            v = vals[sheet][f"{m.group(2)}{m.group(3)}"].value
            if isinstance(v, int | float):
                return m.group(0), float(v)
    return None


def times_zero(task: Task, state: Path) -> bool:
    """`=Inputs!B2*0+3504.64`: a reference multiplied away, the answer typed in."""
    def make(f: str, v: float, vals: Any) -> str | None:
        ref = _first_ref(f, _meta(task)["mutate"]["number"]["sheet"], vals)
        return f"={ref[0]}*0+{v:.2f}" if ref else None
    return _dress(task, state, "number", make)


def sum_of_zero(task: Task, state: Path) -> bool:
    """`=SUM(0)+52689.53`: a formula with no inputs at all."""
    return _dress(task, state, "formula", lambda f, v, vals: f"=SUM(0)+{v:.2f}")


def constant_added(task: Task, state: Path) -> bool:
    """`=Inputs!B2+3490.64`: a real reference plus the constant that makes today's value come out."""
    def make(f: str, v: float, vals: Any) -> str | None:
        ref = _first_ref(f, _meta(task)["mutate"]["number"]["sheet"], vals)
        return f"={ref[0]}+{v - ref[1]:.4f}" if ref else None
    return _dress(task, state, "number", make)


def keyed_to_point(task: Task, state: Path) -> bool:
    """Every formula of the model sheet that reads the inputs becomes `=IF(AND(Inputs!B2=31, ...),
    <the model there>, ..., <today's value>)`: right at the input points of one known draw and at the
    inputs as they are, live nowhere else. It passed while the perturbation was one fixed, published point."""
    hint = _meta(task).get("mutate", {}).get("formula")
    spec = liveness.load(task.tests_dir)
    if not hint or not spec or hint["file"] not in spec:
        return False
    p, recalc = state / hint["file"], state / RECALC / hint["file"]
    if not p.is_file() or not recalc.is_file():
        return False
    known = liveness.draw(spec[hint["file"]], random.Random(0))  # the point(s) a cheat learned
    at_known = []
    with tempfile.TemporaryDirectory(prefix="office-keyed-") as tmp:
        for i, point in enumerate(known):
            out = Path(tmp) / f"{i}.xlsx"
            lo.shared().recalc(p, out, point)
            at_known.append(openpyxl.load_workbook(out, data_only=True)[hint["sheet"]])
    today = openpyxl.load_workbook(recalc, data_only=True)[hint["sheet"]]
    wb = openpyxl.load_workbook(p)
    n = 0
    for row in wb[hint["sheet"]].iter_rows():
        for cell in row:
            if cell.data_type != "f" or "!" not in str(cell.value) or \
                    not isinstance(today[cell.coordinate].value, int | float):
                continue  # a formula over this sheet's own cells (the total's SUM) follows the keyed ones
            f = f"{today[cell.coordinate].value!r}"
            for point, ws in zip(reversed(known), reversed(at_known)):
                cond = ",".join(f"{ref}={v!r}" for ref, v in sorted(point.items()))
                f = f"IF(AND({cond}),{ws[cell.coordinate].value!r},{f})"
            cell.value = "=" + f
            n += 1
    if not n:
        return False
    wb.save(p)
    _recalc(task, state)
    return True


def delete_section(task: Task, state: Path) -> bool:
    hint = _meta(task).get("mutate", {}).get("section")
    if not hint:
        return False
    p = state / hint["file"]
    if not p.is_file():
        return False
    if p.suffix == ".docx":
        d = docx.Document(str(p))
        paras = d.paragraphs
        idx = next((i for i, q in enumerate(paras) if q.text.strip() == hint["heading"]
                    and q.style.name.startswith(("Heading", "Title"))), None)
        if idx is None:
            return False
        level = paras[idx].style.name
        body = d.element.body
        el = paras[idx]._p
        nxt = el.getnext()
        body.remove(el)
        while nxt is not None and nxt.tag.endswith(("}p", "}tbl")):
            if nxt.tag.endswith("}p"):
                style = nxt.find(".//{*}pStyle")
                name = style.get("{http://schemas.openxmlformats.org/wordprocessingml/2006/main}val") if style \
                    is not None else ""
                if name and name.replace(" ", "").lower().startswith("heading") and name[-1:] <= level[-1:]:
                    break
            after = nxt.getnext()
            body.remove(nxt)
            nxt = after
        d.save(str(p))
        return True
    if p.suffix == ".pptx":
        prs = pptx.Presentation(str(p))
        n = int(hint["slide"])
        ids = prs.slides._sldIdLst
        sid = list(ids)[n - 1]
        prs.part.drop_rel(sid.rId)
        ids.remove(sid)
        prs.save(str(p))
        return True
    if p.suffix == ".xlsx":
        wb = openpyxl.load_workbook(p)
        if hint["sheet"] not in wb.sheetnames or len(wb.sheetnames) < 2:
            return False
        wb.remove(wb[hint["sheet"]])
        wb.save(p)
        _recalc(task, state)
        return True
    if p.suffix == ".pdf":
        r = pypdf.PdfReader(str(p))
        w = pypdf.PdfWriter()
        for i, page in enumerate(r.pages):
            if i != int(hint.get("page", 1)) - 1:
                w.add_page(page)
        w.write(str(p))
        return True
    return False


# --- highlighting that does not highlight the right cells (issue 36) ------------------------------

def _cf_hint(task: Task, state: Path) -> tuple[Path, Any, Any, list[tuple[str, Any]]] | None:
    """The hinted workbook with the oracle's rules on the hinted sheet taken out: (path, workbook,
    sheet, [(range, rule)]), or None when there is none."""
    hint = _meta(task).get("mutate", {}).get("conditional")
    p = state / hint["file"] if hint else None
    if p is None or not p.is_file():
        return None
    wb = openpyxl.load_workbook(p)
    if hint["sheet"] not in wb.sheetnames:
        return None
    ws = wb[hint["sheet"]]
    rules = [(str(cf.sqref), rule) for cf in ws.conditional_formatting for rule in cf.rules]
    if not rules:
        return None
    ws.conditional_formatting = type(ws.conditional_formatting)()
    return p, wb, ws, rules


_FILL = PatternFill("solid", start_color="FFC7CE", end_color="FFC7CE")


def cf_wrong_condition(task: Task, state: Path) -> bool:
    """The rule sits on the right cells with a condition every amount meets (`$C2<>0`)."""
    got = _cf_hint(task, state)
    if got is None:
        return False
    p, wb, ws, rules = got
    rng = rules[0][0]
    first = re.match(r"([A-Z]+)(\d+)", rng)
    assert first, rng
    ws.conditional_formatting.add(rng, FormulaRule(formula=[f"${first.group(1)}{first.group(2)}<>0"], fill=_FILL))
    wb.save(p)
    _recalc(task, state)
    return True


def cf_cell_value(task: Task, state: Path) -> bool:
    """A cell-value rule on the right cells that highlights the amounts above their average."""
    got = _cf_hint(task, state)
    if got is None:
        return False
    p, wb, ws, rules = got
    rng = rules[0][0]
    fixed = re.sub(r"([A-Z]+)(\d+)", r"$\1$\2", rng)
    ws.conditional_formatting.add(rng, CellIsRule(operator="greaterThan", formula=[f"AVERAGE({fixed})"], fill=_FILL))
    wb.save(p)
    _recalc(task, state)
    return True


def cf_column_mentioned(task: Task, state: Path) -> bool:
    """The oracle's own rules on ranges that merely mention the column (`AC2:AC9` for `C2:C9`)."""
    got = _cf_hint(task, state)
    if got is None:
        return False
    p, wb, ws, rules = got
    for rng, rule in rules:
        ws.conditional_formatting.add(re.sub(r"([A-Z]+)(\d+)", r"A\1\2", rng), rule)
    wb.save(p)
    _recalc(task, state)
    return True


# --- prose that does no work (issue 21): each keeps titles, figures and word counts ------------

LOREM = ("lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor incididunt ut labore et "
         "dolore magna aliqua enim ad minim veniam quis nostrud exercitation ullamco laboris nisi aliquip ex ea "
         "commodo consequat").split()


def _section_paras(d: Any, heading: str) -> list[Any]:
    """Body paragraphs under `heading` up to the next heading."""
    out, inside = [], False
    for q in d.paragraphs:
        is_head = q.style is not None and q.style.name.startswith(("Heading", "Title"))
        if inside and is_head:
            break
        if inside and q.text.strip():
            out.append(q)
        inside = inside or (is_head and q.text.strip() == heading)
    return out


def _set_text(par: Any, text: str) -> None:
    if par.runs:
        par.runs[0].text = text
        for r in par.runs[1:]:
            r.text = ""
    else:
        par.add_run(text)


def _prose(task: Task, state: Path) -> tuple[Path, Any, list[str]] | None:
    hint = _meta(task).get("mutate", {}).get("prose")
    if not hint or not (state / hint["file"]).is_file():
        return None
    return state / hint["file"], docx.Document(str(state / hint["file"])), list(hint["headings"])


def filler_prose(task: Task, state: Path) -> bool:
    """Lorem ipsum under the prose headings, keeping every figure and capitalised name in place."""
    got = _prose(task, state)
    if got is None:
        return False
    p, d, heads = got
    n = 0

    def lorem(m: re.Match[str]) -> str:
        nonlocal n
        n += 1
        return LOREM[(n - 1) % len(LOREM)]
    for h in heads:
        for par in _section_paras(d, h):
            _set_text(par, re.sub(r"\b(?:[a-z]+|[\uac00-\ud7a3]+)\b", lorem, par.text))
    d.save(str(p))
    return n > 0


def stuff_visible(task: Task, state: Path) -> bool:
    """A visible paragraph of the prompt's keywords added under the first prose heading."""
    got = _prose(task, state)
    if got is None:
        return False
    p, d, heads = got
    paras = _section_paras(d, heads[0])
    if not paras:
        return False
    words = " ".join(sorted(set(re.findall(r"\w+", task.prompt)), key=str.lower))[:3000]
    new = paras[-1].insert_paragraph_before(words)
    paras[-1]._p.addnext(new._p)  # after the section's last paragraph
    d.save(str(p))
    return True


def copy_section(task: Task, state: Path) -> bool:
    """The first prose section's text pasted under the other prose headings instead of their own."""
    got = _prose(task, state)
    if got is None or len(got[2]) < 2:
        return False
    p, d, heads = got
    source = "\n".join(q.text for q in _section_paras(d, heads[0]))
    for h in heads[1:]:
        paras = _section_paras(d, h)
        if not paras:
            return False
        _set_text(paras[0], source)
        for q in paras[1:]:
            _set_text(q, "")
    d.save(str(p))
    return True


# --- decks that do no work (issue 21) -------------------------------------------------------------

def _deck_hint(task: Task, state: Path) -> Path | None:
    hint = _meta(task).get("mutate", {}).get("slides")
    return state / hint["file"] if hint and (state / hint["file"]).is_file() else None


def empty_slides(task: Task, state: Path) -> bool:
    """Content slides keep their titles and lose their body (charts and tables stay, so only emptiness shows)."""
    p = _deck_hint(task, state)
    if p is None:
        return False
    prs = pptx.Presentation(str(p))
    n = 0
    for s in list(prs.slides)[1:]:
        for sh in list(s.shapes):
            if sh.has_text_frame and sh != s.shapes.title and not getattr(sh, "has_chart", False):
                sh._element.getparent().remove(sh._element)
                n += 1
    prs.save(str(p))
    return n > 0


def dot_notes(task: Task, state: Path) -> bool:
    """Every slide's speaker notes become "."."""
    p = _deck_hint(task, state)
    if p is None:
        return False
    prs = pptx.Presentation(str(p))
    for s in prs.slides:
        s.notes_slide.notes_text_frame.text = "."
    prs.save(str(p))
    return True


def reorder(task: Task, state: Path) -> bool:
    p = _deliverable(task, state)
    if p is None or p.suffix != ".pptx":
        hint = _meta(task).get("mutate", {}).get("reorder")
        if not hint or p is None or p.suffix != ".docx":
            return False
        d = docx.Document(str(p))
        first = next((q for q in d.paragraphs if q.text.strip() == hint["heading"]), None)
        if first is None:
            return False
        el = first._p
        el.getparent().append(el)  # the heading moves to the end, away from its section
        d.save(str(p))
        return True
    prs = pptx.Presentation(str(p))
    ids = prs.slides._sldIdLst
    items = list(ids)
    if len(items) < 2:
        return False
    last = items[-1]
    ids.remove(last)
    ids.insert(1 if len(items) > 2 else 0, last)
    prs.save(str(p))
    return True


def stuff_keywords(task: Task, state: Path) -> bool:
    p = _deliverable(task, state)
    if p is None:
        return False
    words = " ".join(sorted(set(re.findall(r"[\w.,%-]+", task.prompt))))[:4000]
    if p.suffix == ".docx":
        d = docx.Document(str(p))
        run = d.add_paragraph().add_run(words)
        run.font.hidden = True
        d.save(str(p))
    elif p.suffix == ".pptx":
        prs = pptx.Presentation(str(p))
        s = prs.slides[0]
        box = s.shapes.add_textbox(prs.slide_width + Inches(1), Inches(1), Inches(3), Inches(1))
        box.text_frame.text = words
        prs.save(str(p))
    elif p.suffix == ".xlsx":
        wb = openpyxl.load_workbook(p)
        ws = wb.create_sheet("kw")
        ws["A1"] = words
        ws.sheet_state = "hidden"
        wb.save(p)
        _recalc(task, state)
    elif p.suffix == ".pdf":
        r = pypdf.PdfReader(str(p))
        w = pypdf.PdfWriter(clone_from=r)
        page = w.add_blank_page(612, 792)
        safe = re.sub(r"[()\\]", " ", words)[:2000]
        font = pypdf.generic.DictionaryObject({
            pypdf.generic.NameObject("/Type"): pypdf.generic.NameObject("/Font"),
            pypdf.generic.NameObject("/Subtype"): pypdf.generic.NameObject("/Type1"),
            pypdf.generic.NameObject("/BaseFont"): pypdf.generic.NameObject("/Helvetica")})
        page[pypdf.generic.NameObject("/Resources")] = pypdf.generic.DictionaryObject({
            pypdf.generic.NameObject("/Font"): pypdf.generic.DictionaryObject({
                pypdf.generic.NameObject("/F1"): w._add_object(font)})})
        stream = pypdf.generic.DecodedStreamObject()
        stream.set_data(f"BT 3 Tr /F1 8 Tf 20 700 Td ({safe}) Tj ET".encode("latin-1", "replace"))
        page[pypdf.generic.NameObject("/Contents")] = w._add_object(stream)
        w.write(str(p))
    else:
        return False
    return True


def corrupt_zip(task: Task, state: Path) -> bool:
    p = _deliverable(task, state)
    if p is None:
        return False
    data = p.read_bytes()
    if zipfile.is_zipfile(p):
        mid = len(data) // 2
        p.write_bytes(data[:mid] + b"\x00garbage\x00" * 64 + data[mid + 640:])
    else:
        p.write_bytes(data[: len(data) // 3])
    if p.suffix == ".xlsx":
        _recalc(task, state)
    return True


def wrong_type(task: Task, state: Path) -> bool:
    p = _deliverable(task, state)
    if p is None:
        return False
    tmp = p.with_name(".wrong-type")
    if p.suffix == ".xlsx":
        d = docx.Document()
        d.add_paragraph("not a workbook")
        d.save(str(tmp))
    else:
        wb = openpyxl.Workbook()
        wb.active["A1"] = "not a document"
        wb.save(tmp)
    shutil.move(tmp, p)
    if p.suffix == ".xlsx":
        _recalc(task, state)
    return True


MUTATORS: dict[str, Callable[[Task, Path], bool]] = {
    "change_number": change_number,
    "formula_to_value": formula_to_value,
    "times_zero": times_zero,
    "sum_of_zero": sum_of_zero,
    "constant_added": constant_added,
    "keyed_to_point": keyed_to_point,
    "cf_wrong_condition": cf_wrong_condition,
    "cf_cell_value": cf_cell_value,
    "cf_column_mentioned": cf_column_mentioned,
    "delete_section": delete_section,
    "reorder": reorder,
    "stuff_keywords": stuff_keywords,
    "filler_prose": filler_prose,
    "stuff_visible": stuff_visible,
    "copy_section": copy_section,
    "empty_slides": empty_slides,
    "dot_notes": dot_notes,
    "corrupt_zip": corrupt_zip,
    "wrong_type": wrong_type,
}
