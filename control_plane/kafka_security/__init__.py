"""Kafka client security as a Connect worker has it (``security.protocol``, ``ssl.*``, ``sasl.*``), read
and checked once: pure (it reads the store files, never the network).

``kafka_security`` turns the worker's properties into ``KafkaSecurity`` or raises ``KafkaSecurityError``
naming the property; ``check_kafka_security`` also builds the TLS contexts (a wrong key or password
shows at start). Properties that only a broker reads, and those that name JDK internals, are ignored,
as the worker's own clients ignore them. ``security.protocol`` mirrors Kafka's ``SecurityProtocol``
(``forName``: upper-cased); without TLS the ``ssl.*`` properties are not read, without SASL the ``sasl.*``.
"""

from __future__ import annotations

from dataclasses import dataclass

from .errors import KafkaSecurityError
from .sasl import OAuthSettings, SaslSettings, sasl_settings
from .tls import TlsSettings, ssl_context, tls_settings

PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")


@dataclass(frozen=True)
class KafkaSecurity:
    protocol: str
    tls: TlsSettings | None = None
    sasl: SaslSettings | None = None


def kafka_security(props: dict[str, str]) -> KafkaSecurity:
    protocol = (props.get("security.protocol") or "PLAINTEXT").strip().upper()
    if protocol not in PROTOCOLS:
        problem = f"{props['security.protocol'].strip()} is not a security protocol; use {', '.join(PROTOCOLS)}"
        raise KafkaSecurityError("security.protocol", problem)
    tls = tls_settings(props) if protocol in ("SSL", "SASL_SSL") else None
    sasl = sasl_settings(props) if protocol.startswith("SASL_") else None
    return KafkaSecurity(protocol, tls, sasl)


def check_kafka_security(props: dict[str, str]) -> KafkaSecurity:
    """``kafka_security`` and the TLS contexts it implies (the brokers' and the token endpoint's)."""
    security = kafka_security(props)
    if security.tls is not None:
        ssl_context(security.tls)
    oauth = security.sasl.oauth if security.sasl else None
    if oauth is not None and oauth.tls is not None:
        ssl_context(oauth.tls)
    return security


__all__ = [
    "KafkaSecurity",
    "KafkaSecurityError",
    "OAuthSettings",
    "SaslSettings",
    "TlsSettings",
    "check_kafka_security",
    "kafka_security",
    "ssl_context",
]
