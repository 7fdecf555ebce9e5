"""Settings, from `ENVHUB_*` environment variables (pydantic-settings)."""

from __future__ import annotations

import hashlib
import json
import os
from functools import lru_cache
from pathlib import Path
from typing import Annotated, Literal

from pydantic import Field, field_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

REPO_ROOT = Path(__file__).resolve().parents[1]


def _default_data_dir() -> Path:
    # Sandboxes run as unprivileged uids, which must be able to reach this folder: /var/lib is
    # world-traversable, a root-owned home folder is not.
    if os.geteuid() == 0:
        return Path("/var/lib/envhub")
    return Path(os.environ.get("XDG_DATA_HOME", Path.home() / ".local/share")) / "envhub"


class Settings(BaseSettings):
    """The core's settings. A family's own live in its `Family.settings_class` (same `ENVHUB_`
    prefix); a value given here by name, e.g. `Settings(db_family_url=...)`, is kept as an extra
    and overrides the family's environment variable."""

    model_config = SettingsConfigDict(env_prefix="ENVHUB_", extra="allow")

    host: str = "127.0.0.1"
    port: int = Field(default=8000, ge=1, le=65535)
    #: Families to serve; empty = every registered family.
    families: Annotated[list[str], NoDecode] = Field(default_factory=list)
    tasks_dir: Path = REPO_ROOT / "tasks"
    data_dir: Path = Field(default_factory=_default_data_dir)
    #: Where task sets are materialised (`envhub.tasks.sets`); default: `<data_dir>/task-sets`.
    task_sets_dir: Path | None = None
    #: The environment OpenEnv's routes use when a reset names none.
    default_env: str = "terminal"
    sandbox: Literal["local", "docker"] = "local"
    #: Episode store (SQLAlchemy URL); SQLite under data_dir by default.
    database_url: str | None = None
    #: Record every session in the episode store (off for `envhub validate`'s own episodes).
    store_enabled: bool = True
    #: Episode events held in memory while the store cannot be written; beyond this they are dropped.
    store_buffer: int = Field(default=100_000, ge=100)

    max_sessions: int = Field(default=1024, ge=1)
    lease_s: float = Field(default=600, gt=0)
    reap_interval_s: float = Field(default=5, gt=0)
    max_body_bytes: int = Field(default=4 * 1024 * 1024, ge=1024)
    max_output_bytes: int = Field(default=64_000, ge=1024)
    idempotency_cache: int = Field(default=64, ge=1)
    #: How long a session snapshot is kept (`POST /v1/sessions/{id}/snapshot`), and how many one
    #: owner may keep at once.
    snapshot_ttl_s: float = Field(default=86_400, gt=0)
    snapshot_quota: int = Field(default=16, ge=0)
    #: The longest the event loop polls for the next request after the server answers one, in
    #: microseconds, before it sleeps (`envhub.server.polling`; the window adapts); 0: never.
    poll_us: int = Field(default=300, ge=0, le=100_000)

    #: API keys (envhub.core.auth): "auto" = required unless serving on loopback; "on"; "off".
    auth: Literal["auto", "on", "off"] = "auto"
    #: Key entries, hashes only: `NAME sha256:HEX [families=a,b] [max_sessions=N]`, `;` or newline apart.
    api_keys: str = ""
    #: A file of key entries, one per line (read at start).
    api_keys_file: Path | None = None
    #: With keys on, the registry (page, /v1/envs, /v1/tasks), /health, /ready, /capacity, /metrics,
    #: OpenEnv's /schema and /metadata, and the episodes' aggregates (`/v1/episodes/summary`, the
    #: pages' counts and charts) stay readable without a key; false requires one there too. A
    #: recorded trajectory is only ever its owner's or an admin key's (`envhub.store.viewer`).
    public_reads: bool = True
    #: Host names a session's MCP endpoint answers for, in `Host` and `Origin` (DNS-rebinding
    #: protection; `*`: any). Empty: on a loopback server the loopback names, elsewhere any (keys
    #: are required there). Comma-separated or a JSON list.
    allowed_hosts: Annotated[list[str], NoDecode] = Field(default_factory=list)
    #: Fault injection for testing trainers' masking (envhub/core/faults.py): probability that each
    #: of `fault_ops` fails as an env_error; 0 = off.
    fault_rate: float = Field(default=0.0, ge=0, le=1)
    fault_ops: Annotated[list[str], NoDecode] = Field(default_factory=lambda: ["reset", "step", "verify"])
    fault_seed: int | None = None

    @field_validator("families", "fault_ops", "allowed_hosts", mode="before")
    @classmethod
    def _split(cls, v: object) -> object:
        if isinstance(v, str):
            if v.strip().startswith("["):  # a JSON list, as compose files write it
                return json.loads(v)
            return [p.strip() for p in v.split(",") if p.strip()]
        return v

    @property
    def store_path(self) -> Path:
        """The default SQLite episode store: one per project (the tasks folder served) in the data
        folder, so two checkouts, or a test run, never mix their episodes in a shared data folder."""
        tasks = self.tasks_dir.resolve()
        key = hashlib.sha256(str(tasks).encode()).hexdigest()[:8]
        return self.data_dir / "episodes" / f"{tasks.parent.name or 'root'}-{key}.sqlite3"

    @property
    def task_sets_cache(self) -> Path:
        return self.task_sets_dir or self.data_dir / "task-sets"

    @property
    def store_url(self) -> str:
        return self.database_url or f"sqlite:///{self.store_path}"

    def store_label(self) -> str:
        """Where episodes go, for people: the file, or the database URL without its password."""
        if self.database_url is None:
            return str(self.store_path)
        from sqlalchemy.engine import make_url

        return make_url(self.database_url).render_as_string(hide_password=True)


@lru_cache
def get_settings() -> Settings:
    return Settings()
