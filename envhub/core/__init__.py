"""The session core: the hub (families, catalog, sandboxes, verifier, store), the session manager
and its sessions, deadlines, access (keys, callers, ownership) and the serving counters.

Every transport (`envhub.server`'s REST, WebSocket and OpenEnv routes, the native socket, MCP) and
every in-process driver (`envhub.validate`, `envhub.cli`) reaches a session through here; nothing
here knows a transport.
"""
