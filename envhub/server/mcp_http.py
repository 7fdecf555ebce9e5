"""MCP's Streamable HTTP transport for a session's endpoint, by the book, in two revisions.

What it implements, and from where (the specification pages at modelcontextprotocol.io, and the
checks of the official conformance suite, `@modelcontextprotocol/conformance`, which CI runs):

- **2025-11-25** (`/specification/2025-11-25/basic/transports`, `.../lifecycle`, `.../server/
  utilities/logging`): `initialize` (the version echoed when supported, else our latest),
  `notifications/initialized`, `ping`, `tools/list`, `tools/call`, `logging/setLevel`. Stateless
  (the envhub session in the URL holds the episode; no `Mcp-Session-Id` is issued), answers as
  `application/json`; a notification or a client's response is `202 Accepted`; `GET` (no server
  stream is offered) and `DELETE` (no MCP session to end) are `405`. An `MCP-Protocol-Version`
  header naming no version we serve is `400`.
- **2026-07-28** (`/specification/2026-07-28/server/discover`, `.../basic/versioning`, SEP-2575,
  SEP-2243, SEP-2549): no handshake; chosen when the request's `MCP-Protocol-Version` header names
  it (or any version we do not know) or its `params._meta` carries
  `io.modelcontextprotocol/protocolVersion`. Every request carries `_meta` with `protocolVersion`
  and `clientCapabilities` (else -32602, HTTP 400); the header must equal `_meta`'s version
  (else HeaderMismatch -32020, HTTP 400), the version must be one we serve (else
  UnsupportedProtocolVersion -32022 with `data: {supported, requested}`, HTTP 400); the
  `Mcp-Method` header must equal the method and `Mcp-Name` the tool's name (SEP-2243, -32020,
  HTTP 400). `server/discover`, `tools/list` and `tools/call` are served; results carry
  `resultType: "complete"` and the server's identity in `_meta`; `tools/list` carries the caching
  hints `ttlMs` and `cacheScope` (SEP-2549). A removed or unknown method is 404 with -32601.
  Request state rides in the tool arguments, and the episode's state in the envhub session, so
  nothing lives between requests.

At the edge, before a body is read (DNS-rebinding protection, `.../basic/security_best_practices`):
`Host` and `Origin` must name an allowed host (`ENVHUB_ALLOWED_HOSTS`; by default, on a loopback
server, the loopback names), else 421 / 403; the caller must be known where keys are on (401, for
`GET` as for any method); the session must be the caller's (404, as on every route).
"""

from __future__ import annotations

import logging
import re
import uuid
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import urlsplit

from mcp import types
from starlette.types import Receive, Scope, Send

from envhub.core.auth import Caller, is_loopback
from envhub.errors import EnvhubError, Unauthorized
from envhub.server import jsonrpc
from envhub.server.jsonrpc import INTERNAL_ERROR, INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND, RpcError

log = logging.getLogger("envhub.mcp")

LEGACY_VERSIONS = ("2025-11-25", "2025-06-18")  # newest first; what `initialize` negotiates among
MODERN_VERSIONS = ("2026-07-28",)  # served per request; the legacy ones through `initialize`
HEADER_MISMATCH = -32020
UNSUPPORTED_VERSION = -32022
LOG_LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
META = "io.modelcontextprotocol/"
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
#: Removed in 2026-07-28 (the conformance suite checks they are 404 / -32601 there).
REMOVED_IN_MODERN = ("initialize", "ping", "logging/setLevel", "resources/subscribe", "resources/unsubscribe")
MAX_TOOL_NAME = 128  # as `envhub.spec.ToolCall.tool`
TOOLS_TTL_MS = 60_000  # a session's tools never change; a minute keeps a client from asking on every turn

#: (session id, caller) -> the session's tools; (session id, caller, name, arguments) -> the call's result.
ListTools = Callable[[str, Caller], Awaitable[list[types.Tool]]]
CallTool = Callable[[str, Caller, str, dict[str, Any]], Awaitable[types.CallToolResult]]


class HostPolicy:
    """Which `Host` and `Origin` values a request may carry: the configured names (`*`: any), or by
    default, on a server bound to loopback, the loopback names (a page in the user's browser can
    point a DNS name at 127.0.0.1, never make its `Host` or `Origin` say so). A server on another
    interface takes any by default: keys are required there, and a rebinding page has none."""

    def __init__(self, allowed: list[str], bind_host: str) -> None:
        names = {a.strip().lower() for a in allowed if a.strip()}
        if not names and is_loopback(bind_host):
            names = {"localhost", "127.0.0.1", "[::1]", "::1"}
        self.any = not names or "*" in names
        self.names = names

    def allows(self, host: str) -> bool:
        if self.any:
            return True
        name = host.strip().lower()
        if name.startswith("["):  # [v6]:port
            name = name[:name.find("]") + 1] if "]" in name else name
        elif name.count(":") == 1:
            name = name.split(":", 1)[0]
        return name in self.names or name.strip("[]") in self.names

    def origin_allowed(self, origin: str) -> bool:
        if self.any:
            return True
        parts = urlsplit(origin.strip())
        return parts.scheme in ("http", "https") and bool(parts.netloc) and self.allows(parts.netloc)


