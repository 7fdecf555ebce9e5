"""Generate the OfficeVerse task set: every industry × task type, plus Korean instances.

    python -m environments.office.generate --out tasks/office --seed 7

Each task folder gets `task.yaml` (seed, industry, task type and language in `metadata`),
`prompt.md`, `state/` (the starting documents), `tests/` (the task type's verifier from
`checks/`, the shared checks, `expected.json` and, for live formulas, `liveness.json`, the inputs a
verify may change; the judge's rubric is per type, in `judge.py`) and
`solution/actions.json` (the oracle, as tool calls). The same seed gives the same tasks; a
different seed gives fresh instances. Data comes only from packages installed here (Faker,
statsmodels, scikit-learn); PDFs are made with the local LibreOffice.
"""

from __future__ import annotations

import argparse
import atexit
import hashlib
import json
import random
import re
import shutil
import tempfile
import zipfile
from pathlib import Path

import yaml

from environments.office import liveness, tasktypes
from environments.office.data import INDUSTRIES
from environments.office.lo import LibreOffice
from environments.office.tasktypes._common import FIXED_TIME

CHECKS = Path(__file__).with_name("checks")
#: (type, industry) pairs that also get a Korean instance: two per task type, 24 in all.
KOREAN_PER_TYPE = 2


def korean_cells() -> list[tuple[str, str]]:
    keys = list(INDUSTRIES)
    out = []
    for n, t in enumerate(tasktypes.TYPES):
        for j in range(KOREAN_PER_TYPE):
            out.append((t, keys[(n * KOREAN_PER_TYPE + j) % len(keys)]))
    return out


def _sha(p: Path) -> str:
    return hashlib.sha256(p.read_bytes()).hexdigest()


_OOXML = (".xlsx", ".docx", ".pptx")


def _steady_embedded(state: Path) -> None:
    """`normalise_state` fixes a package's own times, not those of a package inside it: a deck's
    chart carries its data as an xlsx written with the time of its making, so a set's task was
    other bytes on every machine. Those are fixed the same way, through a file of their own."""
    for p in sorted(state.rglob("*")):
        if p.suffix not in _OOXML:
            continue
        with zipfile.ZipFile(p) as z:
            entries = [(i.filename, z.read(i)) for i in z.infolist()]
        if not any(name.endswith(_OOXML) for name, _ in entries):
            continue
        with tempfile.TemporaryDirectory() as tmp:
            for k, (name, data) in enumerate(entries):
                if name.endswith(_OOXML):
                    inner = Path(tmp) / f"{k}{Path(name).suffix}"
                    inner.write_bytes(data)
                    tasktypes.normalise_package(inner)
                    entries[k] = (name, inner.read_bytes())
        with zipfile.ZipFile(p, "w", zipfile.ZIP_DEFLATED) as z:
            for name, data in entries:
                z.writestr(zipfile.ZipInfo(name, FIXED_TIME), data, compress_type=zipfile.ZIP_DEFLATED)


