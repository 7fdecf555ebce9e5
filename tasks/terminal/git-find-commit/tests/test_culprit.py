import json
import re
from pathlib import Path

from verifiers import check, fs_state

EXPECTED = json.loads((Path(__file__).parent / "expected.json").read_text())


@check("hash-correct")
def test_hash():
    text = fs_state.read_text("culprit.txt").strip()
    assert re.fullmatch(r"[0-9a-f]{40}", text), f"not one full hash: {text[:100]!r}"
    assert text == EXPECTED["culprit"]
