"""What a campaign records: every operation a client sent (invoked, answered, outcome), every fault
injected, every state of a connector seen, on one clock (seconds since the campaign started)."""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from enum import StrEnum
from typing import Any


class Outcome(StrEnum):
    """What an answer says happened: ``ok`` (2xx), ``fail`` (4xx, or never sent: the connection refused),
    ``unknown`` (5xx, or no answer: a timeout, a broken connection). A 5xx may have taken effect, as
    Connect's own 500 on a timeout may."""

    OK = "ok"
    FAIL = "fail"
    UNKNOWN = "unknown"


REFUSED = 503


def outcome_of(status: int | None, *, sent: bool = True) -> Outcome:
    """ok (2xx), fail (4xx; 503, the sidecar's refusal before anything was sent or written: no worker
    reachable, its view not ready, the sidecars' topic unwritable; a connection refused) or unknown (any
    other 5xx, or no answer)."""
    if status is None:
        return Outcome.UNKNOWN if sent else Outcome.FAIL
    if 200 <= status < 300:
        return Outcome.OK
    return Outcome.FAIL if status < 500 or status == REFUSED else Outcome.UNKNOWN


@dataclass(frozen=True)
class Op:
    """One request of the workload. ``writes``: what it writes into the connector's registers (``config``:
    the token of a config write; ``target state``: RUNNING, PAUSED or STOPPED; ``offset``: a position);
    none for a restart. ``answered`` is None when no answer came (a timeout, a broken connection).
    ``sidecar`` is the index of the sidecar it went through (-1: straight to the worker)."""

    id: str
    kind: str  # put_config, patch_config, stop, pause, resume, alter_offsets, create, restart, bulk_stop,
    # bulk_pause, bulk_resume (one per connector of a bulk action), apply (one per step of an apply)
    connector: str
    sidecar: int
    method: str
    path: str
    invoked: float
    answered: float | None
    status: int | None
    outcome: Outcome
    writes: Mapping[str, str] = field(default_factory=dict)
    answer: str = ""  # the start of the answer's body, or the client's error

    def value(self, register: str) -> str | None:
        return self.writes.get(register)


@dataclass(frozen=True)
class Fault:
    """One fault: ``kind`` (worker_stall, sidecar_kill, sidecar_stall, broker_stall, sidecars_topic_unwritable)
    on ``target`` (a sidecar's index, or the worker, the broker, the topic), from ``start`` to ``end``."""

    kind: str
    target: str
    start: float
    end: float


@dataclass(frozen=True)
class Observation:
    """A state of a connector seen at ``at``: by the watcher polling the worker, or in the status topic
    (``source``). ``running``: the connector or one of its tasks RUNNING."""

    at: float
    connector: str
    running: bool
    source: str
    detail: str = ""


@dataclass
class History:
    ops: list[Op] = field(default_factory=list)
    faults: list[Fault] = field(default_factory=list)
    observations: list[Observation] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "ops": [asdict(o) | {"outcome": o.outcome.value, "writes": dict(o.writes)} for o in self.ops],
            "faults": [asdict(f) for f in self.faults],
            "observations": [asdict(o) for o in self.observations],
        }


@dataclass(frozen=True)
class FinalState:
    """What the cluster holds once the faults healed, read from the worker and Connect's topics: per
    connector its config (None: no such connector), target state (RUNNING, PAUSED, STOPPED) and offset
    position (None: none written); and the restart requests the worker received, per connector (seconds)."""

    configs: dict[str, dict[str, str] | None]
    target_states: dict[str, str]
    positions: dict[str, str | None]
    restarts: dict[str, list[float]]


@dataclass(frozen=True)
class Clock:
    """The campaign's clock: seconds since it started; a wall-clock time (a Kafka record's timestamp, a
    worker's log line) read on it."""

    monotonic_start: float
    wall_start: float

    @classmethod
    def started(cls) -> Clock:
        return cls(time.monotonic(), time.time())

    def now(self) -> float:
        return time.monotonic() - self.monotonic_start

    def of_wall(self, wall_s: float) -> float:
        return wall_s - self.wall_start
