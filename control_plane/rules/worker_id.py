"""How Connect names a worker: its id in the status topic (``worker_id`` of every connector and task status)
is the ``host:port`` of its advertised REST URL (``ConnectDistributed``: ``advertisedUrl.getHost() + ":" +
advertisedUrl.getPort()``), and the URL it joins its group with is that same advertised URL. Pure.

- ``worker_id_of``: a worker's URL -> its id;
- ``advertised_worker_id``: the id a worker advertises, from its properties, as ``RestServer.advertisedUrl``
  builds the URL: of the first listener of the protocol ``rest.advertised.listener`` names (else ``http``
  when a listener is HTTP, else ``https``), ``rest.advertised.host.name`` else the listener's host as written
  (``0.0.0.0`` too), ``rest.advertised.port`` else the listener's port. None where only the worker's process
  knows it: a listener without a host and no advertised name (Jetty's ``getURI()``, the machine's address),
  or port 0 and no advertised port.
"""

from __future__ import annotations

from collections.abc import Mapping
from urllib.parse import urlsplit

_DEFAULT_PORTS = {"http": 80, "https": 443}
DEFAULT_LISTENERS = "http://:8083"  # WorkerConfig.LISTENERS_DEFAULT


def worker_id_of(url: str) -> str:
    """``http://10.0.0.7:8083/`` -> ``10.0.0.7:8083`` (a URL without a port: its scheme's default)."""
    parts = urlsplit(url.strip() if "://" in url else f"http://{url.strip()}")
    host = parts.hostname or ""
    if ":" in host:  # an IPv6 literal, as java.net.URI#getHost gives it
        host = f"[{host}]"
    try:
        port = parts.port
    except ValueError:
        port = None
    return f"{host}:{port if port is not None else _DEFAULT_PORTS.get(parts.scheme.lower(), 80)}"


def advertised_worker_id(properties: Mapping[str, str]) -> str | None:
    listeners = [item.strip() for item in (properties.get("listeners") or DEFAULT_LISTENERS).split(",")]
    listeners = [item for item in listeners if "://" in item]
    protocol = (properties.get("rest.advertised.listener") or "").strip().lower()
    if not protocol:  # RestServer.determineAdvertisedProtocol
        protocol = "http" if any(item.lower().startswith("http://") for item in listeners) else "https"
    listener = next((item for item in listeners if item.split("://", 1)[0].lower() == protocol), None)
    listener_host, _, listener_port = (listener.split("://", 1)[1].rstrip("/") if listener else ":").rpartition(":")
    host = (properties.get("rest.advertised.host.name") or "").strip() or listener_host
    port = (properties.get("rest.advertised.port") or "").strip() or listener_port
    if not host or not port.isdigit() or int(port) == 0:
        return None
    return f"{host}:{int(port)}"


__all__ = ["DEFAULT_LISTENERS", "advertised_worker_id", "worker_id_of"]
