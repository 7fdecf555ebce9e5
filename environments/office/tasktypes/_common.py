"""What every task-type builder shares: the seeded context, the built task, document writers,
and making generated files byte-reproducible."""

from __future__ import annotations

import datetime as dt
import random
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import docx
import openpyxl
from docx.shared import Pt

from environments.office.data import Industry, amounts, categories, faker, label


@dataclass
class Ctx:
    ind: Industry
    lang: str
    seed: int
    state: Path
    rng: random.Random = field(init=False)

    def __post_init__(self) -> None:
        self.rng = random.Random(self.seed)
        self.fake = faker(self.lang, self.seed)

    def t(self, en: str, ko: str) -> str:
        return ko if self.lang == "ko" else en

    @property
    def ko(self) -> bool:
        return self.lang == "ko"

    def cats(self, k: int | None = None) -> list[str]:
        c = list(categories(self.ind, self.lang))
        return c[:k] if k else c

    def entity(self) -> str:
        return label(self.ind, self.lang, "entity")

    def amount(self) -> str:
        return label(self.ind, self.lang, "amount")

    def industry(self) -> str:
        return label(self.ind, self.lang, "name")

    def party(self) -> str:
        return self.fake.company() if self.rng.random() < 0.6 else self.fake.name()

    def date(self) -> dt.date:
        return dt.date(2024, 1, 1) + dt.timedelta(days=self.rng.randrange(0, 360))

    def records(self, n: int, k_cats: int = 5, cats: list[str] | None = None) -> list[dict[str, Any]]:
        """`n` records over the industry's first `k_cats` categories, or over `cats`."""
        cats = cats or self.cats(k_cats)
        ids = sorted(self.rng.sample(range(1000, 9999), n))
        amts = amounts(self.ind, self.rng, n)
        return [{"id": f"{self.ind.prefix}-{i}", "name": self.party(), "category": cats[j % len(cats)] if j < len(cats)
                 else self.rng.choice(cats), "date": self.date().isoformat(), "amount": a}
                for j, (i, a) in enumerate(zip(ids, amts))]


@dataclass
class Built:
    title: str
    prompt: str
    expected: dict[str, Any]
    actions: list[dict[str, Any]]
    deliverables: list[str]
    inputs: list[str] = field(default_factory=list)
    mutate: dict[str, Any] = field(default_factory=dict)
    difficulty: str = "medium"
    #: {workbook: {"Sheet!A1": {"base", "min", "max", "decimals"}}}: the inputs export may change, at
    #: points drawn afresh per verify (`liveness.py`); written to the hidden `tests/liveness.json`.
    liveness: dict[str, dict[str, dict[str, float]]] = field(default_factory=dict)


def money(v: float) -> str:
    return f"{v:,.2f}"


def save_xlsx(path: Path, sheets: dict[str, list[list[Any]]]) -> None:
    wb = openpyxl.Workbook()
    wb.remove(wb.active)
    for name, rows in sheets.items():
        ws = wb.create_sheet(name)
        for r in rows:
            ws.append(r)
    path.parent.mkdir(parents=True, exist_ok=True)
    wb.save(path)


def save_docx(path: Path, blocks: list[tuple[str, Any]]) -> None:
    """Blocks: ("title", text) ("h1", text) ("h2", text) ("p", text) ("bold", text) ("table", rows)."""
    d = docx.Document()
    for kind, val in blocks:
        if kind == "title":
            d.add_heading(val, level=0)
        elif kind in ("h1", "h2"):
            d.add_heading(val, level=int(kind[1]))
        elif kind == "p":
            d.add_paragraph(val)
        elif kind == "bold":
            r = d.add_paragraph().add_run(val)
            r.bold = True
            r.font.size = Pt(12)
        elif kind == "table":
            t = d.add_table(rows=len(val), cols=len(val[0]))
            t.style = "Table Grid"
            for i, row in enumerate(val):
                for j, v in enumerate(row):
                    t.cell(i, j).text = str(v)
    path.parent.mkdir(parents=True, exist_ok=True)
    d.save(str(path))


def call(tool: str, **arguments: Any) -> dict[str, Any]:
    return {"tool": tool, "arguments": arguments}


def totals_by(recs: list[dict[str, Any]], key: str = "category") -> dict[str, float]:
    out: dict[str, float] = {}
    for r in recs:
        out[r[key]] = round(out.get(r[key], 0.0) + r["amount"], 2)
    return dict(sorted(out.items()))


def cleanup_tmp(state: Path) -> None:
    for p in state.glob("_tmp*"):
        p.unlink() if p.is_file() else shutil.rmtree(p)


FIXED_TIME = (2024, 1, 1, 0, 0, 0)


def normalise_package(path: Path) -> None:
    """Make an OOXML file byte-reproducible: fixed zip entry times and document timestamps."""
    import re
    import zipfile

    entries = []
    with zipfile.ZipFile(path) as z:
        for info in z.infolist():
            data = z.read(info)
            if info.filename == "docProps/core.xml":
                data = re.sub(rb"(<dcterms:(?:created|modified)[^>]*>)[^<]*", rb"\g<1>2024-01-01T00:00:00Z", data)
            entries.append((info.filename, data))
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in entries:
            z.writestr(zipfile.ZipInfo(name, FIXED_TIME), data, compress_type=zipfile.ZIP_DEFLATED)


def normalise_state(state: Path) -> None:
    for p in sorted(state.rglob("*")):
        if p.suffix in (".xlsx", ".docx", ".pptx"):
            normalise_package(p)
