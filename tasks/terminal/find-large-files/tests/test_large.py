import json
from pathlib import Path

from verifiers import check, fs_state

EXPECTED = json.loads((Path(__file__).parent / "expected.json").read_text())


@check("list-correct")
def test_list():
    lines = [ln.rstrip("\r") for ln in fs_state.read_lines("large_files.txt") if ln.strip()]
    assert lines == EXPECTED


@check("files-kept", kind="collateral")
def test_files_kept():
    for rel in EXPECTED:
        assert fs_state.path("data/" + rel).is_file(), rel
