"""The auto-restart loop: one sidecar of the cluster restarts failed connectors and tasks with a backoff
(``schedule``), under each connector's fence, and records what it did in the sidecars' topic.

One sidecar of the cluster acts (``cluster.acting``: the first live sidecar whose presence says it can
restart), and it restarts a connector only under that connector's fence (``cluster.fence``), after reading
the sidecars' topic to its end, where the last restart of the connector is recorded
(``codecs.auto_restart``): a sidecar that acts after another (the first one died, or two disagreed for an
interval on who is first) finds the restart done and the next one not yet due. A run of failures ends when
the connector and its tasks have run through a whole backoff without failing: the record is removed, and
counting starts again.

What is restarted: only what is FAILED (the connector instance and each failed task, as
``POST /restart?includeTasks=true&onlyFailed=true`` does), through the restart endpoints every worker
version has (the ``InstanceRestarts`` port), and never a connector whose target state is PAUSED or STOPPED:
an operator's choice.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Protocol

import structlog

from ...background import cancel_and_wait
from ...codecs.auto_restart import RestartPolicy, RestartState, encode_policy, encode_state
from ...codecs.results import Tombstone
from ...storage.errors import ReadTimeout
from ...view import ConnectorStateView
from ...view.auto_restarts import AutoRestartTable
from ..cluster.fence import TAIL, ConnectorFence, FenceReader, SidecarLog
from ..errors import NotFoundError, OperationFailed
from ..ports import Actor, InstanceRestarts
from ..read_rule import ReadRule
from .schedule import FAILED, Backoff, Selection, Step, failed_tasks, next_step

log = structlog.get_logger(__name__)

CONCURRENT = 8  # connectors restarted at once in a pass (after an outage many fail together), each under its fence


@dataclass(frozen=True)
class ConnectorRestarts:
    """One connector's auto-restart: whether it is on and by whose choice (``connector``: an operator's,
    ``settings``), and what the current run of failures brought (restarts in all and per task, when the
    last was and the next is due, whether the sidecar gave up, which sidecar restarted it last)."""

    connector: str
    enabled: bool
    chosen_by: str
    restarts: int
    last_restart_ms: int | None
    next_restart_ms: int | None
    gave_up: bool
    by_sidecar: str | None
    tasks: Mapping[int, int]  # task -> its restarts, by task


@dataclass(frozen=True)
class RestartsOverview:
    """The schedule, the sidecar that acts, and every connector with a choice or a restart recorded."""

    selection: Selection
    backoff: Backoff
    acting_sidecar: str | None
    connectors: tuple[ConnectorRestarts, ...]


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
        actor: Actor,
        fence: ConnectorFence,
        log_: SidecarLog,
        reader: FenceReader,
        restarter: InstanceRestarts,
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
        self._actor = actor
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
        """The sidecar of the cluster that restarts (``cluster.acting``)."""
        return self._actor.acting_sidecar()

    def acting(self) -> bool:
        """Whether this sidecar is the one that restarts (itself known from its own presence)."""
        return self._actor.acting()

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

    async def choose(self, connector: str, enabled: bool | None) -> ConnectorRestarts:
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

    def report_of(self, connector: str) -> ConnectorRestarts:
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
            instance, failing = status.connector.state == FAILED, failed_tasks(status)
            lease.ensure(f"Cannot restart connector {connector}")
            started = time.monotonic()
            await self._restarter.restart_instances(connector, connector_instance=instance, tasks=failing)
            tasks = dict(state.tasks) if state is not None else {}
            for task in failing:
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
                tasks=list(failing),
                connector_restarted=instance,
                last_allowed=gives_up,
            )
            if self._audit is not None:
                self._audit(connector, f"/connectors/{connector}/restart", 202, (time.monotonic() - started) * 1000)

    def report(self, connector: str) -> ConnectorRestarts:
        """One connector's auto-restart, known to the view or not."""
        state = self._table.state(connector)
        return ConnectorRestarts(
            connector,
            self.covers(connector),
            "connector" if self._table.policy(connector) is not None else "settings",
            state.count if state is not None else 0,
            state.last_ms if state is not None else None,
            state.next_ms if state is not None and not state.gave_up else None,
            state.gave_up if state is not None else False,
            state.sidecar if state is not None else None,
            dict(sorted(state.tasks.items())) if state is not None else {},
        )

    def overview(self) -> RestartsOverview:
        """The schedule, and every connector with a choice or a restart recorded."""
        connectors = tuple(self.report(c) for c in sorted(self._table.connectors()))
        return RestartsOverview(self.selection, self.backoff, self.acting_sidecar(), connectors)

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


__all__ = ["Audit", "AutoRestarter", "ConnectorRestarts", "RestartsOverview", "StatusSource", "ViewStatuses"]
