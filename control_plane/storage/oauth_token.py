"""OAUTHBEARER tokens for aiokafka (``sasl_oauth_token_provider``), fetched as Kafka's client fetches them.

Mirrors ``OAuthBearerLoginCallbackHandler`` with ``HttpJwtRetriever`` and ``ClientSecretRequestFormatter``
(a form POST ``grant_type=client_credentials[&scope=...]`` with HTTP Basic client id and secret, URL-encoded
first when ``sasl.oauthbearer.header.urlencode`` is true; the token is ``access_token``, else ``id_token``,
of the JSON answer: ``JwtResponseParser``), or ``FileJwtRetriever`` for a ``file:`` URL. A token is kept
until ``sasl.login.refresh.window.factor`` of its lifetime (its ``exp`` claim) has passed, as
``ExpiringCredentialRefreshingLogin`` refreshes it. The request runs in a thread (``urllib``: no HTTP
client library here); a failed fetch fails the connection, and aiokafka's reconnect asks again.
"""

from __future__ import annotations

import asyncio
import base64
import json
import ssl
import time
import urllib.error
import urllib.request
from pathlib import Path
from urllib.parse import quote_plus, unquote, urlparse

from aiokafka.abc import AbstractTokenProvider

from ..kafka_security import OAuthSettings


class OAuthTokenError(Exception):
    """No token could be had from the token endpoint (the message never shows the client secret)."""


def _expiry(token: str) -> float:
    """The ``exp`` claim of a JWT (not verified: the broker does that)."""
    parts = token.split(".")
    try:
        payload = json.loads(base64.urlsafe_b64decode(parts[1] + "=" * (-len(parts[1]) % 4)))
        return float(payload["exp"])
    except (IndexError, ValueError, KeyError, TypeError):
        raise OAuthTokenError("the token endpoint's token is not a JWT with an exp claim") from None


class OAuthTokenProvider(AbstractTokenProvider):
    def __init__(self, settings: OAuthSettings, context: ssl.SSLContext | None = None) -> None:
        self._settings = settings
        self._context = context
        self._lock = asyncio.Lock()
        self._token: str | None = None
        self._refresh_at = 0.0

    async def token(self) -> str:
        async with self._lock:
            now = time.time()
            if self._token is None or now >= self._refresh_at:
                token = await asyncio.to_thread(self._retrieve)
                expires = _expiry(token)
                self._token = token
                self._refresh_at = now + self._settings.refresh_window_factor * max(expires - now, 0.0)
            return self._token

    def extensions(self) -> dict[str, str]:
        return dict(self._settings.extensions)

    def _retrieve(self) -> str:
        url = self._settings.token_endpoint_url
        if urlparse(url).scheme.lower() == "file":
            try:
                return Path(unquote(urlparse(url).path)).read_text().strip()
            except OSError as err:
                raise OAuthTokenError(f"cannot read the token file {url}: {err.strerror}") from None
        request = urllib.request.Request(url, data=self._body().encode(), headers=self._headers(), method="POST")
        try:
            with urllib.request.urlopen(request, timeout=self._settings.timeout_s, context=self._context) as answer:
                body = answer.read().decode()
        except urllib.error.HTTPError as err:
            snippet = err.read().decode(errors="replace")[:1000]
            raise OAuthTokenError(f"the token endpoint {url} answered {err.code}: {snippet}") from None
        except (urllib.error.URLError, OSError) as err:
            raise OAuthTokenError(f"the token endpoint {url} could not be reached: {err}") from None
        return self._parse(body)

    def _encoded(self, value: str) -> str:
        return quote_plus(value) if self._settings.url_encode else value

    def _headers(self) -> dict[str, str]:
        pair = f"{self._encoded(self._settings.client_id or '')}:{self._encoded(self._settings.client_secret or '')}"
        return {
            "Accept": "application/json",
            "Authorization": "Basic " + base64.b64encode(pair.encode()).decode(),
            "Cache-Control": "no-cache",
            "Content-Type": "application/x-www-form-urlencoded",
        }

    def _body(self) -> str:
        scope = self._settings.scope
        return "grant_type=client_credentials" + (f"&scope={self._encoded(scope)}" if scope else "")

    @staticmethod
    def _parse(body: str) -> str:
        try:
            answer = json.loads(body)
        except ValueError:
            answer = None
        if isinstance(answer, dict):
            for name in ("access_token", "id_token"):
                value = answer.get(name)
                if isinstance(value, str) and value.strip():
                    return value.strip()
        raise OAuthTokenError(f"the token endpoint's answer holds no access_token: {body[:1000]}")
