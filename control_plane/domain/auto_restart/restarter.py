"""The auto-restart loop: one sidecar of the cluster restarts failed connectors and tasks with a backoff
(``schedule``), under each connector's fence, and records what it did in the sidecars' topic.

One sidecar of the cluster acts (``cluster.acting``: the first live and ready sidecar whose presence says
it will restart), and it restarts a connector only under that connector's fence (``cluster.fence``), after reading
the sidecars' topic to its end, where the last restart of the connector is recorded
(``codecs.auto_restart``): a sidecar that acts after another (the first one died, or two disagreed for an
interval on who is first) finds the restart done and the next one not yet due. A run of failures ends when
the connector and its tasks have run through a whole backoff without failing: the record is removed, and
counting starts again.

What is restarted: only what is FAILED (the connector instance and each failed task, as
``POST /restart?includeTasks=true&onlyFailed=true`` does), through the restart endpoints every worker
version has (the ``InstanceRestarts`` port), and never a connector whose target state is PAUSED or STOPPED:
an operator's choice.

Every attempt counts, whatever the worker answered: a restart the worker refuses (a 500, its connector's
class gone) or does not answer is recorded as an attempt with its error, backed off on the same schedule,
and given up at the limit. The whole cluster's restarts are bounded too (``Budget``): before sending the
restarts of a pass, the acting sidecar records their times in its budget record; what does not fit in the
window waits for a later pass (``held_back``). When the sidecars' topic cannot be written, the sidecar keeps
what it did in memory until it is recorded (it backs off all the same), and its passes back off.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Protocol

import structlog

from ...background import cancel_and_wait
from ...codecs.auto_restart import (
    AttemptError,
    RestartBudget,
    RestartPolicy,
    RestartState,
    encode_budget,
    encode_policy,
    encode_state,
)
from ...codecs.results import Tombstone
from ...storage.errors import ReadTimeout
from ...upstream import NoWorkerAvailable, UpstreamError, UpstreamOverloaded
from ...view import ConnectorStateView
from ...view.auto_restarts import AutoRestartTable
from ..cluster.fence import TAIL, ConnectorFence, FenceReader, SidecarLog
from ..errors import NotFoundError, OperationFailed, WorkerRefused
from ..ports import Actor, InstanceRestarts
from ..read_rule import ReadRule
from .schedule import (
    FAILED,
    Backoff,
    Budget,
    Selection,
    Step,
    attempted,
    failed_tasks,
    first_waiting_first,
    given_up,
    next_step,
)

log = structlog.get_logger(__name__)

CONCURRENT = 8  # connectors restarted at once in a pass (after an outage many fail together), each under its fence


UNRECORDED = AttemptError(None, "sent; its answer was not recorded (the sidecar that sent it stopped)")


@dataclass(frozen=True)
class ConnectorRestarts:
    """One connector's auto-restart: whether it is on and by whose choice (``connector``: an operator's,
    ``settings``), and what the current run of failures brought (attempts in all and per task, when the
    last was and the next is due, the last one's refusal, whether the sidecar gave up and why, which sidecar
    restarted it last, whether a due restart is held back by the cluster's budget)."""

    connector: str
    enabled: bool
    chosen_by: str
    restarts: int
    last_restart_ms: int | None
    next_restart_ms: int | None
    gave_up: bool
    by_sidecar: str | None
    tasks: Mapping[int, int]  # task -> its restarts, by task
    last_error: AttemptError | None = None
    gave_up_reason: str | None = None
    held_back: bool = False


@dataclass(frozen=True)
class BudgetUse:
    """The cluster's budget of restarts now: restarts sent in the window, and the connectors due a restart
    that wait for room in it."""

    budget: Budget
    spent: int
    held_back: tuple[str, ...]


@dataclass(frozen=True)
class RestartsOverview:
    """The schedule, the sidecar that acts, the budget, and every connector with a choice or a restart."""

    selection: Selection
    backoff: Backoff
    acting_sidecar: str | None
    connectors: tuple[ConnectorRestarts, ...]
    budget: BudgetUse | None = None


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

UNBOUNDED = Budget(0)
NO_ANSWER = 504  # the audit's status of a restart the worker did not answer (a gateway's timeout)
REFUSALS = (WorkerRefused, UpstreamError, NoWorkerAvailable, UpstreamOverloaded)  # an attempt that did not restart


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
        budget: Budget = UNBOUNDED,
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
        self.budget = budget
        self._interval_s = interval_s
        self._audit = audit
        self._now_ms = now_ms
        self.counts: Counter[str] = Counter()  # restarts taken and refused, gave up, resets, failures: by outcome
        self._unrecorded: dict[str, RestartState] = {}  # attempts made whose record is not read back yet
        self._spent: tuple[int, ...] | None = None  # this sidecar's budget record as it last wrote it
        self._failed_passes = 0  # passes in a row that could not do what was due (the sidecars' topic down)
        self._paused_until_ms = 0.0
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
            self._state(connector),
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

    def _state(self, connector: str) -> RestartState | None:
        """The connector's last attempt: its record, or the attempt this sidecar made after it whose record
        is not read back yet (not written, the sidecars' topic down: it backs off all the same)."""
        recorded, made = self._table.state(connector), self._unrecorded.get(connector)
        if made is None:
            return recorded
        if recorded is not None and recorded.last_ms >= made.last_ms:
            del self._unrecorded[connector]
            return recorded
        return made

    def _mine(self) -> tuple[int, ...]:
        return self._spent if self._spent is not None else self._table.spent(self.sidecar)

    def spent(self, now_ms: float) -> int:
        """The cluster's restarts in the budget's window, as the sidecars' budget records say (this
        sidecar's as it wrote it last)."""
        since = self.budget.since_ms(now_ms)
        return self._table.spent_since(since, besides=self.sidecar) + sum(1 for t in self._mine() if t > since)

    async def _spend(self, count: int, now_ms: float) -> None:
        """Records ``count`` restarts sent now in this sidecar's budget record (with its others of the
        window), before they are sent."""
        since = self.budget.since_ms(now_ms)
        times = (*(t for t in self._mine() if t > since), *([round(now_ms)] * count))
        await self._log.write(*encode_budget(RestartBudget(self.sidecar, times)))
        self._spent = times

    async def check(self) -> None:
        """One pass: each connector with something due, when this sidecar is the one that acts; the
        restarts within the cluster's budget, the others held back for a later pass."""
        now = self._now_ms()
        if not self._statuses.ready() or not self.acting() or now < self._paused_until_ms:
            return
        candidates = sorted(set(self._statuses.failing()) | self._table.connectors())
        steps = {c: step for c in candidates if (step := self.due(c)) is not None}
        restarts = first_waiting_first([(c, self._state(c)) for c, step in steps.items() if step is Step.RESTART])
        room = self.budget.room(self.spent(now)) if restarts else None
        sent = restarts if room is None else restarts[:room]
        chosen = sorted({c for c, step in steps.items() if step is not Step.RESTART} | set(sent))
        if not chosen:
            return
        done = True
        if sent and self.budget.restarts:
            try:
                await self._spend(len(sent), now)
            except Exception as err:  # noqa: BLE001 - the sidecars' topic cannot be written: none sent
                log.warning("recording auto-restart's budget failed", error=str(err))
                chosen, done = [c for c in chosen if c not in sent], False
        slots = asyncio.Semaphore(CONCURRENT)
        outcomes = await asyncio.gather(*(self._act_on(connector, slots) for connector in chosen))
        self._passed(done and all(outcomes), now)

    def _passed(self, done: bool, now_ms: float) -> None:
        """After a pass that could not do all that was due (no fence, nothing recorded), the next ones wait,
        twice as long each time, up to the schedule's unit: never a tight loop against a topic that is down."""
        self._failed_passes = 0 if done else self._failed_passes + 1
        if self._failed_passes:
            pause_s = min(self.backoff.unit_s, self._interval_s * 2**self._failed_passes)
            self._paused_until_ms = now_ms + pause_s * 1000

    async def _act_on(self, connector: str, slots: asyncio.Semaphore) -> bool:
        async with slots:
            try:
                await self._act(connector)
            except Exception as err:  # noqa: BLE001 - no fence, or the record not written: a later pass tries again
                self.counts["failed"] += 1
                log.warning("auto-restart failed", connector=connector, error=str(err))
                return False
            return True

    async def _act(self, connector: str) -> None:
        async with self._fence.held(connector) as lease:
            step = self.due(connector)  # the claim read the sidecars' topic to its end: the last restart's record
            if step is None:
                return
            state = self._state(connector)
            if step is Step.RESET:
                await self._log.write(*encode_state(Tombstone(connector)))
                self._unrecorded.pop(connector, None)
                self.counts["reset"] += 1
                return
            if step is Step.GIVE_UP:
                assert state is not None
                record = given_up(state, self.backoff)
                await self._log.write(*encode_state(record))
                self.counts["gave_up"] += 1
                log.warning(
                    "auto-restart gave up", connector=connector, restarts=state.count, why=record.gave_up_reason
                )
                return
            status = self._statuses.status(connector)
            assert status is not None  # due() saw it
            instance, failing = status.connector.state == FAILED, failed_tasks(status)
            lease.ensure(f"Cannot restart connector {connector}")
            # the attempt is recorded before it is made: a sidecar killed before it records the answer leaves
            # the attempt counted and backed off, and the one that acts next does not make it again at once
            sent = attempted(state, connector, self.sidecar, failing, UNRECORDED, self.backoff, self._now_ms())
            await self._log.write(*encode_state(sent))
            started = time.monotonic()
            error = await self._attempt(connector, instance, failing)
            record = attempted(state, connector, self.sidecar, failing, error, self.backoff, self._now_ms())
            self._unrecorded[connector] = record  # backed off from now, recorded or not
            self.counts["restarted" if error is None else "refused"] += 1
            said = {
                "connector": connector,
                "restarts": record.count,
                "tasks": list(failing),
                "connector_restarted": instance,
            }
            if error is None:
                log.info("auto-restarted", **said, last_allowed=record.count == self.backoff.max_restarts)
            else:
                log.warning("auto-restart refused", **said, status=error.status, error=error.message)
            if self._audit is not None:
                answered = 202 if error is None else error.status or NO_ANSWER
                self._audit(
                    connector, f"/connectors/{connector}/restart", answered, (time.monotonic() - started) * 1000
                )
            await self._log.write(*encode_state(record))

    async def _attempt(self, connector: str, instance: bool, tasks: tuple[int, ...]) -> AttemptError | None:
        """One attempt: None when the worker took every restart, else its refusal (``status`` None: no answer)."""
        try:
            await self._restarter.restart_instances(connector, connector_instance=instance, tasks=tasks)
        except WorkerRefused as err:
            return AttemptError(err.status, err.message)
        except REFUSALS as err:
            return AttemptError(None, str(err) or type(err).__name__)
        return None

    def report(self, connector: str) -> ConnectorRestarts:
        """One connector's auto-restart, known to the view or not."""
        state = self._state(connector)
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
            state.last_error if state is not None else None,
            state.gave_up_reason if state is not None else None,
            self._held_back(connector),
        )

    def _held_back(self, connector: str) -> bool:
        """Due a restart, and the cluster's budget has no room for it now."""
        return self.budget.room(self.spent(self._now_ms())) == 0 and self.due(connector) is Step.RESTART

    def budget_use(self) -> BudgetUse:
        """The cluster's restarts in the budget's window, and the connectors due one that wait for room."""
        held = tuple(c for c in sorted(set(self._statuses.failing()) | self._table.connectors()) if self._held_back(c))
        return BudgetUse(self.budget, self.spent(self._now_ms()), held)

    def overview(self) -> RestartsOverview:
        """The schedule, the budget, and every connector with a choice or a restart recorded."""
        connectors = tuple(self.report(c) for c in sorted(self._table.connectors()))
        return RestartsOverview(self.selection, self.backoff, self.acting_sidecar(), connectors, self.budget_use())

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


__all__ = [
    "Audit",
    "AutoRestarter",
    "BudgetUse",
    "ConnectorRestarts",
    "RestartsOverview",
    "StatusSource",
    "ViewStatuses",
]
