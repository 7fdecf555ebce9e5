"""The warm LibreOffice: recalculation, PDF export, a hang or a crash the probe shares → EnvError
then a restart, a document that crashes it → DocumentCrashed, and a document that computes past
the deadline → AgentTimeout, without holding up other sessions."""

from __future__ import annotations

import os
import signal
import threading
import time

import openpyxl
import pytest

from envhub.errors import AgentTimeout, EnvError
from environments.office.lo import DocumentCrashed, DocumentRejected, OfficePool


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


class Crasher:
    """Kills (SIGKILL) every office that holds one of `names` open, as a document that crashes
    LibreOffice would (LibreOffice keeps the document open while it works on it)."""

    def __init__(self, *names: str) -> None:
        self.names = names
        self.killed: set[int] = set()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.wait(0.01):
            for entry in os.listdir("/proc"):
                if not entry.isdigit():
                    continue
                try:
                    if open(f"/proc/{entry}/comm").read().strip() != "soffice.bin":
                        continue
                    held = [os.readlink(f"/proc/{entry}/fd/{fd}") for fd in os.listdir(f"/proc/{entry}/fd")]
                    if any(h.endswith(n) for h in held for n in self.names):
                        os.kill(int(entry), signal.SIGKILL)
                        self.killed.add(int(entry))
                except OSError:
                    continue

    def __enter__(self) -> Crasher:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def test_an_office_killed_from_outside_is_restarted_and_the_call_served(office, tmp_path):
    """A crash the document did not cause (the office was killed between calls): a fresh office
    recalculates the probe, then the same document, and the call succeeds."""
    src = _wb(tmp_path / "in.xlsx")
    office.recalc(src, tmp_path / "a.xlsx")
    os.kill(_soffice_bin(office), signal.SIGKILL)
    time.sleep(0.2)
    office.recalc(src, tmp_path / "b.xlsx")
    assert openpyxl.load_workbook(tmp_path / "b.xlsx", data_only=True).active["A3"].value == 42
    assert office.restarts >= 1


def test_a_document_that_crashes_the_office_is_the_documents_fault(office, tmp_path):
    """It crashes a fresh office again while the probe recalculates fine: `DocumentCrashed` (a
    `DocumentRejected`: the tool's agent_error, a failed check at verify), and the worker recovers."""
    crash = _wb(tmp_path / "crash.xlsx")
    with Crasher("crash.xlsx") as crasher, pytest.raises(DocumentCrashed, match="crashed twice on crash.xlsx"):
        office.recalc(crash, tmp_path / "out.xlsx")
    assert len(crasher.killed) == 2  # the first office, then the fresh one
    office.recalc(_wb(tmp_path / "in.xlsx"), tmp_path / "ok.xlsx")
    assert openpyxl.load_workbook(tmp_path / "ok.xlsx", data_only=True).active["A3"].value == 42


def test_a_crash_is_env_error_when_the_probe_fails_too(office, tmp_path):
    """An office that crashes on the probe document as well is broken: env_error, never the agent's."""
    crash = _wb(tmp_path / "crash.xlsx")
    with Crasher("crash.xlsx", "probe.xlsx"), pytest.raises(EnvError, match="probe document") as caught:
        office.recalc(crash, tmp_path / "out.xlsx")
    assert not isinstance(caught.value, DocumentRejected)


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


async def test_a_document_that_crashes_the_office_in_a_step_and_at_verify_is_the_agents(hub):
    """The agent's workbook crashes LibreOffice: the step is agent_error and the verify is `ok`
    with reward 0 and a failed check that says why (trainable), not env_error."""
    from envhub.spec import ResetRequest, StepRequest

    m = hub.manager
    created = await m.create(ResetRequest(env="office", task_id="office/banking/t02-model"))
    with Crasher("model.xlsx"):
        r = await m.step(created.session_id, StepRequest(action={"tool": "xlsx_recalculate", "arguments": {
            "path": "model.xlsx"}}))
        assert r.failure.value == "agent_error" and r.trainable, r
        assert "crashed twice on model.xlsx" in r.observation.text
        v = await m.verify(created.session_id)
    assert v.failure_class.value == "ok" and v.trainable and v.reward == 0.0, v
    assert any("crashes LibreOffice" in c.message for c in v.checks if not c.passed), v.checks


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
