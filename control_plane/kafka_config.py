"""Keyword arguments for aiokafka clients, from the settings the sidecar shares with the worker (pure:
no network; the storage package and the Spark jobs take the result, never the settings).

The worker's ``security.protocol``, ``ssl.*`` and ``sasl.*`` properties (read and checked by
``control_plane.kafka_security``, once at start by ``load_settings``) become aiokafka's ``ssl_context``,
``sasl_mechanism``, ``sasl_plain_username``/``sasl_plain_password`` (PLAIN, SCRAM) and
``sasl_oauth_token_provider`` (OAUTHBEARER), so the sidecar reaches the brokers the way the worker does.

``connector_admin_kwargs``: the same for a connector's own admin client, which Connect builds from the
worker's settings with the connector's ``admin.override.*`` on top (``Worker.adminConfigs``): its
``bootstrap.servers`` and security settings replace the worker's.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from .kafka_security import KafkaSecurityError, kafka_security, ssl_context
from .settings import SECURITY_PREFIXES, Settings, security_error
from .storage.oauth_token import OAuthTokenProvider

ADMIN_OVERRIDE_PREFIX = "admin.override."  # ConnectorConfig.CONNECTOR_CLIENT_ADMIN_OVERRIDES_PREFIX
PROVIDER_REFERENCE = re.compile(r"\$\{[^}]*\}")  # ConfigTransformer's ${provider:[path:]key}


def client_kwargs(settings: Settings) -> dict[str, Any]:
    try:
        return _kwargs(settings.bootstrap_servers, settings.kafka_client_properties)
    except KafkaSecurityError as err:
        raise security_error(err, settings) from None


def connector_admin_kwargs(settings: Settings, overrides: Mapping[str, str]) -> dict[str, Any]:
    """The client of a connector's admin client: ``overrides`` (its ``admin.override.*`` keys without the
    prefix) on the worker's bootstrap servers and security settings. Raises ``KafkaSecurityError`` naming
    the key as written (``admin.override.sasl.mechanism``, or the worker's own)."""
    security = {k: v for k, v in overrides.items() if k.startswith(SECURITY_PREFIXES)}
    for key, value in sorted({**security, "bootstrap.servers": overrides.get("bootstrap.servers", "")}.items()):
        if PROVIDER_REFERENCE.search(value):  # resolved by the worker's config providers, not here
            problem = "a config provider reference, which only the worker resolves"
            raise KafkaSecurityError(ADMIN_OVERRIDE_PREFIX + key, problem)
    properties = {**settings.kafka_client_properties, **security}
    bootstrap = overrides.get("bootstrap.servers")
    servers = (
        settings.bootstrap_servers if bootstrap is None else [s.strip() for s in bootstrap.split(",") if s.strip()]
    )
    try:
        return _kwargs(servers, properties)
    except KafkaSecurityError as err:
        if err.key in security:
            raise KafkaSecurityError(ADMIN_OVERRIDE_PREFIX + err.key, err.problem) from None
        raise


def _kwargs(bootstrap_servers: str | list[str], properties: dict[str, str]) -> dict[str, Any]:
    security = kafka_security(properties)
    kwargs: dict[str, Any] = {"bootstrap_servers": bootstrap_servers}
    kwargs["security_protocol"] = security.protocol
    if security.tls is not None:
        kwargs["ssl_context"] = ssl_context(security.tls)
    sasl = security.sasl
    if sasl is not None:
        kwargs["sasl_mechanism"] = sasl.mechanism
        if sasl.oauth is not None:
            context = ssl_context(sasl.oauth.tls) if sasl.oauth.tls is not None else None
            kwargs["sasl_oauth_token_provider"] = OAuthTokenProvider(sasl.oauth, context)
        else:
            kwargs["sasl_plain_username"] = sasl.username
            kwargs["sasl_plain_password"] = sasl.password
    return kwargs
