"""What is due for one connector, decided without I/O: the backoff schedule, which connectors the settings
choose, and the next step (``next_step``): a restart, giving up, or the end of a run of failures; what an
attempt leaves recorded (``attempted``: a refused one counts as much as one the worker took), and the
cluster's budget of restarts per window (``Budget``, ``first_waiting_first``).

The schedule is Strimzi's (``KafkaConnectAssemblyOperator``'s auto-restart): the n-th restart of a run of
failures is due ``min(cap, unit * n * (n - 1))`` after the one before it (the first at once), with a unit of a
minute and a cap of an hour: 0, 2, 6, 12, 20, 30, 42, 56 minutes, then hourly.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import Enum

from ...codecs.auto_restart import AttemptError, RestartState
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


@dataclass(frozen=True)
class Budget:
    """The whole cluster's restarts: at most ``restarts`` in any ``window_s`` (0: unbounded), counted from the
    sidecars' budget records, whichever sidecar sent them."""

    restarts: int = 30
    window_s: float = 60.0

    def room(self, spent: int) -> int | None:
        """How many more restarts the window allows after ``spent`` (None: unbounded)."""
        return None if self.restarts == 0 else max(0, self.restarts - spent)

    def since_ms(self, now_ms: float) -> float:
        """The start of the window that ends now: restarts sent after it count."""
        return now_ms - self.window_s * 1000


def first_waiting_first(due: Sequence[tuple[str, RestartState | None]]) -> list[str]:
    """The order in which connectors due a restart take the budget's room: first restarts first (a new
    failure waits for nothing), then by how long the next one has been due, then by name."""
    return [connector for connector, _ in sorted(due, key=_waiting)]


def _waiting(due: tuple[str, RestartState | None]) -> tuple[bool, int, str]:
    connector, state = due
    return (state is not None, state.next_ms or 0 if state is not None else 0, connector)


def attempted(
    state: RestartState | None,
    connector: str,
    sidecar: str,
    tasks: Sequence[int],
    error: AttemptError | None,
    backoff: Backoff,
    now_ms: float,
) -> RestartState:
    """The record of one more attempt of a run of failures, whatever the worker answered (``error``: its
    refusal, or None): counted, and the next one due on the schedule."""
    counts = dict(state.tasks) if state is not None else {}
    for task in tasks:
        counts[task] = counts.get(task, 0) + 1
    count = (state.count if state is not None else 0) + 1
    return RestartState(
        connector,
        count,
        round(now_ms),
        round(now_ms + backoff.delay_s(count) * 1000),
        sidecar,
        counts,
        False,
        error,
    )


def given_up(state: RestartState, backoff: Backoff) -> RestartState:
    """The record once it gives up: no next one, and why."""
    why = f"{state.count} restarts of at most {backoff.max_restarts} (AUTO_RESTART_MAX_RESTARTS) and it still fails"
    if state.last_error is not None:
        answer = "no answer" if state.last_error.status is None else f"{state.last_error.status}"
        why += f"; the worker refused the last one ({answer}: {state.last_error.message})"
    return RestartState(
        state.connector,
        state.count,
        state.last_ms,
        None,
        state.sidecar,
        state.tasks,
        True,
        state.last_error,
        why,
    )


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


__all__ = [
    "FAILED",
    "Backoff",
    "Budget",
    "Selection",
    "Step",
    "attempted",
    "failed",
    "failed_tasks",
    "first_waiting_first",
    "given_up",
    "healthy",
    "next_step",
]
