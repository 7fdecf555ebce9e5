"""The warm LibreOffice: recalculation, PDF export, crash/hang → EnvError then a restart, and a
document that computes past the deadline → AgentTimeout, without holding up other sessions."""

from __future__ import annotations

import os
import signal
import threading
import time

import openpyxl
import pytest

from environments.office.lo import DocumentRejected, OfficePool
from envhub.errors import AgentTimeout, EnvError


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
    os.kill(_soffice_bin(office.last), signal.SIGSTOP)
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
    os.kill(_soffice_bin(office.last), signal.SIGKILL)
    time.sleep(0.3)
    r = await m.step(created.session_id, StepRequest(action={"tool": "xlsx_recalculate", "arguments": {
        "path": "model.xlsx"}}))
    assert r.failure.value == "env_error" and not r.trainable
    v = await m.verify(created.session_id)
    assert v.failure_class.value == "env_error"


def bomb(path, n=3000):
    """The recalculation bomb of issue 11: thousands of million-row array products."""
    wb = openpyxl.Workbook()
    for i in range(1, n + 1):
        wb.active[f"B{i}"] = f"=SUMPRODUCT(ROW($A$1:$A$1000000)*{i})"
    wb.save(path)
    return path


def test_a_recalculation_bomb_is_the_agents_timeout_and_the_office_recovers(office, tmp_path):
    office.deadline_s = 8
    with pytest.raises(AgentTimeout, match="probe document"):
        office.recalc(bomb(tmp_path / "bomb.xlsx"), tmp_path / "out.xlsx")
    office.recalc(_wb(tmp_path / "in.xlsx"), tmp_path / "ok.xlsx")
    assert openpyxl.load_workbook(tmp_path / "ok.xlsx", data_only=True).active["A3"].value == 42


def test_a_bomb_holds_one_worker_and_other_sessions_are_served(tmp_path):
    pool = OfficePool(tmp_path / "pool", size=2, deadline_s=12)
    try:
        pool.recalc(_wb(tmp_path / "warm.xlsx"), tmp_path / "warm-out.xlsx")
        outcome = []

        def run_bomb():
            try:
                pool.recalc(bomb(tmp_path / "bomb.xlsx"), tmp_path / "bomb-out.xlsx")
            except AgentTimeout:
                outcome.append("agent_timeout")
        t = threading.Thread(target=run_bomb)
        t.start()
        while pool._free.qsize() == 2:  # wait until the bomb holds a worker
            time.sleep(0.05)
        pool.recalc(_wb(tmp_path / "in.xlsx"), tmp_path / "ok.xlsx")
        assert t.is_alive(), "the small recalculation had to wait for the bomb"
        t.join()
        assert outcome == ["agent_timeout"]
        assert openpyxl.load_workbook(tmp_path / "ok.xlsx", data_only=True).active["A3"].value == 42
    finally:
        pool.kill()


def test_each_worker_has_its_own_home(tmp_path):
    pool = OfficePool(tmp_path / "pool", size=2)
    try:
        homes = set()
        for w in pool.workers:
            w.recalc(_wb(tmp_path / "in.xlsx"), tmp_path / "out.xlsx")
            env = open(f"/proc/{w.proc.pid}/environ", "rb").read().split(b"\0")
            homes.add(next(e for e in env if e.startswith(b"HOME=")))
        assert len(homes) == 2
    finally:
        pool.kill()
