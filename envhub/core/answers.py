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

from collections.abc import Callable, Iterator
from dataclasses import field, make_dataclass
from typing import Any

from pydantic import BaseModel
from pydantic.fields import FieldInfo

from envhub.spec import SessionCreated, StepResult, ToolSpec


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


def answer_class(name: str, model: type[BaseModel], *, doc: str, as_answer: dict[str, type] | None = None,
                 to_wire: dict[str, Callable[[Any], Any]] | None = None) -> type:
    """A slotted dataclass with `model`'s fields in `model`'s order and defaults, so a field is
    declared once, on the wire model in `envhub.spec`, and orjson writes an answer's fields as
    pydantic writes the model's. `as_answer` gives a field another type in the answer (a reset's
    shared `ToolList`), `to_wire` the function that turns it back for `.model()`."""
    as_answer, to_wire = as_answer or {}, to_wire or {}
    names = tuple(model.model_fields)

    def spec(field_name: str, info: FieldInfo) -> tuple[str, Any, Any]:
        if info.default_factory is not None:
            default = field(default_factory=info.default_factory)  # type: ignore[arg-type]
        else:
            default = field() if info.is_required() else field(default=info.default)
        return field_name, as_answer.get(field_name, info.annotation), default

    def to_model(self: Any) -> BaseModel:
        values = {key: getattr(self, key) for key in names}
        for key, convert in to_wire.items():
            values[key] = convert(values[key])
        return model(**values)

    return make_dataclass(name, [spec(key, info) for key, info in model.model_fields.items()],
                          namespace={"model": to_model, "__doc__": doc}, slots=True, kw_only=True)


StepAnswer = answer_class("StepAnswer", StepResult, doc="`StepResult`'s fields; `.model()` is the `StepResult`.")
ResetAnswer = answer_class("ResetAnswer", SessionCreated,
                           doc="`SessionCreated`'s fields, its tools one shared `ToolList`; `.model()` is the "
                               "`SessionCreated`.",
                           as_answer={"tools": ToolList}, to_wire={"tools": lambda tools: tools.specs})

#: Each answer and the wire model it stands for.
MODELS: dict[type, type] = {StepAnswer: StepResult, ResetAnswer: SessionCreated}
