from pathlib import Path

import pytest

from envhub.errors import TaskFormatError
from envhub.records import validation_status
from envhub.tasks.catalog import Catalog
from envhub.tasks.model import Task


def write_task(root: Path, name: str, yaml_text: str, with_tests: bool = True) -> Path:
    d = root / "terminal" / name
    (d / "tests").mkdir(parents=True)
    (d / "task.yaml").write_text(yaml_text)
    (d / "prompt.md").write_text("do it")
    if with_tests:
        (d / "tests" / "test_x.py").write_text("def test_x():\n    assert False\n")
    return d


def test_schema_errors_name_the_file_and_field(tmp_path):
    d = write_task(tmp_path, "bad", "id: terminal/bad\nfamily: terminal\ntitle: t\ndifficulty: impossible\n")
    with pytest.raises(TaskFormatError) as e:
        Task.load(d)
    assert "task.yaml" in e.value.detail and "difficulty" in e.value.detail


def test_id_must_match_the_folder(tmp_path):
    d = write_task(tmp_path, "here", "id: terminal/elsewhere\nfamily: terminal\ntitle: t\n")
    with pytest.raises(TaskFormatError, match="does not match folder"):
        Task.load(d)


def test_a_task_needs_a_verifier(tmp_path):
    d = write_task(tmp_path, "novf", "id: terminal/novf\nfamily: terminal\ntitle: t\n", with_tests=False)
    with pytest.raises(TaskFormatError, match="verifier"):
        Task.load(d)


def test_null_pass_needs_a_reason(tmp_path):
    d = write_task(tmp_path, "np", "id: terminal/np\nfamily: terminal\ntitle: t\nnull_expected: pass\n")
    with pytest.raises(TaskFormatError, match="null_reason"):
        Task.load(d)


def test_catalog_keeps_broken_folders_aside_and_filters(tmp_path):
    write_task(tmp_path, "good", "id: terminal/good\nfamily: terminal\ntitle: Good one\ntags: [text]\n")
    write_task(tmp_path, "broken", "id: terminal/broken\nfamily: terminal\n")  # no title
    catalog = Catalog(tmp_path)
    assert list(catalog.tasks) == ["terminal/good"]
    assert len(catalog.errors) == 1
    assert [t.id for t in catalog.filter(tag="text")] == ["terminal/good"]
    assert catalog.filter(tag="nope") == []
    assert [t.id for t in catalog.filter(text="good one")] == ["terminal/good"]
    assert validation_status(catalog.get("terminal/good")) == "unvalidated"


def test_short_title_cuts_at_a_word_boundary():
    from envhub.tasks.model import short_title

    assert short_title("  Fix   the\nparser  ") == "Fix the parser"
    long = "Fix the tokenizer so that multi-byte characters in identifiers are never split across tokens"
    cut = short_title(long, limit=40)
    assert cut == "Fix the tokenizer so that multi-byte…" and len(cut) <= 40
    assert short_title("x" * 50, limit=10) == "x" * 9 + "…"  # one long word: cut inside it
