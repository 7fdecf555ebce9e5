"""JSON out of the hub that never fails on a string Python can hold but UTF-8 cannot.

A lone surrogate (`"\\ud800"`) is a valid Python `str` but not valid Unicode: orjson and
`str.encode("utf-8")` refuse it. The hub refuses such strings on the way in (`limits`), and an
`Observation` escapes any a tool hands back (`envhub.spec`); this is the last guard for whatever
else an answer holds: orjson on the fast path, and on failure the same data with each
unencodable character as its escape text, so an answer is never lost to a 500 after its step ran.
"""

from __future__ import annotations

from datetime import date, datetime
from typing import Any

import orjson
from fastapi.responses import JSONResponse
from pydantic import BaseModel, PlainSerializer, WrapSerializer
from pydantic_core import PydanticSerializationError

from envhub.core.answers import ResetAnswer, StepAnswer, ToolList
from envhub.spec import Observation, SessionCreated, StepResult, TaskRef, ToolSpec, escape_unencodable


def dumps(value: Any) -> bytes:
    try:
        return orjson.dumps(value)
    except TypeError:
        return orjson.dumps(escape_unencodable(value))


def dumps_text(value: Any) -> str:
    """For WebSocket text frames."""
    return dumps(value).decode()


#: The JSON text of each op a success frame answers, made once.
_OP_JSON = {op: f'"{op}"' for op in ("reset", "step", "verify", "state", "close", "fork", "snapshot")}


def _json_keys(cls: type[BaseModel]) -> tuple[tuple[str, str], ...] | None:
    """(field, JSON key) of a model whose JSON pydantic writes as plain fields (None if any are renamed);
    a model with a serializer of its own, a computed or excluded field or extras is refused."""
    decorators = cls.__pydantic_decorators__
    if (decorators.field_serializers or decorators.model_serializers or cls.model_computed_fields
            or cls.model_config.get("extra") == "allow"
            or any(f.exclude or any(isinstance(m, PlainSerializer | WrapSerializer) for m in f.metadata)
                   for f in cls.model_fields.values())):
        raise TypeError(f"{cls.__name__} does not serialise as plain fields")
    keys = tuple((name, f.serialization_alias or f.alias or name) for name, f in cls.model_fields.items())
    return None if all(name == key for name, key in keys) else keys


#: The models in the hot answers (a step's, a reset's), which orjson writes itself (`answer_json`).
PLAIN_MODELS: dict[type[BaseModel], tuple[tuple[str, str], ...] | None] = {
    cls: _json_keys(cls) for cls in (StepResult, SessionCreated, Observation, ToolSpec, TaskRef)}


def _plain_fields(value: Any) -> Any:
    """orjson's `default`: a plain model's fields by their JSON keys, a date as pydantic writes it, a
    `ToolList` as its JSON text (written on first use); anything else is pydantic's to write (`TypeError`)."""
    if type(value) is ToolList:  # written once, then kept with the list
        if value.json is None:
            value.json = orjson.Fragment(orjson.dumps(value.specs, default=_plain_fields,
                                                      option=orjson.OPT_PASSTHROUGH_DATETIME))
        return value.json
    keys = PLAIN_MODELS.get(type(value), ())
    if keys != ():
        fields = value.__dict__
        return fields if keys is None else {key: fields[name] for name, key in keys}
    if isinstance(value, datetime):  # orjson writes a UTC offset with seconds rounded, pydantic cut
        offset = value.utcoffset()
        if offset is None or not (offset.seconds % 60 or offset.microseconds):
            return orjson.Fragment(orjson.dumps(value, option=orjson.OPT_UTC_Z))
    elif isinstance(value, date):
        return orjson.Fragment(orjson.dumps(value))
    raise TypeError  # and a `time`: orjson drops its fraction's leading zeros (".10000" for 10 ms)


def answer_json(answer: BaseModel | StepAnswer | ResetAnswer) -> str:
    """An answer as its wire model's `model_dump_json(by_alias=True)` text, in one orjson pass when
    every model in it is one of `PLAIN_MODELS` and every value one orjson writes as pydantic does (a
    step's answer in a third of pydantic's time). Anything else (another model, a value orjson
    refuses or writes otherwise: bytes, a set, a `time`, an integer over 64 bits, a lone surrogate)
    goes to pydantic, and an unencodable string on to the escaping path. `tests/server/test_encoding.py`
    holds the two writers to the same text."""
    try:
        return orjson.dumps(answer, default=_plain_fields, option=orjson.OPT_PASSTHROUGH_DATETIME).decode()
    except TypeError:
        pass
    model = answer if isinstance(answer, BaseModel) else answer.model()
    try:
        return model.model_dump_json(by_alias=True)
    except PydanticSerializationError:
        return dumps_text(model.model_dump(mode="json", by_alias=True))


def ok_frame(frame_id: Any, op: str | None, result: Any) -> str:
    """A WebSocket success frame: an answer or a response model as `answer_json` writes it, anything
    else by `dumps`."""
    # The answers first: `isinstance` on a model class runs ABCMeta's check, a Python call.
    data = answer_json(result) if isinstance(result, StepAnswer | ResetAnswer | BaseModel) else dumps_text(result)
    id_json = "null" if frame_id is None else dumps_text(frame_id)
    return f'{{"id":{id_json},"op":{_OP_JSON.get(op) or dumps_text(op)},"ok":true,"data":{data}}}'


class SafeJSONResponse(JSONResponse):
    """The app's default response class: orjson, never a 500 for an unencodable string."""

    def render(self, content: Any) -> bytes:
        return dumps(content)
