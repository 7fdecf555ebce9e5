"""What a task-synthesis intent is: a function from a read-only view of the seed database to a
`Draft` (prompt, oracle calls, expected answer, calls that policy forbids)."""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from sqlalchemy.orm import Session

T = TypeVar("T")


def call(tool: str, **arguments: Any) -> dict[str, Any]:
    return {"tool": tool, "arguments": arguments}


def listed(parts: Sequence[str]) -> str:
    """Names as a prompt lists them: "A", "A and B", "A, B and C"."""
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]


@dataclass
class Draft:
    slug: str
    title: str
    prompt: str
    actions: list[dict[str, Any]]
    kind: str  # write | read | refusal
    answer: dict[str, Any] | None = None
    forbidden: list[dict[str, Any]] = field(default_factory=list)
    grounds: dict[str, Any] | None = None  # a refusal's rule and accepted forms of its figure
    difficulty: str = "easy"
    tags: list[str] = field(default_factory=list)


@dataclass
class Ctx:
    rng: random.Random
    s: Session

    def pick(self, seq: Sequence[T]) -> T:
        if not seq:
            raise LookupError("nothing to pick from")
        return self.rng.choice(list(seq))

    def say(self, *variants: str) -> str:
        return self.rng.choice(variants)


def grounds(rule: str, *figure: Any) -> dict[str, Any]:
    """What a refusal rests on: the domain's rule and the figure behind it (the accepted forms,
    the first as the oracle states it)."""
    return {"rule": rule, "figure": [str(f) for f in figure]}


def refuse(g: dict[str, Any], reason: str) -> dict[str, Any]:
    """The oracle's refusal, stating its grounds."""
    return call("refuse", rule=g["rule"], figure=g["figure"][0], reason=reason)


def scalar(*accept: Any) -> dict[str, Any]:
    return {"kind": "scalar", "accept": [str(a) for a in accept]}


def items(*alternatives: Sequence[Any]) -> dict[str, Any]:
    return {"kind": "set", "items": [[str(a) for a in alts] for alts in alternatives]}


Intent = Callable[[Ctx], Draft | None]
