"""Who is calling: OIDC bearer tokens, API keys, or the local principal (SPEC §6).

A token is verified for signature (keys from the issuer's JWKS, cached, refetched once
for an unknown `kid` and at most every `oidc_jwks_min_refetch_seconds`), issuer, audience
and expiry. An API key is looked up by its SHA-256. The principal's org comes from the
token's org claim or from the key's entry, never from the request. Without any auth
configured, every request is the local principal, with every scope in `CCE_ORG`.
"""

import hashlib
import logging
import math
import re
import threading
import time
from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

import httpx
import jwt
from pydantic import BaseModel, ConfigDict

from api.problems import IdentityProviderUnavailable, Unauthenticated
from engine.settings import Settings

INGEST_WRITE = "ingest:write"
MEMORY_WRITE = "memory:write"
MEMORY_REVIEW = "memory:review"
RECORD_READ = "record:read"
PATIENT_ERASE = "patient:erase"
ADMIN = "admin"
ALL_SCOPES = frozenset(
    {INGEST_WRITE, MEMORY_WRITE, MEMORY_REVIEW, RECORD_READ, PATIENT_ERASE, ADMIN}
)

log = logging.getLogger("cce.auth")
_ORG = re.compile(r"^[A-Za-z0-9._-]{1,128}$")
_HEX = re.compile(r"^[0-9a-f]{64}$")


class Principal(BaseModel):
    """The authenticated caller: who (`actor`), for which tenant, allowed to do what."""

    model_config = ConfigDict(frozen=True)

    actor: str
    org: str
    scopes: frozenset[str]
    kind: Literal["oidc", "api_key", "local"]


def local_principal(settings: Settings) -> Principal:
    """The principal of an unconfigured, loopback-only server."""
    return Principal(actor="local", org=settings.org, scopes=ALL_SCOPES, kind="local")


# API keys


@lru_cache(maxsize=8)
def _parse_keys(text: str) -> dict[str, tuple[str, frozenset[str]]]:
    """`org:scope,scope:sha256hex` entries → {hash: (org, scopes)}; bad entries are refused."""
    keys: dict[str, tuple[str, frozenset[str]]] = {}
    for line in text.splitlines():
        for entry in re.split(r"[;\s]+", line.split("#", 1)[0].strip()):
            if not entry:
                continue
            org, _, rest = entry.partition(":")
            scopes, _, digest = rest.rpartition(":")
            digest = digest.lower()
            if not _ORG.match(org) or not _HEX.match(digest):
                raise ValueError(f"API key entry for org {org!r} is not org:scopes:sha256hex")
            keys[digest] = (org, frozenset(s for s in scopes.split(",") if s))
    return keys


def check(settings: Settings) -> None:
    """Fails fast on auth settings that cannot work.

    Raises:
        ValueError: an issuer without an audience, or a malformed API key entry.
    """
    if settings.oidc_issuer and not settings.oidc_audience:
        raise ValueError("CCE_OIDC_ISSUER is set without CCE_OIDC_AUDIENCE")
    api_keys(settings)


def api_keys(settings: Settings) -> dict[str, tuple[str, frozenset[str]]]:
    """The configured keys by SHA-256; `ValueError` for a malformed entry."""
    text = settings.api_keys.get_secret_value()
    if settings.api_keys_file is not None:
        path = settings.api_keys_file
        text += "\n" + _read_keys_file(path, path.stat().st_mtime_ns)
    return _parse_keys(text)


@lru_cache(maxsize=8)
def _read_keys_file(path: Path, mtime_ns: int) -> str:
    # Keyed by modification time, so that an edited file is read again.
    return path.read_text(encoding="utf-8")


def _key_principal(key: str, settings: Settings) -> Principal:
    digest = hashlib.sha256(key.encode()).hexdigest()
    found = api_keys(settings).get(digest)
    if found is None:
        raise Unauthenticated("unknown API key")
    org, scopes = found
    return Principal(actor=f"key:{digest[:12]}", org=org, scopes=scopes, kind="api_key")


# OIDC


