"""The Python mutation engine: each operator's exact edit, and what it must never touch."""

from __future__ import annotations

import ast

import pytest

from environments.swe.factory.mutate_py import candidates
from environments.swe.factory.mutation import Mutation, OverlappingMutations, apply

SOURCE = '''"""Module docstring: 1 < 2 and True."""
LIMIT = 10


def clamp(x: int = 0, lo=1, hi=9) -> int:
    """Docstring with a < b and 0."""
    if x < lo:
        return lo
    total = x * 2
    if lo <= x and x != hi:
        total = max(total, lo)
    elif x == 3:
        total += 1
    else:
        total = 0
    log("é", x)
    return total if total > 0 else items[1:]


def test_something():
    assert clamp(1) == 2
'''


@pytest.fixture(scope="module")
def found() -> list[Mutation]:
    return candidates("python", "pkg/mod.py", SOURCE)


def mutated(m: Mutation) -> str:
    return apply(SOURCE, [m])


def has(found: list[Mutation], operator: str, before: str, after: str) -> bool:
    """Whether some candidate of `operator` turns the line holding `before` into `after`."""
    for m in found:
        if m.operator != operator:
            continue
        text = mutated(m)
        if before in SOURCE and after in text and before not in text.replace(after, ""):
            return True
    return False


@pytest.mark.parametrize(("operator", "before", "after"), [
    ("flip_comparison", "if x < lo:", "if x >= lo:"),
    ("off_by_one", "if x < lo:", "if x <= lo:"),
    ("flip_comparison", "x != hi", "x == hi"),
    ("flip_boolean_operator", "lo <= x and x != hi", "lo <= x or x != hi"),
    ("flip_arithmetic", "total = x * 2", "total = x // 2"),
    ("flip_arithmetic", "max(total, lo)", "min(total, lo)"),
    ("swap_arguments", "max(total, lo)", "max(lo, total)"),
    ("wrong_constant", "total = x * 2", "total = x * 3"),
    ("wrong_constant", "total = 0\n", "total = 1\n"),
    ("invert_condition", "if x < lo:", "if not (x < lo):"),
    ("off_by_one", "items[1:]", "items[2:]"),
    ("remove_early_return", "    if x < lo:\n        return lo\n", "    total = x * 2"),
    ("drop_statement", "    log(\"é\", x)\n", "    return total"),
    ("drop_branch", "    elif x == 3:\n        total += 1\n", "        total = max(total, lo)\n    else:"),
])
def test_operator_makes_the_expected_edit(found, operator, before, after):
    assert has(found, operator, before, after), f"no {operator} turning {before!r} into {after!r}"


def test_every_candidate_parses_and_changes_something(found):
    assert len(found) > 20
    for m in found:
        text = mutated(m)
        assert text != SOURCE
        ast.parse(text)


def test_docstrings_module_level_and_test_functions_are_never_touched(found):
    lines = SOURCE.splitlines()
    test_line = next(i for i, line in enumerate(lines, 1) if line.startswith("def test_something"))
    for m in found:
        assert m.function == "clamp", m  # nothing at module level, nothing in test_*
        assert m.line < test_line
        assert "Docstring" not in m.original and "docstring" not in SOURCE[m.start:m.end].lower()
        assert m.line not in (5,), "the signature (defaults, annotations) is not mutated"


def test_offsets_are_characters_after_non_ascii_text(found):
    # the comparison after `"é"` on one line: `total > 0` is on the line after, so use the return line
    ret = [m for m in found if m.operator == "flip_comparison" and m.original == ">"]
    assert ret and mutated(ret[0]).count("total <= 0") == 1
    for m in found:
        assert SOURCE[m.start:m.end] == m.original


def test_apply_refuses_overlapping_edits_and_wrong_text():
    a = Mutation("f.py", "flip_comparison", 1, 2, 3, ">=", "f", "<")
    b = Mutation("f.py", "off_by_one", 1, 2, 3, "<=", "f", "<")
    with pytest.raises(OverlappingMutations):
        apply("a < b", [a, b])
    with pytest.raises(ValueError, match="not"):
        apply("a > b", [a])
    assert apply("a < b", [a]) == "a >= b"


def test_unparsable_source_has_no_candidates():
    assert candidates("python", "x.py", "def f(:\n") == []
    with pytest.raises(ValueError):
        candidates("go", "x.go", "package x")
