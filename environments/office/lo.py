"""Warm LibreOffice workers: recalculation and PDF export with a deadline, isolated per call.

A cold `soffice --convert-to` costs ~1.3 s here; a warm office answers in a fraction of that. Each
office runs in a worker process (`lo_worker.py`, under Debian's python3, which has UNO) in its own
process group, with its own profile folder as HOME, under an address-space limit and a lower CPU
priority than the server. A server keeps a pool of them (`OfficePool`): a call takes a free worker,
so one agent's expensive document occupies one worker for at most one deadline and other
sessions' tools and verifies go to the others (`benchmarks/office_isolation.py` measures a pool
against an office per session).

When a call passes its deadline the worker's whole group is killed, and the cause decides the class:
if the office was computing (it used CPU during the deadline, not stopped or idle) and a fresh office on the
same worker then recalculates a probe document, the agent's document is to blame: `AgentTimeout`
(trainable, reward 0). If the office sat idle (hung, stopped) or the probe fails too, it is
`EnvError` (the policy did not cause it, so it is never scored 0). When the office dies under a
call (a crash, an OOM kill), a fresh office on the same worker first recalculates the probe: if that
fails too it is `EnvError`; if not, the document is tried once more on the fresh office, and a
second crash is the document's (`DocumentCrashed`: the tool's `agent_error`, the verify's failed
check), while a success means the first crash was not its doing. A document LibreOffice merely
refuses to open is `DocumentRejected`.
"""

from __future__ import annotations

import itertools
import json
import os
import queue
import select
import shutil
import signal
import subprocess
import threading
import time
from pathlib import Path

from envhub.errors import AgentTimeout, EnvError

WORKER = Path(__file__).with_name("lo_worker.py")
PYTHON = "/usr/bin/python3"
START_DEADLINE_S = 60.0
PROBE_DEADLINE_S = 30.0
#: Share of the deadline the office must have spent on CPU for a timeout to be the document's fault.
#: Low on purpose: on a loaded host a computing office gets ~20 % of a core (measured), while a
#: stopped or deadlocked one gets none; the probe then tells a broken office from a heavy document.
BUSY_SHARE = 0.05
_ids = itertools.count()


class _Deadline(EnvError):
    """The office did not answer in time (the caller decides whose fault that is)."""


def _group_cpu_s(pid: int | None) -> float:
    """CPU seconds used so far by every process in `pid`'s process group (the worker and its office)."""
    if not pid:
        return 0.0
    try:
        group = os.getpgid(pid)
    except ProcessLookupError:
        return 0.0
    tick = os.sysconf("SC_CLK_TCK")
    total = 0
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            if os.getpgid(int(entry)) != group:
                continue
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            total += int(fields[11]) + int(fields[12])  # utime, stime
        except (OSError, ProcessLookupError, IndexError, ValueError):
            continue
    return total / tick


def probe_document(folder: Path) -> Path:
    """A tiny workbook every healthy office recalculates at once."""
    p = folder / "probe.xlsx"
    if not p.is_file():
        import openpyxl

        wb = openpyxl.Workbook()
        wb.active["A1"], wb.active["A2"] = 6, "=A1*7"
        folder.mkdir(parents=True, exist_ok=True)
        wb.save(p)
    return p


class DocumentRejected(ValueError):
    """LibreOffice could not open or convert this document (not an infrastructure fault)."""


class DocumentCrashed(DocumentRejected):
    """This document crashed LibreOffice twice while a probe document on a fresh office did not."""


