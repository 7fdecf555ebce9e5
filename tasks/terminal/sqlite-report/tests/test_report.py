import csv
import io
import json
from pathlib import Path

from verifiers import check, fs_state

EXPECTED = json.loads((Path(__file__).parent / "expected.json").read_text())


@check("report-correct")
def test_report():
    rows = [r for r in csv.reader(io.StringIO(fs_state.read_text("feb_top5.csv"))) if r]
    assert rows[0] == ["product", "revenue"], rows[0]
    assert rows[1:] == EXPECTED


@check("db-unchanged", kind="collateral")
def test_db():
    assert fs_state.sha256("shop.db") == (Path(__file__).parent / "db.sha256").read_text().strip()
