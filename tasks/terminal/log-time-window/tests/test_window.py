import json
from pathlib import Path

from verifiers import check, fs_state

WANT = json.loads((Path(__file__).parent / "expected.json").read_text())


@check("window-correct")
def test_window():
    assert fs_state.read_lines("window.log") == WANT["lines"]


@check("log-kept", kind="collateral")
def test_log():
    assert fs_state.sha256("service.log") == WANT["sha256"]
