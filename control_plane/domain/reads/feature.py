"""The connector read endpoints by the read rule (``domain.read_rule``): the listing, a connector's
status and configuration, a task's status; statuses with the plugin versions where the workers do not
add them (KIP-891, ``domain.version_reports``). A connector's info and its task configs are the workers'
to answer (they pass through); the view answers them only when no worker did (``unanswered_*``)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, TypeVar

from ...view import ClusterView, ConnectorInfoView, ConnectorStateView, StateEntry, TaskConfigs
from ..errors import NotFoundError
from ..outcomes import Answer, Forward, Read, Refusal, json_amended
from ..plugins.version_reports import VersionReports
from ..read_rule import ReadRule

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


def _amended(read: Read[T], amend: Callable[[Any], Awaitable[Any]] | None) -> Read[T]:
    """A forwarded read whose worker's JSON answer gets what the sidecar adds (the plugin versions)."""
    return replace(read, rewrite=json_amended(amend)) if amend is not None and isinstance(read, Forward) else read


class ConnectorReads:
    def __init__(self, rule: ReadRule, versions: VersionReports) -> None:
        self._rule = rule
        self._versions = versions
        self._listing: tuple[tuple[object, ...], ConnectorListing] | None = None  # list_connectors' last
        # connector_status' answers at one revision of the view: the same object for the same answer, so the
        # renderer serializes it once per change (rest.reads)
        self._statuses: tuple[tuple[object, ...], dict[str, ConnectorStateView]] = ((), {})

    def list_connectors(self, expand: Sequence[str]) -> Read[ConnectorListing]:
        overlay, rule = self._rule.stop_emulated(), self._rule.ignores_stale_unassigned()
        with_status, with_info = "status" in expand, "info" in expand

        def build(view: ClusterView) -> ConnectorListing:
            # the same listing until the view changes: a record applied, or the plugin types reloaded
            key = (id(view), view.revision, id(view.plugin_types), with_status, with_info, overlay, bool(expand))
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

        versions = self._versions.emulated()
        names = self._rule.view.state.connectors() if self._rule.view is not None else ()
        read = self._rule.read(build, view_knows_better=bool(expand) and self._rule.stopped_by_sidecar(names))
        return _amended(read, versions.amend_listing(self._versions.config_of) if versions and with_status else None)

    def connector_status(self, name: str) -> Read[ConnectorStateView]:
        overlay, rule = self._rule.stop_emulated(), self._rule.ignores_stale_unassigned()

        def build(view: ClusterView) -> ConnectorStateView:
            # the same answer until the view changes (a record applied, the plugin types reloaded), as the listing
            key = (id(view), view.revision, id(view.plugin_types), overlay, rule, versions is not None)
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

        versions = self._versions.emulated()
        read = self._rule.read(build, view_knows_better=self._rule.stopped_by_sidecar([name]))
        return _amended(read, versions.amend_status(self._versions.config_of) if versions else None)

    def connector_config(self, name: str) -> Read[Mapping[str, str | None]]:
        def build(view: ClusterView) -> Mapping[str, str | None]:
            config = view.connector_config(name)
            if config is None:
                raise NotFoundError(f"Connector {name} not found")  # DistributedHerder.connectorConfig
            return config

        return self._rule.read(build)

    def task_status(self, name: str, task: int) -> Read[StateEntry]:
        overlay, rule = self._rule.stop_emulated(), self._rule.ignores_stale_unassigned()

        def build(view: ClusterView) -> StateEntry:
            state = view.task_state(name, task, stopped_overlay=overlay, ignore_stale_unassigned=rule)
            if state is None:
                raise NotFoundError(f"No status found for task {name}-{task}")  # AbstractHerder.taskStatus
            return versions.task_with_version(state, view.connector_config(name)) if versions else state

        versions = self._versions.emulated()
        read = self._rule.read(build, view_knows_better=self._rule.stopped_by_sidecar([name]))
        return _amended(read, versions.amend_task(name, self._versions.config_of) if versions else None)

    # GET /connectors/{c} and GET /connectors/{c}/tasks pass through to the workers. The view answers them
    # instead for a connector the sidecar stopped (``stopped_*``: the read rule's view knows better), and when
    # none answered (none reachable, or none within the request budget) its answer, marked stale, takes the
    # 504's place (``unanswered_*``)
    def may_know_better(self) -> bool:
        return self._rule.may_know_better()

    def stopped_info(self, name: str) -> Answer[ConnectorInfoView] | Refusal | None:
        return self._rule.knows_better(_found(ClusterView.connector_info, name), name)

    def stopped_task_configs(self, name: str) -> Answer[TaskConfigs] | Refusal | None:
        return self._rule.knows_better(_found(ClusterView.task_configs_of, name), name)

    def unanswered_info(self, name: str) -> Answer[ConnectorInfoView] | Refusal | None:
        return self._rule.fallback(_found(ClusterView.connector_info, name))

    def unanswered_task_configs(self, name: str) -> Answer[TaskConfigs] | Refusal | None:
        return self._rule.fallback(_found(ClusterView.task_configs_of, name))


def _found(lookup: Callable[[ClusterView, str], T | None], name: str) -> Callable[[ClusterView], T]:
    def build(view: ClusterView) -> T:
        found = lookup(view, name)
        if found is None:
            # DistributedHerder.connectorInfo and taskConfigs
            raise NotFoundError(f"Connector {name} not found")
        return found

    return build


__all__ = ["ConnectorListing", "ConnectorReads", "ExpandedConnector"]
