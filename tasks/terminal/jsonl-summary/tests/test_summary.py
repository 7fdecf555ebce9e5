import json
from pathlib import Path

from verifiers import check, fs_state

EXPECTED = json.loads((Path(__file__).parent / "expected.json").read_text())


def summary() -> dict:
    data = json.loads(fs_state.read_text("summary.json"))
    assert isinstance(data, dict), "summary.json is not an object"
    return data


@check("keys-exact")
def test_keys():
    assert sorted(summary()) == sorted(EXPECTED)


@check("counts")
def test_counts():
    s = summary()
    assert s.get("total") == EXPECTED["total"]
    assert s.get("by_type") == EXPECTED["by_type"]
    assert s.get("unique_users") == EXPECTED["unique_users"]


@check("top-user")
def test_top_user():
    assert summary().get("top_user_by_bytes") == EXPECTED["top_user_by_bytes"]
