"""The office family's settings: the optional quality judge and the LibreOffice pool."""

from __future__ import annotations

from pathlib import Path

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict


class OfficeSettings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="ENVHUB_", extra="ignore")

    #: OpenAI-compatible endpoint for the optional quality judge (off when unset).
    judge_url: str | None = None
    judge_model: str | None = None
    #: Where the warm offices keep their profiles when the server gave no data folder.
    office_lo_dir: Path = Path("/tmp/envhub-office-lo")
    office_lo_workers: int = Field(default=2, ge=1)
    office_lo_deadline_s: float = Field(default=60, gt=0)
    office_lo_memory_mb: int = Field(default=4096, ge=256)
