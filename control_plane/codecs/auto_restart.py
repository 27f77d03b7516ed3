"""The auto-restart records of the sidecars' own topic. Pure, no I/O.

- Key ``restart-policy-<connector>``, value ``{"enabled": true|false}``: an operator's choice for one
  connector (``PUT /_sidecar/connectors/{c}/auto-restart``); a tombstone gives the choice back to the
  settings (``AUTO_RESTART``, ``AUTO_RESTART_CONNECTORS``).
- Key ``restart-state-<connector>``, value ``{"count": n, "last_ms": t, "next_ms": t, "tasks": {"0": n},
  "gave_up": false, "sidecar": "..."}``: what the sidecar that restarted the connector did, written under
  the connector's fence (``domain.cluster.fence``): the restarts of this run of failures, when the last one was,
  when the next one is due if it still fails, the restarts of each task, whether it gave up. A tombstone:
  the connector ran through a whole backoff without failing (or is gone), and counting starts again.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import orjson

from .results import Malformed, Tombstone, UnknownKey
from .sidecar_record import split_record

POLICY_PREFIX = "restart-policy-"
STATE_PREFIX = "restart-state-"


@dataclass(frozen=True, slots=True)
class RestartPolicy:
    connector: str
    enabled: bool


@dataclass(frozen=True, slots=True)
class RestartState:
    connector: str
    count: int  # restarts of this run of failures
    last_ms: int  # when the last one was sent (epoch ms)
    next_ms: int | None  # when the next one is due if it still fails; None once it gave up
    sidecar: str  # the sidecar that sent the last one
    tasks: Mapping[int, int] = field(default_factory=dict)  # restarts of each task in this run
    gave_up: bool = False


def encode_policy(record: RestartPolicy | Tombstone[str]) -> tuple[bytes, bytes | None]:
    if isinstance(record, Tombstone):
        return (POLICY_PREFIX + record.key).encode(), None
    return (POLICY_PREFIX + record.connector).encode(), orjson.dumps({"enabled": record.enabled})


def encode_state(record: RestartState | Tombstone[str]) -> tuple[bytes, bytes | None]:
    if isinstance(record, Tombstone):
        return (STATE_PREFIX + record.key).encode(), None
    body = {
        "count": record.count,
        "last_ms": record.last_ms,
        "next_ms": record.next_ms,
        "sidecar": record.sidecar,
        "tasks": {str(task): n for task, n in sorted(record.tasks.items())},
        "gave_up": record.gave_up,
    }
    return (STATE_PREFIX + record.connector).encode(), orjson.dumps(body)


def _count(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def decode_policy(key: bytes | None, value: bytes | None) -> RestartPolicy | Tombstone[str] | UnknownKey | Malformed:
    split = split_record(key, value, POLICY_PREFIX)
    if isinstance(split, UnknownKey | Malformed):
        return split
    connector, body = split
    if body is None:
        return Tombstone(connector)
    enabled = body.get("enabled")
    if not isinstance(enabled, bool):
        return Malformed("a restart policy without enabled", key)
    return RestartPolicy(connector, enabled)


def decode_state(key: bytes | None, value: bytes | None) -> RestartState | Tombstone[str] | UnknownKey | Malformed:
    split = split_record(key, value, STATE_PREFIX)
    if isinstance(split, UnknownKey | Malformed):
        return split
    connector, body = split
    if body is None:
        return Tombstone(connector)
    count, last, next_ms, sidecar = (
        _count(body.get("count")),
        _count(body.get("last_ms")),
        body.get("next_ms"),
        body.get("sidecar"),
    )
    tasks, gave_up = body.get("tasks", {}), body.get("gave_up", False)
    if count is None or last is None or not isinstance(sidecar, str) or not isinstance(gave_up, bool):
        return Malformed("a restart state without count, last_ms, sidecar or gave_up", key)
    if next_ms is not None and _count(next_ms) is None:
        return Malformed("a restart state whose next_ms is not a time", key)
    if not isinstance(tasks, dict) or not all(k.isdigit() and _count(n) is not None for k, n in tasks.items()):
        return Malformed("a restart state whose tasks are not counts by task", key)
    return RestartState(connector, count, last, next_ms, sidecar, {int(k): n for k, n in tasks.items()}, gave_up)


__all__ = [
    "POLICY_PREFIX",
    "STATE_PREFIX",
    "RestartPolicy",
    "RestartState",
    "decode_policy",
    "decode_state",
    "encode_policy",
    "encode_state",
]
