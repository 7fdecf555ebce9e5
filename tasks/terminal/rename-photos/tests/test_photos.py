import json
from pathlib import Path

from verifiers import check, fs_state

WANT = json.loads((Path(__file__).parent / "expected.json").read_text())


@check("renamed")
def test_renamed():
    assert fs_state.listing("photos") == sorted([*WANT, "IMG_7.JPG.xmp", "notes.txt"])


@check("contents-kept", kind="collateral")
def test_contents():
    for name, digest in WANT.items():
        assert fs_state.sha256("photos/" + name) == digest, name
