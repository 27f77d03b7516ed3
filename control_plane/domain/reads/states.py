"""Connector and task states for dashboards and alerts, from the view: per-connector gauges (on /metrics),
a summary (counts by state, every failed connector and task with its trace and since when, the recent
changes) and the state timeline (``view.timeline``). No Connect tool offers the timeline; the gauges spare
alert rules a JMX exporter on every worker (Connect's ``connector-status`` and ``task-status`` metrics of
ConnectorStatusMetricsGroup are per worker, for what that worker runs).

The states are the ones the status endpoints show through the sidecar, by the same rules of the view
(``ClusterView.connector_state``: a connector the sidecar stopped shows STOPPED on workers before 3.5, and
the workers' rule for a stale UNASSIGNED). A connector counts once it has a configuration and a status, as
``GET /connectors?expand=status`` lists it.

Kept incrementally: the view's ``TouchLog`` tells which connectors changed since the last look, and only
those are recomputed (a scrape of /metrics at 2,000 connectors does not rebuild them all); a change of the
rules (a capability decision, the workers' version) or a new view rebuilds everything.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field

from ...view import ClusterView
from ...view.timeline import StateChange
from ..errors import NotFoundError, ViewNotReady
from ..outcomes import Answer, Provenance, Refusal, Source
from ..ports import ViewSnapshot

FAILED = "FAILED"
# AbstractStatus.State, less DESTROYED (written as a tombstone, never a current state); STOPPED since 3.5.
# Counted as 0 when no connector or task is in them; a state a newer worker writes is added as it appears.
KNOWN_STATES = ("UNASSIGNED", "RUNNING", "PAUSED", FAILED, "RESTARTING", "STOPPED")

VIEW_NEEDED = "Connector states need the view (the worker's internal topics are not configured)."
VIEW_NOT_READY = "The view has not read the internal topics to their end yet."


@dataclass(frozen=True)
class StateRules:
    """The view's rules of the workers at hand (the read rule knows them; ``Reads`` hands them on)."""

    stopped_overlay: bool
    ignore_stale_unassigned: bool


@dataclass(frozen=True, slots=True)
class ConnectorGauge:
    state: str
    tasks: Mapping[str, int]  # task state -> how many of the connector's tasks are in it (states present only)
    failed_tasks: tuple[int, ...]


@dataclass(frozen=True)
class StateGauges:
    """What /metrics shows: per connector, and the counts by state over all connectors and tasks."""

    connectors: Mapping[str, ConnectorGauge]
    connector_totals: Mapping[str, int]
    task_totals: Mapping[str, int]
    version: int  # changes whenever any of the above does


@dataclass(frozen=True)
class FailedState:
    connector: str
    task: int | None  # None: the connector itself
    worker_id: str
    trace: str | None
    since_ms: int | None  # the timestamp of the record that made it FAILED (None: not known)


@dataclass(frozen=True)
class StateSummary:
    connector_totals: Mapping[str, int]
    task_totals: Mapping[str, int]
    failed_connectors: tuple[FailedState, ...]
    failed_tasks: tuple[FailedState, ...]
    recent: tuple[StateChange, ...]
    timeline: TimelineInfo


@dataclass(frozen=True)
class TimelineInfo:
    capacity: int
    recorded: int  # changes ever recorded; those beyond ``capacity`` have left the ring
    oldest_ms: int | None


@dataclass(frozen=True)
class StateChanges:
    changes: tuple[StateChange, ...]
    timeline: TimelineInfo


@dataclass
class _Index:
    rules: StateRules | None = None
    state_id: int | None = None
    seen: int = 0
    entries: dict[str, ConnectorGauge] = field(default_factory=dict)
    connectors: Counter[str] = field(default_factory=Counter)
    tasks: Counter[str] = field(default_factory=Counter)
    failing: set[str] = field(default_factory=set)  # FAILED, or with a FAILED task
    version: int = 0


