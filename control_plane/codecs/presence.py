"""The presence records of the sidecars' own topic: which sidecars are live, and what each knows of its
workers. Pure, no I/O.

Key ``sidecar-<id>``, value JSON ``{"url": ..., "version": ..., "workers": {url: version | null},
"view_lag": {tail: records | null}, "interval_ms": 5000, "plugins": {worker id: digest},
"write_wait_ms": 25.0}``, written by each sidecar every ``interval_ms``; a tombstone when it stops.
``plugins`` vouches, for each worker the sidecar is in front of, for the installed-plugins record of that
digest (``codecs.worker_plugins``: too large to write every interval); absent in the records of sidecars
that do not report plugins. ``write_wait_ms``: how long after a write the sidecar answers it
(``domain.read_rule``'s window; 0, or absent, when it does not wait). What it can and will do, truthfully:
``auto_restart`` (it restarts every failed connector its settings choose: it has the fence and
``AUTO_RESTART`` is on), ``auto_restart_chosen`` (it restarts those an operator chose one by one: it has the
fence; absent in older records: as ``auto_restart``), ``history`` (it records the config history), and
``ready`` (its view has caught up, so it may act; absent in older records: ready). What a sequence of them
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
    auto_restart: bool = False  # it restarts the failed connectors its settings choose (domain.auto_restart)
    history: bool = False  # it records the config history (domain.history); older releases cannot
    auto_restart_chosen: bool | None = None  # it restarts the ones an operator chose; None: as auto_restart
    ready: bool = True  # its view caught up: it may act; older releases do not say (ready)

    def restarts_chosen(self) -> bool:
        """Whether it restarts the connectors an operator chose (an older record: as ``auto_restart``)."""
        return self.auto_restart if self.auto_restart_chosen is None else self.auto_restart_chosen


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
        "auto_restart_chosen": record.auto_restart_chosen,
        "ready": record.ready,
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
    history, chosen, ready = body.get("history", False), body.get("auto_restart_chosen"), body.get("ready", True)
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
        or not (chosen is None or isinstance(chosen, bool))
        or not isinstance(ready, bool)
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
        chosen,
        ready,
    )


__all__ = ["PRESENCE_PREFIX", "SidecarPresence", "decode_presence", "encode_presence"]
