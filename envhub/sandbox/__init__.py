"""Sandbox backends: where agent commands and verifiers run.

`base` holds the interface (`SandboxBackend` starts `Sandbox`es); one module per backend.
The server only ever sees the interface, so a Docker or scale-out backend plugs in unchanged.
"""

from envhub.sandbox.base import ExecResult, Sandbox, SandboxBackend, SandboxSpec

__all__ = ["ExecResult", "Sandbox", "SandboxBackend", "SandboxSpec"]
