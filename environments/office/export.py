"""Writing the final state for the verifier: the agent's files plus recalculated workbooks.

The verifier sandbox cannot run LibreOffice reliably, and cached spreadsheet values cannot be
trusted, so export recalculates every workbook here, on the host, and writes the result to
`.envhub/recalc/<path>` with a manifest of source hashes. A workbook that is unsafe or that
LibreOffice refuses or that crashes it (`DocumentCrashed`) gets an `error` entry (the verifier
fails the check that needs it); a workbook that runs LibreOffice past its deadline raises
`AgentTimeout` (see `lo.py`); a hang or a crash a probe document shares raises `EnvError` (env_error).
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

from environments.office.lo import DocumentRejected, LibreOffice, OfficePool
from verifiers.office_safe import UnsafeDocument, inspect

ENVHUB_DIR = ".envhub"
RECALC = f"{ENVHUB_DIR}/recalc"
#: Copies recalculated after the task's input perturbation (`metadata.perturb`): a formula is live when its
#: value there is what the task's model gives for the perturbed inputs; a number dressed as a formula is not.
PERTURBED = f"{ENVHUB_DIR}/perturbed"


def copy_workspace(src: Path, dest: Path) -> None:
    """Regular, visible files only: no symlinks, nothing under hidden names."""
    dest.mkdir(parents=True)
    for p in sorted(src.rglob("*")):
        rel = p.relative_to(src)
        if any(part.startswith(".") for part in rel.parts) or p.is_symlink() or not p.is_file():
            continue
        (dest / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(p, dest / rel)


def refresh_recalc(state: Path, lo: LibreOffice | OfficePool, perturb: dict[str, dict[str, float]] | None = None
                   ) -> dict[str, dict]:
    """(Re)write the recalculated copies of every workbook in `state`; returns the manifest.

    `perturb` maps a workbook to input cells ({"Sheet!A1": number}) to set before a second
    recalculation, written under `PERTURBED`."""
    out = state / RECALC
    shutil.rmtree(out, ignore_errors=True)
    shutil.rmtree(state / PERTURBED, ignore_errors=True)
    out.mkdir(parents=True)
    manifest: dict[str, dict] = {}
    for p in sorted(state.rglob("*.xlsx")):
        rel = p.relative_to(state).as_posix()
        if rel.startswith(ENVHUB_DIR + "/"):
            continue
        entry: dict = {"sha256": hashlib.sha256(p.read_bytes()).hexdigest()}
        try:
            inspect(p)
            target = out / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            lo.recalc(p, target)
        except (UnsafeDocument, DocumentRejected) as e:
            entry["error"] = str(e)[:500]
        cells = (perturb or {}).get(rel)
        if cells and "error" not in entry:
            target = state / PERTURBED / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            try:
                lo.recalc(p, target, cells)
            except DocumentRejected as e:
                entry["perturb_error"] = str(e)[:500]
        manifest[rel] = entry
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1, sort_keys=True))
    return manifest
