"""What `read_document` shows the agent: the same parsed view the verifiers use."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from openpyxl.utils import get_column_letter, range_boundaries

from verifiers import office as ov
from verifiers.office_safe import open_docx, open_pdf, open_pptx, open_xlsx

MAX_ROWS = 300
MAX_COLS = 40


def read_docx(p: Path) -> tuple[str, dict[str, Any]]:
    doc = open_docx(p)
    paras = ov.paragraphs(doc)
    tbls = ov.tables(doc)
    lines = [f"[{q['index']}] ({q['style']}) {q['text']}" for q in paras[:2000]]
    for n, t in enumerate(tbls):
        lines.append(f"--- table {n} ({len(t)} rows) ---")
        lines += [" | ".join(r) for r in t[:MAX_ROWS]]
    return "\n".join(lines), {"kind": "docx", "paragraphs": paras[:2000], "tables": tbls}


def _cell_grid(ws: Any, wsv: Any, rng: str | None) -> list[list[dict[str, Any]]]:
    if rng:
        min_c, min_r, max_c, max_r = range_boundaries(rng)
    else:
        min_c, min_r = 1, 1
        max_c, max_r = ws.max_column, ws.max_row
    max_c = min(max_c, min_c + MAX_COLS - 1)
    max_r = min(max_r, min_r + MAX_ROWS - 1)
    grid = []
    for r in range(min_r, max_r + 1):
        row = []
        for c in range(min_c, max_c + 1):
            ref = f"{get_column_letter(c)}{r}"
            cell = ws[ref]
            if cell.value is None:
                continue
            entry: dict[str, Any] = {"cell": ref, "value": wsv[ref].value if wsv is not None else cell.value}
            if cell.data_type == "f":
                entry["formula"] = str(cell.value)
            row.append(entry)
        if row:
            grid.append(row)
    return grid


def _plain(v: Any) -> Any:
    return v if v is None or isinstance(v, bool | int | float | str) else str(v)


def read_xlsx(p: Path, sheet: str | None = None, rng: str | None = None,
              values_from: Path | None = None) -> tuple[str, dict[str, Any]]:
    wb = open_xlsx(p)
    wbv = open_xlsx(values_from or p, data_only=True)
    names = [sheet] if sheet else wb.sheetnames
    lines, data = [f"sheets: {wb.sheetnames}"], {"kind": "xlsx", "sheets": {}}
    for name in names:
        if name not in wb.sheetnames:
            raise ValueError(f"no sheet {name!r}; sheets are {wb.sheetnames}")
        ws, wsv = wb[name], (wbv[name] if name in wbv.sheetnames else None)
        grid = _cell_grid(ws, wsv, rng)
        for row in grid:
            for e in row:
                e["value"] = _plain(e["value"])
        charts = ov.charts(ws)
        lines.append(f"=== sheet {name} ({ws.max_row} rows x {ws.max_column} cols) ===")
        for row in grid:
            lines.append("  ".join(f"{e['cell']}={e['value']!r}" + (f" [{e['formula']}]" if "formula" in e else "")
                                   for e in row))
        for ch in charts:
            lines.append(f"chart: {ch}")
        data["sheets"][name] = {"cells": grid, "charts": charts, "conditional_formatting": ov.conditional_rules(ws)}
    if values_from is None:
        lines.append("(values are as cached in the file; formulas written by tools have no cached value until "
                     "xlsx_recalculate)")
    return "\n".join(lines), data


def read_pptx(p: Path) -> tuple[str, dict[str, Any]]:
    slides = ov.slides(open_pptx(p))
    lines = []
    for s in slides:
        lines.append(f"=== slide {s['index']} ({s['layout']}) title: {s['title']!r}")
        lines += [f"  text: {t!r}" for t in s["texts"]]
        lines += [f"  table: {t}" for t in s["tables"]]
        lines += [f"  chart: {c}" for c in s["charts"]]
        if s["notes"]:
            lines.append(f"  notes: {s['notes']!r}")
    return "\n".join(lines), {"kind": "pptx", "slides": slides}


def read_pdf(p: Path) -> tuple[str, dict[str, Any]]:
    reader = open_pdf(p)
    pages = ov.pdf_pages(reader)
    outline = ov.pdf_outline(reader)
    fields = ov.pdf_fields(reader)
    box = reader.pages[0].mediabox if pages else None
    lines = [f"{len(pages)} pages" + (f", page size {float(box.width):.0f}x{float(box.height):.0f} pt" if box else "")]
    if outline:
        lines.append(f"outline: {outline}")
    if fields:
        lines.append(f"form fields: {fields}")
    for i, t in enumerate(pages, 1):
        lines.append(f"=== page {i} ===\n{t}")
    return "\n".join(lines), {"kind": "pdf", "pages": pages, "outline": outline, "fields": fields}
