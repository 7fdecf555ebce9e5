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
import random
import shutil
from pathlib import Path

from environments.office import liveness
from environments.office.lo import DocumentRejected, LibreOffice, OfficePool
from verifiers.office_safe import UnsafeDocument, inspect

ENVHUB_DIR = ".envhub"
RECALC = f"{ENVHUB_DIR}/recalc"
#: Copies recalculated at input points drawn afresh for this export (`liveness.py`), one folder per
#: point (`perturbed/<i>/<path>`): a formula is live when its value there is what the task's model
#: gives for that point's inputs; a number, or a formula keyed to one input point, is not.
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


def refresh_recalc(state: Path, lo: LibreOffice | OfficePool, spec: liveness.Spec | None = None,
                   rng: random.Random | None = None) -> dict[str, dict]:
    """(Re)write the recalculated copies of every workbook in `state`; returns the manifest.

    `spec` (the task's hidden `liveness.json`) names the input cells of a workbook; each point
    `liveness.draw` picks for it (from `rng`, the system's randomness unless a test says otherwise)
    is set in a copy that is recalculated under `PERTURBED`, and listed in the manifest entry's
    `perturbed` as {"set": {cell: value}}."""
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
        cells = (spec or {}).get(rel)
        if cells and "error" not in entry:
            entry["perturbed"] = []
            for i, point in enumerate(liveness.draw(cells, rng)):
                target = state / PERTURBED / str(i) / rel
                target.parent.mkdir(parents=True, exist_ok=True)
                try:
                    lo.recalc(p, target, point)
                except DocumentRejected as e:
                    entry["perturb_error"] = str(e)[:500]
                    break
                entry["perturbed"].append({"set": point})
        manifest[rel] = entry
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1, sort_keys=True))
    return manifest
