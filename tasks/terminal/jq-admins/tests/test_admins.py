import json
from pathlib import Path

from verifiers import check, fs_state

EXPECTED = json.loads((Path(__file__).parent / "expected.json").read_text())


@check("admins-correct")
def test_admins():
    got = [ln.strip() for ln in fs_state.read_lines("admins.txt") if ln.strip()]
    assert got == EXPECTED
