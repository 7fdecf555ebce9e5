"""The drawn OfficeVerse set: a seed is the same task on every machine, PDFs included."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from envhub.tasks.digest import tree_sha256
from environments.office import tasktypes
from environments.office.generate import draw, materialize


def test_a_seed_is_the_same_bytes_twice_even_its_pdfs(tmp_path):
    """LibreOffice stamps each PDF with the time, a checksum of it and a random ID: the set fixes
    the first and derives the others from the file, so two materialisations agree byte for byte."""
    pdf_seeds = [s for s in range(24) if draw(s)[0] in tasktypes.NEEDS_PDF]
    assert len(pdf_seeds) == 4
    for seed in [*pdf_seeds, 0, 5]:
        (tmp_path / "a").mkdir(exist_ok=True)
        (tmp_path / "b").mkdir(exist_ok=True)
        a = materialize("office/drawn", seed, tmp_path / "a")
        b = materialize("office/drawn", seed, tmp_path / "b")
        assert tree_sha256(a) == tree_sha256(b), draw(seed)
        assert (a / "task.yaml").read_text().startswith(f"id: office/drawn/{seed}\n")
    pdfs = sorted((tmp_path / "a").rglob("*.pdf"))
    assert pdfs and all(b"/CreationDate(D:20250101000000" in p.read_bytes() for p in pdfs)
    assert len({p.read_bytes()[-200:] for p in pdfs}) == len(pdfs)  # each its own ID



def _stamps(package: bytes) -> set[object]:
    """Every time an OOXML package carries, the packages embedded in it included."""
    import io
    import re
    import zipfile

    out: set[object] = set()
    with zipfile.ZipFile(io.BytesIO(package)) as z:
        for info in z.infolist():
            out.add(info.date_time)
            data = z.read(info)
            if info.filename == "docProps/core.xml":
                out |= set(re.findall(rb"<dcterms:(?:created|modified)[^>]*>([^<]*)", data))
            elif info.filename.endswith((".xlsx", ".docx", ".pptx")):
                out |= _stamps(data)
    return out


def test_no_document_of_any_type_carries_the_time_of_its_making(tmp_path):
    """Two materialisations in the same second agree whatever the documents hold; on another
    machine, another day, only fixed times do: a deck's chart embeds its data as an xlsx written
    with the time (its record went stale on every fresh machine)."""
    for seed in range(len(tasktypes.TYPES)):
        made = materialize("office/drawn", seed, tmp_path)
        for p in sorted((made / "state").rglob("*")):
            if p.suffix in (".xlsx", ".docx", ".pptx"):
                assert _stamps(p.read_bytes()) <= {(2024, 1, 1, 0, 0, 0), b"2024-01-01T00:00:00Z"}, (draw(seed), p.name)

def test_the_set_covers_every_type_and_industry_with_korean_among_them():
    drawn = [draw(s) for s in range(12 * 11 * 2)]
    assert Counter(t for t, *_ in drawn) == {t: 22 for t in tasktypes.TYPES}
    assert len({i for _, i, *_ in drawn}) == 11
    korean = sum(lang == "ko" for _, _, lang, _ in drawn) / len(drawn)
    assert 0.1 < korean < 0.25, korean
    assert len({d for *_, d in drawn}) == len(drawn)  # every task its own data


def test_materialised_tasks_name_their_seed(tmp_path: Path):
    folder = materialize("office/drawn", 3, tmp_path)
    assert folder == tmp_path / "3" and (folder / "solution" / "actions.json").is_file()
