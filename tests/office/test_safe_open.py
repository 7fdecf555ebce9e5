"""Hostile documents are refused before any parser sees them (verifiers/office_safe.py)."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import docx
import openpyxl
import pypdf
import pytest

from verifiers.office_safe import MAX_FILE_BYTES, UnsafeDocument, inspect, open_docx, open_pdf, open_xlsx


def _docx(path: Path) -> Path:
    d = docx.Document()
    d.add_paragraph("hello")
    d.save(str(path))
    return path


def test_a_real_document_opens(tmp_path):
    assert open_docx(_docx(tmp_path / "ok.docx")).paragraphs[0].text == "hello"


def test_zip_bomb_is_refused(tmp_path):
    p = tmp_path / "bomb.xlsx"
    with zipfile.ZipFile(p, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("[Content_Types].xml", "<Types/>")
        z.writestr("xl/worksheets/sheet1.xml", b"\0" * (300 * 1024 * 1024))  # ~300 KB on disk
    assert p.stat().st_size < 2 * 1024 * 1024
    with pytest.raises(UnsafeDocument, match="ratio|uncompressed"):
        open_xlsx(p)


def test_many_entries_are_refused(tmp_path):
    p = tmp_path / "many.docx"
    with zipfile.ZipFile(p, "w") as z:
        z.writestr("[Content_Types].xml", "<Types/>")
        for i in range(5001):
            z.writestr(f"f{i}", b"")
    with pytest.raises(UnsafeDocument, match="entries"):
        inspect(p)


def test_billion_laughs_is_refused(tmp_path):
    src = _docx(tmp_path / "src.docx")
    bomb = ('<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol">'
            + "".join(f'<!ENTITY lol{i} "{("&lol" + str(i - 1) + ";") * 10 if i > 1 else "&lol;" * 10}">'
                      for i in range(1, 10))
            + ']><w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main">'
              '<w:body><w:p><w:r><w:t>&lol9;</w:t></w:r></w:p></w:body></w:document>')
    out = tmp_path / "laughs.docx"
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zout:
        for item in zin.infolist():
            data = bomb.encode() if item.filename == "word/document.xml" else zin.read(item)
            zout.writestr(item, data)
    with pytest.raises(UnsafeDocument, match="DTD"):
        open_docx(out)


def test_right_extension_wrong_content(tmp_path):
    wb = openpyxl.Workbook()
    wb.save(tmp_path / "really-a-workbook.docx")
    with pytest.raises(UnsafeDocument, match="not a docx"):
        open_docx(tmp_path / "really-a-workbook.docx")
    (tmp_path / "text.xlsx").write_text("name,amount\nx,1\n")
    with pytest.raises(UnsafeDocument, match="not a xlsx"):
        open_xlsx(tmp_path / "text.xlsx")
    (tmp_path / "fake.pdf").write_bytes(b"PK\x03\x04 not a pdf")
    with pytest.raises(UnsafeDocument, match="not a PDF"):
        open_pdf(tmp_path / "fake.pdf")


def test_password_protected_pdf_is_refused(tmp_path):
    w = pypdf.PdfWriter()
    w.add_blank_page(200, 200)
    w.encrypt("secret")
    p = tmp_path / "locked.pdf"
    w.write(str(p))
    with pytest.raises(UnsafeDocument, match="password"):
        open_pdf(p)


def test_password_protected_office_file_is_refused(tmp_path):
    # An encrypted OOXML file is an OLE compound file (EncryptionInfo + EncryptedPackage streams).
    p = tmp_path / "locked.xlsx"
    p.write_bytes(b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\0" * 4096)
    with pytest.raises(UnsafeDocument, match="password-protected"):
        open_xlsx(p)


def test_encrypted_zip_entry_is_refused(tmp_path):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("[Content_Types].xml", "<Types/>")
    data = bytearray(buf.getvalue())
    data[6] |= 0x1  # general-purpose flag bit 0 of the local header ...
    cd = data.rfind(b"PK\x01\x02")
    data[cd + 8] |= 0x1  # ... and of the central directory entry: "encrypted"
    p = tmp_path / "enc.docx"
    p.write_bytes(bytes(data))
    with pytest.raises(UnsafeDocument, match="encrypted"):
        inspect(p)


def test_100mb_document_is_refused_quickly(tmp_path):
    p = tmp_path / "huge.docx"
    with p.open("wb") as f:
        f.write(b"PK\x03\x04")
        f.truncate(100 * 1024 * 1024)
    assert p.stat().st_size > MAX_FILE_BYTES
    with pytest.raises(UnsafeDocument, match="over the"):
        open_docx(p)


def test_corrupt_zip_is_refused(tmp_path):
    good = _docx(tmp_path / "good.docx").read_bytes()
    p = tmp_path / "corrupt.docx"
    p.write_bytes(good[: len(good) // 2])
    with pytest.raises(UnsafeDocument, match="corrupt"):
        open_docx(p)
