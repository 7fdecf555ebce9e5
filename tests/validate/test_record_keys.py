"""The judging code keys a record by what it is, not where it sits (`envhub.records.JudgingCode`).

Each case writes a small package of judging files, hashes it, changes it, and hashes it again:
moves, docstrings and layout keep the key; a change to what any statement does, or to what a
name it uses is bound to, changes it.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from envhub import records

HELPERS = '''\
"""Helpers."""

LIMIT = 3


def helper(x):
    return x + LIMIT
'''
JUDGE = '''\
from pkg.helpers import helper


def judge(x):
    """Whether x passes."""
    return helper(x) > 10
'''


def _key(root: Path, files: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> str:
    """The key of `files` written fresh under `root` (a new folder per call: parses are cached by path)."""
    monkeypatch.setattr(records, "REPO_ROOT", root)
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(textwrap.dedent(text))
    return records.JudgingCode(tuple(sorted(root / rel for rel in files))).sha256()


@pytest.fixture
def key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    counter = iter(range(1000))
    return lambda files: _key(tmp_path / str(next(counter)), files, monkeypatch)


BASE = {"pkg/__init__.py": "", "pkg/helpers.py": HELPERS, "pkg/judge.py": JUDGE}


def test_a_function_moved_between_judging_files_keeps_the_key(key):
    moved = {"pkg/__init__.py": "",
             "pkg/helpers.py": '"""Helpers."""\n',
             "pkg/judge.py": "LIMIT = 3\n\n\ndef helper(x):\n    return x + LIMIT\n\n\n"
                             "def judge(x):\n    return helper(x) > 10\n"}
    assert key(moved) == key(BASE)


def test_docstrings_comments_and_layout_keep_the_key(key):
    restyled = {**BASE, "pkg/judge.py": ("from pkg.helpers import (\n    helper,  # the one\n)\n"
                                         "def judge(x):\n    '''Another docstring.'''\n"
                                         "    return (helper(x)\n            > 10)\n")}
    assert key(restyled) == key(BASE)


@pytest.mark.parametrize("change", [
    ("pkg/helpers.py", "LIMIT = 3", "LIMIT = 4"),
    ("pkg/helpers.py", "return x + LIMIT", "return x - LIMIT"),
    ("pkg/judge.py", "> 10", ">= 10"),
])
def test_a_change_to_what_a_statement_does_changes_the_key(key, change):
    path, old, new = change
    assert key({**BASE, path: BASE[path].replace(old, new)}) != key(BASE)


def test_a_function_moved_where_a_name_it_uses_means_something_else_changes_the_key(key):
    """`judge` moved beside another `helper`: its text is the same, what it calls is not."""
    two = {**BASE, "pkg/other.py": "def helper(x):\n    return x * 2\n"}
    moved = {"pkg/__init__.py": "", "pkg/helpers.py": HELPERS,
             "pkg/judge.py": "",
             "pkg/other.py": "def helper(x):\n    return x * 2\n\n\ndef judge(x):\n    return helper(x) > 10\n"}
    assert key(moved) != key(two)


def test_an_import_switched_to_a_namesake_changes_the_key(key):
    two = {**BASE, "pkg/other.py": "def helper(x):\n    return x * 2\n"}
    switched = {**two, "pkg/judge.py": JUDGE.replace("from pkg.helpers import", "from pkg.other import")}
    assert key(switched) != key(two)


def test_a_relative_import_is_followed_like_an_absolute_one(key):
    relative = {**BASE, "pkg/judge.py": JUDGE.replace("from pkg.helpers import", "from .helpers import")}
    assert key(relative) == key(BASE)
    changed = {**relative, "pkg/helpers.py": HELPERS.replace("LIMIT = 3", "LIMIT = 5")}
    assert key(changed) != key(relative)


def test_an_import_from_outside_the_judging_files_stays_as_written(key):
    outside = {**BASE, "pkg/judge.py": JUDGE.replace("from pkg.helpers import", "from lib.helpers import")}
    assert key(outside) != key(BASE)
    assert key({**outside, "pkg/judge.py": outside["pkg/judge.py"].replace("lib.helpers", "lib.other")}) != key(outside)


def test_a_file_that_is_not_python_counts_by_its_bytes(key):
    data = {**BASE, "pkg/rules.txt": "a\nb\n"}
    assert key({**data, "pkg/rules.txt": "a\nc\n"}) != key(data)
    assert key({**BASE, "pkg/helpers.py": HELPERS + "def broken(:\n"}) != key(BASE)


def test_the_catalogue_keys_as_before_where_its_judging_code_is_unchanged():
    """Two computations of the catalogue's keys agree (the memo holds nothing across key sets)."""
    from envhub.config import REPO_ROOT
    from envhub.tasks.catalog import Catalog

    tasks = Catalog(REPO_ROOT / "tasks").filter(env="swe")[:5]
    first = [records.judge_sha256(t) for t in tasks]
    records._code_sha256.cache_clear()
    assert [records.judge_sha256(t) for t in tasks] == first


def test_functions_and_imports_in_a_circle_are_keyed_and_still_seen_to_change(key):
    circle = {"pkg/__init__.py": "", "pkg/a.py": "from pkg.b import g\nfrom pkg.b import a_name\n\n\n"
              "def f(n):\n    return g(n - 1) if n else 0\n",
              "pkg/b.py": "from pkg.a import f\nfrom pkg.a import a_name\n\n\ndef g(n):\n    return f(n) + 1\n"}
    first = key(circle)
    assert key(circle) == first
    assert key({**circle, "pkg/b.py": circle["pkg/b.py"].replace("+ 1", "+ 2")}) != first
