"""Auto-restart: the control plane restarts failed connectors and tasks, with a backoff, on every Connect
version (stock Connect never restarts a failed task).

The schedule is Strimzi's (``KafkaConnectAssemblyOperator``'s auto-restart): the n-th restart of a run of
failures is due ``min(cap, unit * n * (n - 1))`` after the one before it (the first at once), with a unit of a
minute and a cap of an hour: 0, 2, 6, 12, 20, 30, 42, 56 minutes, then hourly. Here the unit, the cap and
the number of restarts before giving up are settings (``AUTO_RESTART_BACKOFF_UNIT_S``,
``AUTO_RESTART_BACKOFF_CAP_S``, ``AUTO_RESTART_MAX_RESTARTS``). Off unless enabled, as in Strimzi: for every
connector whose name matches ``AUTO_RESTART_CONNECTORS`` when ``AUTO_RESTART`` is on, and per connector
through ``/_sidecar/connectors/{c}/auto-restart`` (a record in the sidecars' topic, so every sidecar sees
the same choice; it wins over the settings).

What is restarted: only what is FAILED (the connector instance and each failed task, as
``POST /restart?includeTasks=true&onlyFailed=true`` does, composed of the restarts every version has:
``newer.restart``), and never a connector whose target state is PAUSED or STOPPED: an operator's choice.

One sidecar of the cluster acts: the first by id of the live sidecars whose presence says they can
(``view.sidecars``; an older release cannot, nor one whose fence is off), and it restarts
a connector only under that connector's fence (``domain.fence``), after reading the sidecars' topic to its
end, where the last restart of the connector is recorded (``codecs.auto_restart``): a sidecar that acts
after another (the first one died, or two disagreed for an interval on who is first) finds the restart
done and the next one not yet due. A run of failures ends when the connector and its tasks have run
through a whole backoff without failing: the record is removed, and counting starts again.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from enum import Enum
from typing import Any, Protocol

import structlog

from ..background import cancel_and_wait
from ..codecs.auto_restart import RestartPolicy, RestartState, encode_policy, encode_state
from ..codecs.results import Tombstone
from ..storage.errors import ReadTimeout
from ..view import ConnectorStateView
from ..view.auto_restarts import AutoRestartTable
from ..view.sidecars import SidecarTable
from .errors import NotFoundError, OperationFailed
from .fence import TAIL, ConnectorFence, FenceReader, SidecarLog
from .newer.restart import FAILED, ConnectorRestarter, RestartRequest, restart_plan
from .read_rule import ReadRule

log = structlog.get_logger(__name__)

RUNNING = "RUNNING"
CONCURRENT = 8  # connectors restarted at once in a pass (after an outage many fail together), each under its fence


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


class StatusSource(Protocol):
    """The view's statuses, read by the rule of the workers' version (``ReadRule``)."""

    def status(self, connector: str) -> ConnectorStateView | None: ...

    def target_state(self, connector: str) -> str | None: ...

    def failing(self) -> list[str]:
        """The connectors whose connector or some task is FAILED."""
        ...

    def ready(self) -> bool:
        """Whether the statuses are read (a view that caught up)."""
        ...

    def config(self, connector: str) -> Mapping[str, str | None] | None: ...


class ViewStatuses:
    """``StatusSource`` of the view, by the read rule's status rule (``ReadRule``): a connector the sidecar
    stopped is STOPPED, a stale UNASSIGNED is ignored where the workers' version ignores it."""

    def __init__(self, rule: ReadRule) -> None:
        self._rule = rule

    def status(self, connector: str) -> ConnectorStateView | None:
        view = self._rule.view
        if view is None or not view.ready:
            return None
        return view.state.connector_state(
            connector,
            stopped_overlay=self._rule.stop_emulated(),
            ignore_stale_unassigned=self._rule.ignores_stale_unassigned(),
        )

    def ready(self) -> bool:
        return self._rule.view is not None and self._rule.view.ready

    def config(self, connector: str) -> Mapping[str, str | None] | None:
        view = self._rule.view
        return view.state.connector_config(connector) if view is not None else None

    def target_state(self, connector: str) -> str | None:
        view = self._rule.view
        return view.state.target_state(connector) if view is not None else None

    def failing(self) -> list[str]:
        view = self._rule.view
        if view is None or not view.ready:
            return []
        state = view.state
        found = {name for name, status in state.connector_statuses.items() if status.state == FAILED}
        found.update(
            name for name, tasks in state.task_statuses.items() if any(t.state == FAILED for t in tasks.values())
        )
        return sorted(found)


