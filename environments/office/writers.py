"""Document edits behind the tools: each takes parsed arguments and a destination path.

Every function raises `ValueError` for a bad request (the tool layer turns it into an
`AgentError`); none evaluates anything the agent wrote.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import docx
import openpyxl
import pptx
from docx.enum.text import WD_BREAK
from openpyxl.chart import BarChart, LineChart, PieChart, Reference
from openpyxl.formatting.rule import FormulaRule
from openpyxl.styles import PatternFill
from openpyxl.utils import column_index_from_string, range_boundaries
from openpyxl.utils.cell import coordinate_from_string
from pptx.chart.data import CategoryChartData
from pptx.enum.chart import XL_CHART_TYPE
from pptx.util import Inches

from verifiers.office_safe import open_docx, open_pptx, open_xlsx

CELL = re.compile(r"^[A-Z]{1,3}[1-9][0-9]{0,6}$")


def _scalar(v: Any, where: str) -> Any:
    if v is None or isinstance(v, bool | int | float):
        return v
    if isinstance(v, str):
        if len(v) > 32_000:
            raise ValueError(f"{where}: text over 32,000 characters")
        return v
    raise ValueError(f"{where}: cell values must be strings, numbers, booleans or null")


# --- xlsx -------------------------------------------------------------------------------------

def load_or_new_workbook(p: Path, create: bool) -> Any:
    if p.exists():
        return open_xlsx(p)
    if not create:
        raise ValueError(f"{p.name} does not exist (pass create: true to make a new workbook)")
    wb = openpyxl.Workbook()
    wb.remove(wb.active)
    return wb


def xlsx_write(wb: Any, sheet: str, cells: dict[str, Any] | None, rows: list[list[Any]] | None,
               start: str, clear: bool) -> int:
    if not sheet or len(sheet) > 31 or any(ch in sheet for ch in "[]:*?/\\"):
        raise ValueError(f"invalid sheet name {sheet!r}")
    if sheet not in wb.sheetnames:
        wb.create_sheet(sheet)
    ws = wb[sheet]
    if clear:
        ws.delete_rows(1, ws.max_row + 1)
    n = 0
    for ref, v in (cells or {}).items():
        if not CELL.match(str(ref)):
            raise ValueError(f"bad cell reference {ref!r} (use A1 style)")
        ws[ref] = _scalar(v, ref)
        n += 1
    if rows is not None:
        if not CELL.match(str(start)):
            raise ValueError(f"bad start cell {start!r} (use A1 style)")
        col, row0 = coordinate_from_string(start)
        c0 = column_index_from_string(col)
        for i, r in enumerate(rows):
            if not isinstance(r, list):
                raise ValueError("rows must be a list of lists")
            for j, v in enumerate(r):
                ws.cell(row=row0 + i, column=c0 + j, value=_scalar(v, f"row {i} col {j}"))
                n += 1
    return n


CHARTS = {"bar": (BarChart, "bar"), "column": (BarChart, "col"), "line": (LineChart, None), "pie": (PieChart, None)}


def xlsx_chart(wb: Any, sheet: str, kind: str, data: str, categories: str, anchor: str, title: str,
               titles_from_data: bool) -> None:
    if kind not in CHARTS:
        raise ValueError(f"chart type must be one of {sorted(CHARTS)}")
    ws = _ws(wb, sheet)
    cls, bar_dir = CHARTS[kind]
    chart = cls()
    if bar_dir:
        chart.type = bar_dir
    chart.title = title or None
    chart.add_data(_ref(wb, data), titles_from_data=titles_from_data)
    chart.set_categories(_ref(wb, categories))
    ws.add_chart(chart, anchor)


def _ws(wb: Any, name: str) -> Any:
    if name not in wb.sheetnames:
        raise ValueError(f"no sheet {name!r}; sheets are {wb.sheetnames}")
    return wb[name]


def _ref(wb: Any, ref: str) -> Reference:
    m = re.match(r"^'?([^'!]+)'?!(\$?[A-Z]+\$?\d+(:\$?[A-Z]+\$?\d+)?)$", ref or "")
    if not m:
        raise ValueError(f"bad range {ref!r}; use Sheet!A1:B9")
    ws = _ws(wb, m.group(1))
    min_col, min_row, max_col, max_row = range_boundaries(m.group(2).replace("$", ""))
    return Reference(ws, min_col=min_col, min_row=min_row, max_col=max_col, max_row=max_row)


def xlsx_conditional(wb: Any, sheet: str, rng: str, formula: str, fill: str) -> None:
    ws = _ws(wb, sheet)
    if not re.match(r"^[0-9A-Fa-f]{6}$", fill):
        raise ValueError("fill must be a hex colour like FFC7CE")
    range_boundaries(rng)
    ws.conditional_formatting.add(rng, FormulaRule(formula=[formula.lstrip("=")],
                                                   fill=PatternFill("solid", start_color=fill, end_color=fill)))


def xlsx_sheet(wb: Any, action: str, name: str, new_name: str | None) -> None:
    if action == "add":
        if name in wb.sheetnames:
            raise ValueError(f"sheet {name!r} exists")
        wb.create_sheet(name)
    elif action == "delete":
        wb.remove(_ws(wb, name))
    elif action == "rename":
        if not new_name:
            raise ValueError("rename needs new_name")
        _ws(wb, name).title = new_name
    else:
        raise ValueError("action must be add, delete or rename")


# --- docx -------------------------------------------------------------------------------------

def _style(doc: Any, name: str | None) -> str | None:
    if name is None:
        return None
    names = {s.name for s in doc.styles}
    if name not in names:
        raise ValueError(f"unknown style {name!r}")
    return name


def add_block(doc: Any, block: dict[str, Any]) -> Any:
    """Append one block; returns the new paragraph/table element for positioning."""
    kind = block.get("type")
    if kind == "heading":
        level = int(block.get("level", 1))
        if not 0 <= level <= 6:
            raise ValueError("heading level must be 0..6")
        return doc.add_heading(str(block.get("text", "")), level=level)._p
    if kind == "paragraph":
        p = doc.add_paragraph(str(block.get("text", "")), style=_style(doc, block.get("style")))
        if block.get("bold"):
            for r in p.runs:
                r.bold = True
        return p._p
    if kind == "bullets":
        last = None
        for item in block.get("items", []):
            last = doc.add_paragraph(str(item), style="List Bullet")._p
        return last
    if kind == "table":
        rows = block.get("rows") or []
        if not rows or not all(isinstance(r, list) and r for r in rows):
            raise ValueError("a table needs rows: a non-empty list of non-empty lists")
        ncols = max(len(r) for r in rows)
        t = doc.add_table(rows=len(rows), cols=ncols)
        t.style = _style(doc, block.get("style", "Table Grid"))
        for i, r in enumerate(rows):
            for j, v in enumerate(r):
                t.cell(i, j).text = "" if v is None else str(v)
        return t._tbl
    if kind == "page_break":
        p = doc.add_paragraph()
        p.add_run().add_break(WD_BREAK.PAGE)
        return p._p
    raise ValueError(f"unknown block type {kind!r}; use heading, paragraph, bullets, table, page_break")


def docx_write(p: Path, blocks: list[dict[str, Any]], mode: str) -> Any:
    if mode == "create":
        doc = docx.Document()
    elif mode == "append":
        doc = open_docx(p)
    else:
        raise ValueError("mode must be create or append")
    for b in blocks:
        if not isinstance(b, dict):
            raise ValueError("each block must be an object")
        add_block(doc, b)
    return doc


def _para(doc: Any, index: Any) -> Any:
    paras = doc.paragraphs
    if not isinstance(index, int) or not 0 <= index < len(paras):
        raise ValueError(f"paragraph index {index!r} out of range 0..{len(paras) - 1}")
    return paras[index]


def _set_text(par: Any, text: str) -> None:
    runs = par.runs
    if runs:
        runs[0].text = text
        for r in runs[1:]:
            r._r.getparent().remove(r._r)
    else:
        par.add_run(text)


def docx_edit(doc: Any, ops: list[dict[str, Any]]) -> int:
    n = 0
    for op in ops:
        kind = op.get("op")
        if kind == "set_style":
            _para(doc, op.get("index")).style = _style(doc, op.get("style"))
        elif kind == "set_text":
            _set_text(_para(doc, op.get("index")), str(op.get("text", "")))
        elif kind == "delete":
            par = _para(doc, op.get("index"))
            par._p.getparent().remove(par._p)
        elif kind == "replace":
            find, repl = str(op.get("find", "")), str(op.get("replace", ""))
            if not find:
                raise ValueError("replace needs a non-empty find")
            hits = 0
            targets = list(doc.paragraphs) + [q for t in doc.tables for r in t.rows for c in r.cells
                                              for q in c.paragraphs]
            for par in targets:
                if find in par.text:
                    hits += par.text.count(find)
                    _set_text(par, par.text.replace(find, repl))
            if not hits:
                raise ValueError(f"text {find!r} not found")
        elif kind == "insert_after":
            anchor = _para(doc, op.get("index"))._p
            el = add_block(doc, op.get("block") or {})
            anchor.addnext(el)
        elif kind == "paragraphs_to_table":
            start, end = op.get("start"), op.get("end")
            sep = str(op.get("sep", "\t"))
            first = _para(doc, start)
            last = _para(doc, end)
            if end < start:
                raise ValueError("end must be >= start")
            pars = doc.paragraphs[start:end + 1]
            rows = [q.text.split(sep) for q in pars]
            tbl = add_block(doc, {"type": "table", "rows": rows, "style": op.get("style", "Table Grid")})
            first._p.addprevious(tbl)
            for q in pars:
                q._p.getparent().remove(q._p)
            del last
        else:
            raise ValueError(f"unknown op {kind!r}; use set_style, set_text, delete, replace, insert_after, "
                             "paragraphs_to_table")
        n += 1
    return n


# --- pptx -------------------------------------------------------------------------------------

PPT_CHARTS = {"bar": XL_CHART_TYPE.BAR_CLUSTERED, "column": XL_CHART_TYPE.COLUMN_CLUSTERED,
              "line": XL_CHART_TYPE.LINE, "pie": XL_CHART_TYPE.PIE}


def _chart_data(spec: dict[str, Any]) -> CategoryChartData:
    cats = spec.get("categories") or []
    series = spec.get("series") or []
    if not cats or not series:
        raise ValueError("a chart needs categories and series")
    cd = CategoryChartData()
    cd.categories = [str(c) for c in cats]
    for s in series:
        vals = s.get("values") or []
        if len(vals) != len(cats) or not all(isinstance(v, int | float) for v in vals):
            raise ValueError("each series needs one number per category")
        cd.add_series(str(s.get("name", "Series")), [float(v) for v in vals])
    return cd


def add_slide(prs: Any, spec: dict[str, Any]) -> None:
    layouts = prs.slide_layouts
    if spec.get("layout") == "title":
        s = prs.slides.add_slide(layouts[0])
        s.shapes.title.text = str(spec.get("title", ""))
        if spec.get("subtitle") and len(s.placeholders) > 1:
            s.placeholders[1].text = str(spec["subtitle"])
    else:
        s = prs.slides.add_slide(layouts[5])
        s.shapes.title.text = str(spec.get("title", ""))
        top = Inches(1.5)
        if spec.get("bullets"):
            box = s.shapes.add_textbox(Inches(0.5), top, Inches(9), Inches(1.5))
            tf = box.text_frame
            tf.word_wrap = True
            for i, b in enumerate(spec["bullets"]):
                para = tf.paragraphs[0] if i == 0 else tf.add_paragraph()
                para.text = str(b)
            top = Inches(3.0)
        if spec.get("table"):
            rows = spec["table"]
            if not all(isinstance(r, list) and r for r in rows):
                raise ValueError("table must be a list of non-empty lists")
            ncols = max(len(r) for r in rows)
            t = s.shapes.add_table(len(rows), ncols, Inches(0.5), top, Inches(9), Inches(0.4) * len(rows)).table
            for i, r in enumerate(rows):
                for j, v in enumerate(r):
                    t.cell(i, j).text = "" if v is None else str(v)
        if spec.get("chart"):
            ch = spec["chart"]
            kind = ch.get("type", "column")
            if kind not in PPT_CHARTS:
                raise ValueError(f"chart type must be one of {sorted(PPT_CHARTS)}")
            gf = s.shapes.add_chart(PPT_CHARTS[kind], Inches(0.5), top, Inches(9), Inches(4), _chart_data(ch))
            if ch.get("title"):
                gf.chart.has_title = True
                gf.chart.chart_title.text_frame.text = str(ch["title"])
    if spec.get("notes"):
        s.notes_slide.notes_text_frame.text = str(spec["notes"])


def pptx_write(p: Path, slides: list[dict[str, Any]], mode: str) -> Any:
    if mode == "create":
        prs = pptx.Presentation()
    elif mode == "append":
        prs = open_pptx(p)
    else:
        raise ValueError("mode must be create or append")
    for s in slides:
        if not isinstance(s, dict):
            raise ValueError("each slide must be an object")
        add_slide(prs, s)
    return prs


def _slide(prs: Any, n: Any) -> Any:
    if not isinstance(n, int) or not 1 <= n <= len(prs.slides):
        raise ValueError(f"slide {n!r} out of range 1..{len(prs.slides)}")
    return prs.slides[n - 1]


def _shapes_with_text(slide: Any) -> list[Any]:
    out = []
    for sh in slide.shapes:
        if sh.has_text_frame:
            out += list(sh.text_frame.paragraphs)
        if getattr(sh, "has_table", False) and sh.has_table:
            out += [q for r in sh.table.rows for c in r.cells for q in c.text_frame.paragraphs]
    return out


def pptx_edit(prs: Any, ops: list[dict[str, Any]]) -> int:
    n = 0
    for op in ops:
        kind = op.get("op")
        if kind == "set_title":
            s = _slide(prs, op.get("slide"))
            if s.shapes.title is None:
                raise ValueError("that slide has no title placeholder")
            s.shapes.title.text = str(op.get("text", ""))
        elif kind == "set_notes":
            _slide(prs, op.get("slide")).notes_slide.notes_text_frame.text = str(op.get("text", ""))
        elif kind == "replace":
            find, repl = str(op.get("find", "")), str(op.get("replace", ""))
            if not find:
                raise ValueError("replace needs a non-empty find")
            slides = [_slide(prs, op["slide"])] if op.get("slide") is not None else list(prs.slides)
            hits = 0
            for s in slides:
                for para in _shapes_with_text(s):
                    if find in para.text:
                        hits += 1
                        runs = para.runs
                        new = para.text.replace(find, repl)
                        if runs:
                            runs[0].text = new
                            for r in runs[1:]:
                                r._r.getparent().remove(r._r)
            if not hits:
                raise ValueError(f"text {find!r} not found")
        elif kind == "set_table_cell":
            s = _slide(prs, op.get("slide"))
            tables = [sh.table for sh in s.shapes if getattr(sh, "has_table", False) and sh.has_table]
            ti = int(op.get("table", 0))
            if not 0 <= ti < len(tables):
                raise ValueError("no such table on that slide")
            t = tables[ti]
            r, c = op.get("row"), op.get("col")
            if not (isinstance(r, int) and isinstance(c, int) and 0 <= r < len(t.rows) and 0 <= c < len(t.columns)):
                raise ValueError("row/col out of range")
            t.cell(r, c).text = str(op.get("text", ""))
        elif kind == "set_chart_data":
            s = _slide(prs, op.get("slide"))
            charts = [sh.chart for sh in s.shapes if getattr(sh, "has_chart", False) and sh.has_chart]
            if not charts:
                raise ValueError("that slide has no chart")
            charts[int(op.get("chart", 0))].replace_data(_chart_data(op))
        elif kind == "delete_slide":
            s = _slide(prs, op.get("slide"))
            ids = prs.slides._sldIdLst
            for sid in list(ids):
                if prs.slides.part.related_part(sid.rId) is s.part:
                    prs.part.drop_rel(sid.rId)
                    ids.remove(sid)
        elif kind == "move_slide":
            _slide(prs, op.get("slide"))
            to = op.get("to")
            if not isinstance(to, int) or not 1 <= to <= len(prs.slides):
                raise ValueError("to out of range")
            ids = prs.slides._sldIdLst
            el = list(ids)[op["slide"] - 1]
            ids.remove(el)
            ids.insert(to - 1, el)
        elif kind == "add_slide":
            add_slide(prs, op.get("slide_spec") or {})
        else:
            raise ValueError(f"unknown op {kind!r}")
        n += 1
    return n

