"""JSON out of the hub that never fails on a string Python can hold but UTF-8 cannot.

A lone surrogate (`"\\ud800"`) is a valid Python `str` but not valid Unicode: orjson and
`str.encode("utf-8")` refuse it. The hub refuses such strings on the way in (`limits`), yet a tool
may still echo one back (a file name, a database value). Every answer is encoded here: orjson on
the fast path, and on failure the same data with each unencodable character replaced by U+FFFD,
so an answer is never lost to a 500 after its step already ran.
"""

from __future__ import annotations

import re
from typing import Any

import orjson
from fastapi.responses import JSONResponse


_SURROGATE = re.compile("[\ud800-\udfff]")


def scrub(value: Any) -> Any:
    """`value` with every lone surrogate in its strings (keys too) replaced by U+FFFD."""
    if isinstance(value, str):
        return _SURROGATE.sub("\ufffd", value)
    if isinstance(value, dict):
        return {scrub(k): scrub(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [scrub(v) for v in value]
    return value


def dumps(value: Any) -> bytes:
    try:
        return orjson.dumps(value)
    except TypeError:
        return orjson.dumps(scrub(value))


def dumps_text(value: Any) -> str:
    """For WebSocket text frames."""
    return dumps(value).decode()


class SafeJSONResponse(JSONResponse):
    """The app's default response class: orjson, never a 500 for an unencodable string."""

    def render(self, content: Any) -> bytes:
        return dumps(content)
