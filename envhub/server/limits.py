"""What a request may be before any route sees it: a bounded body, and valid Unicode throughout.

Plain ASGI middleware. The body is read here in full (it is bounded, so this costs one copy) and
replayed to the app, so a refusal is a clean 4xx problem before anything ran:

- a body over `max_body_bytes` is 413 (the declared length is checked before reading);
- a URL whose percent-decoded path or query is not UTF-8 is 400 (Starlette would otherwise turn
  the bad bytes into U+FFFD and serve a different value than the client sent);
- a body that is not UTF-8, or JSON with a lone surrogate escape (`"\\ud800"`, valid JSON text
  but not a Unicode string), is 400. Python's `json` accepts a lone surrogate and it would crash
  later, wherever the string is encoded (a store write, a response), possibly after a step ran.
  One place is exempt: the value of an `arguments` member (a tool call's arguments). A bad
  argument is the agent's fault and the core answers it as an `agent_error` observation inside
  a 200 step, as for any other bad argument, rather than a 4xx that kills the rollout.

WebSocket frames are checked by their routes (`envhub.server.frames`).
"""

from __future__ import annotations

import json
import re
from typing import Any
from urllib.parse import unquote_to_bytes

import orjson

from envhub.errors import PayloadTooLarge, RequestError
from envhub.server.problems import respond

# A `\uD800`-`\uDFFF` escape; only then is the exact (slower) check needed.
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


LONE_SURROGATE = ("holds a lone surrogate escape (\\ud800-\\udfff unpaired) outside a tool call's arguments: "
                  "strings must be valid Unicode")


def _lone_outside_arguments(value: Any) -> bool:
    """Whether a string with a lone surrogate appears anywhere but inside an `arguments` member."""
    if isinstance(value, str):
        return _unencodable(value)
    if isinstance(value, dict):
        return any(_unencodable(k) or (k != "arguments" and _lone_outside_arguments(v)) for k, v in value.items())
    if isinstance(value, list):
        return any(_lone_outside_arguments(v) for v in value)
    return False


def _unencodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def lenient_json(text: str | bytes) -> tuple[Any, str | None]:
    """JSON that orjson refused: (value, None) if only lone surrogates in arguments made it fail,
    (None, why) for one elsewhere; `ValueError` when it is not JSON at all."""
    value = json.loads(text)  # accepts lone surrogates
    return (None, LONE_SURROGATE) if _lone_outside_arguments(value) else (value, None)


def invalid_unicode(body: bytes) -> str | None:
    """Why `body` is not valid Unicode text (None when it is, or when it is merely not JSON)."""
    try:
        body.decode("utf-8")
    except UnicodeDecodeError as e:
        return f"the body is not valid UTF-8 (byte {e.start})"
    if not _SURROGATE_ESCAPE.search(body):
        return None
    try:
        orjson.loads(body)  # strict: refuses lone surrogates, accepts proper pairs
        return None
    except orjson.JSONDecodeError:
        pass
    try:
        _, why = lenient_json(body)
    except ValueError:
        return None  # malformed JSON: the route's parser answers that
    return f"the JSON body {why}" if why else None


def invalid_url(scope: dict) -> str | None:
    raw_path = scope.get("raw_path") or scope.get("path", "").encode("utf-8", "surrogateescape")
    for what, raw in (("path", raw_path), ("query string", (scope.get("query_string") or b"").replace(b"+", b" "))):
        try:
            unquote_to_bytes(raw).decode("utf-8")
        except UnicodeDecodeError:
            return f"the URL's {what} is not valid UTF-8 once percent-decoded"
    return None


class BodySizeLimit:
    """The request guard (its historical name): body size and Unicode, as described above."""

    def __init__(self, app: Any, limit: int) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        why = invalid_url(scope)
        if why:
            await respond(RequestError(why, code="invalid_unicode"))(scope, receive, send)
            return
        declared = dict(scope.get("headers") or []).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.limit:
            await self._too_large(scope, receive, send, f"request body of {int(declared)} bytes")
            return
        chunks: list[bytes] = []
        seen = 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return  # the client left before sending its body: nothing to answer
            chunk = message.get("body", b"")
            seen += len(chunk)
            if seen > self.limit:
                await self._too_large(scope, receive, send, "request body")
                return
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        body = b"".join(chunks)
        why = invalid_unicode(body) if body else None
        if why:
            await respond(RequestError(why, code="invalid_unicode"))(scope, receive, send)
            return
        replayed = False

        async def replay() -> dict:
            nonlocal replayed
            if replayed:
                return await receive()  # after the body: wait for the disconnect, as the server would
            replayed = True
            return {"type": "http.request", "body": body, "more_body": False}

        await self.app(scope, replay, send)

    async def _too_large(self, scope: dict, receive: Any, send: Any, what: str) -> None:
        response = respond(PayloadTooLarge(f"{what} is over the {self.limit}-byte limit"))
        await response(scope, receive, send)
