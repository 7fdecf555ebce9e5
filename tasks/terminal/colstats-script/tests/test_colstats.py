import csv
import shutil
from pathlib import Path

from verifiers import check, fs_state

DATA = Path(__file__).parent / "data"


def expected(path: Path, column: str) -> str:
    with path.open() as f:
        vals = [float(row[column]) for row in csv.DictReader(f) if row.get(column) not in (None, "")]
    return f"min={min(vals):.2f} max={max(vals):.2f} mean={sum(vals) / len(vals):.2f}"


def run(file: Path, column: str):
    ws = fs_state.scratch_copy()
    assert (ws / "colstats.sh").is_file(), "colstats.sh is missing"
    local = ws.parent / file.name
    shutil.copy(file, local)
    return fs_state.run(["bash", "colstats.sh", str(local), column], cwd=ws)


@check("sample-output")
def test_sample():
    res = run(fs_state.path("sample.csv"), "temp_c")
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip() == "min=12.00 max=21.25 mean=16.69"


@check("fresh-files")
def test_fresh():
    for name, col in [("fresh1.csv", "price"), ("fresh1.csv", "weight"), ("fresh2.csv", "reading"),
                      ("fresh2.csv", "delta")]:
        res = run(DATA / name, col)
        assert res.returncode == 0, (name, col, res.stderr[-300:])
        assert res.stdout.strip() == expected(DATA / name, col), (name, col, res.stdout[:200])


@check("unknown-column")
def test_unknown_column():
    res = run(DATA / "fresh1.csv", "nope")
    assert res.returncode == 2, res.returncode
    assert res.stdout.strip() == "" and res.stderr.strip() != ""
