"""Reading a Connect worker's properties file (``connect-distributed.properties``).

Pure functions: ``parse_properties`` (``codecs.java_properties``) follows ``java.util.Properties.load``,
because that is how the worker itself reads the file. ``connect_url_from_listeners`` turns the worker's
``listeners`` into the URL a sidecar on the same host calls.
"""

from __future__ import annotations

from pathlib import Path

from .codecs.java_properties import parse_properties


def read_properties(path: str | Path) -> dict[str, str]:
    return parse_properties(Path(path).read_text(encoding="latin-1"))


def connect_url_from_listeners(listeners: str) -> str | None:
    """The first HTTP(S) listener of the worker, as a URL that a process on the same host can call.

    Connect's ``listeners`` is a comma-separated list such as ``http://:8083,https://0.0.0.0:8443``;
    an empty or wildcard host means every interface, of which loopback is the one a sidecar uses.
    """
    for item in (part.strip() for part in listeners.split(",")):
        if "://" not in item:
            continue
        scheme, _, hostport = item.partition("://")
        host, _, port = hostport.rpartition(":")
        if not port.isdigit():
            continue
        if host in ("", "0.0.0.0", "[::]", "::"):
            host = "127.0.0.1"
        return f"{scheme.lower()}://{host}:{port}"
    return None


__all__ = ["connect_url_from_listeners", "parse_properties", "read_properties"]
