"""The SASL side of a Kafka client (``SaslConfigs``): which mechanism, with which credentials.

PLAIN and SCRAM-SHA-256/512 take ``username``/``password`` from the one login module of
``sasl.jaas.config`` (``PlainLoginModule`` or ``ScramLoginModule``: both put them in the JAAS subject,
where Kafka's ``SaslClientCallbackHandler`` finds them, whichever the mechanism). OAUTHBEARER follows
``OAuthBearerLoginCallbackHandler`` with ``DefaultJwtRetriever``: a token from
``sasl.oauthbearer.token.endpoint.url``, by the client credentials grant (``ClientSecretRequestFormatter``:
client id and secret from ``sasl.oauthbearer.client.credentials.*`` or the JAAS options ``clientId`` and
``clientSecret``, scope from ``sasl.oauthbearer.scope`` or ``scope``), or read from a ``file:`` URL
(``FileJwtRetriever``); SASL extensions from the ``extension_<name>`` options; the endpoint's TLS from the
``ssl.*`` JAAS options (``JaasOptionsUtils.createSSLSocketFactory``). GSSAPI and everything else is refused.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from urllib.parse import urlparse

from .errors import KafkaSecurityError
from .jaas import JaasError, client_login_entry
from .tls import TlsSettings, tls_settings

MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER")
_USE = "use PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 or OAUTHBEARER"
_PLAIN_MODULES = (
    "org.apache.kafka.common.security.plain.PlainLoginModule",
    "org.apache.kafka.common.security.scram.ScramLoginModule",
)
_OAUTH_MODULE = "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule"
_OAUTH_HANDLERS = (
    "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginCallbackHandler",
    "org.apache.kafka.common.security.oauthbearer.secured.OAuthBearerLoginCallbackHandler",  # Kafka 3.1-3.3
)
_RETRIEVERS = ("DefaultJwtRetriever", "ClientCredentialsJwtRetriever", "FileJwtRetriever")
_EXTENSION_NAME = re.compile(r"[A-Za-z]+")  # OAuthBearerClientInitialResponse's EXTENSION_KEY_PATTERN


@dataclass(frozen=True)
class OAuthSettings:
    token_endpoint_url: str
    client_id: str | None = None
    client_secret: str | None = field(default=None, repr=False)
    scope: str | None = None
    url_encode: bool = False
    extensions: dict[str, str] = field(default_factory=dict, repr=False)
    tls: TlsSettings | None = None  # for an https endpoint
    timeout_s: float | None = None
    refresh_window_factor: float = 0.8


@dataclass(frozen=True)
class SaslSettings:
    mechanism: str
    username: str | None = None
    password: str | None = field(default=None, repr=False)
    oauth: OAuthSettings | None = None


def _refuse_classes(props: dict[str, str], keys: tuple[str, ...]) -> None:
    for key in keys:
        if (props.get(key) or "").strip():
            raise KafkaSecurityError(key, f"{props[key].strip()} (a Java class) is not supported by the sidecar")


def sasl_settings(props: dict[str, str]) -> SaslSettings:
    mechanism = (props.get("sasl.mechanism") or "").strip()
    if not mechanism:
        problem = f"not set: Kafka's default is GSSAPI (Kerberos), which the sidecar does not support; {_USE}"
        raise KafkaSecurityError("sasl.mechanism", problem)
    if mechanism not in MECHANISMS:
        raise KafkaSecurityError("sasl.mechanism", f"{mechanism} is not supported by the sidecar; {_USE}")
    _refuse_classes(props, ("sasl.client.callback.handler.class", "sasl.login.class"))
    jaas = props.get("sasl.jaas.config") or ""
    if not jaas.strip():
        problem = (
            "not set: the sidecar reads the credentials from the worker's sasl.jaas.config only "
            "(not from a JAAS file given to the worker's JVM by java.security.auth.login.config)"
        )
        raise KafkaSecurityError("sasl.jaas.config", problem)
    try:
        entry = client_login_entry(jaas)
    except JaasError as err:
        raise KafkaSecurityError("sasl.jaas.config", str(err)) from None
    if mechanism == "OAUTHBEARER":
        if entry.login_module != _OAUTH_MODULE:
            problem = f"login module {entry.login_module} cannot be used with OAUTHBEARER; use {_OAUTH_MODULE}"
            raise KafkaSecurityError("sasl.jaas.config", problem)
        return SaslSettings(mechanism, oauth=_oauth(props, entry.options))
    _refuse_classes(props, ("sasl.login.callback.handler.class",))
    if entry.login_module not in _PLAIN_MODULES:
        problem = (
            f"login module {entry.login_module} is not supported by the sidecar with {mechanism}; "
            f"use {_PLAIN_MODULES[0]} or {_PLAIN_MODULES[1]}"
        )
        raise KafkaSecurityError("sasl.jaas.config", problem)
    if entry.options.get("tokenauth", "").lower() == "true":
        problem = "delegation tokens (tokenauth=true) are not supported by the sidecar"
        raise KafkaSecurityError("sasl.jaas.config", problem)
    for option in ("username", "password"):
        if option not in entry.options:
            raise KafkaSecurityError("sasl.jaas.config", f"the {option} option is missing")
    return SaslSettings(mechanism, entry.options["username"], entry.options["password"])


def _oauth(props: dict[str, str], options: dict[str, str]) -> OAuthSettings:
    handler = (props.get("sasl.login.callback.handler.class") or "").strip()
    if handler not in _OAUTH_HANDLERS:
        unsecured = (
            "not set: Kafka's default for OAUTHBEARER is the unsecured token handler "
            "(OAuthBearerUnsecuredLoginCallbackHandler), which the sidecar does not support"
        )
        problem = f"{handler} is not supported by the sidecar" if handler else unsecured
        raise KafkaSecurityError("sasl.login.callback.handler.class", f"{problem}; use {_OAUTH_HANDLERS[0]}")
    retriever = (props.get("sasl.oauthbearer.jwt.retriever.class") or "").strip()
    if retriever and retriever.rsplit(".", 1)[-1] not in _RETRIEVERS:
        raise KafkaSecurityError("sasl.oauthbearer.jwt.retriever.class", f"{retriever} is not supported by the sidecar")
    for key in ("sasl.oauthbearer.assertion.file", "sasl.oauthbearer.assertion.claim.iss"):
        if (props.get(key) or "").strip():
            problem = "client assertions (the jwt-bearer grant) are not supported by the sidecar; use a client secret"
            raise KafkaSecurityError(key, problem)
    url = (props.get("sasl.oauthbearer.token.endpoint.url") or "").strip()
    scheme = urlparse(url).scheme.lower()
    if scheme not in ("http", "https", "file"):
        problem = "not set" if not url else f"{url} is not an http, https or file URL"
        raise KafkaSecurityError(
            "sasl.oauthbearer.token.endpoint.url", f"{problem} (the sidecar needs a token endpoint)"
        )
    extensions = {k.removeprefix("extension_"): v for k, v in options.items() if k.startswith("extension_")}
    for name in extensions:
        if not _EXTENSION_NAME.fullmatch(name) or name == "auth":
            raise KafkaSecurityError("sasl.jaas.config", f"extension_{name}: not a valid SASL extension name")
    settings = OAuthSettings(
        url, extensions=extensions, timeout_s=_timeout(props), refresh_window_factor=_factor(props)
    )
    if scheme == "file":
        return settings
    client_id = (props.get("sasl.oauthbearer.client.credentials.client.id") or options.get("clientId") or "").strip()
    secret = (
        props.get("sasl.oauthbearer.client.credentials.client.secret") or options.get("clientSecret") or ""
    ).strip()
    if not client_id:
        raise KafkaSecurityError(
            "sasl.oauthbearer.client.credentials.client.id", "not set (nor clientId in sasl.jaas.config)"
        )
    if not secret:
        problem = "not set (nor clientSecret in sasl.jaas.config)"
        raise KafkaSecurityError("sasl.oauthbearer.client.credentials.client.secret", problem)
    scope = (props.get("sasl.oauthbearer.scope") or options.get("scope") or "").strip() or None
    url_encode = (props.get("sasl.oauthbearer.header.urlencode") or "false").strip().lower() == "true"
    ssl_options = {k: v for k, v in options.items() if k.startswith("ssl.")}
    tls = tls_settings(ssl_options, lambda key: f"{key} in sasl.jaas.config") if scheme == "https" else None
    return OAuthSettings(
        url, client_id, secret, scope, url_encode, extensions, tls, settings.timeout_s, settings.refresh_window_factor
    )


def _timeout(props: dict[str, str]) -> float | None:
    """``sasl.login.connect.timeout.ms``/``sasl.login.read.timeout.ms`` (no default: the JDK waits)."""
    values = []
    for key in ("sasl.login.connect.timeout.ms", "sasl.login.read.timeout.ms"):
        text = (props.get(key) or "").strip()
        if text:
            try:
                values.append(int(text) / 1000)
            except ValueError:
                raise KafkaSecurityError(key, f"{text!r} is not a number of milliseconds") from None
    return max(values) if values else None


def _factor(props: dict[str, str]) -> float:
    text = (props.get("sasl.login.refresh.window.factor") or "0.8").strip()
    try:
        factor = float(text)
    except ValueError:
        factor = -1.0
    if not 0.5 <= factor <= 1.0:  # SaslConfigs' range for the factor
        raise KafkaSecurityError("sasl.login.refresh.window.factor", f"{text!r} is not between 0.5 and 1.0")
    return factor
