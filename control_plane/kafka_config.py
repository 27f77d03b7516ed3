"""Keyword arguments for aiokafka clients, from the settings the sidecar shares with the worker (pure:
the storage package and the Spark jobs take the result, never the settings).

The worker's ``security.protocol``, ``sasl.*`` and ``ssl.*`` properties are translated to aiokafka's
names, so the sidecar reaches the brokers the way the worker does.
"""

from __future__ import annotations

import ssl
from typing import Any

from .settings import Settings

_SASL = {
    "sasl.mechanism": "sasl_mechanism",
    "sasl.kerberos.service.name": "sasl_kerberos_service_name",
}


def _ssl_context(props: dict[str, str]) -> ssl.SSLContext:
    context = ssl.create_default_context(cafile=props.get("ssl.truststore.location") or None)
    if props.get("ssl.endpoint.identification.algorithm", "https") == "":
        context.check_hostname = False
    cert = props.get("ssl.keystore.location")
    if cert:
        context.load_cert_chain(cert, password=props.get("ssl.key.password") or props.get("ssl.keystore.password"))
    return context


def _jaas_credentials(jaas: str) -> tuple[str | None, str | None]:
    """username/password of a PlainLoginModule or ScramLoginModule ``sasl.jaas.config``."""
    values: dict[str, str] = {}
    for part in jaas.replace(";", " ").split():
        if "=" in part:
            key, _, value = part.partition("=")
            values[key] = value.strip('"')
    return values.get("username"), values.get("password")


def client_kwargs(settings: Settings) -> dict[str, Any]:
    props = settings.kafka_client_properties
    kwargs: dict[str, Any] = {"bootstrap_servers": settings.bootstrap_servers}
    protocol = props.get("security.protocol", "PLAINTEXT").upper()
    kwargs["security_protocol"] = protocol
    if protocol in ("SSL", "SASL_SSL"):
        kwargs["ssl_context"] = _ssl_context(props)
    if protocol.startswith("SASL"):
        for key, name in _SASL.items():
            if key in props:
                kwargs[name] = props[key]
        if "sasl.jaas.config" in props:
            username, password = _jaas_credentials(props["sasl.jaas.config"])
            kwargs["sasl_plain_username"] = username
            kwargs["sasl_plain_password"] = password
    return kwargs
