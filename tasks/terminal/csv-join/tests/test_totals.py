import csv
import io
import json
from pathlib import Path

from verifiers import check, fs_state

EXPECTED = json.loads((Path(__file__).parent / "expected.json").read_text())


@check("totals-correct")
def test_totals():
    rows = [r for r in csv.reader(io.StringIO(fs_state.read_text("totals.csv"))) if r]
    assert rows[0] == ["customer_id", "name", "total"], rows[0]
    assert rows[1:] == EXPECTED, next(((a, b) for a, b in zip(rows[1:], EXPECTED) if a != b), len(rows))