def build_task(out_dir: Path, ttype: str, industry: str, lang: str, seed: int, lo: LibreOffice | None) -> Path:
    slug, type_name = tasktypes.TYPES[ttype]
    name = f"{ttype.lower()}-{slug}" + ("-ko" if lang == "ko" else "")
    task_dir = out_dir / industry / name
    if task_dir.exists():
        shutil.rmtree(task_dir)
    state = task_dir / "state"
    state.mkdir(parents=True)
    ctx = tasktypes.Ctx(INDUSTRIES[industry], lang, seed, state)
    builder = tasktypes.BUILDERS[ttype]
    if ttype in tasktypes.NEEDS_PDF:
        assert lo is not None, "PDF task types need LibreOffice"
        built = builder(ctx, lo.to_pdf)
    else:
        built = builder(ctx)
    tasktypes.cleanup_tmp(state)
    tasktypes.normalise_state(state)
    _steady_embedded(state)
    tests = task_dir / "tests"
    tests.mkdir()
    expected = dict(built.expected, deliverables=built.deliverables,
                    unchanged={rel: _sha(state / rel) for rel in built.inputs})
    (tests / "expected.json").write_text(json.dumps(expected, ensure_ascii=False, indent=1), encoding="utf-8")
    if built.liveness:  # hidden: neither the metadata nor the workspace says what a verify perturbs
        (tests / liveness.SPEC_FILE).write_text(json.dumps(built.liveness, indent=1, sort_keys=True), encoding="utf-8")
    body = (CHECKS / f"{ttype.lower()}_{slug}.py").read_text() + "\n" + (CHECKS / "_common.py").read_text()
    (tests / f"test_{slug}.py").write_text(body)
    (task_dir / "solution").mkdir()
    (task_dir / "solution" / "actions.json").write_text(json.dumps(built.actions, ensure_ascii=False, indent=1),
                                                        encoding="utf-8")
    (task_dir / "prompt.md").write_text(built.prompt + "\n", encoding="utf-8")
    config = {
        "id": f"office/{industry}/{name}", "family": "office", "version": 1, "title": built.title,
        "difficulty": built.difficulty,
        "tags": [industry, ttype, slug, lang] + sorted({Path(d).suffix.lstrip(".") for d in built.deliverables}),
        "limits": {"step_timeout_s": 60, "max_steps": 80, "verify_timeout_s": 120, "memory_mb": 2048},
        "metadata": {"industry": industry, "industry_name": INDUSTRIES[industry].name, "task_type": ttype,
                     "task_type_name": type_name, "language": lang, "seed": seed,
                     "generator": "environments.office.generate", "deliverables": built.deliverables,
                     "inputs": built.inputs, "mutate": built.mutate},
    }
    (task_dir / "task.yaml").write_text(yaml.safe_dump(config, allow_unicode=True, sort_keys=False), encoding="utf-8")
    return task_dir


def plan() -> list[tuple[str, str, str]]:
    """(task type, industry, language) for every task: the full 11 × 12 grid, then the Korean set."""
    grid = [(t, i, "en") for i in INDUSTRIES for t in tasktypes.TYPES]
    return grid + [(t, i, "ko") for t, i in korean_cells()]


def task_seed(seed: int, ttype: str, industry: str, lang: str) -> int:
    digest = hashlib.sha256(f"{seed}:{ttype}:{industry}:{lang}".encode()).hexdigest()
    return int(digest[:8], 16)


def generate(out_dir: Path, seed: int, only: list[str] | None = None) -> list[Path]:
    """Write every task below `out_dir`; `only` limits to some task types (e.g. ["T01"])."""
    out_dir.mkdir(parents=True, exist_ok=True)
    made = []
    with tempfile.TemporaryDirectory(prefix="office-gen-") as tmp:
        lo = LibreOffice(Path(tmp))
        try:
            for ttype, industry, lang in plan():
                if only and ttype not in only:
                    continue
                made.append(build_task(out_dir, ttype, industry, lang, task_seed(seed, ttype, industry, lang), lo))
        finally:
            lo.kill()
    return made


# --- the drawn set (`tasks/office/drawn/taskset.yaml`) -----------------------------------------

#: The share of a drawn set's tasks asked in Korean.
KOREAN_SHARE = 0.16
_PDF_ID = re.compile(rb"/ID \[ ?<([0-9A-F]+)>\s*<([0-9A-F]+)> ?\]")
_PDF_CHECKSUM = re.compile(rb"(/DocChecksum /)([0-9A-F]+)")
_PDF_DATE = re.compile(rb"(/(?:CreationDate|ModDate)\(D:)\d{14}([^)]*\))")
_lo: LibreOffice | None = None


