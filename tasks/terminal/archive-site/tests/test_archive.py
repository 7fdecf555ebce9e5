import json
import tarfile
from pathlib import Path

from verifiers import check, fs_state

EXPECTED = json.loads((Path(__file__).parent / "expected.json").read_text())


def members() -> dict[str, bytes]:
    p = fs_state.path("backup/site.tar.gz")
    assert p.is_file(), "backup/site.tar.gz is missing"
    out = {}
    with tarfile.open(p, "r:gz") as tar:
        for m in tar.getmembers():
            if m.isfile():
                name = m.name[2:] if m.name.startswith("./") else m.name
                out[name] = tar.extractfile(m).read()
    return out


@check("archive-files")
def test_files():
    got = members()
    assert sorted(got) == sorted(EXPECTED), sorted(set(got) ^ set(EXPECTED))
    for rel, text in EXPECTED.items():
        assert got[rel].decode() == text, rel


@check("site-kept", kind="collateral")
def test_site_kept():
    for rel, text in EXPECTED.items():
        assert fs_state.read_text(rel) == text, rel
    assert fs_state.exists("site/draft.tmp")
