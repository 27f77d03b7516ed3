"""The Connect REST API as the features call it: a connector configuration as that API carries it
(``Config``: Connect's ``Map<String, String>``, a null value kept), the paths of the requests the
features compose (as ``ConnectorsResource`` and ``ConnectorPluginsResource`` name them, each name
percent-encoded as one path segment), and the headers of a JSON request."""

from __future__ import annotations

from collections.abc import Mapping
from urllib.parse import quote

Config = Mapping[str, str | None]
JSON_HEADERS = ((b"content-type", b"application/json"), (b"accept", b"application/json"))


def config_path(name: str) -> str:
    """``/connectors/{c}/config``."""
    return f"/connectors/{quote(name, safe='')}/config"


def validate_path(connector_class: str) -> str:
    """``/connector-plugins/{p}/config/validate``."""
    return f"/connector-plugins/{quote(connector_class, safe='')}/config/validate"


__all__ = ["JSON_HEADERS", "Config", "config_path", "validate_path"]
