"""A real envhub server (uvicorn, a socket, WebSockets) in a thread of this process.

The one launcher for everything that needs a live server next to its own code: CLI commands
that drive the HTTP API, tests and benchmarks. `envhub serve` runs the same `uvicorn_config`
in the foreground. For HTTP without a socket, see `envhub.client.asgi.InProcess`.
"""

from __future__ import annotations

import socket
import threading
import time
from typing import Any

import uvicorn

from envhub.config import Settings
from envhub.core.hub import Hub
from envhub.server.app import create_app


def uvicorn_config(app: Any, settings: Settings, *, host: str, port: int, log_level: str = "warning") -> uvicorn.Config:
    """How envhub is served: the session WebSocket natively (`envhub.server.native_ws`), the others
    through uvicorn's; frames up to the body limit, no per-message compression. After each answer the
    loop polls a while for the next request before it sleeps (`envhub.server.polling`)."""
    from envhub.server.native_ws import SessionSocketProtocol
    from envhub.server.polling import IdlePoll, PolledApp

    poll = IdlePoll(settings.poll_us / 1e6)
    return uvicorn.Config(PolledApp(app, poll), host=host, port=port, log_level=log_level,
                          ws_max_size=settings.max_body_bytes, ws_per_message_deflate=False,
                          ws=SessionSocketProtocol.for_app(app, poll))


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket() as s:
        s.bind((host, 0))
        return s.getsockname()[1]


class ThreadedServer:
    """A started server (a context manager): `url`, and the `app` and `hub` it serves."""

    def __init__(self, settings: Settings, app: Any = None, *, host: str = "127.0.0.1", port: int = 0,
                 start_timeout_s: float = 60.0) -> None:
        self.port = port or free_port(host)
        self.url = f"http://{host}:{self.port}"
        self.app = app if app is not None else create_app(settings)
        self.server = uvicorn.Server(uvicorn_config(self.app, settings, host=host, port=self.port))
        self.thread = threading.Thread(target=self.server.run, name="envhub-server", daemon=True)
        self.start_timeout_s = start_timeout_s

    @property
    def hub(self) -> Hub:
        return self.app.state.hub

    def __enter__(self) -> ThreadedServer:
        self.thread.start()
        deadline = time.monotonic() + self.start_timeout_s
        while not self.server.started:
            if not self.thread.is_alive() or time.monotonic() > deadline:
                self.__exit__()
                raise RuntimeError(f"the envhub server on port {self.port} did not start")
            time.sleep(0.02)
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=30)


def serve_in_thread(settings: Settings, app: Any = None, **kwargs: Any) -> ThreadedServer:
    """`with serve_in_thread(settings) as server: ... server.url`: the app (built from `settings`
    unless given) served on a free port until the block ends."""
    return ThreadedServer(settings, app, **kwargs)
