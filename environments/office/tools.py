"""The office tools: their MCP specs and the code that runs them over a `Workspace`.

Tools are plain functions in the server process (no sandbox: nothing the agent sends is
executed), over paths `Workspace.path` keeps inside the workspace; a path naming a folder, a FIFO
or a name the OS refuses is the agent's error, naming why (`Tools._path`, `PATH_ERRNOS`). Every
document is opened through `verifiers.office_safe`; a document that fails those checks, one that
crashes LibreOffice, or a bad argument, is an `AgentError`; other LibreOffice faults are
`EnvError` (`lo.py`).
"""

from __future__ import annotations

import errno
import os
import shutil
import stat
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pypdf
from openpyxl.utils.exceptions import (CellCoordinatesException, IllegalCharacterError, InvalidFileException,
                                       NamedRangeException, SheetTitleException)

from envhub.errors import AgentError
from envhub.tools import Param, Tool, find
from environments.office import readers, writers
from environments.office.lo import DocumentRejected, LibreOffice
from environments.office.workspace import Workspace
from verifiers.office_safe import UnsafeDocument, inspect, kind_of, open_pdf

S = Param("string", min_len=1, max_len=500)
OPT = Param("string", required=False, min_len=1, max_len=500)
CELL = Param(("string", "number", "boolean", "null"), max_len=32_767)  # Excel's cell limit
#: Blocks, ops and slides are small documents of their own: free-form JSON, bounded in size and
#: depth by the core; the writers check their fields and answer a bad one as the agent's error.
PARTS = Param("array", items=Param("any"), min_items=1, max_items=500)
#: OS errors a path the agent named can cause: a folder or file in the way, a name too long, a loop.
PATH_ERRNOS = frozenset({errno.EISDIR, errno.ENOTDIR, errno.ENAMETOOLONG, errno.ELOOP})
_SPECIAL = {stat.S_IFIFO: "a FIFO", stat.S_IFCHR: "a character device", stat.S_IFBLK: "a block device",
            stat.S_IFSOCK: "a socket"}


TOOLS = [
    Tool("list_files", "List the documents in the workspace with their sizes.", {}),
    Tool("read_document", "Read a docx (paragraphs with index and style, tables), xlsx (cells with values and "
          "formulas, charts; optional sheet and A1 range), pptx (slides: title, text, tables, charts, notes) or pdf "
          "(text per page, outline, form fields).", {"path": S, "sheet": OPT, "range": OPT}),
    Tool("xlsx_write", "Write cells of a workbook sheet (created if missing). Values are strings, numbers or null; "
          "a string starting with '=' is a live formula. Either `cells` {A1: value} or `rows` [[...]] from `start`.",
          {"path": S, "sheet": S, "cells": Param("object", required=False, values=CELL),
           "rows": Param("array", required=False, items=Param("array", items=CELL, max_items=1000), max_items=10_000),
           "start": Param("string", required=False, min_len=1, max_len=20, default="A1"),
           "clear": Param("boolean", required=False, default=False),
           "create": Param("boolean", required=False, default=False)}),
    Tool("xlsx_sheet", "Add, delete or rename a sheet.",
          {"path": S, "action": Param("string", enum=("add", "delete", "rename")), "sheet": S, "new_name": OPT}),
    Tool("xlsx_chart", "Add a chart to a sheet from ranges like Summary!B1:B6 (data, with header when "
          "titles_from_data) and Summary!A2:A6 (categories).",
          {"path": S, "sheet": S, "type": Param("string", enum=("bar", "column", "line", "pie")), "data": S,
           "categories": S, "anchor": Param("string", required=False, min_len=1, max_len=20, default="H2"),
           "title": Param("string", required=False, max_len=500, default=""),
           "titles_from_data": Param("boolean", required=False, default=True)}),
    Tool("xlsx_conditional_format", "Add a formula-based conditional formatting rule with a fill colour.",
          {"path": S, "sheet": S, "range": S, "formula": S,
           "fill": Param("string", required=False, pattern=r"^[0-9A-Fa-f]{6}$", default="FFC7CE")}),
    Tool("xlsx_recalculate", "Recalculate a workbook with LibreOffice and show the computed values "
          "(the file is not changed).", {"path": S, "sheet": OPT, "range": OPT}),
    Tool("docx_write", "Create a Word document (mode create) or append to one (mode append) from blocks: "
          "{type: heading, text, level} | {type: paragraph, text, style?, bold?} | {type: bullets, items} | "
          "{type: table, rows, style?} | {type: page_break}.",
          {"path": S, "blocks": PARTS,
           "mode": Param("string", required=False, enum=("create", "append"), default="create")}),
    Tool("docx_edit", "Edit a Word document in order: {op: set_style, index, style} | {op: set_text, index, text} "
          "| {op: delete, index} | {op: replace, find, replace} | {op: insert_after, index, block} | "
          "{op: paragraphs_to_table, start, end, sep?}. Indexes are paragraph indexes from read_document, "
          "as they stand after the previous op.", {"path": S, "ops": PARTS}),
    Tool("pptx_write", "Create a deck (mode create) or append slides (mode append): each slide {layout?: title, "
          "title, subtitle?, bullets?, table? [[...]], chart? {type, categories, series: [{name, values}], title?}, "
          "notes?}.", {"path": S, "slides": PARTS,
                       "mode": Param("string", required=False, enum=("create", "append"), default="create")}),
    Tool("pptx_edit", "Edit a deck (slides are 1-based): {op: set_title, slide, text} | {op: set_notes, slide, "
          "text} | {op: replace, slide?, find, replace} | {op: set_table_cell, slide, table?, row, col, text} | "
          "{op: set_chart_data, slide, chart?, categories, series} | {op: delete_slide, slide} | "
          "{op: move_slide, slide, to} | {op: add_slide, slide_spec}.", {"path": S, "ops": PARTS}),
    Tool("pdf_export", "Convert a docx, xlsx or pptx to PDF with LibreOffice.", {"source": S, "dest": S}),
    Tool("pdf_merge", "Concatenate PDFs into one, with an optional bookmark per part at its first page.",
          {"dest": S, "parts": Param("array", min_items=1, max_items=500, items=Param("object", properties={
              "path": S, "bookmark": Param("string", required=False, max_len=500)})),
           "title": Param("string", required=False, max_len=500)}),
    Tool("copy_file", "Copy a file within the workspace.", {"source": S, "dest": S}),
    Tool("delete_file", "Delete a file from the workspace.", {"path": S}),
]


