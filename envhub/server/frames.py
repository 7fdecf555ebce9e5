"""What both WebSocket routes share: the handshake's caller and reading one frame safely.

A frame must be JSON in a *text* frame. Anything else (a binary frame, malformed JSON, JSON with a
lone surrogate escape outside a tool call's `arguments`, a frame over the size limit) raises a
`RequestError` the route answers with an error frame, and the connection stays open (the same
rules as for HTTP bodies: `envhub.server.limits`). Invalid UTF-8 in a text frame never reaches here:
the WebSocket layer closes the connection with 1007, as RFC 6455 requires.
"""

from __future__ import annotations

import logging
from typing import Any

import orjson
from fastapi import WebSocket, WebSocketDisconnect

from envhub.core.auth import Access, Caller
from envhub.errors import PayloadTooLarge, RequestError, Unauthorized
from envhub.server.limits import lenient_json
from envhub.server.problems import respond


class QuietInvalidUtf8(logging.Filter):
    """uvicorn logs an invalid UTF-8 text frame (a client's fault, answered with a 1007 close) as an
    error with a traceback; keep it as one warning line without the traceback."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.getMessage().startswith("Invalid UTF-8 sequence received from client"):
            record.exc_info, record.exc_text, record.levelno, record.levelname = None, None, logging.WARNING, "WARNING"
        return True


def quiet_invalid_utf8() -> None:
    logger = logging.getLogger("uvicorn.error")
    if not any(isinstance(f, QuietInvalidUtf8) for f in logger.filters):
        logger.addFilter(QuietInvalidUtf8())


async def accept(ws: WebSocket) -> Caller | None:
    """Accept the connection as its caller; a refused handshake is a 401 problem (None returned)."""
    access: Access = ws.app.state.access
    try:
        caller = access.caller(ws.headers.get("authorization"))
    except Unauthorized as exc:
        if "websocket.http.response" in ws.scope.get("extensions", {}):
            await ws.send_denial_response(respond(exc))
        else:  # a server without the denial extension: close with "policy violation"
            await ws.close(code=1008, reason=exc.detail[:120])
        return None
    await ws.accept()
    return caller


async def receive_text(ws: WebSocket) -> str:
    """The next frame's text; `WebSocketDisconnect` when the peer left, `binary_frame()` for a binary one."""
    message = await ws.receive()
    if message["type"] == "websocket.disconnect":
        raise WebSocketDisconnect(message.get("code", 1000), message.get("reason"))
    text = message.get("text")
    if text is None:
        raise binary_frame()
    return text


async def receive_json(ws: WebSocket, limit: int) -> Any:
    """The next frame's JSON value; `WebSocketDisconnect` when the peer left."""
    return parse_text(await receive_text(ws), limit)


def binary_frame() -> RequestError:
    """What a binary frame is answered with, on every WebSocket route and transport."""
    return RequestError("binary frames are not accepted: send each frame as JSON in a text frame", code="binary_frame")


def parse_text(text: str, limit: int) -> Any:
    """A text frame's JSON value, by the rules above (whichever transport carried it)."""
    if len(text) > limit:
        raise PayloadTooLarge(f"frame of {len(text)} characters is over the {limit}-byte limit")
    try:
        return orjson.loads(text)  # strict: refuses a lone surrogate escape...
    except orjson.JSONDecodeError as e:
        try:
            value, why = lenient_json(text)  # ...which only a tool call's arguments may hold
        except ValueError:
            raise RequestError(f"malformed JSON: {e}", code="malformed_json") from None
        if why:
            raise RequestError(f"the frame {why}", code="invalid_unicode") from None
        return value
