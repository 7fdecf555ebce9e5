"""Office-document checks over the final workspace (docx, xlsx, pptx, pdf).

Every helper opens files through `verifiers.office_safe` (hostile input) and asserts its target
exists first, so a missing or unreadable file is a failed check, never a vacuous pass.

Spreadsheet values are never taken from the agent's file: openpyxl stores no computed values and
a cached value can say anything. At export the environment writes a LibreOffice-recalculated copy
of every workbook to `.envhub/recalc/<path>` with the sha256 of the file it came from in
`.envhub/recalc/manifest.json`; `values()` reads that copy after checking the hash, while
`formulas()` reads the agent's own file. The parsers below are also what the environment's
`read_document` tool shows the agent, so agent and verifier see documents the same way.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from pathlib import Path
from typing import Any

from verifiers import STATE
from verifiers.office_safe import UnsafeDocument, open_docx, open_pdf, open_pptx, open_xlsx

RECALC_DIR = ".envhub/recalc"
PERTURBED_DIR = ".envhub/perturbed"
JUDGE_FILE = ".envhub/judge.json"


# --- locating and opening ---------------------------------------------------------------------

def path(rel: str, root: Path | None = None) -> Path:
    base = root or STATE
    p = base / rel
    assert ".." not in Path(rel).parts and not Path(rel).is_absolute(), f"bad path {rel!r}"
    assert p.is_file() and not p.is_symlink(), f"{rel} is missing"
    return p


def _open(opener: Any, rel: str, root: Path | None = None, **kw: Any) -> Any:
    p = path(rel, root)
    try:
        return opener(p, **kw)
    except UnsafeDocument as e:
        raise AssertionError(f"{rel} is not a readable document: {e}") from None


def docx(rel: str, root: Path | None = None) -> Any:
    return _open(open_docx, rel, root)


def pptx(rel: str, root: Path | None = None) -> Any:
    return _open(open_pptx, rel, root)


def pdf(rel: str, root: Path | None = None) -> Any:
    return _open(open_pdf, rel, root)


def formulas(rel: str, root: Path | None = None) -> Any:
    """The agent's workbook as written (formula text in formula cells)."""
    return _open(open_xlsx, rel, root)


def values(rel: str, root: Path | None = None) -> Any:
    """The recalculated copy of the agent's workbook (values computed by LibreOffice at export)."""
    base = root or STATE
    path(rel, root)
    manifest_p = base / RECALC_DIR / "manifest.json"
    assert manifest_p.is_file(), "the recalculated copies are missing from the exported state"
    entry = json.loads(manifest_p.read_text()).get(rel)
    assert entry is not None, f"{rel} was not recalculated at export"
    assert not entry.get("error"), f"{rel} could not be recalculated: {entry['error']}"
    assert entry.get("sha256") == sha256(rel, root), f"the recalculated copy of {rel} does not match the file"
    return _open(open_xlsx, f"{RECALC_DIR}/{rel}", base, data_only=True)


def perturbed(rel: str, root: Path | None = None) -> list[tuple[dict[str, float], Any]]:
    """The agent's workbook recalculated at each input point export drew for this verify (liveness
    by recalculation): (the inputs it set, {"Sheet!A1": value}; the recalculated copy) per point."""
    base = root or STATE
    values(rel, root)  # the same manifest and hash guards
    entry = json.loads((base / RECALC_DIR / "manifest.json").read_text())[rel]
    assert not entry.get("perturb_error"), \
        f"{rel} could not be recalculated with changed inputs: {entry['perturb_error']}"
    points = entry.get("perturbed") or []
    assert points, f"{rel} was not recalculated with changed inputs at export"
    out = []
    for i, point in enumerate(points):
        copy = f"{PERTURBED_DIR}/{i}/{rel}"
        assert (base / copy).is_file(), f"the copy of {rel} recalculated at input point {i + 1} is missing"
        out.append(({str(k): float(v) for k, v in point["set"].items()}, _open(open_xlsx, copy, base, data_only=True)))
    return out


def sha256(rel: str, root: Path | None = None) -> str:
    return hashlib.sha256(path(rel, root).read_bytes()).hexdigest()


