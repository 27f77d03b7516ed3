"""``Reads``: the reads feature's one entry. Who answers each read is the read rule's (``domain.read_rule``):
the view once it has read its topics to the end, unless the operator chose the workers; a worker
otherwise, the view's answer (stale) when none answers.

- the connector read endpoints: the listing, a connector's status and configuration, a task's status,
  the statuses with the plugin versions where the workers do not show them (KIP-891 before 4.1: the
  ``StatusVersions`` port, met by ``plugins.PluginVersions``);
- a connector's info and its task configs, which the workers answer (they pass through): the view answers
  them instead for a connector the sidecar stopped (``stopped_*``) and when no worker did (``unanswered_*``);
- connector and task states for dashboards (``reads.states``): gauges, a summary, the timeline;
- the sidecar's own endpoints: readiness, what it decided about the cluster, what it knows of the workers,
  its settings and its view, and its status-topic writes.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar

from ...storage.status_writes import StatusWrites
from ...view import ClusterView, ConnectorInfoView, ConnectorStateView, StateEntry, TaskConfigs
from ..api_version import advertised_version
from ..capabilities import Decided
from ..errors import NotFoundError
from ..outcomes import Answer, Forward, Read, Refusal, json_amended
from ..ports import Amend, StatusSink, StatusVersions
from ..read_rule import ReadRule
from .states import ConnectorStates, StateChanges, StateGauges, StateRules, StateSummary

T = TypeVar("T")


@dataclass(frozen=True)
class ExpandedConnector:
    """One connector of ``GET /connectors?expand=...`` (ConnectorsResource.listConnectors)."""

    status: ConnectorStateView | None
    info: ConnectorInfoView | None


@dataclass(frozen=True)
class ConnectorListing:
    names: tuple[str, ...]
    expanded: Mapping[str, ExpandedConnector] | None  # None without ``expand``


@dataclass(frozen=True)
class Readiness:
    """Whether the sidecar takes traffic (``checks``), and the parts that do not work while it does
    (``degraded``: the part and why)."""

    ready: bool
    checks: dict[str, bool]
    degraded: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class CapabilitiesReport:
    """What the sidecar decided about the cluster (``decided``), the version ``GET /`` advertises (None: no
    worker reported its version yet), and the sidecar's write path to Kafka (which topics it writes through
    it, its retry bounds: ``storage.kafka_writes.KafkaWrites.describe``; None without one)."""

    decided: Decided
    advertised_version: str | None
    kafka_writes: Mapping[str, Any] | None


@dataclass(frozen=True)
class ViewReport:
    """The view: whether it has caught up, how old its newest record is, whether any worker answers the
    probe (None: not probed yet, or no probe), what it holds, and its tails' progress and records."""

    ready: bool
    age_s: float | None
    workers_answering: bool | None
    counts: Mapping[str, Any]
    diagnostics: Mapping[str, Any]


@dataclass(frozen=True)
class SidecarReport:
    """What the sidecar is: its decisions, the workers it was given, its settings (secrets hidden), its
    view (None without one)."""

    capabilities: CapabilitiesReport
    workers: tuple[str, ...]
    settings: Mapping[str, Any]
    view: ViewReport | None


STATUS_TAILS = ("config", "status")  # what a status answer is read from


def _amended(read: Read[T], amend: Amend | None) -> Read[T]:
    """A forwarded read whose worker's JSON answer gets what the sidecar adds (the plugin versions)."""
    return replace(read, rewrite=json_amended(amend)) if amend is not None and isinstance(read, Forward) else read


