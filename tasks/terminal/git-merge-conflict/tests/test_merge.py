import json
from pathlib import Path

from verifiers import check, fs_state

EXPECTED = json.loads((Path(__file__).parent / "expected.json").read_text())


@check("merge-commit")
def test_merge_commit():
    assert fs_state.git("repo", "rev-parse", "--abbrev-ref", "HEAD") == "main"
    parents = fs_state.git("repo", "log", "-1", "--format=%P", "main").split()
    assert parents == [EXPECTED["main"], EXPECTED["feature"]], parents


@check("config-resolved")
def test_config():
    text = fs_state.git("repo", "show", "main:config.yaml")
    assert text.splitlines() == ["service: api", "timeout: 60", "retries: 3", "log_level: warning"], text


@check("both-sides-kept")
def test_both_sides():
    files = fs_state.git("repo", "ls-tree", "-r", "--name-only", "main").split()
    assert {"retry.py", "CHANGELOG.md", "app.py", "README.md"} <= set(files), files
    assert "<<<<<<<" not in fs_state.git("repo", "grep", "-c", "<<<<<<<", "main", check=False)


@check("tree-clean", kind="collateral")
def test_clean():
    assert fs_state.git("repo", "status", "--porcelain") == ""
