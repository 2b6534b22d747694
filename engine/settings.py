"""Settings: the only place that reads the environment (prefix `CCE_`)."""

from functools import lru_cache
from pathlib import Path
from typing import Literal

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
    max_ingest_bytes: int = 50 * 1024 * 1024

    # Which memory extractor generate-memories uses: the offline default, or "llm".
    extractor: Literal["offline", "llm"] = "offline"
    # The LLM memory extractor (engine/memories/llm.py): any OpenAI-compatible chat API.
    llm_base_url: str | None = None  # e.g. https://api.openai.com/v1, http://localhost:11434/v1
    llm_model: str | None = None
    llm_api_key: SecretStr = SecretStr("")  # sent as a bearer token when set
    # signs the viewer's CSRF tokens; empty: a random key per process (cce serve --workers
    # makes one for all its workers)
    viewer_secret: SecretStr = SecretStr("")
    llm_timeout_s: float = 60.0  # per request
    llm_max_retries: int = 2  # after the first attempt, on 429, 5xx and timeouts
    # The largest prompt of one call (estimated tokens); longer sessions are read in parts.
    llm_input_budget_tokens: int = 24_000

    # Security and reliability (SPEC §6). Without an OIDC issuer and without API keys,
    # requests are served as a local principal with every scope in `org`, and `cce serve`
    # binds to loopback only.
    oidc_issuer: str | None = None
    oidc_audience: str | None = None
    oidc_jwks_url: str | None = None  # default: jwks_uri of the issuer's discovery document
    oidc_org_claim: str = "org"
    oidc_algorithms: list[str] = ["RS256", "RS384", "RS512", "PS256", "ES256", "ES384", "EdDSA"]
    oidc_leeway_seconds: int = 30
    oidc_timeout_seconds: float = 5.0
    oidc_jwks_ttl_seconds: float = 3600.0
    oidc_jwks_min_refetch_seconds: float = 30.0  # an unknown `kid` refetches at most this often
    # `org:scope,scope:sha256hex` entries separated by `;` or whitespace; the file holds one
    # entry per line (`#` starts a comment).
    api_keys: SecretStr = SecretStr("")
    api_keys_file: Path | None = None
    max_request_bytes: int = 1024 * 1024  # every body but ingest's
    rate_limit_per_second: float = 50.0  # per principal; 0 turns the limit off
    rate_limit_burst: int = 200
    neo4j_max_retry_seconds: float = 5.0
    neo4j_connection_timeout: float = 5.0
    # How long `cce serve` keeps an idle connection open: longer than a client's or load
    # balancer's own idle timeout (often 60 s), or a request sent as the server closes the
    # connection is lost in transit (uvicorn's default is 5 s).
    keep_alive_seconds: int = 75

    @property
    def auth_configured(self) -> bool:
        """Whether requests must authenticate (an OIDC issuer or API keys are set)."""
        keys = self.api_keys.get_secret_value().strip()
        return bool(self.oidc_issuer or keys or self.api_keys_file)


@lru_cache
def get_settings() -> Settings:
    """The process-wide settings, read once."""
    return Settings()
