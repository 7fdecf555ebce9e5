"""The warm LibreOffice: recalculation, PDF export, and crash/hang → EnvError then a restart."""

from __future__ import annotations

import os
import signal
import time

import openpyxl
import pytest

from environments.office.lo import DocumentRejected
from envhub.errors import EnvError


def _wb(path):
    wb = openpyxl.Workbook()
    ws = wb.active
    ws["A1"], ws["A2"], ws["A3"] = 6, 7, "=A1*A2"
    wb.save(path)
    return path


def _soffice_bin(office) -> int:
    """The pid of the real office process (soffice.bin) in the worker's process group."""
    group = os.getpgid(office.proc.pid)
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if os.getpgid(int(entry)) == group and open(f"/proc/{entry}/comm").read().strip() == "soffice.bin":
                    return int(entry)
            except (OSError, ProcessLookupError):
                continue
    raise AssertionError("no soffice.bin found")


def test_recalculates_formulas(office, tmp_path):
    out = tmp_path / "out.xlsx"
    office.recalc(_wb(tmp_path / "in.xlsx"), out)
    assert openpyxl.load_workbook(out, data_only=True).active["A3"].value == 42
    assert openpyxl.load_workbook(out).active["A3"].value == "=A1*A2"


def test_a_document_it_cannot_open_is_not_an_env_error(office, tmp_path):
    bad = tmp_path / "bad.xlsx"
    bad.write_bytes(b"PK\x03\x04junk")
    with pytest.raises(DocumentRejected):
        office.recalc(bad, tmp_path / "x.xlsx")
    office.recalc(_wb(tmp_path / "in.xlsx"), tmp_path / "ok.xlsx")  # still serving
    assert office.restarts == 0


def test_crash_is_env_error_and_it_restarts(office, tmp_path):
    src = _wb(tmp_path / "in.xlsx")
    office.recalc(src, tmp_path / "a.xlsx")
    os.kill(_soffice_bin(office), signal.SIGKILL)
    time.sleep(0.2)
    with pytest.raises(EnvError):
        office.recalc(src, tmp_path / "b.xlsx")
    office.recalc(src, tmp_path / "c.xlsx")
    assert (tmp_path / "c.xlsx").is_file() and office.restarts >= 1


def test_hang_is_env_error_after_the_deadline(office, tmp_path):
    src = _wb(tmp_path / "in.xlsx")
    office.recalc(src, tmp_path / "a.xlsx")
    office.deadline_s = 2
    os.kill(_soffice_bin(office), signal.SIGSTOP)
    started = time.monotonic()
    with pytest.raises(EnvError, match="did not answer"):
        office.recalc(src, tmp_path / "b.xlsx")
    assert 1.5 < time.monotonic() - started < 10
    office.deadline_s = 30
    office.recalc(src, tmp_path / "c.xlsx")
    assert (tmp_path / "c.xlsx").is_file()


def test_pdf_export_keeps_korean_text(office, tmp_path):
    import docx
    import pypdf

    d = docx.Document()
    d.add_paragraph("분기 보고서 요약")
    d.save(str(tmp_path / "ko.docx"))
    office.to_pdf(tmp_path / "ko.docx", tmp_path / "ko.pdf")
    assert "분기 보고서" in pypdf.PdfReader(str(tmp_path / "ko.pdf")).pages[0].extract_text()


async def test_hung_office_at_verify_is_env_error_not_zero(hub):
    """A LibreOffice hang during export is the environment's fault: env_error, masked from training."""
    from envhub.spec import ResetRequest, StepRequest

    m = hub.manager
    task_id = "office/banking/t02-model"
    created = await m.create(ResetRequest(env="office", task_id=task_id))
    for action in hub.families["office"].oracle_actions(hub.catalog.get(task_id)):
        await m.step(created.session_id, StepRequest(action=action))
    office = hub.families["office"].office()
    await m.step(created.session_id, StepRequest(action={"tool": "xlsx_recalculate", "arguments": {
        "path": "model.xlsx"}}))  # the office is up
    office.deadline_s = 2
    os.kill(_soffice_bin(office), signal.SIGSTOP)
    v = await m.verify(created.session_id)
    assert v.failure_class.value == "env_error" and not v.trainable and v.retryable, v
    office.deadline_s = 60


async def test_crashed_office_during_a_step_is_env_error(hub):
    from envhub.spec import ResetRequest, StepRequest

    m = hub.manager
    created = await m.create(ResetRequest(env="office", task_id="office/banking/t02-model"))
    office = hub.families["office"].office()
    await m.step(created.session_id, StepRequest(action={"tool": "xlsx_recalculate", "arguments": {
        "path": "model.xlsx"}}))
    os.kill(_soffice_bin(office), signal.SIGKILL)
    time.sleep(0.3)
    r = await m.step(created.session_id, StepRequest(action={"tool": "xlsx_recalculate", "arguments": {
        "path": "model.xlsx"}}))
    assert r.failure.value == "env_error" and not r.trainable
    v = await m.verify(created.session_id)
    assert v.failure_class.value == "env_error"
