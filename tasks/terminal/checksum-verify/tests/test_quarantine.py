import json
from pathlib import Path

from verifiers import check, fs_state

BAD = json.loads((Path(__file__).parent / "expected.json").read_text())
GOOD = ["app-1.0.tar.gz", "docs.zip", "notes.txt", "icons.tar"]


@check("report")
def test_report():
    assert [ln for ln in fs_state.read_lines("corrupted.txt") if ln.strip()] == BAD


@check("quarantined")
def test_quarantine():
    assert fs_state.listing("downloads/quarantine") == BAD


@check("good-files-kept", kind="collateral")
def test_good():
    top = set(fs_state.listing("downloads")) - {"quarantine"} - {f"quarantine/{b}" for b in BAD}
    assert top == set(GOOD) | {"SHA256SUMS", "extra.log"}, top
    sums = dict(reversed(ln.split("  ", 1)) for ln in fs_state.read_lines("downloads/SHA256SUMS"))
    for name in GOOD:
        assert fs_state.sha256("downloads/" + name) == sums[name], name