class Tools:
    """Tool dispatch over one workspace (sync; the environment runs it in a thread)."""

    def __init__(self, ws: Workspace, lo: Callable[[], LibreOffice], max_output: int) -> None:
        self.ws = ws
        self.lo = lo
        self.max_output = max_output

    def run(self, name: str, args: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        # The server checked the call already; checking again (cheap) fills defaults for direct callers.
        args = find(TOOLS, name).check(args)
        fn = getattr(self, f"t_{name}")
        try:
            text, data = fn(args)
        except (UnsafeDocument, DocumentRejected) as e:
            raise AgentError(str(e)) from e
        except IllegalCharacterError as e:  # the agent's text: a control character a workbook cannot hold
            raise AgentError(f"{name}: {ascii(str(e))[1:-1]} (control characters other than tab, newline and "
                             "carriage return cannot be stored in a workbook)") from e
        except (ValueError, KeyError, TypeError, IndexError, CellCoordinatesException, SheetTitleException,
                NamedRangeException, InvalidFileException) as e:  # openpyxl's own refusals of what it was given
            if isinstance(e, AgentError):
                raise
            raise AgentError(f"{name}: {e}") from e
        except OSError as e:
            # What only the agent's path can cause (the workspace refuses most up front); any other
            # OS fault (a full disk, LibreOffice missing) stays the environment's.
            if e.errno not in PATH_ERRNOS:
                raise
            raise AgentError(f"{name}: {e.strerror}", reason=e.strerror) from e
        if len(text) > self.max_output:
            text = text[: self.max_output] + f"\n[truncated at {self.max_output} characters; narrow with sheet/range]"
        return text, data

    def _path(self, rel: str, *, must_exist: bool = False) -> Path:
        """`Workspace.path` (relative, no `..`, no hidden names, no symlinks), and what it names is a
        document or nothing yet: a folder or a file on the way, a FIFO or a device there, is the
        agent's error naming why, before anything opens it (a FIFO would block the read)."""
        p = self.ws.path(rel)
        parts = p.relative_to(self.ws.root).parts
        for n in range(1, len(parts) + 1):
            try:
                mode = os.lstat(self.ws.root.joinpath(*parts[:n])).st_mode
            except FileNotFoundError:
                break  # nothing here yet: a write makes it, and the folders on the way
            if n < len(parts) and not stat.S_ISDIR(mode):
                raise AgentError(f"{rel}: Not a directory ({'/'.join(parts[:n])} is a file)", path=rel,
                                 reason="Not a directory")
            if n == len(parts) and not stat.S_ISREG(mode):
                reason = "Is a directory" if stat.S_ISDIR(mode) else \
                    f"is {_SPECIAL.get(stat.S_IFMT(mode), 'something else')}, not a regular file"
                raise AgentError(f"{rel}: {reason}", path=rel, reason=reason)
        return self.ws.path(rel, must_exist=True) if must_exist else p

    # -- files ---------------------------------------------------------------------------------
    def t_list_files(self, args: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        files = [{"path": self.ws.rel(p), "bytes": p.stat().st_size} for p in self.ws.files()]
        return "\n".join(f"{f['path']}  ({f['bytes']} bytes)" for f in files) or "(empty)", {"files": files}

    def t_copy_file(self, args: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        src = self._path(args["source"], must_exist=True)
        dest = self._path(args["dest"])
        self.ws.save(dest, lambda tmp: shutil.copyfile(src, tmp))
        return f"copied to {self.ws.rel(dest)}", {"path": self.ws.rel(dest)}

    def t_delete_file(self, args: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        p = self._path(args["path"], must_exist=True)
        p.unlink()
        return f"deleted {self.ws.rel(p)}", {}

    # -- reading -------------------------------------------------------------------------------
    def t_read_document(self, args: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        p = self._path(args["path"], must_exist=True)
        kind = inspect(p)
        if kind == "xlsx":
            return readers.read_xlsx(p, args.get("sheet"), args.get("range"))
        return {"docx": readers.read_docx, "pptx": readers.read_pptx, "pdf": readers.read_pdf}[kind](p)

    # -- spreadsheets --------------------------------------------------------------------------
    def _xlsx(self, args: dict[str, Any], create: bool = False) -> tuple[Path, Any]:
        p = self._path(args["path"])
        if kind_of(p) != "xlsx":
            raise AgentError("path must end in .xlsx")
        return p, writers.load_or_new_workbook(p, create)

    def _save_wb(self, p: Path, wb: Any) -> None:
        self.ws.save(p, lambda tmp: wb.save(tmp))

    def t_xlsx_write(self, args: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        p, wb = self._xlsx(args, create=args["create"])
        n = writers.xlsx_write(wb, args["sheet"], args.get("cells"),
                               args.get("rows"), args["start"],
                               args["clear"])
        self._save_wb(p, wb)
        return f"wrote {n} cells to {self.ws.rel(p)}!{args['sheet']}", {"cells": n}

    def t_xlsx_sheet(self, args: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        p, wb = self._xlsx(args)
        writers.xlsx_sheet(wb, args["action"], args["sheet"], args.get("new_name"))
        self._save_wb(p, wb)
        return f"sheets now: {wb.sheetnames}", {"sheets": wb.sheetnames}

    def t_xlsx_chart(self, args: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        p, wb = self._xlsx(args)
        writers.xlsx_chart(wb, args["sheet"], args["type"], args["data"],
                           args["categories"], args["anchor"], args["title"],
                           args["titles_from_data"])
        self._save_wb(p, wb)
        return "chart added", {}

    def t_xlsx_conditional_format(self, args: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        p, wb = self._xlsx(args)
        writers.xlsx_conditional(wb, args["sheet"], args["range"], args["formula"],
                                 args["fill"])
        self._save_wb(p, wb)
        return "rule added", {}

    def t_xlsx_recalculate(self, args: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        p = self._path(args["path"], must_exist=True)
        if inspect(p) != "xlsx":
            raise AgentError("xlsx_recalculate needs an .xlsx file")
        with tempfile.TemporaryDirectory(prefix="recalc-") as tmp:
            # LibreOffice answers CELL("filename") with the file it loaded: it loads a copy at
            # <tmp>/workspace/<path>, and the agent is shown that as /workspace/<path>, never the
            # host folder the session's workspace lives in.
            copy = Path(tmp) / "workspace" / self.ws.rel(p)
            copy.parent.mkdir(parents=True)
            shutil.copyfile(p, copy)
            out = Path(tmp) / "recalc.xlsx"
            self.lo().recalc(copy, out)
            text, data = readers.read_xlsx(p, args.get("sheet"), args.get("range"), values_from=out)
            return _unhosted(text, tmp), _unhosted(data, tmp)

    # -- word ----------------------------------------------------------------------------------
    def t_docx_write(self, args: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        p = self._path(args["path"])
        if kind_of(p) != "docx":
            raise AgentError("path must end in .docx")
        mode = args["mode"]
        if mode == "append" and not p.is_file():
            raise AgentError(f"{self.ws.rel(p)} does not exist")
        doc = writers.docx_write(p, args["blocks"], mode)
        self.ws.save(p, lambda tmp: doc.save(str(tmp)))
        return f"{self.ws.rel(p)}: {len(doc.paragraphs)} paragraphs, {len(doc.tables)} tables", {}

    def t_docx_edit(self, args: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        p = self._path(args["path"], must_exist=True)
        from verifiers.office_safe import open_docx

        doc = open_docx(p)
        n = writers.docx_edit(doc, args["ops"])
        self.ws.save(p, lambda tmp: doc.save(str(tmp)))
        return f"applied {n} edits to {self.ws.rel(p)}", {}

    # -- presentations -------------------------------------------------------------------------
    def t_pptx_write(self, args: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        p = self._path(args["path"])
        if kind_of(p) != "pptx":
            raise AgentError("path must end in .pptx")
        mode = args["mode"]
        if mode == "append" and not p.is_file():
            raise AgentError(f"{self.ws.rel(p)} does not exist")
        prs = writers.pptx_write(p, args["slides"], mode)
        self.ws.save(p, lambda tmp: prs.save(str(tmp)))
        return f"{self.ws.rel(p)}: {len(prs.slides)} slides", {}

    def t_pptx_edit(self, args: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        p = self._path(args["path"], must_exist=True)
        from verifiers.office_safe import open_pptx

        prs = open_pptx(p)
        n = writers.pptx_edit(prs, args["ops"])
        self.ws.save(p, lambda tmp: prs.save(str(tmp)))
        return f"applied {n} edits to {self.ws.rel(p)}; {len(prs.slides)} slides", {}

    # -- pdf -----------------------------------------------------------------------------------
    def t_pdf_export(self, args: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        src = self._path(args["source"], must_exist=True)
        dest = self._path(args["dest"])
        if inspect(src) == "pdf" or kind_of(dest) != "pdf":
            raise AgentError("pdf_export converts a docx/xlsx/pptx source to a .pdf dest")
        with tempfile.TemporaryDirectory(prefix="pdf-") as tmp:
            copy = Path(tmp) / "workspace" / self.ws.rel(src)  # as in xlsx_recalculate: not the host folder
            copy.parent.mkdir(parents=True)
            shutil.copyfile(src, copy)
            out = Path(tmp) / "out.pdf"
            self.lo().to_pdf(copy, out)
            self.ws.save(dest, lambda t: shutil.copyfile(out, t))
        pages = len(open_pdf(dest).pages)
        return f"wrote {self.ws.rel(dest)} ({pages} pages)", {"pages": pages}

    def t_pdf_merge(self, args: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        dest = self._path(args["dest"])
        if kind_of(dest) != "pdf":
            raise AgentError("dest must end in .pdf")
        parts = args["parts"]
        writer = pypdf.PdfWriter()
        for part in parts:
            src = self._path(part["path"], must_exist=True)
            reader = open_pdf(src)
            first = len(writer.pages)
            for page in reader.pages:
                writer.add_page(page)
            if part.get("bookmark"):
                writer.add_outline_item(str(part["bookmark"]), first)
        if args.get("title"):
            writer.add_metadata({"/Title": str(args["title"])})
        self.ws.save(dest, lambda tmp: writer.write(str(tmp)))
        return f"wrote {self.ws.rel(dest)} ({len(writer.pages)} pages)", {"pages": len(writer.pages)}


def _unhosted(value: Any, folder: str) -> Any:
    """`value` with the host folder a recalculation ran in left out of every string (a file URL
    `file://<folder>/workspace/x.xlsx` reads `file:///workspace/x.xlsx`)."""
    if isinstance(value, str):
        return value.replace(folder, "") if folder in value else value
    if isinstance(value, dict):
        return {k: _unhosted(v, folder) for k, v in value.items()}
    if isinstance(value, list):
        return [_unhosted(v, folder) for v in value]
    return value
