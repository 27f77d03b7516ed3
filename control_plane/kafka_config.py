"""Keyword arguments for aiokafka clients, from the settings the sidecar shares with the worker (pure:
no network; the storage package and the Spark jobs take the result, never the settings).

The worker's ``security.protocol``, ``ssl.*`` and ``sasl.*`` properties (read and checked by
``control_plane.kafka_security``, once at start by ``load_settings``) become aiokafka's ``ssl_context``,
``sasl_mechanism``, ``sasl_plain_username``/``sasl_plain_password`` (PLAIN, SCRAM) and
``sasl_oauth_token_provider`` (OAUTHBEARER), so the sidecar reaches the brokers the way the worker does.
"""

from __future__ import annotations

from typing import Any

from .kafka_security import KafkaSecurityError, kafka_security, ssl_context
from .settings import Settings, security_error
from .storage.oauth_token import OAuthTokenProvider


def client_kwargs(settings: Settings) -> dict[str, Any]:
    try:
        security = kafka_security(settings.kafka_client_properties)
        kwargs: dict[str, Any] = {"bootstrap_servers": settings.bootstrap_servers}
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
    except KafkaSecurityError as err:
        raise security_error(err, settings) from None
    return kwargs