class LibreOffice:
    """A warm headless office behind a deadline; thread-safe, one call at a time."""

    def __init__(self, root: Path, *, deadline_s: float = 60.0, memory_mb: int | None = 4096) -> None:
        self.root = root
        self.deadline_s = deadline_s
        self.memory_mb = memory_mb
        self.proc: subprocess.Popen[bytes] | None = None
        self.soffice_pid: int | None = None
        self.profile: Path | None = None
        self.restarts = 0
        self._lock = threading.Lock()

    # -- process -------------------------------------------------------------------------------
    def _start(self) -> None:
        if not Path(PYTHON).exists() or shutil.which("soffice") is None:
            raise EnvError("LibreOffice is not installed (Debian: libreoffice-calc-nogui, libreoffice-writer-nogui, "
                           "libreoffice-impress-nogui, python3-uno)")
        self.profile = self.root / f"lo-{os.getpid()}-{next(_ids)}"
        self.profile.mkdir(parents=True, exist_ok=True)
        env = {"PATH": "/usr/bin:/bin", "HOME": str(self.profile), "LANG": "C.UTF-8", "SAL_USE_VCLPLUGIN": "svp"}
        # Bounded memory (the office inherits the limit) and CPU priority below the server's.
        limits = ["prlimit", f"--as={self.memory_mb * 1024 * 1024}", "--"] if self.memory_mb else []
        self.proc = subprocess.Popen([*limits, "nice", "-n", "5", PYTHON, "-I", str(WORKER), str(self.profile)],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                     env=env, start_new_session=True)
        try:
            hello = self._read(START_DEADLINE_S)
        except _Deadline as e:
            self.kill()
            raise EnvError(f"LibreOffice did not start within {START_DEADLINE_S:g}s") from e
        if not hello.get("ready"):
            self.kill()
            raise EnvError(f"LibreOffice did not start: {hello.get('error', hello)}")
        self.soffice_pid = int(hello["soffice_pid"])

    def _read(self, deadline_s: float) -> dict:
        assert self.proc is not None and self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        end = time.monotonic() + deadline_s
        buf = b""
        while not buf.endswith(b"\n"):
            left = end - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                raise _Deadline(f"LibreOffice did not answer within {deadline_s:g}s; it was killed and will restart")
            chunk = os.read(fd, 65536)
            if not chunk:
                self.kill()
                raise EnvError("LibreOffice exited unexpectedly; it will restart")
            buf += chunk
        try:
            return json.loads(buf)
        except ValueError as e:
            self.kill()
            raise EnvError(f"LibreOffice worker answered garbage: {buf[:200]!r}") from e

    def kill(self) -> None:
        """Kill the worker and its office (the whole process group); safe to repeat."""
        proc, self.proc = self.proc, None
        if proc is not None:
            for pid in (self.soffice_pid, proc.pid):
                if pid:
                    try:
                        os.killpg(os.getpgid(pid), signal.SIGKILL)
                    except (ProcessLookupError, PermissionError):
                        pass
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                pass
            for stream in (proc.stdin, proc.stdout):
                if stream is not None:
                    stream.close()
            self.restarts += 1
        if self.profile is not None:
            shutil.rmtree(self.profile, ignore_errors=True)
            self.profile = None
        self.soffice_pid = None

    close = kill

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    # -- calls ---------------------------------------------------------------------------------
    def call(self, op: str, src: Path | None = None, dest: Path | None = None,
             deadline_s: float | None = None, **extra: object) -> None:
        """Run one request; `EnvError` on a hang or a crash that is the office's,
        `DocumentRejected` on a bad document (`DocumentCrashed` on one that crashes the office)."""
        with self._lock:
            req: dict[str, object] = {"op": op, **extra}
            if src is not None:
                req["src"] = str(Path(src).resolve())
            if dest is not None:
                req["dest"] = str(Path(dest).resolve())
            deadline = deadline_s or self.deadline_s
            answer = self._attempt(req, deadline, src)
            if isinstance(answer, EnvError):  # the office died under this request
                if src is None or not self._probe_ok():
                    raise EnvError(f"{answer}; a probe document on a fresh office failed too") from answer
                # The fresh office is healthy: the same document once more tells a crash it causes
                # from one that merely happened while it was open (a kill from outside).
                again = self._attempt(req, deadline, src)
                if isinstance(again, EnvError):
                    self.kill()
                    raise DocumentCrashed(
                        f"LibreOffice crashed twice on {Path(src).name} ({again}), while a probe document on a "
                        "fresh office recalculated fine: the document crashes LibreOffice") from again
                answer = again
        if answer.get("ok"):
            return
        raise DocumentRejected(str(answer.get("error", "LibreOffice refused the document")))

    def _attempt(self, req: dict[str, object], deadline: float, src: Path | None) -> dict | EnvError:
        """Send `req` and read the answer (the lock is held): the answer, or the `EnvError` of an
        office that died under it (killed already). A deadline raises (`AgentTimeout` or `EnvError`)."""
        if not self.alive:
            self.kill()
            self._start()
        assert self.proc is not None and self.proc.stdin is not None
        cpu0 = _group_cpu_s(self.proc.pid)
        try:
            self.proc.stdin.write((json.dumps(req) + "\n").encode())
            self.proc.stdin.flush()
            answer = self._read(deadline)
        except _Deadline as e:
            busy = _group_cpu_s(self.proc.pid) - cpu0 >= BUSY_SHARE * deadline
            self.kill()
            if busy and src is not None and self._probe_ok():
                raise AgentTimeout(
                    f"LibreOffice worked on {Path(src).name} for {deadline:g}s without finishing; the call was "
                    "abandoned (a probe document on the same worker recalculated fine, so the document is too "
                    "expensive)") from e
            raise
        except (BrokenPipeError, OSError) as e:
            self.kill()
            return EnvError(f"LibreOffice worker is gone: {e}")
        except EnvError as e:  # exited or answered garbage (killed by `_read`)
            return e
        if answer.get("fatal"):
            self.kill()
            return EnvError(f"LibreOffice crashed: {answer.get('error')}")
        return answer

    def _probe_ok(self) -> bool:
        """A fresh office on this worker recalculates the probe document (the lock is held)."""
        try:
            self._start()
            assert self.proc is not None and self.proc.stdin is not None
            probe = probe_document(self.root)
            req = {"op": "recalc", "src": str(probe.resolve()), "dest": str((self.root / "probe-out.xlsx").resolve())}
            self.proc.stdin.write((json.dumps(req) + "\n").encode())
            self.proc.stdin.flush()
            return bool(self._read(PROBE_DEADLINE_S).get("ok"))
        except (EnvError, OSError):
            self.kill()
            return False

    def recalc(self, src: Path, dest: Path, set_cells: dict[str, float] | None = None) -> None:
        """Recalculate every formula of workbook `src` and save it, with fresh cached values, to `dest`.

        `set_cells` ({"Sheet!A1": number}) are written first: a perturbed copy for liveness checks."""
        if set_cells:
            self.call("recalc", src, dest, set=set_cells)
        else:
            self.call("recalc", src, dest)

    def to_pdf(self, src: Path, dest: Path) -> None:
        """Export a docx/xlsx/pptx to PDF at `dest`."""
        self.call("pdf", src, dest)
        if not dest.is_file():
            raise EnvError(f"LibreOffice reported success but wrote no PDF for {src.name}")


