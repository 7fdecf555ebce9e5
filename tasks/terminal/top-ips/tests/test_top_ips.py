import json
from pathlib import Path

from verifiers import check, fs_state

EXPECTED = json.loads((Path(__file__).parent / "expected.json").read_text())


@check("top-five")
def test_top_five():
    lines = [ln.strip() for ln in fs_state.read_lines("top_ips.txt") if ln.strip()]
    assert [" ".join(ln.split()) for ln in lines] == EXPECTED["lines"]


@check("log-untouched", kind="collateral")
def test_log_untouched():
    assert fs_state.sha256("access.log") == EXPECTED["log_sha256"]