Audit = Callable[[str, str, int, float], None]  # connector, path, status, duration_ms


class AutoRestarter:
    def __init__(
        self,
        statuses: StatusSource,
        table: AutoRestartTable,
        sidecars: SidecarTable,
        fence: ConnectorFence,
        log_: SidecarLog,
        reader: FenceReader,
        restarter: ConnectorRestarter,
        *,
        backoff: Backoff,
        selection: Selection,
        interval_s: float,
        read_timeout_s: float,
        audit: Audit | None = None,
        now_ms: Callable[[], float] = lambda: time.time() * 1000,
    ) -> None:
        self._statuses = statuses
        self._table = table
        self._sidecars = sidecars
        self._fence = fence
        self._log = log_
        self._reader = reader
        self._read_timeout_s = read_timeout_s
        self._restarter = restarter
        self.backoff = backoff
        self.selection = selection
        self._interval_s = interval_s
        self._audit = audit
        self._now_ms = now_ms
        self.counts: Counter[str] = Counter()  # restarts sent, gave up, resets, failures: by outcome
        self._task: asyncio.Task[None] | None = None

    @property
    def sidecar(self) -> str:
        return self._fence.sidecar

    def acting_sidecar(self) -> str | None:
        """The sidecar that restarts: the first by id of the live sidecars that can (an older release, or one
        whose fence is off, says it cannot in its presence)."""
        return self._sidecars.acting(self._now_ms(), lambda presence: presence.auto_restart)

    def acting(self) -> bool:
        """Whether this sidecar is the one that restarts (itself known from its own presence)."""
        return self.acting_sidecar() == self.sidecar

    def covers(self, connector: str) -> bool:
        return self.selection.covers(connector, self._table.policy(connector))

    def due(self, connector: str) -> Step | None:
        return next_step(
            self._statuses.status(connector),
            self._statuses.target_state(connector),
            self.covers(connector),
            self._table.state(connector),
            self.backoff,
            self._now_ms(),
        )

    async def choose(self, connector: str, enabled: bool | None) -> dict[str, Any]:
        """An operator's choice for ``connector`` (None: the settings decide again), in the sidecars' topic,
        read back: the report shows it (404 for a connector the view does not know)."""
        self._known(connector)
        record = Tombstone(connector) if enabled is None else RestartPolicy(connector, enabled)
        try:
            await self._log.write(*encode_policy(record))
            await self._reader.read_to_end(TAIL, self._read_timeout_s)
        except ReadTimeout as err:
            raise OperationFailed(
                f"The choice for connector {connector} was written, not yet read back: {err}"
            ) from err
        except Exception as err:
            raise OperationFailed(f"Writing the choice for connector {connector} failed: {err}") from err
        return self.report(connector)

    def report_of(self, connector: str) -> dict[str, Any]:
        """``GET /_sidecar/connectors/{c}/auto-restart`` (404 for a connector the view does not know)."""
        self._known(connector)
        return self.report(connector)

    def _known(self, connector: str) -> None:
        if self._statuses.config(connector) is None and connector not in self._table.connectors():
            raise NotFoundError(f"Connector {connector} not found")  # ConnectorsResource's words

    async def check(self) -> None:
        """One pass: each connector with something due, when this sidecar is the one that acts."""
        if not self._statuses.ready() or not self.acting():
            return
        due = [c for c in sorted(set(self._statuses.failing()) | self._table.connectors()) if self.due(c) is not None]
        if due:
            slots = asyncio.Semaphore(CONCURRENT)
            await asyncio.gather(*(self._act_on(connector, slots) for connector in due))

    async def _act_on(self, connector: str, slots: asyncio.Semaphore) -> None:
        async with slots:
            try:
                await self._act(connector)
            except Exception as err:  # noqa: BLE001 - the worker refused, no worker, Kafka: the next pass tries again
                self.counts["failed"] += 1
                log.warning("auto-restart failed", connector=connector, error=str(err))

    async def _act(self, connector: str) -> None:
        async with self._fence.held(connector) as lease:
            step = self.due(connector)  # the claim read the sidecars' topic to its end: the last restart's record
            if step is None:
                return
            state = self._table.state(connector)
            now = self._now_ms()
            if step is Step.RESET:
                await self._log.write(*encode_state(Tombstone(connector)))
                self.counts["reset"] += 1
                return
            done = state.count if state is not None else 0
            if step is Step.GIVE_UP:
                assert state is not None
                await self._log.write(*encode_state(replace(state, next_ms=None, gave_up=True)))
                self.counts["gave_up"] += 1
                log.warning("auto-restart gave up", connector=connector, restarts=done)
                return
            status = self._statuses.status(connector)
            assert status is not None  # due() saw it
            plan = restart_plan(RestartRequest(connector, only_failed=True, include_tasks=True), status)
            lease.ensure(f"Cannot restart connector {connector}")
            started = time.monotonic()
            await self._restarter.restart(plan)
            tasks = dict(state.tasks) if state is not None else {}
            for task in plan.tasks:
                tasks[task] = tasks.get(task, 0) + 1
            count = done + 1
            gives_up = self.backoff.max_restarts is not None and count >= self.backoff.max_restarts
            record = RestartState(
                connector,
                count,
                round(now),
                round(now + self.backoff.delay_s(count) * 1000),
                self.sidecar,
                tasks,
                False,
            )
            await self._log.write(*encode_state(record))
            self.counts["restarted"] += 1
            log.info(
                "auto-restarted",
                connector=connector,
                restarts=count,
                tasks=list(plan.tasks),
                connector_restarted=plan.restarts_connector,
                last_allowed=gives_up,
            )
            if self._audit is not None:
                self._audit(connector, f"/connectors/{connector}/restart", 202, (time.monotonic() - started) * 1000)

    def report(self, connector: str) -> dict[str, Any]:
        """What ``GET /_sidecar/connectors/{c}/auto-restart`` shows."""
        state = self._table.state(connector)
        choice = self._table.policy(connector)
        return {
            "connector": connector,
            "enabled": self.covers(connector),
            "chosen_by": "connector" if choice is not None else "settings",
            "restarts": state.count if state is not None else 0,
            "last_restart_ms": state.last_ms if state is not None else None,
            "next_restart_ms": state.next_ms if state is not None and not state.gave_up else None,
            "gave_up": state.gave_up if state is not None else False,
            "by_sidecar": state.sidecar if state is not None else None,
            "tasks": {str(t): {"restarts": n} for t, n in sorted(state.tasks.items())} if state is not None else {},
        }

    def overview(self) -> dict[str, Any]:
        """What ``GET /_sidecar/auto-restarts`` shows: the schedule, and every connector with a choice or a
        restart recorded."""
        return {
            "enabled": self.selection.enabled,
            "connectors_pattern": self.selection.pattern.pattern,
            "backoff_unit_s": self.backoff.unit_s,
            "backoff_cap_s": self.backoff.cap_s,
            "max_restarts": self.backoff.max_restarts,
            "acting_sidecar": self.acting_sidecar(),
            "connectors": [self.report(c) for c in sorted(self._table.connectors())],
        }

    def restarts(self) -> Mapping[str, int]:
        """The restarts of each connector's current run of failures."""
        return {c: s.count for c in sorted(self._table.connectors()) if (s := self._table.state(c)) is not None}

    def gave_up(self) -> Mapping[str, int]:
        """The connectors it gave up on, with the restarts each had."""
        return {
            c: s.count
            for c in sorted(self._table.connectors())
            if (s := self._table.state(c)) is not None and s.gave_up
        }

    async def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name="auto-restart")

    async def stop(self) -> None:
        await cancel_and_wait(self._task)

    async def _run(self) -> None:
        while True:
            await asyncio.sleep(self._interval_s)
            try:
                await self.check()
            except Exception as err:  # noqa: BLE001 - the next pass tries again
                log.warning("an auto-restart pass failed", error=str(err))


__all__ = ["AutoRestarter", "Backoff", "Selection", "Step", "ViewStatuses", "next_step"]
