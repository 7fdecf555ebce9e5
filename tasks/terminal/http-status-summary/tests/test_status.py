import csv
import io
import json
from pathlib import Path

from verifiers import check, fs_state

EXPECTED = json.loads((Path(__file__).parent / "expected.json").read_text())


@check("csv-correct")
def test_csv():
    rows = list(csv.reader(io.StringIO(fs_state.read_text("status_counts.csv"))))
    rows = [r for r in rows if r]
    assert rows[0] == ["status", "count"], rows[:1]
    assert [[int(a), int(b)] for a, b in rows[1:]] == EXPECTED["rows"]


@check("log-untouched", kind="collateral")
def test_log_untouched():
    assert fs_state.sha256("access.log") == EXPECTED["log_sha256"]