def sheet(wb: Any, name: str) -> Any:
    assert name in wb.sheetnames, f"sheet {name!r} is missing (sheets: {wb.sheetnames})"
    return wb[name]


# --- spreadsheets -----------------------------------------------------------------------------

def rows(ws: Any, *, min_row: int = 1, max_cols: int | None = None) -> list[list[Any]]:
    """Cell values row by row, trailing empty rows dropped."""
    out = [list(r) for r in ws.iter_rows(min_row=min_row, max_col=max_cols, values_only=True)]
    while out and all(v is None or v == "" for v in out[-1]):
        out.pop()
    return out


def header(ws: Any) -> list[str]:
    first = next(ws.iter_rows(min_row=1, max_row=1, values_only=True), ())
    vals = [str(v).strip() if v is not None else "" for v in first]
    while vals and not vals[-1]:
        vals.pop()
    return vals


def records(ws: Any) -> list[dict[str, Any]]:
    """Rows under the header as dicts keyed by header names."""
    head = header(ws)
    return [dict(zip(head, r)) for r in rows(ws, min_row=2, max_cols=len(head))]


def formula(ws: Any, ref: str) -> str | None:
    cell = ws[ref]
    return cell.value if cell.data_type == "f" and isinstance(cell.value, str) else None


def number(v: Any) -> float | None:
    if isinstance(v, bool) or v is None:
        return None
    if isinstance(v, int | float):
        return float(v)
    if isinstance(v, str):
        s = v.strip().replace(",", "").replace("$", "").replace("₩", "").replace("%", "")
        try:
            return float(s)
        except ValueError:
            return None
    return None


def close(actual: Any, expected: float, tol: float = 0.01, rel: float = 1e-6) -> bool:
    a = number(actual)
    return a is not None and math.isfinite(a) and abs(a - expected) <= max(tol, rel * abs(expected))


def assert_close(actual: Any, expected: float, what: str, tol: float = 0.01) -> None:
    assert close(actual, expected, tol), f"{what}: expected {expected}, got {actual!r}"


def charts(ws: Any) -> list[dict[str, Any]]:
    """Charts on a worksheet: type, title, series value/category references."""
    out = []
    for ch in getattr(ws, "_charts", []):
        series = []
        for s in ch.series:
            val = s.val.numRef.f if s.val is not None and s.val.numRef is not None else None
            cat = None
            if s.cat is not None:
                cat = (s.cat.numRef or s.cat.strRef).f if (s.cat.numRef or s.cat.strRef) else None
            series.append({"values": val, "categories": cat})
        out.append({"type": ch.tagname, "title": _chart_title(ch), "series": series})
    return out


def _chart_title(ch: Any) -> str:
    try:
        runs = ch.title.tx.rich.p[0].r
        return "".join(r.t for r in runs)
    except (AttributeError, IndexError, TypeError):
        return ""


def conditional_rules(ws: Any) -> list[dict[str, Any]]:
    out = []
    for rng in ws.conditional_formatting:
        for rule in rng.rules:
            out.append({"range": str(rng.sqref), "type": rule.type, "formula": list(rule.formula or [])})
    return out


def hidden_sheets(wb: Any) -> list[str]:
    return [ws.title for ws in wb.worksheets if ws.sheet_state != "visible"]


def hidden_rows_with_data(ws: Any) -> list[int]:
    out = []
    for idx, dim in ws.row_dimensions.items():
        if dim.hidden and any(c.value not in (None, "") for c in ws[idx]):
            out.append(idx)
    return out


def ref_cells(wb: Any, ref: str) -> list[Any]:
    """Values of an absolute range reference like `'Summary'!$B$2:$B$6`."""
    m = re.match(r"^'?(.+?)'?!\$?([A-Z]+)\$?(\d+)(?::\$?([A-Z]+)\$?(\d+))?$", ref or "")
    assert m, f"not a range reference: {ref!r}"
    ws = sheet(wb, m.group(1))
    a = f"{m.group(2)}{m.group(3)}"
    b = f"{m.group(4)}{m.group(5)}" if m.group(4) else a
    return [c.value for row in ws[f"{a}:{b}"] for c in row]


