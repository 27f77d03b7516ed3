"""The auto-restart records of the sidecars' own topic. Pure, no I/O.

- Key ``restart-policy-<connector>``, value ``{"enabled": true|false}``: an operator's choice for one
  connector (``PUT /_sidecar/connectors/{c}/auto-restart``); a tombstone gives the choice back to the
  settings (``AUTO_RESTART``, ``AUTO_RESTART_CONNECTORS``).
- Key ``restart-state-<connector>``, value ``{"count": n, "last_ms": t, "next_ms": t, "tasks": {"0": n},
  "gave_up": false, "sidecar": "..."}``: what the sidecar that restarted the connector did, written under
  the connector's fence (``domain.cluster.fence``): the restarts of this run of failures, when the last one was,
  when the next one is due if it still fails, the restarts of each task, whether it gave up. A tombstone:
  the connector ran through a whole backoff without failing (or is gone), and counting starts again.
  Every attempt is counted, whatever the worker answered: ``"last_error": {"status": 500, "message": "..."}``
  when the worker refused the last one (``status`` null: it did not answer), and ``"gave_up_reason"`` once it
  gave up. Both absent in the records of older sidecars (and when the last restart was accepted).
- Key ``restart-budget-<sidecar>``, value ``{"times_ms": [t, ...]}``: when that sidecar sent its restarts of
  the budget's window (``AUTO_RESTART_BUDGET``), written before it sends them: the cluster's restarts of the
  window are the sum over every sidecar's record, whichever sidecar acts now.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import orjson

from .results import Malformed, Tombstone, UnknownKey
from .sidecar_record import split_record

POLICY_PREFIX = "restart-policy-"
STATE_PREFIX = "restart-state-"
BUDGET_PREFIX = "restart-budget-"


@dataclass(frozen=True, slots=True)
class RestartPolicy:
    connector: str
    enabled: bool


@dataclass(frozen=True, slots=True)
class AttemptError:
    """Why the worker did not restart: its answer's status and message (``status`` None: no answer, the
    worker unreachable or too slow; the restart may or may not have happened)."""

    status: int | None
    message: str


@dataclass(frozen=True, slots=True)
class RestartState:
    connector: str
    count: int  # restarts of this run of failures
    last_ms: int  # when the last one was sent (epoch ms)
    next_ms: int | None  # when the next one is due if it still fails; None once it gave up
    sidecar: str  # the sidecar that sent the last one
    tasks: Mapping[int, int] = field(default_factory=dict)  # restarts of each task in this run
    gave_up: bool = False
    last_error: AttemptError | None = None  # the last attempt's refusal; None: the worker took it
    gave_up_reason: str | None = None  # why it gave up, once it did


@dataclass(frozen=True, slots=True)
class RestartBudget:
    sidecar: str
    times_ms: tuple[int, ...]  # when it sent its restarts of the budget's window (epoch ms), oldest first


def encode_policy(record: RestartPolicy | Tombstone[str]) -> tuple[bytes, bytes | None]:
    if isinstance(record, Tombstone):
        return (POLICY_PREFIX + record.key).encode(), None
    return (POLICY_PREFIX + record.connector).encode(), orjson.dumps({"enabled": record.enabled})


def encode_state(record: RestartState | Tombstone[str]) -> tuple[bytes, bytes | None]:
    if isinstance(record, Tombstone):
        return (STATE_PREFIX + record.key).encode(), None
    body: dict[str, object] = {
        "count": record.count,
        "last_ms": record.last_ms,
        "next_ms": record.next_ms,
        "sidecar": record.sidecar,
        "tasks": {str(task): n for task, n in sorted(record.tasks.items())},
        "gave_up": record.gave_up,
    }
    if record.last_error is not None:
        body["last_error"] = {"status": record.last_error.status, "message": record.last_error.message}
    if record.gave_up_reason is not None:
        body["gave_up_reason"] = record.gave_up_reason
    return (STATE_PREFIX + record.connector).encode(), orjson.dumps(body)


def encode_budget(record: RestartBudget | Tombstone[str]) -> tuple[bytes, bytes | None]:
    if isinstance(record, Tombstone):
        return (BUDGET_PREFIX + record.key).encode(), None
    return (BUDGET_PREFIX + record.sidecar).encode(), orjson.dumps({"times_ms": list(record.times_ms)})


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
    error, reason = _attempt_error(body.get("last_error")), body.get("gave_up_reason")
    if isinstance(error, Malformed) or not (reason is None or isinstance(reason, str)):
        return Malformed("a restart state whose last_error or gave_up_reason is not one", key)
    return RestartState(
        connector, count, last, next_ms, sidecar, {int(k): n for k, n in tasks.items()}, gave_up, error, reason
    )


def _attempt_error(value: object) -> AttemptError | Malformed | None:
    if value is None:
        return None
    if not isinstance(value, dict):
        return Malformed("not an attempt's error", None)
    status, message = value.get("status"), value.get("message")
    if not (status is None or _count(status) is not None) or not isinstance(message, str):
        return Malformed("not an attempt's error", None)
    return AttemptError(status, message)


def decode_budget(key: bytes | None, value: bytes | None) -> RestartBudget | Tombstone[str] | UnknownKey | Malformed:
    split = split_record(key, value, BUDGET_PREFIX)
    if isinstance(split, UnknownKey | Malformed):
        return split
    sidecar, body = split
    if body is None:
        return Tombstone(sidecar)
    times = body.get("times_ms")
    if not isinstance(times, list) or not all(_count(t) is not None for t in times):
        return Malformed("a restart budget without times_ms", key)
    return RestartBudget(sidecar, tuple(sorted(times)))


__all__ = [
    "BUDGET_PREFIX",
    "POLICY_PREFIX",
    "STATE_PREFIX",
    "AttemptError",
    "RestartBudget",
    "RestartPolicy",
    "RestartState",
    "decode_budget",
    "decode_policy",
    "decode_state",
    "encode_budget",
    "encode_policy",
    "encode_state",
]