class OfficePool:
    """Warm offices for one server; a call takes a free one (started on first need), most recent first.

    A session's calls are sequential (its steps, then its export), so one session holds at most one
    worker at a time and `size` concurrent sessions never wait for each other."""

    def __init__(self, root: Path, *, size: int = 2, deadline_s: float = 60.0, memory_mb: int | None = 4096) -> None:
        self.workers = [LibreOffice(root / f"w{i}", deadline_s=deadline_s, memory_mb=memory_mb) for i in range(size)]
        self._free: queue.LifoQueue[LibreOffice] = queue.LifoQueue()
        for w in reversed(self.workers):
            self._free.put(w)
        self.last: LibreOffice | None = None

    @property
    def deadline_s(self) -> float:
        return self.workers[0].deadline_s

    @deadline_s.setter
    def deadline_s(self, value: float) -> None:
        for w in self.workers:
            w.deadline_s = value

    def _with(self, op: str, *args: object) -> None:
        w = self._free.get()
        self.last = w
        try:
            getattr(w, op)(*args)
        finally:
            self._free.put(w)

    def recalc(self, src: Path, dest: Path, set_cells: dict[str, float] | None = None) -> None:
        self._with("recalc", src, dest, set_cells)

    def to_pdf(self, src: Path, dest: Path) -> None:
        self._with("to_pdf", src, dest)

    def kill(self) -> None:
        for w in self.workers:
            w.kill()

    close = kill


_shared: LibreOffice | None = None
_shared_lock = threading.Lock()


def shared(root: Path | None = None) -> LibreOffice:
    """The process-wide office (one per server), created on first use."""
    global _shared
    with _shared_lock:
        if _shared is None:
            base = root or Path(os.environ.get("ENVHUB_OFFICE_LO_DIR", "/tmp/envhub-office-lo"))
            _shared = LibreOffice(base)
        return _shared
