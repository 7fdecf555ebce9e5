"""`ENVHUB_DOCKER_*` settings (kept with the backend so the core settings need no Docker fields)."""

from __future__ import annotations

import os

from pydantic_settings import BaseSettings, SettingsConfigDict


class DockerSettings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="ENVHUB_DOCKER_", extra="ignore")

    #: Image for sandboxes and verifiers: needs bash, Debian's python3 and the family's tools.
    image: str = "envhub-sandbox:latest"
    socket: str = "/var/run/docker.sock"
    #: The CLI, used only for the shells' `docker exec -i` streams.
    cli: str = "/usr/bin/docker" if os.path.exists("/usr/bin/docker") else "docker"
    #: Started containers kept ready per limits shape; 0 turns the pool off.
    pool: int = 2
    #: CPUs per container when the task names none (`SandboxLimits.cpus`).
    cpus: float = 1.0
    uid: int = 1000
    #: Seconds an engine call may take before the engine counts as unavailable.
    api_timeout_s: float = 60.0