# --- word documents ---------------------------------------------------------------------------

def _hidden_run(run: Any) -> bool:
    f = run.font
    if f.hidden:
        return True
    if f.size is not None and f.size.pt < 4:
        return True
    try:
        rgb = f.color.rgb if f.color is not None and f.color.type is not None else None
    except (AttributeError, ValueError):
        rgb = None
    return rgb is not None and str(rgb).upper() in ("FFFFFF", "FEFEFE")


def paragraphs(doc: Any) -> list[dict[str, Any]]:
    """Body paragraphs: index, style name, text (visible text only), heading level."""
    out = []
    for i, p in enumerate(doc.paragraphs):
        style = p.style.name if p.style is not None else ""
        m = re.match(r"^Heading (\d)$", style)
        level = int(m.group(1)) if m else (0 if style == "Title" else None)
        out.append({"index": i, "style": style, "text": p.text, "level": level})
    return out


def headings(doc: Any) -> list[tuple[int, str]]:
    """(level, text) of every Heading n / Title paragraph, in order."""
    return [(p["level"], p["text"].strip()) for p in paragraphs(doc) if p["level"] is not None]


def tables(doc: Any) -> list[list[list[str]]]:
    return [[[c.text.strip() for c in row.cells] for row in t.rows] for t in doc.tables]


def text(doc: Any) -> str:
    parts = [p.text for p in doc.paragraphs]
    for t in doc.tables:
        for row in t.rows:
            parts.extend(c.text for c in row.cells)
    return "\n".join(parts)


def hidden_text(doc: Any) -> list[str]:
    """Text the reader cannot see: hidden, white or tiny runs (keyword stuffing)."""
    found = []
    for p in doc.paragraphs:
        found += [r.text for r in p.runs if r.text.strip() and _hidden_run(r)]
    for t in doc.tables:
        for row in t.rows:
            for c in row.cells:
                for p in c.paragraphs:
                    found += [r.text for r in p.runs if r.text.strip() and _hidden_run(r)]
    return found


def section_text(doc: Any, heading: str) -> str:
    """Body text between the heading `heading` and the next heading of the same or higher level."""
    paras = paragraphs(doc)
    start = next((i for i, p in enumerate(paras) if p["level"] and p["text"].strip() == heading), None)
    assert start is not None, f"heading {heading!r} is missing"
    level = paras[start]["level"]
    body = []
    for p in paras[start + 1:]:
        if p["level"] is not None and p["level"] <= level:
            break
        body.append(p["text"])
    return "\n".join(body).strip()


def words(s: str) -> int:
    return len(re.findall(r"\w+", s))


# --- presentations ----------------------------------------------------------------------------

def slides(prs: Any) -> list[dict[str, Any]]:
    """Per slide: title, texts, tables, charts (type, categories, series values), notes, off-slide shapes."""
    out = []
    width, height = prs.slide_width, prs.slide_height
    for i, s in enumerate(prs.slides, 1):
        title = s.shapes.title.text_frame.text.strip() if s.shapes.title is not None else ""
        texts, tbls, chs, off = [], [], [], []
        for sh in s.shapes:
            if sh.has_text_frame and sh.text_frame.text.strip():
                texts.append(sh.text_frame.text)
            if getattr(sh, "has_table", False) and sh.has_table:
                tbls.append([[c.text.strip() for c in r.cells] for r in sh.table.rows])
            if getattr(sh, "has_chart", False) and sh.has_chart:
                chs.append(_pptx_chart(sh.chart))
            if sh.left is not None and sh.top is not None and (
                    sh.left >= width or sh.top >= height or sh.left + (sh.width or 0) <= 0
                    or sh.top + (sh.height or 0) <= 0):
                off.append(sh.name)
        notes = s.notes_slide.notes_text_frame.text.strip() if s.has_notes_slide else ""
        out.append({"index": i, "layout": s.slide_layout.name, "title": title, "texts": texts, "tables": tbls,
                    "charts": chs, "notes": notes, "off_slide": off})
    return out


