"""The db family's settings (`ENVHUB_DB_FAMILY_URL`)."""

from __future__ import annotations

from pydantic_settings import BaseSettings, SettingsConfigDict


class DbSettings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="ENVHUB_", extra="ignore")

    #: PostgreSQL URL for the per-session databases (cloned from a template); SQLite files when unset.
    db_family_url: str | None = None
