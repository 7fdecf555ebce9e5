"""The office family as registered: the judged family plus what only serving needs, namely whether
this machine's LibreOffice can run its tasks (every office task needs it: export recalculates).

It lives apart from `env.py` because that file keys the family's validation records
(`OfficeFamily.judged_by`); availability says nothing about a verdict.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING

from envhub.errors import EnvError
from envhub.spec import MissingRequirement
from environments.office import env, lo

if TYPE_CHECKING:
    from envhub.config import Settings
    from envhub.tasks.model import Task

#: What installs LibreOffice and the UNO bridge its workers use (Debian; `scripts/bootstrap.sh` does it).
FIX = "apt-get install -y libreoffice-calc-nogui libreoffice-writer-nogui libreoffice-impress-nogui python3-uno"


class OfficeFamily(env.OfficeFamily):
    def setup(self, settings: Settings) -> None:
        super().setup(settings)
        # Probe once in the background so the first /v1/envs or reset does not wait for an office to start.
        threading.Thread(target=libreoffice_missing, name="office-libreoffice-check", daemon=True).start()

    def availability(self, task: Task | None = None) -> MissingRequirement | None:
        return super().availability(task) or libreoffice_missing()


#: How long a failed probe stands before the next question probes again (a slow start on a loaded
#: host must not mark the family unavailable for the server's whole life).
RECHECK_S = 60.0
_checked: tuple[float, MissingRequirement | None] | None = None
_check_lock = threading.Lock()


def libreoffice_missing() -> MissingRequirement | None:
    """Why LibreOffice cannot serve here (None when it can): the binaries, then a fresh office
    recalculating the probe document. A success is kept; a failure is probed again after `RECHECK_S`."""
    global _checked
    with _check_lock:
        if _checked is None or (_checked[1] is not None and time.monotonic() - _checked[0] > RECHECK_S):
            _checked = (time.monotonic(), _check())
        return _checked[1]


def _check() -> MissingRequirement | None:
    if shutil.which("soffice") is None:
        return MissingRequirement(reason="LibreOffice is not installed (no `soffice` on PATH): office tasks cannot "
                                         "run here", fix=FIX)
    uno = subprocess.run([lo.PYTHON, "-I", "-c", "import uno"], capture_output=True, text=True, timeout=60) \
        if Path(lo.PYTHON).exists() else None
    if uno is None or uno.returncode != 0:
        return MissingRequirement(reason=f"LibreOffice's Python bridge is missing ({lo.PYTHON} cannot `import uno`): "
                                         "office tasks cannot run here", fix=FIX)
    return probe_office()


def probe_office(memory_mb: int | None = 4096) -> MissingRequirement | None:
    """Start an office of its own and recalculate the probe document; why it failed, or None."""
    with tempfile.TemporaryDirectory(prefix="envhub-office-check-") as tmp:
        office = lo.LibreOffice(Path(tmp), deadline_s=lo.PROBE_DEADLINE_S, memory_mb=memory_mb)
        try:
            office.recalc(lo.probe_document(Path(tmp)), Path(tmp) / "probe-out.xlsx")
        except (EnvError, lo.DocumentRejected) as e:
            return MissingRequirement(reason=f"LibreOffice is installed but does not work ({e}): office tasks cannot "
                                             "run here", fix=FIX)
        finally:
            office.kill()
    return None