class McpHttp:
    """The ASGI app of one session's MCP endpoint (the session id is the path's `session_id`)."""

    def __init__(self, list_tools: ListTools, call_tool: CallTool, hosts: HostPolicy,
                 find_session: Callable[[str, Caller], object], server_info: dict[str, str]) -> None:
        self.list_tools, self.call_tool, self.hosts = list_tools, call_tool, hosts
        self.find_session, self.server_info = find_session, server_info

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers") or []}
        try:
            status, body, extra = await self._answer(scope, receive, headers)
        except RpcError as e:
            status, body, extra = e.status, e.body(), {}
        await _send(send, status, body, extra)

    async def _answer(self, scope: Scope, receive: Receive,
                      headers: dict[str, str]) -> tuple[int, dict[str, Any] | None, dict[str, str]]:
        if not self.hosts.allows(headers.get("host", "")):
            raise RpcError(INVALID_REQUEST, "this server does not answer for that Host", status=421)
        if "origin" in headers and not self.hosts.origin_allowed(headers["origin"]):
            raise RpcError(INVALID_REQUEST, "requests from that Origin are not accepted", status=403)
        sid = (scope.get("path_params") or {}).get("session_id", "")
        try:
            caller: Caller = scope["app"].state.access.caller(headers.get("authorization"))
            self.find_session(sid, caller)
        except Unauthorized as e:
            return 401, RpcError(INVALID_REQUEST, e.detail).body(), {"WWW-Authenticate": 'Bearer realm="envhub"'}
        except EnvhubError as e:
            raise RpcError(INVALID_REQUEST, e.detail, status=e.status) from None
        if scope["method"] != "POST":
            return 405, RpcError(INVALID_REQUEST, "this endpoint takes POST (it offers no stream to GET and "
                                                  "no MCP session to DELETE)").body(), {"Allow": "POST"}
        content_type = headers.get("content-type", "").split(";", 1)[0].strip().lower()
        if content_type != "application/json":
            raise RpcError(INVALID_REQUEST, "the body must be application/json", status=415)
        msg = jsonrpc.message(jsonrpc.parse(await _body(receive)))
        version = self._version(msg, headers)
        if not msg.is_request:
            return 202, None, {}
        try:
            if version in MODERN_VERSIONS:
                result = await self._modern(msg, headers, sid, caller)
            else:
                result = await self._legacy(msg, sid, caller)
        except RpcError as e:
            e.id = msg.id
            raise
        except EnvhubError as e:  # the session went away meanwhile, or the like: our own words
            raise RpcError(INVALID_PARAMS if e.status < 500 else INTERNAL_ERROR, e.detail, msg.id) from None
        except Exception:  # a bug: the log has it, the caller a reference (never the exception's text)
            ref = uuid.uuid4().hex[:12]
            log.exception("MCP request %s failed (ref %s)", msg.method, ref)
            raise RpcError(INTERNAL_ERROR, f"internal error (ref {ref})", msg.id) from None
        return 200, jsonrpc.result(msg.id, result), {}

    # -- revision ---------------------------------------------------------------------------------
    def _version(self, msg: jsonrpc.Message, headers: dict[str, str]) -> str:
        """The revision the request is served in (see the module docstring), or its `RpcError`."""
        header = headers.get("mcp-protocol-version", "").strip()
        meta = msg.params.get("_meta")
        claimed = isinstance(meta, dict) and META + "protocolVersion" in meta
        if not claimed and (not header or header in LEGACY_VERSIONS):
            return header or LEGACY_VERSIONS[0]
        rid = msg.id
        if not claimed and _DATE.fullmatch(header) and header < MODERN_VERSIONS[0]:  # an older revision
            raise RpcError(INVALID_REQUEST, f"unsupported MCP-Protocol-Version {header}: this server speaks "
                                            f"{', '.join(MODERN_VERSIONS + LEGACY_VERSIONS)}", rid, status=400)
        if not isinstance(meta, dict) or not isinstance(meta.get(META + "protocolVersion"), str) \
                or not isinstance(meta.get(META + "clientCapabilities"), dict):
            raise RpcError(INVALID_PARAMS, "invalid params: params._meta must carry io.modelcontextprotocol/"
                                           "protocolVersion and io.modelcontextprotocol/clientCapabilities", rid,
                           status=400)
        requested = meta[META + "protocolVersion"]
        if header != requested:
            raise RpcError(HEADER_MISMATCH, "header mismatch: MCP-Protocol-Version must equal params._meta's "
                                            "io.modelcontextprotocol/protocolVersion", rid, status=400)
        if requested not in MODERN_VERSIONS:
            raise RpcError(UNSUPPORTED_VERSION, f"unsupported protocol version {requested[:40]!r}", rid,
                           {"supported": list(MODERN_VERSIONS), "requested": requested}, status=400)
        if msg.method is not None:
            if headers.get("mcp-method", "").strip() != msg.method:
                raise RpcError(HEADER_MISMATCH, "header mismatch: the Mcp-Method header must equal the method",
                               rid, status=400)
            name = msg.params.get("name") if msg.method in ("tools/call", "prompts/get") else None
            if isinstance(name, str) and headers.get("mcp-name", "").strip() != name:
                raise RpcError(HEADER_MISMATCH, "header mismatch: the Mcp-Name header must equal params.name",
                               rid, status=400)
        return requested

    # -- 2025-11-25 -------------------------------------------------------------------------------
    async def _legacy(self, msg: jsonrpc.Message, sid: str, caller: Caller) -> dict[str, Any]:
        p = msg.params
        if msg.method == "initialize":
            asked = p.get("protocolVersion")
            if not isinstance(asked, str):
                raise RpcError(INVALID_PARAMS, "invalid params: initialize names the client's protocolVersion")
            return {"protocolVersion": asked if asked in LEGACY_VERSIONS else LEGACY_VERSIONS[0],
                    "capabilities": {"tools": {"listChanged": False}, "logging": {}}, "serverInfo": self.server_info}
        if msg.method == "ping":
            return {}
        if msg.method == "logging/setLevel":  # accepted; this stateless endpoint sends no log messages
            if p.get("level") not in LOG_LEVELS:
                raise RpcError(INVALID_PARAMS, f"invalid params: level is one of {', '.join(LOG_LEVELS)}")
            return {}
        if msg.method == "tools/list":
            return {"tools": await self._tools(sid, caller)}
        if msg.method == "tools/call":
            return await self._call(p, sid, caller)
        raise RpcError(METHOD_NOT_FOUND, f"method not found: {msg.method[:100]}")

    # -- 2026-07-28 -------------------------------------------------------------------------------
    async def _modern(self, msg: jsonrpc.Message, headers: dict[str, str], sid: str, caller: Caller) -> dict[str, Any]:
        identity = {"_meta": {META + "serverInfo": self.server_info}, "resultType": "complete"}
        if msg.method == "server/discover":
            return {**identity, "supportedVersions": list(MODERN_VERSIONS),
                    "capabilities": {"tools": {"listChanged": False}}, "serverInfo": self.server_info,
                    "ttlMs": TOOLS_TTL_MS, "cacheScope": "private"}
        if msg.method == "tools/list":
            return {**identity, "tools": await self._tools(sid, caller), "ttlMs": TOOLS_TTL_MS,
                    "cacheScope": "private"}
        if msg.method == "tools/call":
            return {**identity, **await self._call(msg.params, sid, caller)}
        raise RpcError(METHOD_NOT_FOUND, f"method not found: {msg.method[:100]}", status=404)

    # -- tools ------------------------------------------------------------------------------------
    async def _tools(self, sid: str, caller: Caller) -> list[dict[str, Any]]:
        return [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in await self.list_tools(sid, caller)]

    async def _call(self, p: dict[str, Any], sid: str, caller: Caller) -> dict[str, Any]:
        name, arguments = p.get("name"), p.get("arguments", {})
        if not isinstance(name, str) or not 1 <= len(name) <= MAX_TOOL_NAME:
            raise RpcError(INVALID_PARAMS, f"invalid params: tools/call names the tool (1-{MAX_TOOL_NAME} characters)")
        if arguments is None:
            arguments = {}
        if not isinstance(arguments, dict):
            raise RpcError(INVALID_PARAMS, "invalid params: arguments is an object")
        try:
            result = await self.call_tool(sid, caller, name, arguments)
        except EnvhubError as e:  # the call failed as the REST step would: a tool error, in our own words
            return {"content": [{"type": "text", "text": e.detail}], "isError": True,
                    "structuredContent": {"failure": e.failure_class.value, "retryable": e.retryable}}
        return result.model_dump(mode="json", by_alias=True, exclude_none=True)


async def _body(receive: Receive) -> bytes:
    chunks = []
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            break
        chunks.append(message.get("body", b""))
        if not message.get("more_body", False):
            break
    return b"".join(chunks)


async def _send(send: Send, status: int, body: dict[str, Any] | None, extra: dict[str, str]) -> None:
    payload = jsonrpc.dumps(body) if body is not None else b""
    head = [(b"content-length", str(len(payload)).encode())]
    if body is not None:
        head.append((b"content-type", b"application/json"))
    head += [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in extra.items()]
    await send({"type": "http.response.start", "status": status, "headers": head})
    await send({"type": "http.response.body", "body": payload})
