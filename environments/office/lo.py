"""One warm LibreOffice per server: recalculation and PDF export with a deadline.

A cold `soffice --convert-to` costs ~1.3 s here; a warm office answers in a fraction of that. The
office runs in a worker process (`lo_worker.py`, under Debian's python3, which has UNO) in its own
process group, with its own profile folder. Calls are serialised. If a call passes its deadline,
or the office dies, the whole group is killed, the call raises `EnvError` (an env_error: the
policy did not cause it, so it is never scored 0), and the next call starts a fresh office.
A document LibreOffice merely refuses to open is the document's fault: `DocumentRejected`.
"""

from __future__ import annotations

import itertools
import json
import os
import select
import shutil
import signal
import subprocess
import threading
import time
from pathlib import Path

from envhub.errors import EnvError

WORKER = Path(__file__).with_name("lo_worker.py")
PYTHON = "/usr/bin/python3"
START_DEADLINE_S = 60.0
_ids = itertools.count()


class DocumentRejected(ValueError):
    """LibreOffice could not open or convert this document (not an infrastructure fault)."""


class LibreOffice:
    """A warm headless office behind a deadline; thread-safe, one call at a time."""

    def __init__(self, root: Path, *, deadline_s: float = 60.0) -> None:
        self.root = root
        self.deadline_s = deadline_s
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
        self.proc = subprocess.Popen([PYTHON, "-I", str(WORKER), str(self.profile)], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env,
                                     start_new_session=True)
        hello = self._read(START_DEADLINE_S)
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
                self.kill()
                raise EnvError(f"LibreOffice did not answer within {deadline_s:g}s; it was killed and will restart")
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
        """Run one request; `EnvError` on a crash or hang, `DocumentRejected` on a bad document."""
        with self._lock:
            if not self.alive:
                self.kill()
                self._start()
            assert self.proc is not None and self.proc.stdin is not None
            req: dict[str, object] = {"op": op, **extra}
            if src is not None:
                req["src"] = str(Path(src).resolve())
            if dest is not None:
                req["dest"] = str(Path(dest).resolve())
            try:
                self.proc.stdin.write((json.dumps(req) + "\n").encode())
                self.proc.stdin.flush()
            except (BrokenPipeError, OSError) as e:
                self.kill()
                raise EnvError(f"LibreOffice worker is gone: {e}") from e
            answer = self._read(deadline_s or self.deadline_s)
        if answer.get("ok"):
            return
        if answer.get("fatal"):
            with self._lock:
                self.kill()
            raise EnvError(f"LibreOffice crashed: {answer.get('error')}")
        raise DocumentRejected(str(answer.get("error", "LibreOffice refused the document")))

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
