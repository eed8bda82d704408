"""Settings read once from the environment and `.env`, then passed down."""

from __future__ import annotations

import os
from pathlib import Path

from typing import Literal

from pydantic import Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict


def default_db_path() -> Path:
    """One history per user, whatever the working directory: $XDG_DATA_HOME/judgebot/judgebot.db."""
    data_home = os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share"
    return Path(data_home) / "judgebot" / "judgebot.db"


class Settings(BaseSettings):
    """Every setting of judgebot; each field is read from the env var of the same name in upper case."""

    model_config = SettingsConfigDict(env_file=".env", env_file_encoding="utf-8", extra="ignore")

    openai_api_key: SecretStr | None = Field(None, description="Key for the judge's OpenAI-compatible endpoint.")
    openai_base_url: str | None = Field(
        None, description="Base URL of an OpenAI-compatible server (vLLM, Ollama, llama.cpp, Azure); default OpenAI's."
    )
    judge_model: str = Field("gpt-4o-mini", description="Model that does the judging.")
    judge_temperature: float = Field(0.0, description="Sampling temperature of the judge.")
    judge_timeout: float = Field(120.0, gt=0, description="Seconds one judge request may take.")
    judge_max_retries: int = Field(6, ge=0, description="Retries of one request on 429, 5xx, timeouts.")
    concurrency: int = Field(16, ge=1, le=512, description="Judge requests in flight at once.")
    database_url: str | None = Field(None, description="Any SQLAlchemy URL; default SQLite at JUDGEBOT_DB.")
    judgebot_db: Path = Field(default_factory=lambda: default_db_path(),
                              description="SQLite file used when DATABASE_URL is unset.")
    rubrics_dir: Path | None = Field(None, description="Extra directory of rubric files; same names override.")
    judgebot_log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = Field("WARNING", description="Log level.")

    @field_validator("judgebot_log_level", mode="before")
    @classmethod
    def _upper(cls, value: object) -> object:
        return value.upper() if isinstance(value, str) else value

    @property
    def db_url(self) -> str:
        """The SQLAlchemy URL of the history store."""
        return self.database_url or f"sqlite:///{self.judgebot_db.expanduser()}"

    def has_judge_endpoint(self) -> bool:
        """Whether a key or a base URL says where the judge lives."""
        return bool(self.openai_api_key and self.openai_api_key.get_secret_value()) or bool(self.openai_base_url)
