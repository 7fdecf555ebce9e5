import json
from pathlib import Path

from verifiers import check, fs_state

EXPECTED = json.loads((Path(__file__).parent / "expected.json").read_text())


@check("files-present")
def test_files():
    assert fs_state.listing("by_region") == sorted(f"{r}.csv" for r in EXPECTED)


@check("rows-correct")
def test_rows():
    for region, rows in EXPECTED.items():
        lines = fs_state.read_lines(f"by_region/{region}.csv")
        assert lines[0] == "date,region,product,units", region
        assert [ln.split(",") for ln in lines[1:] if ln] == rows, region


@check("source-kept", kind="collateral")
def test_source():
    assert len(fs_state.read_lines("sales.csv")) == 401
