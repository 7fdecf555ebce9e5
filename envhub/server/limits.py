"""A request-body size limit as plain ASGI middleware (checked while reading, not after)."""

from __future__ import annotations

from typing import Any

from envhub.errors import PayloadTooLarge
from envhub.server.problems import respond


class BodySizeLimit:
    def __init__(self, app: Any, limit: int) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope.get("headers") or []).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.limit:
            await self._refuse(scope, receive, send, int(declared))
            return
        seen = 0

        async def limited_receive() -> dict:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.limit:
                    raise PayloadTooLarge(f"request body over the {self.limit}-byte limit")
            return message

        await self.app(scope, limited_receive, send)

    async def _refuse(self, scope: dict, receive: Any, send: Any, size: int) -> None:
        response = respond(PayloadTooLarge(f"request body of {size} bytes is over the {self.limit}-byte limit"))
        await response(scope, receive, send)
