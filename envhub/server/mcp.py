"""An MCP server per session: `POST /v1/sessions/{id}/mcp` speaks MCP's streamable HTTP transport.

An MCP client (the official SDK's, or any agent harness that takes an MCP server) lists the
session's tools — as its harness skin presents them — calls them, and ends with the `verify`
tool. Each call is a step of the same session through the same session manager as the REST and
WebSocket routes: the declarations are checked, the failure class is kept, the store records it.
Tool failures come back as MCP results with `isError` (the episode goes on); the step's failure
class and trainability ride in `structuredContent`. `verify` answers the agent's view of the
verdict (`VerifyResult.for_agent`: the reward and which checks held, never a check's message).

The transport (`envhub.server.mcp_http`: both the 2025-11-25 and the stateless 2026-07-28
revision) runs stateless (every HTTP request stands alone): the envhub session, not an MCP
session, holds the episode's state. The caller is the session's owner, as on every route: send
the API key, or without keys the reset's `client_token`, as `Authorization: Bearer ...`.
"""

from __future__ import annotations

import importlib.metadata
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from contextvars import ContextVar
from typing import Any

from mcp import types
from starlette.types import Receive, Scope, Send

from envhub.core.auth import Caller
from envhub.core.hub import Hub
from envhub.server.jsonrpc import INVALID_PARAMS, RpcError
from envhub.server.mcp_http import HostPolicy, McpHttp
from envhub.spec import StepRequest, ToolCall

VERIFY = types.Tool(name="verify", description="End the episode: judge the final state and return the reward.",
                    inputSchema={"type": "object", "properties": {}, "additionalProperties": False})
#: The request being answered: its session id and caller (set by the transport around each handler).
_REQUEST: ContextVar[tuple[str, Caller]] = ContextVar("envhub_mcp_request")


def _version() -> str:
    try:
        return importlib.metadata.version("envhub")
    except importlib.metadata.PackageNotFoundError:
        return "0"


class SessionMcp:
    """The ASGI app at `/v1/sessions/{id}/mcp`: the transport (`envhub.server.mcp_http`, which
    parses, checks Host/Origin, the caller and the revision) calls the two handlers below."""

    def __init__(self, hub: Hub) -> None:
        self.hub = hub
        settings = hub.settings
        self.http = McpHttp(self._listed, self._called, HostPolicy(settings.allowed_hosts, settings.host),
                            hub.manager.get, {"name": "envhub", "version": _version()})

    @asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        yield  # nothing runs between requests: every request stands alone

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self.http(scope, receive, send)

    async def _listed(self, sid: str, caller: Caller) -> list[types.Tool]:
        token = _REQUEST.set((sid, caller))
        try:
            return await self._list_tools()
        finally:
            _REQUEST.reset(token)

    async def _called(self, sid: str, caller: Caller, name: str, arguments: dict[str, Any]) -> types.CallToolResult:
        """The call's result; a tool the session does not offer is a protocol error (-32602, as MCP's
        tools page says), after the step has recorded it as the agent's error, as on every route."""
        known = name == VERIFY.name or name in self.hub.manager.get(sid, caller).tools
        token = _REQUEST.set((sid, caller))
        try:
            result = await self._call_tool(name, arguments)
        finally:
            _REQUEST.reset(token)
        if not known:
            text = result.content[0].text if result.content and isinstance(result.content[0], types.TextContent) \
                else f"unknown tool {name[:128]!r}"
            raise RpcError(INVALID_PARAMS, text[:500])
        return result

    def _target(self) -> tuple[str, Caller]:
        """The session this request is for, and who is asking (the transport has checked that the
        session is the caller's: anyone else was told it does not exist, as on every other route)."""
        return _REQUEST.get()

    async def _list_tools(self) -> list[types.Tool]:
        session = self.hub.manager.get(*self._target())
        return [types.Tool(name=t.name, description=t.description, inputSchema=t.spec().input_schema)
                for t in session.tools.values()] + [VERIFY]

    async def _call_tool(self, name: str, arguments: dict[str, Any]) -> types.CallToolResult:
        sid, caller = self._target()
        if name == VERIFY.name:
            seen = (await self.hub.manager.verify(sid, caller)).for_agent()  # the agent's view: no messages
            return types.CallToolResult(content=[types.TextContent(type="text", text=seen.text())],
                                        structuredContent=seen.model_dump(mode="json"), isError=False)
        r = await self.hub.manager.step(sid, StepRequest(action=ToolCall(tool=name, arguments=arguments)), caller)
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=r.observation.text)],
            structuredContent={"data": r.observation.data, "failure": r.failure.value, "trainable": r.trainable,
                               "step": r.step, "terminated": r.terminated, "truncated": r.truncated,
                               "done": r.done},
            isError=r.observation.is_error)
