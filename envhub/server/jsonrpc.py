"""JSON-RPC 2.0 messages as the MCP endpoint reads and writes them: bounded parsing, the shape
checks the specification names, and error objects with its codes (no library text in any of them).

    -32700 parse error       the body is not JSON we can read (malformed, nested deeper than
                             orjson's 1024 levels, a number no double holds where no fallback can)
    -32600 invalid request   not one JSON-RPC 2.0 object, a batch, or an id that is neither a string
                             nor a safe integer (|n| <= 2**53 - 1: `1e400`, 5.0, objects, null, true)
    -32601 method not found  -32602 invalid params  -32603 internal error (the log has the rest)

An id that is present but not valid makes the message an invalid request, never a notification:
only a message without an `id` member is one.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import orjson

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603

MAX_SAFE_INTEGER = 2**53 - 1
MAX_NUMBER_CHARS = 40  # longer numeric literals are refused wherever they are (no double or id needs more)


class _Huge:
    """A numeric literal too long to keep: where it sits decides the error (an id, or a parameter)."""

    def __repr__(self) -> str:
        return "<number out of range>"


HUGE = _Huge()


class RpcError(Exception):
    """A JSON-RPC error answer: its code, our own message, and the id it answers (None: unknown)."""

    def __init__(self, code: int, message: str, id: Any = None, data: Any = None, status: int = 200) -> None:
        super().__init__(message)
        self.code, self.message, self.id, self.data, self.status = code, message, id, data, status

    def body(self) -> dict[str, Any]:
        error: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data is not None:
            error["data"] = self.data
        return {"jsonrpc": "2.0", "id": self.id, "error": error}


@dataclass(frozen=True)
class Message:
    """One JSON-RPC message: a request (`has_id`), a notification, or a client's response."""

    method: str | None
    params: dict[str, Any]
    id: str | int | None
    has_id: bool

    @property
    def is_request(self) -> bool:
        return self.method is not None and self.has_id


def _number(text: str) -> Any:
    if len(text) > MAX_NUMBER_CHARS:
        return HUGE
    value: Any = float(text) if any(c in text for c in ".eE") else int(text)
    return HUGE if value in (float("inf"), float("-inf")) else value


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def parse(body: bytes) -> Any:
    """The JSON value of `body`, or `RpcError(PARSE_ERROR)`. orjson reads it (bounded depth, in C);
    only when it refuses a number does Python's parser read it again, with every overlong or
    infinite number kept as `HUGE` rather than converted (Python's int() of 5,000 digits raises)."""
    try:
        return orjson.loads(body)
    except orjson.JSONDecodeError as e:
        why = str(e)
    if "depth" in why:
        raise RpcError(PARSE_ERROR, "parse error: JSON nested deeper than 1024 levels", status=400)
    if "number" not in why:
        raise RpcError(PARSE_ERROR, "parse error: the body is not valid JSON", status=400)
    try:
        return json.loads(body, parse_int=_number, parse_float=_number, parse_constant=_no_constant)
    except (ValueError, RecursionError):
        raise RpcError(PARSE_ERROR, "parse error: the body is not valid JSON", status=400) from None


def _valid_id(value: Any) -> bool:
    if isinstance(value, str):
        return True
    return isinstance(value, int) and not isinstance(value, bool) and abs(value) <= MAX_SAFE_INTEGER


def _holds_huge(value: Any, depth: int = 0) -> bool:
    if value is HUGE:
        return True
    if isinstance(value, dict):
        return any(_holds_huge(v, depth + 1) for v in value.values())
    if isinstance(value, list):
        return any(_holds_huge(v, depth + 1) for v in value)
    return False


def message(value: Any) -> Message:
    """The message `value` holds, or the `RpcError` that answers it (HTTP 400 for an invalid request)."""
    if isinstance(value, list):
        raise RpcError(INVALID_REQUEST, "invalid request: batches are not accepted; send one message per POST",
                       status=400)
    if not isinstance(value, dict) or value.get("jsonrpc") != "2.0":
        raise RpcError(INVALID_REQUEST, 'invalid request: expected one JSON-RPC object with "jsonrpc": "2.0"',
                       status=400)
    has_id = "id" in value
    rid = value.get("id")
    if has_id and not _valid_id(rid):
        raise RpcError(INVALID_REQUEST, "invalid request: an id is a string or an integer of at most 2**53 - 1",
                       status=400)
    method = value.get("method")
    if method is None:
        if has_id and ("result" in value or "error" in value):  # the client answering: nothing to do
            return Message(None, {}, rid, True)
        raise RpcError(INVALID_REQUEST, "invalid request: a request names its method", rid if has_id else None,
                       status=400)
    if not isinstance(method, str) or not method:
        raise RpcError(INVALID_REQUEST, "invalid request: the method is a non-empty string",
                       rid if has_id else None, status=400)
    params = value.get("params", {})
    if not isinstance(params, dict):
        raise RpcError(INVALID_PARAMS, "invalid params: params is an object", rid if has_id else None)
    if _holds_huge(params):
        raise RpcError(INVALID_PARAMS, f"invalid params: a number longer than {MAX_NUMBER_CHARS} characters, "
                       "or beyond what a double holds", rid if has_id else None)
    return Message(method, params, rid, has_id)


def result(id: str | int | None, value: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": id, "result": value}


def dumps(body: dict[str, Any]) -> bytes:
    return orjson.dumps(body)
