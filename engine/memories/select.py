"""The extractor that settings choose, built once per configuration."""

from functools import lru_cache

from pydantic import SecretStr

from engine.errors import InvalidInput
from engine.memories.extractor import Extractor
from engine.memories.llm import LlmExtractor
from engine.memories.offline import OfflineExtractor
from engine.settings import Settings


def extractor_for(settings: Settings) -> Extractor:
    """`CCE_EXTRACTOR`: "offline" (default, no model) or "llm" (`CCE_LLM_*` settings)."""
    if settings.extractor == "llm":
        if not settings.llm_base_url or not settings.llm_model:
            raise InvalidInput("CCE_EXTRACTOR=llm needs CCE_LLM_BASE_URL and CCE_LLM_MODEL")
        return _llm(
            settings.llm_base_url,
            settings.llm_model,
            settings.llm_api_key.get_secret_value(),
            settings.llm_timeout_s,
            settings.llm_max_retries,
            settings.llm_input_budget_tokens,
        )
    return _offline()


@lru_cache(maxsize=1)
def _offline() -> OfflineExtractor:
    return OfflineExtractor()


@lru_cache(maxsize=4)
def _llm(
    base_url: str, model: str, key: str, timeout_s: float, retries: int, budget: int
) -> LlmExtractor:
    api_key = SecretStr(key) if key else None
    return LlmExtractor(
        base_url,
        model,
        api_key,
        timeout_s=timeout_s,
        max_retries=retries,
        input_budget_tokens=budget,
    )
