import json
from pathlib import Path

from verifiers import check, fs_state

WANT = json.loads((Path(__file__).parent / "expected.json").read_text())
CHANGED = ["etc/app/main.conf", "etc/app/conf.d/20-db.conf", "etc/app/deep/nested/site.conf"]


@check("keys-renamed")
def test_renamed():
    for rel in CHANGED:
        assert fs_state.read_text(rel) == WANT[rel], rel


@check("others-untouched", kind="collateral")
def test_untouched():
    for rel, text in WANT.items():
        if rel not in CHANGED:
            assert fs_state.read_text(rel) == text, rel
    assert sorted(fs_state.listing("etc/app")) == sorted(
        {p for rel in WANT for p in _parents(rel[len("etc/app/"):])})


def _parents(rel: str) -> list[str]:
    parts = rel.split("/")
    return ["/".join(parts[:i]) for i in range(1, len(parts) + 1)]
