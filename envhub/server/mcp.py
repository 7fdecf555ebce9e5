"""An MCP server per session: `POST /v1/sessions/{id}/mcp` speaks MCP's streamable HTTP transport.

An MCP client (the official SDK's, or any agent harness that takes an MCP server) lists the
session's tools — as its harness skin presents them — calls them, and ends with the `verify`
tool. Each call is a step of the same session through the same session manager as the REST and
WebSocket routes: the declarations are checked, the failure class is kept, the store records it.
Tool failures come back as MCP results with `isError` (the episode goes on); the step's failure
class and trainability ride in `structuredContent`.

The transport runs stateless (every HTTP request stands alone): the envhub session, not an MCP
session, holds the episode's state. The caller is the session's owner, as on every route: send
the API key, or without keys the reset's `client_token`, as `Authorization: Bearer ...`.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from mcp import types
from mcp.server.lowlevel import Server
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from starlette.types import Receive, Scope, Send

from envhub.server.auth import Access, Caller
from envhub.server.hub import Hub
from envhub.spec import StepRequest, ToolCall

_SID = re.compile(r"/v1/sessions/([^/]+)/mcp/?$")
VERIFY = types.Tool(name="verify", description="End the episode: judge the final state and return the reward.",
                    inputSchema={"type": "object", "properties": {}, "additionalProperties": False})


class SessionMcp:
    """The ASGI app mounted at `/v1/sessions/{id}/mcp`, and its lifespan (`running`)."""

    def __init__(self, hub: Hub) -> None:
        self.hub = hub
        self.server: Server = Server("envhub")
        self.server.list_tools()(self._list_tools)
        self.server.call_tool(validate_input=False)(self._call_tool)  # envhub checks arguments itself
        self.manager = StreamableHTTPSessionManager(app=self.server, stateless=True, json_response=True)

    @asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        async with self.manager.run():
            yield

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self.manager.handle_request(scope, receive, send)

    def _target(self) -> tuple[str, Caller]:
        """The session this request is for, and who is asking (the session's owner sees it; anyone
        else is told it does not exist, as on every other route)."""
        request = self.server.request_context.request
        match = _SID.search(request.url.path) if request is not None else None
        if match is None:
            raise ValueError("not a session's MCP endpoint")
        access: Access = request.app.state.access
        return match.group(1), access.caller(request.headers.get("authorization"))

    async def _list_tools(self) -> list[types.Tool]:
        session = self.hub.manager.get(*self._target())
        return [types.Tool(name=t.name, description=t.description, inputSchema=t.spec().input_schema)
                for t in session.tools.values()] + [VERIFY]

    async def _call_tool(self, name: str, arguments: dict[str, Any]) -> types.CallToolResult:
        sid, caller = self._target()
        if name == VERIFY.name:
            v = await self.hub.manager.verify(sid, caller)
            text = f"reward {v.reward:g} ({'passed' if v.passed else 'failed'}; {v.failure_class.value})"
            return types.CallToolResult(content=[types.TextContent(type="text", text=text)],
                                        structuredContent=v.model_dump(mode="json"), isError=False)
        r = await self.hub.manager.step(sid, StepRequest(action=ToolCall(tool=name, arguments=arguments)), caller)
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=r.observation.text)],
            structuredContent={"data": r.observation.data, "failure": r.failure.value, "trainable": r.trainable,
                               "step": r.step, "done": r.done, "truncated": r.truncated},
            isError=r.observation.is_error)
