"""A candidate bug: one edit of a source file, and how edits are applied.

Every mutation engine (Python's `ast` in `mutate_py`, tree-sitter for the other languages in
`mutate_ts`) returns `Mutation`s over the file's text: `start`/`end` are character offsets into
the source as read (str offsets, not bytes), `replacement` replaces `source[start:end]`. The
synthesiser applies one (or a pair, for harder tasks) and keeps it only when execution says so.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

#: The operators every engine names its mutations by (a language may lack some).
OPERATORS = (
    "flip_comparison",    # < ↔ >=, == ↔ !=, <= ↔ >, ...
    "off_by_one",         # a bound or index ± 1: `i < n` → `i <= n`, `x[1:]` → `x[2:]`, `n - 1` → `n`
    "drop_statement",     # delete one statement (an assignment, a call, an append)
    "drop_branch",        # delete an elif/else branch, or a whole if without else
    "swap_arguments",     # f(a, b) → f(b, a) for two arguments of different text
    "wrong_constant",     # 0 ↔ 1, True ↔ False, a number n → n + 1, "" for a short string
    "invert_condition",   # if c → if not c, while c → while not c, ternaries too
    "remove_early_return",  # delete a guard `if ...: return ...` that precedes more code
    "flip_boolean_operator",  # and ↔ or, && ↔ ||
    "flip_arithmetic",    # + ↔ -, * ↔ /, min ↔ max
)


@dataclass(frozen=True)
class Mutation:
    path: str            # repository-relative, POSIX
    operator: str        # one of OPERATORS
    line: int            # 1-based line of `start`
    start: int           # character offset into the file's text
    end: int
    replacement: str
    function: str = ""   # the enclosing function/method name ("" at module level)
    original: str = ""   # source[start:end], kept for messages and checks

    def as_dict(self) -> dict:
        return asdict(self)


class OverlappingMutations(ValueError):
    """Two mutations of one file touch the same characters."""


def apply(source: str, mutations: list[Mutation]) -> str:
    """`source` with every mutation applied (all of one file); overlapping edits are refused."""
    ordered = sorted(mutations, key=lambda m: m.start)
    for a, b in zip(ordered, ordered[1:], strict=False):
        if b.start < a.end:
            raise OverlappingMutations(f"{a.operator}@{a.line} and {b.operator}@{b.line} overlap")
    out = source
    for m in reversed(ordered):
        if out[m.start:m.end] != m.original and m.original:
            raise ValueError(f"{m.path}:{m.line}: the text at the mutation is not {m.original!r}")
        out = out[:m.start] + m.replacement + out[m.end:]
    return out


def per_operator(mutations: list[Mutation]) -> dict[str, int]:
    """How many of `mutations` each operator made (reports, `mutate_ts.summary`)."""
    counts: dict[str, int] = {}
    for m in mutations:
        counts[m.operator] = counts.get(m.operator, 0) + 1
    return dict(sorted(counts.items()))
