import json
from pathlib import Path

from verifiers import check, fs_state

EXPECTED = json.loads((Path(__file__).parent / "expected.json").read_text())


@check("unique-sorted")
def test_unique():
    got = [ln for ln in fs_state.read_lines("unique_emails.txt") if ln != ""]
    assert got == EXPECTED, f"{len(got)} lines, expected {len(EXPECTED)}"


@check("input-kept", kind="collateral")
def test_input_kept():
    lines = fs_state.read_lines("signups.txt")
    assert len(lines) == 181 and any(ln != ln.strip() for ln in lines)
