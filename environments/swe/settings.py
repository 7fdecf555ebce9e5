"""The swe family's settings (`ENVHUB_SWE_*`)."""

from __future__ import annotations

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict


class SweSettings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="ENVHUB_", extra="ignore")

    #: Fail-before/pass-after runs of each state when validating a task (flakiness shows across runs).
    swe_runs: int = Field(default=5, ge=1)
