"""Sandbox backends: where agent commands and verifiers run.

`base` holds the interface (`SandboxBackend` starts `Sandbox`es); `local` (bubblewrap) and the
`docker` package are the backends; `shell` (the persistent-shell protocol), `process` (host
process and file helpers) and `files` (file tools' reads and writes inside a sandbox) are what all
share. See docs/architecture.md.
The server only ever sees the interface, so a Docker or scale-out backend plugs in unchanged.
"""

from envhub.sandbox.base import ExecResult, Sandbox, SandboxBackend, SandboxSpec

__all__ = ["ExecResult", "Sandbox", "SandboxBackend", "SandboxSpec"]
