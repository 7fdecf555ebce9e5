"""Safe opening of hostile office documents (docx, xlsx, pptx, pdf).

Agent-written files are hostile input, both in the office environment's tools and in verifiers,
so both open them only through these helpers. Before a parser sees a file we check, from the
bytes alone: its size; that its content matches its extension (a zip with the right main part
for OOXML, `%PDF-` for PDF); the zip's entry count, declared uncompressed size and per-entry
compression ratio (Python's zipfile stops reading an entry at its declared size, so declared
sizes bound memory); that no entry is encrypted; and that no XML part carries a DTD (OOXML never
needs one, and a DTD is how entity-expansion bombs start). python-docx and python-pptx parse with
`resolve_entities=False`; openpyxl uses defusedxml when it is installed (it is, in both runtimes).
Password-protected OOXML is an OLE compound file, not a zip, and is refused as such.
"""

from __future__ import annotations

import re
import zipfile
from pathlib import Path
from typing import Any

MAX_FILE_BYTES = 50 * 1024 * 1024
MAX_ENTRIES = 5_000
MAX_TOTAL_UNCOMPRESSED = 200 * 1024 * 1024
MAX_RATIO = 200
MAX_PDF_PAGES = 500

OLE_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
MAIN_PART = {
    "docx": "wordprocessingml.document.main+xml",
    "xlsx": "spreadsheetml.sheet.main+xml",
    "pptx": "presentationml.presentation.main+xml",
}
KINDS = ("docx", "xlsx", "pptx", "pdf")
_DTD = re.compile(rb"<!(DOCTYPE|ENTITY)", re.IGNORECASE)


class UnsafeDocument(ValueError):
    """The file is not a document we are willing to parse, with the reason."""


def kind_of(path: Path) -> str:
    """The document kind from the extension (`docx`, `xlsx`, `pptx`, `pdf`)."""
    ext = path.suffix.lower().lstrip(".")
    if ext not in KINDS:
        raise UnsafeDocument(f"{path.name}: unsupported document type {ext or '(none)'!r}; use one of {KINDS}")
    return ext


def inspect(path: Path, *, max_bytes: int = MAX_FILE_BYTES) -> str:
    """Check `path` without parsing it and return its kind; raise `UnsafeDocument` if it is unsafe."""
    kind = kind_of(path)
    if path.is_symlink() or not path.is_file():
        raise UnsafeDocument(f"{path.name}: missing or not a regular file")
    size = path.stat().st_size
    if size > max_bytes:
        raise UnsafeDocument(f"{path.name}: {size} bytes is over the {max_bytes}-byte limit")
    with path.open("rb") as f:
        head = f.read(8)
    if kind == "pdf":
        if not head.startswith(b"%PDF-"):
            raise UnsafeDocument(f"{path.name}: not a PDF (no %PDF- header)")
        return kind
    if head == OLE_MAGIC:
        raise UnsafeDocument(f"{path.name}: password-protected or legacy binary Office file (OLE), not {kind}")
    if not head.startswith(b"PK\x03\x04"):
        raise UnsafeDocument(f"{path.name}: not a {kind} file (not a zip package)")
    _check_zip(path, kind)
    return kind


def _check_zip(path: Path, kind: str) -> None:
    try:
        with zipfile.ZipFile(path) as z:
            infos = z.infolist()
            if len(infos) > MAX_ENTRIES:
                raise UnsafeDocument(f"{path.name}: {len(infos)} zip entries, over the {MAX_ENTRIES} limit")
            total = 0
            for info in infos:
                if info.flag_bits & 0x1:
                    raise UnsafeDocument(f"{path.name}: encrypted zip entry {info.filename!r}")
                total += info.file_size
                if info.file_size > 1024 * 1024 and info.file_size > MAX_RATIO * max(info.compress_size, 1):
                    raise UnsafeDocument(f"{path.name}: entry {info.filename!r} compression ratio over {MAX_RATIO}")
            if total > MAX_TOTAL_UNCOMPRESSED:
                raise UnsafeDocument(f"{path.name}: {total} bytes uncompressed, over {MAX_TOTAL_UNCOMPRESSED}")
            names = {i.filename for i in infos}
            if "[Content_Types].xml" not in names:
                raise UnsafeDocument(f"{path.name}: not an Office Open XML package (no [Content_Types].xml)")
            for info in infos:
                if info.filename.endswith((".xml", ".rels", ".vml")):
                    with z.open(info) as part:
                        tail = b""
                        while chunk := part.read(1 << 20):
                            if _DTD.search(tail + chunk):
                                raise UnsafeDocument(f"{path.name}: XML part {info.filename!r} declares a DTD")
                            tail = chunk[-16:]
            types = z.read("[Content_Types].xml")
            if MAIN_PART[kind].encode() not in types:
                raise UnsafeDocument(f"{path.name}: the package is not a {kind} document")
    except UnsafeDocument:
        raise
    except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, EOFError, KeyError, ValueError) as e:
        raise UnsafeDocument(f"{path.name}: corrupt {kind} package: {e}") from e


def _guard(path: Path, kind: str) -> None:
    got = inspect(path)
    if got != kind:
        raise UnsafeDocument(f"{path.name}: expected a {kind}, got {got}")


def open_docx(path: Path) -> Any:
    """A python-docx Document, after `inspect`."""
    _guard(path, "docx")
    import docx

    try:
        return docx.Document(str(path))
    except Exception as e:  # a parser error on hostile input is the file's fault
        raise UnsafeDocument(f"{path.name}: cannot parse docx: {type(e).__name__}: {e}") from e


def open_xlsx(path: Path, *, data_only: bool = False) -> Any:
    """An openpyxl Workbook (formulas, or cached values with `data_only`), after `inspect`."""
    _guard(path, "xlsx")
    import openpyxl

    try:
        return openpyxl.load_workbook(str(path), data_only=data_only)
    except Exception as e:
        raise UnsafeDocument(f"{path.name}: cannot parse xlsx: {type(e).__name__}: {e}") from e


def open_pptx(path: Path) -> Any:
    """A python-pptx Presentation, after `inspect`."""
    _guard(path, "pptx")
    import pptx

    try:
        return pptx.Presentation(str(path))
    except Exception as e:
        raise UnsafeDocument(f"{path.name}: cannot parse pptx: {type(e).__name__}: {e}") from e


def open_pdf(path: Path) -> Any:
    """A pypdf PdfReader, after `inspect`; encrypted PDFs and oversized page counts are refused."""
    _guard(path, "pdf")
    import pypdf

    try:
        reader = pypdf.PdfReader(str(path))
        if reader.is_encrypted:
            raise UnsafeDocument(f"{path.name}: password-protected PDF")
        n = len(reader.pages)
    except UnsafeDocument:
        raise
    except Exception as e:
        raise UnsafeDocument(f"{path.name}: cannot parse pdf: {type(e).__name__}: {e}") from e
    if n > MAX_PDF_PAGES:
        raise UnsafeDocument(f"{path.name}: {n} pages, over the {MAX_PDF_PAGES} limit")
    return reader


def open_any(path: Path) -> tuple[str, Any]:
    """(kind, parsed document) for any supported document."""
    kind = kind_of(path)
    opener = {"docx": open_docx, "xlsx": open_xlsx, "pptx": open_pptx, "pdf": open_pdf}[kind]
    return kind, opener(path)
