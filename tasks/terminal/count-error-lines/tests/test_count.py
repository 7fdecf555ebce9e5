import json
from pathlib import Path

from verifiers import check, fs_state

EXPECTED = json.loads((Path(__file__).parent / "expected.json").read_text())


@check("count-correct")
def test_count():
    assert fs_state.read_text("error_count.txt").strip() == str(EXPECTED["count"])


@check("log-untouched", kind="collateral")
def test_log_untouched():
    assert fs_state.sha256("logs/app.log") == EXPECTED["log_sha256"]
