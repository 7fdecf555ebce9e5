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


@dataclass
class Draft:
    slug: str
    title: str
    prompt: str
    actions: list[dict[str, Any]]
    kind: str  # write | read | refusal
    answer: dict[str, Any] | None = None
    forbidden: list[dict[str, Any]] = field(default_factory=list)
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


def scalar(*accept: Any) -> dict[str, Any]:
    return {"kind": "scalar", "accept": [str(a) for a in accept]}


def items(*alternatives: Sequence[Any]) -> dict[str, Any]:
    return {"kind": "set", "items": [[str(a) for a in alts] for alts in alternatives]}


Intent = Callable[[Ctx], Draft | None]
