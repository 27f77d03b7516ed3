"""The installed-plugins records of the sidecars' own topic: what a worker has installed, as the sidecar in
front of it reads its ``GET /connector-plugins?connectorsOnly=false``. Pure, no I/O.

Key ``plugins-<worker id>`` (the worker's id as Connect writes it in the status topic, its advertised
``host:port``), value JSON ``{"version": <its Connect version> | null, "plugins": {<type>: {<class>:
[<version> | null, ...]}}}``: only what a version pin is checked against, the classes of each type (the types
of ``GET /connector-plugins``) and their installed versions, ascending, null for a copy whose version the
worker does not report (converters, transformations and predicates before 4.1). About 3.5 kB for a 4.3.1
worker, so it is written only when it changes; the sidecar's presence (``codecs.presence``) names the
``digest`` of the record it vouches for, every interval.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property

import orjson

from .results import Malformed, Tombstone, UnknownKey
from .sidecar_record import split_record

PLUGINS_PREFIX = "plugins-"

PluginsByType = Mapping[str, Mapping[str, tuple[str | None, ...]]]  # type -> class -> installed versions


@dataclass(frozen=True)
class InstalledOnWorker:
    worker: str  # its id: the host:port of its advertised URL
    version: str | None  # its Connect version (GET /); None when unknown
    plugins: PluginsByType = field(default_factory=dict)

    @cached_property
    def digest(self) -> str:
        """Names this content: equal for equal versions and plugins, whatever the order they were listed in."""
        body = {"version": self.version, "plugins": {t: dict(c) for t, c in self.plugins.items()}}
        return hashlib.sha256(orjson.dumps(body, option=orjson.OPT_SORT_KEYS)).hexdigest()[:16]


def encode_installed(record: InstalledOnWorker | Tombstone[str]) -> tuple[bytes, bytes | None]:
    if isinstance(record, Tombstone):
        return (PLUGINS_PREFIX + record.key).encode(), None
    plugins = {
        kind: {name: list(versions) for name, versions in classes.items()} for kind, classes in record.plugins.items()
    }
    return (PLUGINS_PREFIX + record.worker).encode(), orjson.dumps({"version": record.version, "plugins": plugins})


def decode_installed(
    key: bytes | None, value: bytes | None
) -> InstalledOnWorker | Tombstone[str] | UnknownKey | Malformed:
    split = split_record(key, value, PLUGINS_PREFIX)
    if isinstance(split, UnknownKey | Malformed):
        return split
    worker, body = split
    if body is None:
        return Tombstone(worker)
    version, plugins = body.get("version"), body.get("plugins")
    if not (version is None or isinstance(version, str)) or not isinstance(plugins, dict):
        return Malformed("not a worker's installed plugins", key)
    decoded: dict[str, dict[str, tuple[str | None, ...]]] = {}
    for kind, classes in plugins.items():
        if not isinstance(classes, dict):
            return Malformed("not a worker's installed plugins", key)
        decoded[str(kind)] = {}
        for name, versions in classes.items():
            if not isinstance(versions, list) or not all(v is None or isinstance(v, str) for v in versions):
                return Malformed("not a worker's installed plugins", key)
            decoded[str(kind)][str(name)] = tuple(versions)
    return InstalledOnWorker(worker, version, decoded)


__all__ = ["PLUGINS_PREFIX", "InstalledOnWorker", "PluginsByType", "decode_installed", "encode_installed"]
