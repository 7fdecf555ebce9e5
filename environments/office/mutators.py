"""Validation mutators: each perturbs an exported (oracle) final state in place; the verifier must fail.

The generator records in `task.yaml` `metadata.deliverables` and, under `metadata.mutate`, where a
checked number, live formula and required section live, so each mutator edits something the task
really checks. A mutator returns False when it does not apply to the task. Workbooks are
recalculated again after an edit (as export would), so value checks, not the stale-copy guard,
are what must catch the change.
"""

from __future__ import annotations

import re
import shutil
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import docx
import openpyxl
import pptx
import pypdf
from pptx.chart.data import CategoryChartData
from pptx.util import Inches

from environments.office import lo
from environments.office.export import RECALC, refresh_recalc
from envhub.tasks.model import Task


def _meta(task: Task) -> dict[str, Any]:
    return task.config.metadata


def _deliverable(task: Task, state: Path) -> Path | None:
    files = _meta(task).get("deliverables") or []
    p = state / files[0] if files else None
    return p if p is not None and p.is_file() else None


def _recalc(state: Path) -> None:
    refresh_recalc(state, lo.shared())


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
        _recalc(state)
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
    _recalc(state)
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
        _recalc(state)
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
        _recalc(state)
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
        _recalc(state)
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
        _recalc(state)
    return True


MUTATORS: dict[str, Callable[[Task, Path], bool]] = {
    "change_number": change_number,
    "formula_to_value": formula_to_value,
    "delete_section": delete_section,
    "reorder": reorder,
    "stuff_keywords": stuff_keywords,
    "corrupt_zip": corrupt_zip,
    "wrong_type": wrong_type,
}
