"""JSON out of the hub that never fails on a string Python can hold but UTF-8 cannot.

A lone surrogate (`"\\ud800"`) is a valid Python `str` but not valid Unicode: orjson and
`str.encode("utf-8")` refuse it. The hub refuses such strings on the way in (`limits`), and an
`Observation` escapes any a tool hands back (`envhub.spec`); this is the last guard for whatever
else an answer holds: orjson on the fast path, and on failure the same data with each
unencodable character as its escape text, so an answer is never lost to a 500 after its step ran.
"""

from __future__ import annotations

from typing import Any

import orjson
from fastapi.responses import JSONResponse
from pydantic import BaseModel
from pydantic_core import PydanticSerializationError

from envhub.spec import escape_unencodable


def dumps(value: Any) -> bytes:
    try:
        return orjson.dumps(value)
    except TypeError:
        return orjson.dumps(escape_unencodable(value))


def dumps_text(value: Any) -> str:
    """For WebSocket text frames."""
    return dumps(value).decode()


#: The JSON text of each op a success frame answers, made once.
_OP_JSON = {op: f'"{op}"' for op in ("reset", "step", "verify", "state", "close")}


def ok_frame(frame_id: Any, op: str | None, result: Any) -> str:
    """A WebSocket success frame. A response model is serialised by pydantic straight to JSON (one
    pass, the same text as `model_dump(mode="json")` then orjson); an unencodable string falls back
    to the escaping path."""
    if isinstance(result, BaseModel):
        try:
            data = result.model_dump_json(by_alias=True)
        except PydanticSerializationError:
            data = dumps_text(result.model_dump(mode="json", by_alias=True))
    else:
        data = dumps_text(result)
    id_json = "null" if frame_id is None else dumps_text(frame_id)
    return f'{{"id":{id_json},"op":{_OP_JSON.get(op) or dumps_text(op)},"ok":true,"data":{data}}}'


class SafeJSONResponse(JSONResponse):
    """The app's default response class: orjson, never a 500 for an unencodable string."""

    def render(self, content: Any) -> bytes:
        return dumps(content)
