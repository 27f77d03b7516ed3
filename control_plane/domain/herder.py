"""The herder: the one entry point of the HTTP handlers (the role Connect's ``Herder`` plays for its
``ConnectorsResource``), one method per endpoint the sidecar does more than pass through.

Each method asks ``Capabilities.mode`` (``domain.capabilities``: the one place that decides whether the
workers do a feature themselves) or the read rule (``domain.read_rule``), and returns a domain outcome
(``domain.outcomes``): an answer with its provenance, a refusal, or "forward the request unchanged".

The herder only delegates: each feature lives in its own module, built here from the herder's ports.

| feature | module |
|---|---|
| pass-through, read-your-writes | ``domain.forwarding`` |
| connector and task reads | ``domain.connector_reads`` |
| versioned plugins (KIP-891) | ``domain.version_reports`` |
| topic tracking (KIP-558) | ``domain.topic_reads`` |
| the STOPPED state and offsets (KIP-875) | ``domain.stop_offsets`` |
| configuration writes | ``domain.config_writes`` |
| the REST API of newer releases | ``domain.newer_api`` |
| topic-creation previews (KIP-158) | ``domain.creation_previews`` |
| restart options, plugin listings (KIP-745, KIP-769) | ``domain.composed`` |
| the sidecar's own endpoints | ``domain.sidecar_info`` |
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ..storage.status_writes import StatusWrites
from ..upstream import UpstreamRequest, UpstreamResponse
from ..view import ActiveTopic, ConnectorInfoView, ConnectorStateView, StateEntry, TaskConfigs
from .capabilities import Capabilities
from .config_infos import ConfigInfos
from .configs.connector_configs import Config, ConnectorConfigs
from .configs.feature import ConfigWrites
from .configs.initial_state import InitialState, Unreadable
from .forwarding import WRITE_METHODS, Forwarding
from .liveness import WorkerProbe
from .newer.feature import NewerApi
from .newer.restart import RestartRequest
from .offsets.connector_offsets import ConnectorOffset, ConnectorOffsets
from .offsets.feature import StopAndOffsets
from .offsets.request import OffsetEntry
from .offsets.stop import ConnectorStopper
from .outcomes import Accepted, Answer, Done, Forward, Read, Refusal, Relay, Reply
from .plugins.feature import ComposedEndpoints
from .plugins.listings import PathConverters, PluginInfo
from .plugins.version_reports import PluginVersionReport, VersionReports
from .plugins.versions import PluginVersions
from .ports import StatusSink, ViewSnapshot, Workers
from .read_rule import STALE_UNASSIGNED_IGNORED_SINCE, ReadRule
from .reads.feature import ConnectorListing, ConnectorReads, ExpandedConnector
from .reads.sidecar_info import Readiness, SidecarInfo
from .reads.states import ConnectorStates, StateChanges, StateGauges, StateRules, StateSummary
from .topic_creation.creation import CreationPreview, TopicCreation
from .topic_creation.feature import CreationPreviews
from .topics.feature import VIEW_NEEDED, TopicReads
from .topics.tracking import TopicTracking


class Herder:
    def __init__(
        self,
        *,
        capabilities: Capabilities,
        workers: Workers,
        view: ViewSnapshot | None,
        probe: WorkerProbe | None,
        tracking: TopicTracking | None,
        stopper: ConnectorStopper,
        offsets: ConnectorOffsets,
        configs: ConnectorConfigs,
        newer: NewerApi,
        status_writes: StatusSink,
        reads_from_view: bool,
        describe_settings: Callable[[], dict[str, Any]],
        read_your_writes_s: float = 5.0,
        topic_creation: TopicCreation | None = None,
        plugin_versions: PluginVersions | None = None,
        path_converters: PathConverters | None = None,
    ) -> None:
        self.capabilities = capabilities
        rule = ReadRule(
            capabilities=capabilities,
            view=view,
            probe=probe,
            reads_from_view=reads_from_view,
            read_your_writes_s=read_your_writes_s,
        )
        self._rule = rule
        self._newer = newer
        self._forwarding = Forwarding(rule, workers)
        self._versions = VersionReports(rule, workers, plugin_versions)
        self._reads = ConnectorReads(rule, self._versions)
        self._topics = TopicReads(rule, tracking)
        self._stop_offsets = StopAndOffsets(rule, stopper, offsets)
        self._config_writes = ConfigWrites(rule, configs, newer)
        self._previews = CreationPreviews(rule, workers, topic_creation)
        self._composed = ComposedEndpoints(rule, workers, newer, plugin_versions, path_converters)
        self._sidecar = SidecarInfo(rule, workers, newer, status_writes, describe_settings)
        self._states = ConnectorStates(view)

    async def forward(self, request: UpstreamRequest) -> UpstreamResponse:
        """Pass a Connect REST request through to a worker unchanged, with read-your-writes
        (``domain.forwarding``)."""
        return await self._forwarding.forward(request)

    @property
    def view_ready(self) -> bool:
        return self._rule.view_ready

    # -- connectors: reads ------------------------------------------------------------------------
    def list_connectors(self, expand: Sequence[str]) -> Read[ConnectorListing]:
        return self._reads.list_connectors(expand)

    def connector_status(self, name: str) -> Read[ConnectorStateView]:
        return self._reads.connector_status(name)

    def connector_config(self, name: str) -> Read[Mapping[str, str | None]]:
        return self._reads.connector_config(name)

    def task_status(self, name: str, task: int) -> Read[StateEntry]:
        return self._reads.task_status(name, task)

    def view_may_know_better(self) -> bool:
        """Whether ``stopped_info`` or ``stopped_task_configs`` can answer now (cheap)."""
        return self._reads.may_know_better()

    def stopped_info(self, name: str) -> Answer[ConnectorInfoView] | Refusal | None:
        """``GET /connectors/{c}`` of a connector the sidecar stopped: the view's answer (else None: a worker's)."""
        return self._reads.stopped_info(name)

    def stopped_task_configs(self, name: str) -> Answer[TaskConfigs] | Refusal | None:
        """``GET /connectors/{c}/tasks`` of a connector the sidecar stopped: the view's answer (else None)."""
        return self._reads.stopped_task_configs(name)

    def unanswered_info(self, name: str) -> Answer[ConnectorInfoView] | Refusal | None:
        """``GET /connectors/{c}`` when no worker answered it: the view's answer, stale (else None)."""
        return self._reads.unanswered_info(name)

    def unanswered_task_configs(self, name: str) -> Answer[TaskConfigs] | Refusal | None:
        """``GET /connectors/{c}/tasks`` when no worker answered it: the view's answer, stale (else None)."""
        return self._reads.unanswered_task_configs(name)

    # -- versioned plugins (KIP-891) --------------------------------------------------------------
    async def plugin_version_report(
        self, name: str | None, config: Config | None
    ) -> Answer[PluginVersionReport] | Refusal:
        return await self._versions.report(name, config)

    # -- topic tracking (KIP-558) -----------------------------------------------------------------
    async def connector_topics(self, name: str) -> Read[tuple[str, ...]]:
        return await self._topics.connector_topics(name)

    async def reset_connector_topics(self, name: str) -> Forward[None] | Accepted[None]:
        return await self._topics.reset_connector_topics(name)

    def topic_connectors(self, topic: str) -> Answer[tuple[str, ...]] | Refusal:
        return self._topics.topic_connectors(topic)

    def connector_topic_usage(self, name: str) -> Answer[tuple[ActiveTopic, ...]] | Refusal:
        return self._topics.connector_topic_usage(name)

    # -- the STOPPED state and offsets (KIP-875) --------------------------------------------------
    async def stop_connector(self, name: str) -> Forward[None] | Done:
        return await self._stop_offsets.stop_connector(name)

    async def connector_offsets(
        self, name: str
    ) -> Answer[tuple[ConnectorOffset, ...]] | Forward[tuple[ConnectorOffset, ...]]:
        return await self._stop_offsets.connector_offsets(name)

    async def alter_offsets(self, name: str, entries: Sequence[OffsetEntry]) -> Answer[str] | Forward[str]:
        return await self._stop_offsets.alter_offsets(name, entries)

    async def reset_offsets(self, name: str) -> Answer[str] | Forward[str]:
        return await self._stop_offsets.reset_offsets(name)

    # -- configurations: validate, create, update, PATCH (the sidecar's checks first) ---------------
    async def validate_config(self, path: str, config: Config) -> Answer[ConfigInfos] | Refusal | Forward[ConfigInfos]:
        return await self._config_writes.validate_config(path, config)

    async def create_connector(
        self,
        name: str | None,
        config: Config,
        body: Mapping[str, Any] | None = None,
        initial: InitialState | Unreadable | None = None,
    ) -> Refusal | Forward[None] | Relay:
        return await self._config_writes.create_connector(name, config, body, initial)

    async def put_connector_config(self, name: str, config: Config) -> Refusal | Forward[None]:
        return await self._config_writes.put_connector_config(name, config)

    async def patch_connector_config(
        self, name: str, patch: Config | None, raw: bytes = b""
    ) -> Refusal | Forward[None] | Relay:
        return await self._config_writes.patch_connector_config(name, patch, raw)

    # -- the REST API of newer releases (domain.newer_api) ------------------------------------------
    async def set_logger_level(
        self, path: str, body: bytes, scope: str | None, query: str = ""
    ) -> Forward[None] | Relay | Reply | Refusal:
        return await self._newer.set_logger_level(path, body, scope, query)

    async def logger_levels(self) -> Forward[None]:
        return await self._newer.logger_levels()

    async def logger_level(self, logger: str) -> Forward[None]:
        return await self._newer.logger_level(logger)

    async def health(self) -> Forward[None] | Reply:
        return await self._newer.health()

    async def server_info(self) -> Forward[None]:
        return await self._newer.server_info()

    # -- KIP-158: which group, with which settings, creates a topic (the sidecar's own) ----------------
    async def preview_topic_creation(
        self, config: Config, topics: Sequence[str], connector: str | None = None
    ) -> Answer[CreationPreview] | Refusal:
        return await self._previews.preview(config, topics, connector)

    async def connector_topic_creation(self, name: str, topics: Sequence[str]) -> Answer[CreationPreview] | Refusal:
        return await self._previews.of_connector(name, topics)

    # -- newer endpoints composed of older ones (KIP-745, KIP-769) -----------------------------------
    async def restart_connector(
        self, request: RestartRequest
    ) -> Forward[ConnectorStateView] | Accepted[ConnectorStateView]:
        return await self._composed.restart_connector(request)

    async def connector_plugins(self, connectors_only: bool) -> Forward[list[PluginInfo]] | Answer[list[PluginInfo]]:
        return await self._composed.connector_plugins(connectors_only)

    async def plugin_config(
        self, name: str, version: str | None = None
    ) -> Forward[Any] | Answer[list[dict[str, Any]]] | Refusal:
        return await self._composed.plugin_config(name, version)

    # -- connector and task states for dashboards (domain.connector_states) -------------------------
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
        return self._sidecar.readiness()

    def status_writes(self) -> StatusWrites:
        return self._sidecar.status_writes()

    def capabilities_info(self) -> dict[str, Any]:
        return self._sidecar.capabilities_info()

    def info(self) -> dict[str, Any]:
        return self._sidecar.info()


__all__ = [
    "STALE_UNASSIGNED_IGNORED_SINCE",
    "VIEW_NEEDED",
    "WRITE_METHODS",
    "ConnectorListing",
    "ExpandedConnector",
    "Herder",
    "PluginVersionReport",
    "Readiness",
]
