import json
from pathlib import Path

from verifiers import check, fs_state

WANT = json.loads((Path(__file__).parent / "expected.json").read_text())


@check("groups-correct")
def test_groups():
    got = [ln for ln in fs_state.read_lines("duplicates.txt") if ln.strip()]
    assert got == WANT


@check("files-kept", kind="collateral")
def test_kept():
    assert len([p for p in fs_state.listing("files") if fs_state.path("files/" + p).is_file()]) == 16
