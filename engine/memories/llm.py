"""An extractor that asks any OpenAI-compatible chat endpoint (`POST {base}/chat/completions`).

The prompt (`llm_prompt`) condenses the annotation guideline; `llm_parse` reads the answer
however the model wrapped it. The endpoint is retried a bounded number of times on 429, 5xx,
timeouts and connection errors (honouring Retry-After, capped); when it keeps failing,
`extract` raises `ExtractorFailed` and the service writes nothing. Token usage comes back
with each extraction and is summed over the instance's life (`usage`).

A conversation whose prompt would exceed the input budget (`input_budget_tokens`,
estimated at 4 characters a token) is read in parts that overlap by a few messages;
the parts' memories are merged where they are the same statement (same type and
subject, overlapping evidence), and their relationship proposals with them.
"""

import logging
import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from typing import Any, Self

import httpx
from pydantic import SecretStr

from engine.errors import EngineError, ExtractorFailed
from engine.memories.extractor import Candidate, Extraction, Usage
from engine.memories.llm_merge import merge_parts, parts
from engine.memories.llm_parse import read_answer, to_candidates
from engine.memories.llm_prompt import PROMPT_VERSION, SYSTEM_PROMPT, numbered_facts, user_prompt
from engine.models import Fact, Message, utcnow
from engine.settings import Settings, get_settings

log = logging.getLogger(__name__)

_CHARS_PER_TOKEN = 4  # a conservative estimate for English; budgets are approximate
_RETRY_STATUS = frozenset({408, 409, 429}) | frozenset(range(500, 600))


@dataclass(frozen=True)
class LlmCall:
    """One extraction: its usage, how many HTTP attempts it took, and how it was read."""

    usage: Usage
    attempts: int
    finish_reason: str | None
    truncated: bool  # the answer was cut off; only whole items were kept
    items: int  # memory items read from the answer, before any check


