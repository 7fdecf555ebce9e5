"""A reset's and a step's answers as the session manager makes them, before any wire model.

`SessionManager.create` and `step` answer them to every caller: the session socket writes them
straight to JSON (`encoding.answer_json`), the typed routes (REST) turn them into the wire models
`SessionCreated` and `StepResult` (`.model()`), and in-process callers read their fields. Building
those models for every frame cost about a fifth of a reset+step pair's instructions (callgrind,
in-process, store off), so the socket never builds them. Each answer has its model's fields in its
model's order and is written as the model's JSON text: `tests/server/test_encoding.py` holds them
to both.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, fields
from datetime import datetime
from typing import Any

from envhub.errors import FailureClass
from envhub.spec import PROTOCOL_VERSION, Observation, SessionCreated, StepResult, TaskRef, ToolSpec


class ToolList:
    """A reset answer's tool specs, one object for every session that offers the same tools
    (`SessionManager`): the socket writes its JSON once and keeps it in `json` (`encoding`). Writing
    the specs again at every reset took about 60 µs for the db family's 65 tools. Specs are shared
    and read-only. Not a dataclass: orjson would write one's fields itself, never asking `encoding`."""

    __slots__ = ("specs", "json")

    def __init__(self, specs: list[ToolSpec]) -> None:
        self.specs = specs
        self.json: Any = None  # an `orjson.Fragment` of `specs`

    def __iter__(self) -> Iterator[ToolSpec]:
        return iter(self.specs)

    def __len__(self) -> int:
        return len(self.specs)


@dataclass(slots=True, kw_only=True)
class StepAnswer:
    """`StepResult`'s fields."""

    protocol: str = PROTOCOL_VERSION
    observation: Observation
    reward: float | None
    terminated: bool
    truncated: bool
    done: bool
    info: dict[str, Any]
    failure: FailureClass
    trainable: bool
    retryable: bool
    step: int

    def model(self) -> StepResult:
        return StepResult(**{name: getattr(self, name) for name in _STEP_FIELDS})


@dataclass(slots=True, kw_only=True)
class ResetAnswer:
    """`SessionCreated`'s fields."""

    protocol: str = PROTOCOL_VERSION
    session_id: str
    env: str
    observation: Observation
    tools: ToolList
    task: TaskRef
    lease_expires_at: datetime
    client_token: str | None

    def model(self) -> SessionCreated:
        fields_ = {name: getattr(self, name) for name in _RESET_FIELDS}
        fields_["tools"] = self.tools.specs
        return SessionCreated(**fields_)


_STEP_FIELDS = tuple(f.name for f in fields(StepAnswer))
_RESET_FIELDS = tuple(f.name for f in fields(ResetAnswer))

#: Each answer and the wire model it stands for.
MODELS: dict[type, type] = {StepAnswer: StepResult, ResetAnswer: SessionCreated}