class Jwks:
    """The issuer's signing keys, cached; thread-safe, refetched on rotation.

    Keys are fetched when none are held, when they are older than the TTL, or when a token
    names an unknown `kid`; fetch attempts are at least `oidc_jwks_min_refetch_seconds`
    apart, so tokens with made-up `kid`s cannot hammer the issuer. While the issuer is
    unreachable, the keys already held keep working.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._keys: dict[str, jwt.PyJWK] = {}
        self._fetched_at = -math.inf
        self._attempted_at = -math.inf
        self._failure: str | None = None
        self._url: str | None = None

    def key(self, kid: str | None, settings: Settings) -> jwt.PyJWK:
        """The key a token names.

        Raises:
            Unauthenticated: the issuer does not publish that key.
            IdentityProviderUnavailable: the keys cannot be fetched to tell.
        """
        with self._lock:
            now = time.monotonic()
            expired = now - self._fetched_at > settings.oidc_jwks_ttl_seconds
            due = now - self._attempted_at > settings.oidc_jwks_min_refetch_seconds
            if (expired or self._lookup(kid) is None) and (due or not self._keys):
                self._attempted_at = now
                self._refresh(settings)
            found = self._lookup(kid)
            failure = self._failure
        if found is not None:
            return found
        if failure is not None:
            raise IdentityProviderUnavailable(f"cannot fetch the issuer's keys: {failure}")
        raise Unauthenticated("token signed by a key the issuer does not publish")

    def _lookup(self, kid: str | None) -> jwt.PyJWK | None:
        if kid is None:
            return next(iter(self._keys.values())) if len(self._keys) == 1 else None
        return self._keys.get(kid)

    def _refresh(self, settings: Settings) -> None:
        try:
            document = _get_json(self._jwks_url(settings), settings)
            keys = jwt.PyJWKSet.from_dict(document).keys
        except (httpx.HTTPError, ValueError, jwt.PyJWKSetError) as e:
            log.warning("JWKS fetch failed: %s", type(e).__name__)
            self._failure = type(e).__name__
            return
        signing = [k for k in keys if k.public_key_use in (None, "sig")]
        self._keys = {k.key_id or f"#{i}": k for i, k in enumerate(signing)}
        self._fetched_at = time.monotonic()
        self._failure = None

    def _jwks_url(self, settings: Settings) -> str:
        if settings.oidc_jwks_url:
            return settings.oidc_jwks_url
        if self._url is None:
            issuer = (settings.oidc_issuer or "").rstrip("/")
            config = _get_json(f"{issuer}/.well-known/openid-configuration", settings)
            url = config.get("jwks_uri")
            if not isinstance(url, str):
                raise ValueError("the discovery document names no jwks_uri")
            self._url = url
        return self._url


def _get_json(url: str, settings: Settings) -> dict[str, Any]:
    response = httpx.get(url, timeout=settings.oidc_timeout_seconds, follow_redirects=False)
    response.raise_for_status()
    document = response.json()
    if not isinstance(document, dict):
        raise ValueError(f"{url} is not a JSON object")
    return document


def _scopes(claims: Mapping[str, Any]) -> frozenset[str]:
    found: set[str] = set()
    for name in ("scope", "scp"):
        value = claims.get(name)
        if isinstance(value, str):
            found.update(value.split())
        elif isinstance(value, list):
            found.update(v for v in value if isinstance(v, str))
    return frozenset(found)


def _token_principal(token: str, jwks: Jwks, settings: Settings) -> Principal:
    try:
        header = jwt.get_unverified_header(token)
    except jwt.PyJWTError as e:
        raise Unauthenticated("malformed token") from e
    if header.get("alg") not in settings.oidc_algorithms:
        raise Unauthenticated("token algorithm not accepted")
    key = jwks.key(header.get("kid"), settings)
    try:
        claims = jwt.decode(
            token,
            key,
            algorithms=settings.oidc_algorithms,
            audience=settings.oidc_audience,
            issuer=settings.oidc_issuer,
            leeway=settings.oidc_leeway_seconds,
            options={"require": ["exp", "iss", "aud"]},
        )
    except jwt.ExpiredSignatureError as e:
        raise Unauthenticated("token expired") from e
    except jwt.InvalidAudienceError as e:
        raise Unauthenticated("token not issued for this API") from e
    except jwt.InvalidIssuerError as e:
        raise Unauthenticated("token from another issuer") from e
    except jwt.PyJWTError as e:
        raise Unauthenticated("token does not verify") from e
    org = claims.get(settings.oidc_org_claim)
    actor = claims.get("sub") or claims.get("client_id") or claims.get("azp")
    if not isinstance(org, str) or not _ORG.match(org):
        raise Unauthenticated(f"token has no usable {settings.oidc_org_claim!r} claim")
    if not isinstance(actor, str) or not actor:
        raise Unauthenticated("token names no subject")
    return Principal(actor=actor[:256], org=org, scopes=_scopes(claims), kind="oidc")


class Authenticator:
    """Turns request headers into a principal; one per app (it holds the JWKS cache)."""

    def __init__(self) -> None:
        self.jwks = Jwks()

    def principal(
        self, authorization: str | None, api_key: str | None, settings: Settings
    ) -> Principal:
        """The caller; `Unauthenticated` (401) or `IdentityProviderUnavailable` (503)."""
        if not settings.auth_configured:
            return local_principal(settings)
        if api_key:
            return _key_principal(api_key, settings)
        scheme, _, credentials = (authorization or "").partition(" ")
        credentials = credentials.strip()
        if scheme.lower() != "bearer" or not credentials:
            raise Unauthenticated("a bearer token or an API key is required", token_given=False)
        if credentials.count(".") == 2 and settings.oidc_issuer:
            return _token_principal(credentials, self.jwks, settings)
        return _key_principal(credentials, settings)
