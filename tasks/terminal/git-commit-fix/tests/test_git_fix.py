import json
from pathlib import Path

from verifiers import check, fs_state

EXPECTED = json.loads((Path(__file__).parent / "expected.json").read_text())


@check("file-fixed")
def test_file_fixed():
    assert fs_state.git("repo", "show", "HEAD:greeting.txt") == "Hello, world!\nHave a nice day."


@check("commit-metadata")
def test_commit():
    assert fs_state.git("repo", "rev-parse", "--abbrev-ref", "HEAD") == "main"
    assert fs_state.git("repo", "log", "-1", "--format=%s") == "Fix greeting typo"
    assert fs_state.git("repo", "log", "-1", "--format=%an <%ae>") == "Agent Smith <agent@example.com>"


@check("one-commit-on-top")
def test_parent():
    assert fs_state.git("repo", "rev-parse", "HEAD~1") == EXPECTED["base"]
    assert fs_state.git("repo", "diff", "--name-only", "HEAD~1", "HEAD") == "greeting.txt"


@check("tree-clean", kind="collateral")
def test_clean():
    assert fs_state.git("repo", "status", "--porcelain") == ""
