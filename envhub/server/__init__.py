"""The transports over the session core (`envhub.core`): REST and OpenEnv routes, the native and
ASGI session sockets, MCP, and error translation; `app.py` composes them, `thread.py` serves it."""
