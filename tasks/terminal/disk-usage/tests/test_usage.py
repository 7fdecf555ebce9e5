import json
from pathlib import Path

from verifiers import check, fs_state

WANT = json.loads((Path(__file__).parent / "expected.json").read_text())


@check("usage-correct")
def test_usage():
    assert [ln for ln in fs_state.read_lines("usage.tsv") if ln.strip()] == WANT
