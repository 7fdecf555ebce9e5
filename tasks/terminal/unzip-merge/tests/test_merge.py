import json
from pathlib import Path

from verifiers import check, fs_state

EXPECTED = json.loads((Path(__file__).parent / "expected.json").read_text())


@check("dataset-restored")
def test_restored():
    assert fs_state.sha256("dataset.bin") == EXPECTED["sha256"]


@check("zip-kept", kind="collateral")
def test_zip_kept():
    assert fs_state.path("incoming/delivery.zip").is_file()