class Reads:
    def __init__(
        self,
        rule: ReadRule,
        status_writes: StatusSink,
        versions: StatusVersions | None = None,
        *,
        describe_settings: Callable[[], dict[str, Any]],
        describe_writes: Callable[[], dict[str, Any]] | None = None,
        advertise_effective: bool = True,
        coordination: Callable[[], str | None] | None = None,
    ) -> None:
        self._rule = rule
        self._coordination = coordination  # why the sidecars' topic cannot be used now, if it cannot
        self._status_writes = status_writes
        self._versions = versions
        self._describe_settings = describe_settings
        self._describe_writes = describe_writes
        self._advertise_effective = advertise_effective
        self._states = ConnectorStates(rule.view)
        self._listing: tuple[tuple[object, ...], ConnectorListing] | None = None  # list_connectors' last
        # connector_status' answers at one revision of the view: the same object for the same answer, so the
        # renderer serializes it once per change (rest.resources.reads)
        self._statuses: tuple[tuple[object, ...], dict[str, ConnectorStateView]] = ((), {})

    def _versions_added(self) -> StatusVersions | None:
        """Where the sidecar adds the plugin versions to statuses: the workers do not (before 4.1)."""
        versions = self._versions
        return versions if versions is not None and versions.emulated() else None

    # -- the connector read endpoints ------------------------------------------------------------
    async def list_connectors(self, expand: Sequence[str]) -> Read[ConnectorListing]:
        overlay, rule = self._rule.stop_emulated(), self._rule.ignores_stale_unassigned()
        with_status, with_info = "status" in expand, "info" in expand

        def build(view: ClusterView) -> ConnectorListing:
            # the same listing until the view changes: a record applied, or the plugin types reloaded
            plugins = versions.revision() if versions is not None else None
            key = (
                id(view),
                view.revision,
                id(view.plugin_types),
                plugins,
                with_status,
                with_info,
                overlay,
                bool(expand),
            )
            if self._listing is not None and self._listing[0] == key:
                return self._listing[1]
            listing = build_listing(view)
            self._listing = (key, listing)
            return listing

        def build_listing(view: ClusterView) -> ConnectorListing:
            names = view.connectors()
            if not expand:
                return ConnectorListing(names, None)
            expanded: dict[str, ExpandedConnector] = {}
            for name in names:
                status = (
                    view.connector_state(name, stopped_overlay=overlay, ignore_stale_unassigned=rule)
                    if with_status
                    else None
                )
                if status is not None and versions is not None:
                    status = versions.with_versions(status, view.connector_config(name))
                info = view.connector_info(name) if with_info else None
                # ConnectorsResource.listConnectors leaves out a connector it cannot expand
                if (with_status and status is None) or (with_info and info is None):
                    continue
                expanded[name] = ExpandedConnector(status, info)
            return ConnectorListing(names, expanded)

        versions = self._versions_added()
        names = self._rule.view.state.connectors() if self._rule.view is not None else ()
        read = await self._rule.read_synced(
            build, STATUS_TAILS, view_knows_better=bool(expand) and self._rule.stopped_by_sidecar(names)
        )
        config_of = self._rule.connector_config
        return _amended(read, versions.amend_listing(config_of) if versions and with_status else None)

    async def connector_status(self, name: str) -> Read[ConnectorStateView]:
        overlay, rule = self._rule.stop_emulated(), self._rule.ignores_stale_unassigned()

        def build(view: ClusterView) -> ConnectorStateView:
            # the same answer until the view changes (a record applied, the plugin types reloaded), as the listing
            plugins = versions.revision() if versions is not None else None
            key = (id(view), view.revision, id(view.plugin_types), overlay, rule, versions is not None, plugins)
            if self._statuses[0] != key:
                self._statuses = (key, {})
            known = self._statuses[1].get(name)
            if known is not None:
                return known
            state = view.connector_state(name, stopped_overlay=overlay, ignore_stale_unassigned=rule)
            if state is None:
                raise NotFoundError(f"No status found for connector {name}")  # AbstractHerder.connectorStatus
            state = versions.with_versions(state, view.connector_config(name)) if versions else state
            self._statuses[1][name] = state
            return state

        versions = self._versions_added()
        read = await self._rule.read_synced(
            build, STATUS_TAILS, view_knows_better=self._rule.stopped_by_sidecar([name])
        )
        return _amended(read, versions.amend_status(self._rule.connector_config) if versions else None)

    async def connector_config(self, name: str) -> Read[Mapping[str, str | None]]:
        def build(view: ClusterView) -> Mapping[str, str | None]:
            config = view.connector_config(name)
            if config is None:
                raise NotFoundError(f"Connector {name} not found")  # DistributedHerder.connectorConfig
            return config

        return await self._rule.read_synced(build, ("config",))

    async def task_status(self, name: str, task: int) -> Read[StateEntry]:
        overlay, rule = self._rule.stop_emulated(), self._rule.ignores_stale_unassigned()

        def build(view: ClusterView) -> StateEntry:
            state = view.task_state(name, task, stopped_overlay=overlay, ignore_stale_unassigned=rule)
            if state is None:
                raise NotFoundError(f"No status found for task {name}-{task}")  # AbstractHerder.taskStatus
            return versions.task_with_version(state, view.connector_config(name)) if versions else state

        versions = self._versions_added()
        read = await self._rule.read_synced(
            build, STATUS_TAILS, view_knows_better=self._rule.stopped_by_sidecar([name])
        )
        return _amended(read, versions.amend_task(name, self._rule.connector_config) if versions else None)

    # GET /connectors/{c} and GET /connectors/{c}/tasks pass through to the workers. The view answers them
    # instead for a connector the sidecar stopped (``stopped_*``: the read rule's view knows better), and when
    # none answered (none reachable, or none within the request budget) its answer, marked stale, takes the
    # 504's place (``unanswered_*``)
    def may_know_better(self) -> bool:
        """Whether ``stopped_info`` or ``stopped_task_configs`` can answer now (cheap)."""
        return self._rule.may_know_better()

    def stopped_info(self, name: str) -> Answer[ConnectorInfoView] | Refusal | None:
        """``GET /connectors/{c}`` of a connector the sidecar stopped: the view's answer (else None: a worker's)."""
        return self._rule.knows_better(_found(ClusterView.connector_info, name), name)

    def stopped_task_configs(self, name: str) -> Answer[TaskConfigs] | Refusal | None:
        """``GET /connectors/{c}/tasks`` of a connector the sidecar stopped: the view's answer (else None)."""
        return self._rule.knows_better(_found(ClusterView.task_configs_of, name), name)

    def unanswered_info(self, name: str) -> Answer[ConnectorInfoView] | Refusal | None:
        """``GET /connectors/{c}`` when no worker answered it: the view's answer, stale (else None)."""
        return self._rule.fallback(_found(ClusterView.connector_info, name))

    def unanswered_task_configs(self, name: str) -> Answer[TaskConfigs] | Refusal | None:
        """``GET /connectors/{c}/tasks`` when no worker answered it: the view's answer, stale (else None)."""
        return self._rule.fallback(_found(ClusterView.task_configs_of, name))

    # -- connector and task states for dashboards (reads.states), by the rules of the workers at hand ------
    def _state_rules(self) -> StateRules:
        return StateRules(self._rule.stop_emulated(), self._rule.ignores_stale_unassigned())

    def state_gauges(self) -> StateGauges | None:
        return self._states.gauges(self._state_rules())

    def state_summary(self, recent: int) -> Answer[StateSummary] | Refusal:
        return self._states.summary(self._state_rules(), recent, stale=self._rule.stale())

    def state_changes(
        self, since_ms: int | None, connector: str | None, limit: int | None
    ) -> Answer[StateChanges] | Refusal:
        return self._states.changes(since_ms, connector, limit, stale=self._rule.stale())

    # -- the sidecar's own endpoints --------------------------------------------------------------
    def readiness(self) -> Readiness:
        """With a view: ready once it has read its topics to the end offsets seen at start (it can then
        answer reads even while every worker is down). Without: once a worker reported its version.

        The sidecars' topic is no check: while it cannot be used the sidecar still passes the workers' own
        writes through and answers reads (taken out of a Service, every sidecar would be, and the cluster
        would be worse off than with Connect alone); it is shown as ``degraded`` instead."""
        view = self._rule.view
        if view is not None:
            checks = {"view_caught_up": view.ready}
        else:
            checks = {"worker_version_detected": self._rule.capabilities.detected}
        trouble = self._coordination() if self._coordination is not None else None
        return Readiness(all(checks.values()), checks, {"sidecars_topic": trouble} if trouble else {})

    def status_writes(self) -> StatusWrites:
        return self._status_writes.snapshot()

    def capabilities_info(self) -> CapabilitiesReport:
        """The workers' real versions and the decisions, the version ``GET /`` advertises, the write path."""
        capabilities = self._rule.capabilities
        advertised = advertised_version(capabilities, effective=self._advertise_effective)
        writes = self._describe_writes() if self._describe_writes is not None else None
        return CapabilitiesReport(capabilities.seen(), advertised, writes)

    def info(self) -> SidecarReport:
        return SidecarReport(
            self.capabilities_info(), tuple(self._rule.workers.workers), self._describe_settings(), self._view_info()
        )

    def _view_info(self) -> ViewReport | None:
        view, probe = self._rule.view, self._rule.probe
        if view is None:
            return None
        state = view.state
        return ViewReport(
            view.ready, state.age_s(), probe.answering if probe else None, state.counts(), view.diagnostics()
        )


def _found(lookup: Callable[[ClusterView, str], T | None], name: str) -> Callable[[ClusterView], T]:
    def build(view: ClusterView) -> T:
        found = lookup(view, name)
        if found is None:
            # DistributedHerder.connectorInfo and taskConfigs
            raise NotFoundError(f"Connector {name} not found")
        return found

    return build


__all__ = [
    "CapabilitiesReport",
    "ConnectorListing",
    "ExpandedConnector",
    "Readiness",
    "Reads",
    "SidecarReport",
    "ViewReport",
]
