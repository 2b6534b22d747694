"""Settings: the only place that reads the environment (prefix `CCE_`)."""

from functools import lru_cache

from pydantic import SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict


class Settings(BaseSettings):
    """Engine settings, from `CCE_*` environment variables or a `.env` file."""

    model_config = SettingsConfigDict(env_prefix="CCE_", env_file=".env", extra="ignore")

    store_url: str = "sqlite:///./cce.db"
    org: str = "default"
    neo4j_user: str = "neo4j"
    neo4j_password: SecretStr = SecretStr("")
    neo4j_database: str | None = None


@lru_cache
def get_settings() -> Settings:
    """The process-wide settings, read once."""
    return Settings()
