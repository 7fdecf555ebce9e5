"""The office family as registered: the judged family plus what only serving needs, namely whether
this machine's LibreOffice can run its tasks (every office task needs it: export recalculates), and
copying a live episode (`snapshot`, `restore`: forks and snapshots).

It lives apart from `env.py` because that file keys the family's validation records
(`OfficeFamily.judged_by`); neither availability nor a copy says anything about a verdict.
"""

from __future__ import annotations

import asyncio
import shutil
import subprocess
import tempfile
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from envhub.env import EnvContext
from envhub.errors import EnvError
from envhub.spec import MissingRequirement, Observation
from environments.office import env, export, lo

if TYPE_CHECKING:
    from envhub.config import Settings
    from envhub.tasks.model import Task

#: What installs LibreOffice and the UNO bridge its workers use (Debian; `scripts/bootstrap.sh` does it).
FIX = "apt-get install -y libreoffice-calc-nogui libreoffice-writer-nogui libreoffice-impress-nogui python3-uno"


class OfficeEnvironment(env.OfficeEnvironment):
    """The whole state is the workspace folder: the tools keep nothing between calls, and the
    LibreOffice workers are the server's, holding no document between calls, so nothing else is carried."""

    async def snapshot(self, dest: Path) -> dict[str, Any]:
        if self.task is None:
            raise EnvError("environment was not reset")
        # What the tools reach: regular, visible files (the export's copy, without its recalculation)
        await asyncio.to_thread(export.copy_workspace, self.ws.root, dest / "workspace")
        return {}

    async def restore(self, *, task: Task, state: Path) -> Observation:
        self.task = task
        try:
            await asyncio.to_thread(self.ws.reset_from, state / "workspace")
        except OSError as e:
            raise EnvError(f"cannot prepare the workspace: {e}") from e
        files = [self.ws.rel(p) for p in self.ws.files()]
        return Observation(text=f"{task.prompt}\n\nWorkspace files: {', '.join(files) or '(none)'}",
                           data={"files": files})


class OfficeFamily(env.OfficeFamily):
    def setup(self, settings: Settings) -> None:
        super().setup(settings)
        # Probe once in the background so the first /v1/envs or reset does not wait for an office to start.
        threading.Thread(target=libreoffice_missing, name="office-libreoffice-check", daemon=True).start()

    def availability(self, task: Task | None = None) -> MissingRequirement | None:
        return super().availability(task) or libreoffice_missing()

    def make(self, ctx: EnvContext) -> OfficeEnvironment:
        return OfficeEnvironment(ctx, self)


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
