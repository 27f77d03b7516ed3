"""The presence records of the sidecars' own topic: which sidecars are live, and what each knows of its
workers. Pure, no I/O.

Key ``sidecar-<id>``, value JSON ``{"url": ..., "version": ..., "workers": {url: version | null},
"view_lag": {tail: records | null}, "interval_ms": 5000, "plugins": {worker id: digest},
"write_wait_ms": 25.0}``, written by each sidecar every ``interval_ms``; a tombstone when it stops.
``plugins`` vouches, for each worker the sidecar is in front of, for the installed-plugins record of that
digest (``codecs.worker_plugins``: too large to write every interval); absent in the records of sidecars
that do not report plugins. ``write_wait_ms``: how long after a write the sidecar answers it
(``domain.read_rule``'s window; 0, or absent, when it does not wait). What a sequence of them
means is ``view.sidecars``'s to decide.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import orjson

from .results import Malformed, Tombstone, UnknownKey
from .sidecar_record import split_record

PRESENCE_PREFIX = "sidecar-"


@dataclass(frozen=True, slots=True)
class SidecarPresence:
    sidecar: str
    url: str | None  # where the other sidecars and operators reach it, when it knows
    version: str  # the sidecar's own release
    interval_ms: int  # how often it writes this record
    workers: Mapping[str, str | None] = field(default_factory=dict)  # the workers it knows: URL -> version
    view_lag: Mapping[str, int | None] = field(default_factory=dict)  # records its view has not read, per tail
    plugins: Mapping[str, str] = field(default_factory=dict)  # its workers' ids -> their installed plugins' digest
    write_wait_ms: float = 0.0  # how long after a write it answers
    auto_restart: bool = False  # it can restart failed connectors (domain.auto_restart); older releases cannot
    history: bool = False  # it can record the config history (domain.history); older releases cannot


def encode_presence(record: SidecarPresence | Tombstone[str]) -> tuple[bytes, bytes | None]:
    if isinstance(record, Tombstone):
        return (PRESENCE_PREFIX + record.key).encode(), None
    body = {
        "url": record.url,
        "version": record.version,
        "interval_ms": record.interval_ms,
        "workers": dict(record.workers),
        "view_lag": dict(record.view_lag),
        "plugins": dict(record.plugins),
        "write_wait_ms": record.write_wait_ms,
        "auto_restart": record.auto_restart,
        "history": record.history,
    }
    return (PRESENCE_PREFIX + record.sidecar).encode(), orjson.dumps(body)


def decode_presence(
    key: bytes | None, value: bytes | None
) -> SidecarPresence | Tombstone[str] | UnknownKey | Malformed:
    split = split_record(key, value, PRESENCE_PREFIX)
    if isinstance(split, UnknownKey | Malformed):
        return split
    sidecar, body = split
    if body is None:
        return Tombstone(sidecar)
    url, version, interval = body.get("url"), body.get("version"), body.get("interval_ms")
    workers, lag, plugins = body.get("workers", {}), body.get("view_lag", {}), body.get("plugins", {})
    write_wait, auto_restart = body.get("write_wait_ms", 0), body.get("auto_restart", False)
    history = body.get("history", False)
    if (
        not (url is None or isinstance(url, str))
        or not isinstance(version, str)
        or not isinstance(interval, int)
        or isinstance(interval, bool)
        or interval <= 0
        or not isinstance(workers, dict)
        or not isinstance(lag, dict)
        or not isinstance(plugins, dict)
        or not isinstance(write_wait, int | float)
        or isinstance(write_wait, bool)
        or write_wait < 0
        or not isinstance(auto_restart, bool)
        or not isinstance(history, bool)
    ):
        return Malformed("not a sidecar's presence", key)
    return SidecarPresence(
        sidecar,
        url,
        version,
        interval,
        {str(k): v if isinstance(v, str) else None for k, v in workers.items()},
        {str(k): v if isinstance(v, int) and not isinstance(v, bool) else None for k, v in lag.items()},
        {str(k): v for k, v in plugins.items() if isinstance(v, str)},
        float(write_wait),
        auto_restart,
        history,
    )


__all__ = ["PRESENCE_PREFIX", "SidecarPresence", "decode_presence", "encode_presence"]
