"""What is due for one connector, decided without I/O: the backoff schedule, which connectors the settings
choose, and the next step (``next_step``): a restart, giving up, or the end of a run of failures.

The schedule is Strimzi's (``KafkaConnectAssemblyOperator``'s auto-restart): the n-th restart of a run of
failures is due ``min(cap, unit * n * (n - 1))`` after the one before it (the first at once), with a unit of a
minute and a cap of an hour: 0, 2, 6, 12, 20, 30, 42, 56 minutes, then hourly.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from enum import Enum

from ...codecs.auto_restart import RestartState
from ...view import ConnectorStateView

FAILED = "FAILED"
RUNNING = "RUNNING"


@dataclass(frozen=True)
class Backoff:
    """The schedule: ``unit_s * n * (n - 1)`` before the n-th restart (n from 1), at most ``cap_s``; give up
    after ``max_restarts`` (None: never)."""

    unit_s: float = 60.0
    cap_s: float = 3600.0
    max_restarts: int | None = None

    def delay_s(self, done: int) -> float:
        """The wait after the last of ``done`` restarts before the next one."""
        return min(self.cap_s, self.unit_s * done * (done + 1))


@dataclass(frozen=True)
class Selection:
    """Which connectors the settings choose (an operator's choice per connector wins)."""

    enabled: bool = False
    pattern: re.Pattern[str] = field(default_factory=lambda: re.compile(".*"))

    def covers(self, connector: str, choice: bool | None) -> bool:
        if choice is not None:
            return choice
        return self.enabled and self.pattern.fullmatch(connector) is not None


class Step(Enum):
    RESTART = "restart"
    GIVE_UP = "give_up"
    RESET = "reset"


def failed(status: ConnectorStateView) -> bool:
    return status.connector.state == FAILED or any(entry.state == FAILED for _, entry in status.tasks)


def healthy(status: ConnectorStateView) -> bool:
    return status.connector.state == RUNNING and all(entry.state == RUNNING for _, entry in status.tasks)


def failed_tasks(status: ConnectorStateView) -> tuple[int, ...]:
    return tuple(task for task, entry in status.tasks if entry.state == FAILED)


def next_step(
    status: ConnectorStateView | None,
    target_state: str | None,
    covered: bool,
    state: RestartState | None,
    backoff: Backoff,
    now_ms: float,
) -> Step | None:
    """What is due for one connector now (None: nothing)."""
    if status is None:
        return Step.RESET if state is not None else None  # deleted: its record goes with it
    if not failed(status):
        # a run of failures ends once the connector ran through a whole backoff after its last restart
        if state is not None and healthy(status) and now_ms >= state.last_ms + backoff.delay_s(state.count) * 1000:
            return Step.RESET
        return None
    if not covered or target_state not in (None, "STARTED"):
        return None  # not chosen, or paused or stopped by an operator
    if state is None:
        return Step.RESTART
    if state.gave_up or (state.next_ms is not None and now_ms < state.next_ms):
        return None
    if backoff.max_restarts is not None and state.count >= backoff.max_restarts:
        return Step.GIVE_UP
    return Step.RESTART


__all__ = ["FAILED", "Backoff", "Selection", "Step", "failed", "failed_tasks", "healthy", "next_step"]