def _pptx_chart(chart: Any) -> dict[str, Any]:
    try:
        cats = [str(c) for c in chart.plots[0].categories] if len(chart.plots) else []
    except (IndexError, AttributeError):
        cats = []
    series = [{"name": s.name, "values": [float(v) if v is not None else None for v in s.values]}
              for p in chart.plots for s in p.series]
    return {"type": str(chart.chart_type).split(" ")[0].split(".")[-1], "categories": cats, "series": series,
            "title": chart.chart_title.text_frame.text if chart.has_title else ""}


def slide_text(slide: dict[str, Any]) -> str:
    parts = list(slide["texts"]) + [c for t in slide["tables"] for r in t for c in r]
    return "\n".join(parts)


# --- PDF --------------------------------------------------------------------------------------

def pdf_pages(reader: Any) -> list[str]:
    return [(pg.extract_text() or "") for pg in reader.pages]


def pdf_outline(reader: Any) -> list[tuple[str, int]]:
    """Top-level and nested bookmarks as (title, 1-based page)."""
    out: list[tuple[str, int]] = []

    def walk(items: Any) -> None:
        for it in items:
            if isinstance(it, list):
                walk(it)
            else:
                try:
                    out.append((str(it.title), reader.get_destination_page_number(it) + 1))
                except Exception:
                    out.append((str(getattr(it, "title", "")), 0))
    walk(reader.outline)
    return out


def pdf_fields(reader: Any) -> dict[str, str]:
    fields = reader.get_fields() or {}
    return {k: str(v.get("/V", "")) for k, v in fields.items()}


def normalise(s: str) -> str:
    """Whitespace-collapsed text, for comparing text extracted from PDFs."""
    return re.sub(r"\s+", " ", s or "").strip()


# --- the optional judge ----------------------------------------------------------------------

def judge_scores(root: Path | None = None) -> dict[str, float] | None:
    """Rubric scores the server-side judge wrote at export, or None when the judge is off."""
    p = (root or STATE) / JUDGE_FILE
    if not p.is_file():
        return None
    data = json.loads(p.read_text())
    return {str(k): max(0.0, min(1.0, float(v))) for k, v in data.get("scores", {}).items()}


# --- standard gate checks --------------------------------------------------------------------

def pdf_invisible_text(reader: Any) -> list[int]:
    """1-based pages drawing text in render mode 3 (invisible): hidden keyword stuffing."""
    pages = []
    for i, pg in enumerate(reader.pages, 1):
        contents = pg.get_contents()
        data = contents.get_data() if contents is not None else b""
        if re.search(rb"(^|\s)3\s+Tr(\s|$)", data):
            pages.append(i)
    return pages


def assert_no_hidden_content(rel: str, root: Path | None = None) -> None:
    """Fail when a deliverable carries content a reader cannot see (hidden text, sheets, shapes)."""
    suffix = Path(rel).suffix.lower()
    if suffix == ".docx":
        hidden = hidden_text(docx(rel, root))
        assert not hidden, f"{rel} has hidden text: {hidden[:3]!r}"
    elif suffix == ".xlsx":
        wb = formulas(rel, root)
        assert not hidden_sheets(wb), f"{rel} has hidden sheets {hidden_sheets(wb)}"
        for ws in wb.worksheets:
            assert not hidden_rows_with_data(ws), f"{rel}!{ws.title} has hidden rows with data"
    elif suffix == ".pptx":
        off = [(s["index"], s["off_slide"]) for s in slides(pptx(rel, root)) if s["off_slide"]]
        assert not off, f"{rel} has shapes outside the slide: {off}"
    elif suffix == ".pdf":
        pages = pdf_invisible_text(pdf(rel, root))
        assert not pages, f"{rel} draws invisible text on pages {pages}"
    else:
        raise AssertionError(f"no hidden-content check for {rel}")


def assert_unchanged(hashes: dict[str, str], root: Path | None = None) -> None:
    """Every listed input file still exists with the same bytes."""
    assert hashes, "no inputs listed"
    for rel, digest in hashes.items():
        assert sha256(rel, root) == digest, f"{rel} was modified"