def _office() -> LibreOffice:
    """One LibreOffice per process for the PDF task types, killed when the process ends."""
    global _lo
    if _lo is None:
        scratch = Path(tempfile.mkdtemp(prefix="office-draw-"))
        _lo = LibreOffice(scratch)
        atexit.register(lambda: (_lo.kill(), shutil.rmtree(scratch, True)) if _lo else None)
    return _lo


def _steady_pdfs(state: Path) -> None:
    """LibreOffice writes the time, a checksum of the time-stamped file and a random trailer /ID into
    every PDF; a set's task must be the same bytes on every machine, so the dates become a fixed
    one, and the checksum and the ID a digest of the rest (all of the same length: the
    cross-reference offsets stay right)."""
    for pdf in sorted(state.rglob("*.pdf")):
        data = _PDF_DATE.sub(lambda m: m[1] + b"20250101000000" + m[2], pdf.read_bytes())
        digest = hashlib.md5(_PDF_CHECKSUM.sub(b"", _PDF_ID.sub(b"", data))).hexdigest().upper().encode()  # noqa: S324
        data = _PDF_CHECKSUM.sub(lambda m, d=digest: m[1] + d[:len(m[2])], data, count=1)
        pdf.write_bytes(_PDF_ID.sub(lambda m, d=digest: b"/ID [ <" + d[:len(m[1])] + b">\n<" + d[:len(m[2])] + b"> ]",
                                    data, count=1))


def draw(seed: int) -> tuple[str, str, str, int]:
    """(task type, industry, language, data seed) of a drawn set's seed: the types in turn, the
    industries in turn across them, about one in six in Korean, the data drawn per seed."""
    types, industries = list(tasktypes.TYPES), list(INDUSTRIES)
    ttype = types[seed % len(types)]
    industry = industries[(seed // len(types)) % len(industries)]
    lang = "ko" if random.Random(f"lang:{seed}").random() < KOREAN_SHARE else "en"
    return ttype, industry, lang, task_seed(1_000_000 + seed, ttype, industry, lang)


def materialize(set_id: str, seed: int, root: Path) -> Path:
    """Write the drawn set's task of `seed` as `root/<seed>` (id `<set_id>/<seed>`)."""
    ttype, industry, lang, data_seed = draw(seed)
    with tempfile.TemporaryDirectory(prefix="office-draw-", dir=root) as tmp:
        built = build_task(Path(tmp), ttype, industry, lang, data_seed,
                           _office() if ttype in tasktypes.NEEDS_PDF else None)
        if ttype in tasktypes.NEEDS_PDF:
            _steady_pdfs(built / "state")
            expected_path = built / "tests" / "expected.json"
            expected = json.loads(expected_path.read_text(encoding="utf-8"))
            expected["unchanged"] = {rel: _sha(built / "state" / rel) for rel in expected["unchanged"]}
            expected_path.write_text(json.dumps(expected, ensure_ascii=False, indent=1), encoding="utf-8")
        config_path = built / "task.yaml"
        config = yaml.safe_load(config_path.read_text(encoding="utf-8"))
        config["id"] = f"{set_id}/{seed}"
        actions = json.loads((built / "solution" / "actions.json").read_text(encoding="utf-8"))
        config["metadata"]["proxies"] = {  # what makes the task hard (`envhub show`, calibration)
            "oracle_calls": len(actions), "inputs": len(config["metadata"]["inputs"]),
            "deliverables": len(config["metadata"]["deliverables"]),
            "checks": sum(t.read_text().count("@check(") for t in sorted((built / "tests").glob("test_*.py"))),
        }
        config_path.write_text(yaml.safe_dump(config, allow_unicode=True, sort_keys=False), encoding="utf-8")
        folder = root / str(seed)
        built.rename(folder)
    return folder


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=Path("tasks/office"))
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--only", nargs="*", help="task types to generate, e.g. T01 T05")
    args = ap.parse_args()
    made = generate(args.out, args.seed, args.only)
    print(f"wrote {len(made)} tasks under {args.out}")  # noqa: T201 - CLI output


if __name__ == "__main__":
    main()