class ConnectorStates:
    def __init__(self, view: ViewSnapshot | None) -> None:
        self._view = view
        self._index = _Index()
        self._gauges: StateGauges | None = None

    # -- the three readings --------------------------------------------------------------------------
    def gauges(self, rules: StateRules) -> StateGauges | None:
        """None while the view is not ready (partial counts would fire alerts) or absent."""
        view = self._ready_view()
        if view is None:
            return None
        index = self._refresh(view.state, rules)
        if self._gauges is None or self._gauges.version != index.version:
            self._gauges = StateGauges(index.entries, _totals(index.connectors), _totals(index.tasks), index.version)
        return self._gauges

    def summary(self, rules: StateRules, recent: int, *, stale: bool) -> Answer[StateSummary] | Refusal:
        view = self._ready_view()
        if view is None:
            return self._refusal()
        state = view.state
        index = self._refresh(state, rules)
        failed_connectors: list[FailedState] = []
        failed_tasks: list[FailedState] = []
        for name in sorted(index.failing):
            status = state.connector_state(
                name, stopped_overlay=rules.stopped_overlay, ignore_stale_unassigned=rules.ignore_stale_unassigned
            )
            if status is None:
                continue
            if status.connector.state == FAILED:
                entry = status.connector
                failed_connectors.append(FailedState(name, None, entry.worker_id, entry.trace, _since(state, name)))
            for task, entry in status.tasks:
                if entry.state == FAILED:
                    failed_tasks.append(
                        FailedState(name, task, entry.worker_id, entry.trace, _since(state, name, task))
                    )
        summary = StateSummary(
            _totals(index.connectors),
            _totals(index.tasks),
            tuple(failed_connectors),
            tuple(failed_tasks),
            tuple(state.timeline.changes(limit=recent)),
            _timeline_info(state),
        )
        return Answer(summary, _provenance(state, stale))

    def changes(
        self, since_ms: int | None, connector: str | None, limit: int | None, *, stale: bool
    ) -> Answer[StateChanges] | Refusal:
        view = self._ready_view()
        if view is None:
            return self._refusal()
        state = view.state
        changes = state.timeline.changes(since_ms=since_ms, connector=connector, limit=limit)
        return Answer(StateChanges(tuple(changes), _timeline_info(state)), _provenance(state, stale))

    # -- keeping the index ------------------------------------------------------------------------
    def _ready_view(self) -> ViewSnapshot | None:
        return self._view if self._view is not None and self._view.ready else None

    def _refusal(self) -> Refusal:
        if self._view is None:
            return Refusal(NotFoundError(VIEW_NEEDED), Provenance(Source.VIEW))
        return Refusal(ViewNotReady(VIEW_NOT_READY), Provenance(Source.VIEW))

    def _refresh(self, state: ClusterView, rules: StateRules) -> _Index:
        index = self._index
        touched = None
        if index.rules == rules and index.state_id == id(state):
            touched = state.touches.touched_since(index.seen)
        if touched is None:  # first look, new rules, a new view, or too far behind: everything again
            version = index.version + 1
            index = self._index = _Index(rules, id(state), version=version)
            touched = list(dict.fromkeys([*state.connector_configs, *state.connector_statuses]))
        for name in touched:
            self._update(index, state, name, rules)
        if touched:
            index.version += 1
        index.seen = state.touches.seq
        return index

    @staticmethod
    def _update(index: _Index, state: ClusterView, name: str, rules: StateRules) -> None:
        old = index.entries.pop(name, None)
        if old is not None:
            index.connectors[old.state] -= 1
            for task_state, count in old.tasks.items():
                index.tasks[task_state] -= count
        index.failing.discard(name)
        status = (
            state.connector_state(
                name, stopped_overlay=rules.stopped_overlay, ignore_stale_unassigned=rules.ignore_stale_unassigned
            )
            if name in state.connector_configs
            else None
        )
        if status is None:
            return
        tasks: dict[str, int] = {}
        failed_tasks: list[int] = []
        for task, entry in status.tasks:
            tasks[entry.state] = tasks.get(entry.state, 0) + 1
            index.tasks[entry.state] += 1
            if entry.state == FAILED:
                failed_tasks.append(task)
        gauge = ConnectorGauge(status.connector.state, tasks, tuple(failed_tasks))
        index.entries[name] = gauge
        index.connectors[gauge.state] += 1
        if gauge.state == FAILED or failed_tasks:
            index.failing.add(name)


def _totals(counts: Counter[str]) -> dict[str, int]:
    totals = dict.fromkeys(KNOWN_STATES, 0)
    totals.update((state, n) for state, n in counts.items() if n > 0 or state in totals)
    return totals


def _since(state: ClusterView, connector: str, task: int | None = None) -> int | None:
    return state.timeline.failed_since(connector, task)


def _timeline_info(state: ClusterView) -> TimelineInfo:
    timeline = state.timeline
    return TimelineInfo(timeline.capacity, timeline.recorded, timeline.oldest_ms())


def _provenance(state: ClusterView, stale: bool) -> Provenance:
    return Provenance(Source.VIEW, stale, state.age_s() if stale else None)


__all__ = [
    "KNOWN_STATES",
    "ConnectorGauge",
    "ConnectorStates",
    "FailedState",
    "StateChanges",
    "StateGauges",
    "StateRules",
    "StateSummary",
    "TimelineInfo",
]