class LlmExtractor:
    """Extracts candidate memories with a chat model; see the module docstring."""

    name = "llm-chat"

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: SecretStr | None = None,
        *,
        timeout_s: float = 60.0,
        max_retries: int = 2,
        backoff_s: float = 1.0,
        max_backoff_s: float = 30.0,
        temperature: float | None = 0.0,
        max_tokens: int | None = None,
        input_budget_tokens: int = 24_000,
        overlap_messages: int = 6,
        client: httpx.Client | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        """An extractor for one model behind one endpoint.

        Args:
            base_url: the API root, e.g. `https://api.openai.com/v1`.
            model: the model name sent with every request.
            api_key: sent as a bearer token when not empty.
            timeout_s: per-request timeout.
            max_retries: retries after the first attempt (429, 5xx, timeouts).
            backoff_s: the first retry's wait; it doubles per retry, with jitter.
            max_backoff_s: the cap on any wait, Retry-After included.
            temperature: sent when not None (some models accept only their default).
            max_tokens: sent when not None.
            input_budget_tokens: the largest prompt sent in one call (estimated);
                a longer conversation is read in overlapping parts.
            overlap_messages: how many messages consecutive parts share.
            client: an httpx client to use instead of an own one.
            sleep: how to wait between attempts (tests pass a recorder).
        """
        if not base_url.strip() or not model.strip():
            raise EngineError("the LLM extractor needs CCE_LLM_BASE_URL and CCE_LLM_MODEL")
        if timeout_s <= 0 or max_retries < 0:
            raise EngineError("CCE_LLM_TIMEOUT_S must be > 0 and CCE_LLM_MAX_RETRIES >= 0")
        self.url = base_url.rstrip("/") + "/chat/completions"
        self.model = model
        self.version = f"{PROMPT_VERSION}+{model}"
        self.timeout_s = timeout_s
        self.max_retries = max_retries
        self.backoff_s = backoff_s
        self.max_backoff_s = max_backoff_s
        self.temperature = temperature
        self.max_tokens = max_tokens
        if input_budget_tokens < 1_000 or overlap_messages < 0:
            raise EngineError("CCE_LLM_INPUT_BUDGET_TOKENS must be >= 1000, overlap >= 0")
        self.input_budget_tokens = input_budget_tokens
        self.overlap_messages = overlap_messages
        self._key = api_key or SecretStr("")
        self._own_client = client is None
        self._client = client or httpx.Client(timeout=httpx.Timeout(timeout_s))
        self._sleep = sleep
        self._lock = threading.Lock()
        self._usage = Usage()
        self._last: LlmCall | None = None

    @classmethod
    def from_settings(cls, settings: Settings | None = None) -> Self:
        """The extractor configured by `CCE_LLM_*`."""
        s = settings or get_settings()
        return cls(
            s.llm_base_url or "",
            s.llm_model or "",
            s.llm_api_key,
            timeout_s=s.llm_timeout_s,
            max_retries=s.llm_max_retries,
            input_budget_tokens=s.llm_input_budget_tokens,
        )

    # -- usage ---------------------------------------------------------------------------
    @property
    def usage(self) -> Usage:
        """Tokens used by every call this instance made."""
        with self._lock:
            return self._usage

    @property
    def last_call(self) -> LlmCall | None:
        """The latest call; with threads sharing the instance, use what `extract` returns."""
        with self._lock:
            return self._last

    # -- extraction ----------------------------------------------------------------------
    def extract(self, messages: list[Message], facts: list[Fact], processed: int = 0) -> Extraction:
        """Candidates for `messages[processed:]`, read in parts when they exceed the budget.

        Raises:
            ExtractorFailed: the endpoint kept failing, refused the request, or answered
                with no JSON at all.
        """
        if len(messages) <= processed:
            return Extraction([])
        fixed = len(SYSTEM_PROMPT) + len(user_prompt([], facts))
        budget_chars = max(0, self.input_budget_tokens * _CHARS_PER_TOKEN - fixed)
        found: list[list[Candidate]] = []
        usage = Usage()
        for shown, context in parts(messages, processed, budget_chars, self.overlap_messages):
            candidates, call = self.extract_part(shown, facts, context)
            found.append(candidates)
            usage += call.usage
        return Extraction(merge_parts(found), usage)

    def extract_part(
        self, messages: list[Message], facts: list[Fact], processed: int = 0
    ) -> tuple[list[Candidate], LlmCall]:
        """One call: the candidates for `messages[processed:]` and what the call took."""
        body: dict[str, Any] = {
            "model": self.model,
            "messages": [
                {"role": "system", "content": SYSTEM_PROMPT},
                {"role": "user", "content": user_prompt(messages, facts, processed)},
            ],
        }
        if self.temperature is not None:
            body["temperature"] = self.temperature
        if self.max_tokens is not None:
            body["max_tokens"] = self.max_tokens
        try:
            data, attempts = self._post(body)
        except _Refused as refused:
            if "temperature" not in body or "temperature" not in refused.text.lower():
                raise
            # reasoning models accept only their default temperature: send none from now on
            log.warning("LLM endpoint refused a temperature; sending none from now on")
            self.temperature = None
            del body["temperature"]
            data, attempts = self._post(body)
        content, finish, usage = _read_envelope(data)
        answer = read_answer(content)
        truncated = answer.truncated or finish == "length"
        call = LlmCall(usage, attempts, finish, truncated, len(answer.items))
        with self._lock:
            self._usage += usage
            self._last = call
        if not answer.found_json:
            # The answer may repeat what the patient said: its text stays out of errors.
            raise ExtractorFailed(f"the model's answer held no JSON ({len(content)} characters)")
        if truncated:
            log.warning("LLM answer cut off (finish_reason=%s); whole items kept", finish)
        return to_candidates(answer.items, messages, numbered_facts(facts)), call

    # -- HTTP ----------------------------------------------------------------------------
    def _post(self, body: dict[str, Any]) -> tuple[Any, int]:
        """The decoded 2xx answer and the attempts it took; retries what may pass later."""
        headers = {"Accept": "application/json"}
        if key := self._key.get_secret_value():
            headers["Authorization"] = f"Bearer {key}"
        attempts = self.max_retries + 1
        problem = ""
        for attempt in range(1, attempts + 1):
            wait = self.backoff_s * 2 ** (attempt - 1) * random.uniform(0.5, 1.0)
            try:
                response = self._client.post(
                    self.url, json=body, headers=headers, timeout=self.timeout_s
                )
            except httpx.TimeoutException:
                problem = f"no answer within {self.timeout_s:g}s"
            except httpx.TransportError as e:
                problem = f"cannot connect ({type(e).__name__})"
            else:
                if response.is_success:
                    return _json(response), attempt
                problem = f"HTTP {response.status_code}: {response.text[:200]!r}"
                if response.status_code not in _RETRY_STATUS:
                    raise _Refused(
                        f"the LLM endpoint {self.url} refused the request: {problem}",
                        response.text[:2000],
                    )
                if (asked := _retry_after(response)) is not None:
                    wait = asked
            if attempt < attempts:
                wait = min(wait, self.max_backoff_s)
                log.warning("LLM endpoint: %s; retry %d in %.1fs", problem, attempt, wait)
                self._sleep(wait)
        raise ExtractorFailed(
            f"the LLM endpoint {self.url} failed {attempts} times; last: {problem}"
        )

    def close(self) -> None:
        """Closes the HTTP client if this extractor made it."""
        if self._own_client:
            self._client.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class _Refused(ExtractorFailed):
    """The endpoint answered 4xx to this request; `text` is its answer's start."""

    def __init__(self, message: str, text: str) -> None:
        super().__init__(message)
        self.text = text


def _json(response: httpx.Response) -> Any:
    try:
        return response.json()
    except ValueError as e:
        raise ExtractorFailed(
            f"the LLM endpoint answered with no JSON: {response.text[:200]!r}"
        ) from e


def _read_envelope(data: Any) -> tuple[str, str | None, Usage]:
    """The answer text, finish reason and usage of a chat completion."""
    try:
        choice = data["choices"][0]
        content = choice["message"]["content"]
    except (KeyError, IndexError, TypeError) as e:
        raise ExtractorFailed("the LLM endpoint's answer is not a chat completion") from e
    if isinstance(content, list):  # content parts, as some gateways return them
        content = "".join(str(p.get("text") or "") for p in content if isinstance(p, dict))
    if not isinstance(content, str):
        raise ExtractorFailed("the chat completion has no text content (a refusal?)")
    usage = data.get("usage") if isinstance(data, dict) else None
    usage = usage if isinstance(usage, dict) else {}
    finish = choice.get("finish_reason")
    return (
        content,
        finish if isinstance(finish, str) else None,
        Usage(_count(usage.get("prompt_tokens")), _count(usage.get("completion_tokens")), 1),
    )


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def _retry_after(response: httpx.Response) -> float | None:
    """Seconds from a Retry-After header (delta-seconds or an HTTP date)."""
    value = response.headers.get("retry-after", "").strip()
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        return max(0.0, (parsedate_to_datetime(value) - utcnow()).total_seconds())
    except (TypeError, ValueError):
        return None
