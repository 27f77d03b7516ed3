"""The herder: the one entry point of the HTTP handlers (the role Connect's ``Herder`` plays for its
``ConnectorsResource``), one method per endpoint the sidecar does more than pass through.

Each method asks ``Capabilities.mode`` (``domain.capabilities``: the one place that decides whether the
workers do a feature themselves) or the read rule below, and returns a domain outcome
(``domain.outcomes``): an answer with its provenance, a refusal, or "forward the request unchanged".

The read rule: the view answers the read endpoints once it has read its topics to the end, unless the
operator chose the workers (``read_from=upstream``); otherwise the request goes to a worker, and when no
worker answers the view answers anyway, marked stale with its age. Where the workers cannot stop
connectors (before 3.5) the view knows better than they do: a connector the sidecar stopped is shown
as 3.5+ shows it, STOPPED and without tasks, whoever else would answer.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import structlog

from ..rules.plugin_versions import PinResolution
from ..storage.errors import ReadTimeout
from ..storage.status_writes import StatusWrites
from ..upstream import UpstreamError, UpstreamRequest, UpstreamResponse
from ..view import ActiveTopic, ClusterView, ConnectorInfoView, ConnectorStateView, StateEntry
from .capabilities import Capabilities, Feature, Mode, Version
from .config_infos import ConfigInfos
from .connector_configs import Config, ConnectorConfigs, config_path
from .errors import ConflictError, ControlPlaneError, NotFoundError, OperationFailed, ViewNotReady
from .initial_state import InitialState, Unreadable
from .liveness import WorkerProbe
from .newer_api import NewerApi
from .offsets import ConnectorOffset, ConnectorOffsets
from .offsets_request import OffsetEntry
from .outcomes import SIDECAR, Accepted, Answer, Done, Forward, Provenance, Read, Refusal, Relay, Reply, Source
from .plugin_versions import PluginVersions
from .plugins import PathConverters, PluginCatalog, PluginInfo
from .ports import StatusSink, ViewSnapshot, Workers
from .restart import ConnectorRestarter, RestartRequest, restart_plan
from .stop import ConnectorStopper, restart_refused, resume_recreates, resumed_connector
from .topic_creation import CreationPreview, TopicCreation
from .topics import TopicTracking

T = TypeVar("T")
log = structlog.get_logger(__name__)

WRITE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})

VIEW_NEEDED = "Topic tracking needs the view (the worker's internal topics are not configured)."

# KAFKA-12525: from 3.6.0 KafkaStatusBackingStore.readTaskStatus ignores a task's UNASSIGNED of the same or
# an older generation than its RUNNING; 3.4 and 3.5 show the last record. The view answers by its workers' rule.
STALE_UNASSIGNED_IGNORED_SINCE = Version.of("3.6.0")


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
class PluginVersionReport:
    """``/_sidecar/.../plugin-versions``: what each plugin key resolves to on this cluster, and why."""

    connector: str | None
    worker_version: str
    mode: Mode
    plugins: tuple[PinResolution, ...]


@dataclass(frozen=True)
class Readiness:
    ready: bool
    checks: dict[str, bool]


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
        self._topic_creation = topic_creation
        self._plugin_versions = plugin_versions
        self._read_your_writes_s = read_your_writes_s
        self.capabilities = capabilities
        self._workers = workers
        self._view = view
        self._probe = probe
        self._tracking = tracking
        self._stopper = stopper
        self._offsets = offsets
        self._configs = configs
        self._newer = newer
        self._status_writes = status_writes
        self._reads_from_view_setting = reads_from_view
        self._describe_settings = describe_settings
        self._restarter = ConnectorRestarter(workers)
        self._plugins = PluginCatalog(workers, path_converters)
        self._listing: tuple[tuple[object, ...], ConnectorListing] | None = None  # list_connectors' last

    async def forward(self, request: UpstreamRequest) -> UpstreamResponse:
        """Pass a Connect REST request through to a worker of the cluster, unchanged.

        Read-your-writes: a worker answers a change of a connector (create, config, pause, resume, stop,
        delete) once the leader has written it to the config topic and read it back. When one succeeded,
        the view reads the config topic to its end before the answer goes back, so the client's next read
        through the view shows the change (bounded by ``read_your_writes_timeout_s``).

        A resume of a connector the sidecar stopped after it had failed also restarts it on the worker, so
        that it runs again as on 3.5+ (``domain.stop``)."""
        recreate = self._recreated_on_resume(request)
        answer = await self._workers.forward(request)
        if (
            request.method in WRITE_METHODS
            and 200 <= answer.status < 300
            and request.path.startswith("/connectors")
            and self.view_ready
            and self._view is not None
        ):
            try:
                await self._view.read_to_end("config", self._read_your_writes_s)
            except ReadTimeout as err:
                log.warning("the view did not read a change back in time", path=request.path, error=str(err))
        if recreate is not None and 200 <= answer.status < 300:
            restarted = await self._workers.forward(UpstreamRequest("POST", f"/connectors/{recreate}/restart"))
            if not 200 <= restarted.status < 300:
                body = restarted.body.decode(errors="replace")
                raise OperationFailed(restart_refused(recreate, restarted.status, body))
            log.info("failed connector restarted on resume after an emulated stop", connector=recreate)
        return answer

    def _recreated_on_resume(self, request: UpstreamRequest) -> str | None:
        segment = resumed_connector(request.method, request.path)
        if segment is None or not self._stop_emulated() or not self.view_ready or self._view is None:
            return None
        return segment if resume_recreates(self._view.state, segment) else None

    # -- the read rule ----------------------------------------------------------------------------
    @property
    def view_ready(self) -> bool:
        return self._view is not None and self._view.ready

    def _reads_from_view(self) -> bool:
        return self.view_ready and self._reads_from_view_setting

    def _stale(self) -> bool:
        return self._probe is not None and self._probe.stale

    def _from_view(self, build: Callable[[ClusterView], T], *, stale: bool) -> Answer[T] | Refusal:
        assert self._view is not None
        state = self._view.state
        provenance = Provenance(Source.VIEW, stale, state.age_s() if stale else None)
        try:
            return Answer(build(state), provenance)
        except ControlPlaneError as err:
            return Refusal(err, provenance)

    def _fallback(self, build: Callable[[ClusterView], T]) -> Answer[T] | Refusal | None:
        return self._from_view(build, stale=True) if self.view_ready else None

    def _read(self, build: Callable[[ClusterView], T], *, view_knows_better: bool = False) -> Read[T]:
        if self._reads_from_view() or (view_knows_better and self.view_ready):
            return self._from_view(build, stale=self._stale())
        return Forward(lambda: self._fallback(build))

    def _stop_emulated(self) -> bool:
        return self.capabilities.decision(Feature.STOP_AND_OFFSETS_READ).mode is Mode.EMULATED

    def _ignores_stale_unassigned(self) -> bool:
        """The status rule of the workers' version (the oldest that answers; 3.6+'s before any did)."""
        version = self.capabilities.version
        return version is None or version >= STALE_UNASSIGNED_IGNORED_SINCE

    def _stopped_by_sidecar(self, names: Sequence[str]) -> bool:
        if not self._stop_emulated() or not self.view_ready or self._view is None:
            return False
        return any(self._view.state.target_state(name) == "STOPPED" for name in names)

    # -- connectors: reads ------------------------------------------------------------------------
    def list_connectors(self, expand: Sequence[str]) -> Read[ConnectorListing]:
        overlay, rule = self._stop_emulated(), self._ignores_stale_unassigned()
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

        versions = self._versions_emulated()
        names = self._view.state.connectors() if self._view is not None else ()
        read = self._read(build, view_knows_better=with_status and self._stopped_by_sidecar(names))
        if versions is not None and with_status and isinstance(read, Forward):
            return Forward(read.fallback, read.warnings, amend=versions.amend_listing(self._config_of))
        return read

    def connector_status(self, name: str) -> Read[ConnectorStateView]:
        overlay, rule = self._stop_emulated(), self._ignores_stale_unassigned()

        def build(view: ClusterView) -> ConnectorStateView:
            state = view.connector_state(name, stopped_overlay=overlay, ignore_stale_unassigned=rule)
            if state is None:
                raise NotFoundError(f"No status found for connector {name}")  # AbstractHerder.connectorStatus
            return versions.with_versions(state, view.connector_config(name)) if versions else state

        versions = self._versions_emulated()
        read = self._read(build, view_knows_better=self._stopped_by_sidecar([name]))
        if versions is not None and isinstance(read, Forward):
            return Forward(read.fallback, read.warnings, amend=versions.amend_status(self._config_of))
        return read

    def connector_config(self, name: str) -> Read[Mapping[str, str | None]]:
        def build(view: ClusterView) -> Mapping[str, str | None]:
            config = view.connector_config(name)
            if config is None:
                raise NotFoundError(f"Connector {name} not found")  # DistributedHerder.connectorConfig
            return config

        return self._read(build)

    def task_status(self, name: str, task: int) -> Read[StateEntry]:
        overlay, rule = self._stop_emulated(), self._ignores_stale_unassigned()

        def build(view: ClusterView) -> StateEntry:
            state = view.task_state(name, task, stopped_overlay=overlay, ignore_stale_unassigned=rule)
            if state is None:
                raise NotFoundError(f"No status found for task {name}-{task}")  # AbstractHerder.taskStatus
            return versions.task_with_version(state, view.connector_config(name)) if versions else state

        versions = self._versions_emulated()
        read = self._read(build, view_knows_better=self._stopped_by_sidecar([name]))
        if versions is not None and isinstance(read, Forward):
            return Forward(read.fallback, read.warnings, amend=versions.amend_task(name, self._config_of))
        return read

    # -- versioned plugins (KIP-891) --------------------------------------------------------------
    def _versions_emulated(self) -> PluginVersions | None:
        """The sidecar adds the version to statuses: the workers do not (before 4.1)."""
        versions = self._plugin_versions
        return versions if versions is not None and versions.emulated() else None

    async def _config_of(self, name: str) -> Mapping[str, str | None] | None:
        """A connector's configuration: the view's once it has caught up, else the worker's."""
        if self.view_ready and self._view is not None:
            return self._view.state.connector_config(name)
        try:
            answer = await self._workers.forward(UpstreamRequest("GET", config_path(name)))
        except UpstreamError:
            return None
        config = answer.json() if answer.status == 200 else None
        return config if isinstance(config, dict) else None

    async def plugin_version_report(
        self, name: str | None, config: Config | None
    ) -> Answer[PluginVersionReport] | Refusal:
        """The sidecar's own: what each plugin key of a connector (by name) or a configuration resolves to."""
        versions = self._plugin_versions
        if versions is None:
            return Refusal(NotFoundError("Plugin versions are not available"), SIDECAR)
        if config is None:
            config = await self._config_of(name or "")
            if config is None:
                return Refusal(NotFoundError(f"Connector {name} not found"), SIDECAR)
        mode = await self.capabilities.mode(Feature.PLUGIN_VERSIONS)  # the one the check uses
        resolutions = await versions.resolutions(config, native=mode is not Mode.EMULATED)
        return Answer(PluginVersionReport(name, str(self.capabilities.version or ""), mode, tuple(resolutions)))

    # -- topic tracking (KIP-558) -----------------------------------------------------------------
    async def _tracking_by_sidecar(self) -> TopicTracking | None:
        if self._tracking is None or await self.capabilities.mode(Feature.TOPIC_TRACKING) is not Mode.EMULATED:
            return None
        return self._tracking

    async def connector_topics(self, name: str) -> Read[tuple[str, ...]]:
        tracking = await self._tracking_by_sidecar()
        if tracking is None:
            return Forward()
        return self._read(lambda _: tracking.active_topics(name))

    async def reset_connector_topics(self, name: str) -> Forward[None] | Accepted[None]:
        tracking = await self._tracking_by_sidecar()
        if tracking is None or not self._reads_from_view():
            return Forward()
        tracking.reset(name)  # tombstones go out in the background, as the worker's reset does
        return Accepted()

    def topic_connectors(self, topic: str) -> Answer[tuple[str, ...]] | Refusal:
        """Beyond the KIP: the connectors whose active topics include this topic."""
        tracking = self._view_tracking()
        return self._from_view(lambda _: tracking.connectors_using(topic), stale=self._stale())

    def connector_topic_usage(self, name: str) -> Answer[tuple[ActiveTopic, ...]] | Refusal:
        """Beyond the KIP: per topic of the connector, the task that reported it and when."""
        tracking = self._view_tracking()
        return self._from_view(lambda _: tracking.usage(name), stale=self._stale())

    def _view_tracking(self) -> TopicTracking:
        if self._tracking is None:
            raise NotFoundError(VIEW_NEEDED)
        return self._tracking

    # -- the STOPPED state and offsets (KIP-875) --------------------------------------------------
    async def _emulates(self, feature: Feature) -> bool:
        return await self.capabilities.mode(feature) is Mode.EMULATED

    async def stop_connector(self, name: str) -> Forward[None] | Done:
        if not await self._emulates(Feature.STOP_AND_OFFSETS_READ):
            return Forward()
        await self._stopper.stop(name)
        return Done()

    async def connector_offsets(
        self, name: str
    ) -> Answer[tuple[ConnectorOffset, ...]] | Forward[tuple[ConnectorOffset, ...]]:
        if not await self._emulates(Feature.STOP_AND_OFFSETS_READ):
            return Forward()
        read = await self._offsets.read(name)
        warnings = tuple(
            f"source partition stored under {len(d.keys)} key encodings in {d.topic}; shown: the key its tasks look up"
            for d in read.duplicates
        )
        return Answer(read.offsets, warnings=warnings)

    async def alter_offsets(self, name: str, entries: Sequence[OffsetEntry]) -> Answer[str] | Forward[str]:
        if await self._emulates(Feature.OFFSETS_ALTER_RESET):
            return Answer(await self._offsets.alter(name, entries))
        # the worker does it; its contents are checked first (a precise 400 without a round trip) when
        # the view knows the connector's type; otherwise the worker checks
        kind = self._known_type(name)
        if kind is not None and self._view is not None:
            await self._offsets.check_entries(kind, entries, self._view.state.connector_config(name))
        return Forward()

    async def reset_offsets(self, name: str) -> Answer[str] | Forward[str]:
        if not await self._emulates(Feature.OFFSETS_ALTER_RESET):
            return Forward()
        return Answer(await self._offsets.reset(name))

    def _known_type(self, name: str) -> str | None:
        if self._view is None or not self._view.ready or self._view.state.connector_config(name) is None:
            return None
        return self._view.state.connector_type(name)

    # -- configurations: validate, create, update, PATCH (the sidecar's checks first) ---------------
    async def validate_config(self, path: str, config: Config) -> Answer[ConfigInfos] | Refusal | Forward[ConfigInfos]:
        checked = await self._configs.validate(path, config)
        return checked if isinstance(checked, Refusal) else await self._newer.validate_config(checked, config)

    async def create_connector(
        self,
        name: str | None,
        config: Config,
        body: Mapping[str, Any] | None = None,
        initial: InitialState | Unreadable | None = None,
    ) -> Refusal | Forward[None] | Relay:
        """``body``: the whole request as read (its ``initial_state``, KIP-980, read as ``initial``)."""
        return await self._written(await self._newer.create_connector(name, config, body or {}, initial))

    async def put_connector_config(self, name: str, config: Config) -> Refusal | Forward[None]:
        return await self._configs.update(name, config)

    async def patch_connector_config(
        self, name: str, patch: Config | None, raw: bytes = b""
    ) -> Refusal | Forward[None] | Relay:
        """``patch``: None when the body is not a map of strings (``raw``, the body as sent)."""
        return await self._written(await self._newer.patch_connector_config(name, patch, raw))

    async def _written(self, outcome: T) -> T:
        """Read-your-writes (as ``forward``) after a change the sidecar composed and a worker carried out."""
        if isinstance(outcome, Relay) and 200 <= outcome.response.status < 300 and self.view_ready:
            assert self._view is not None
            try:
                await self._view.read_to_end("config", self._read_your_writes_s)
            except ReadTimeout as err:
                log.warning("the view did not read a change back in time", error=str(err))
        return outcome

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
        if self._topic_creation is None:
            return Refusal(NotFoundError("Topic-creation previews need the broker (no bootstrap.servers)"), SIDECAR)
        try:
            return Answer(await self._topic_creation.preview(config, topics, connector))
        except ControlPlaneError as err:
            return Refusal(err, SIDECAR)

    async def connector_topic_creation(self, name: str, topics: Sequence[str]) -> Answer[CreationPreview] | Refusal:
        """The preview of an existing connector: its configuration as a worker has it (the view's when no
        worker answers)."""
        try:
            answer = await self._workers.forward(UpstreamRequest("GET", config_path(name)))
            config = answer.json() if answer.status == 200 else None
            if answer.status == 404:
                return Refusal(NotFoundError(f"Connector {name} not found"), SIDECAR)
        except UpstreamError:
            config = self._view.state.connector_config(name) if self._view is not None and self.view_ready else None
        if not isinstance(config, dict):
            return Refusal(ConflictError(f"The configuration of connector {name} cannot be read now"), SIDECAR)
        return await self.preview_topic_creation(config, topics, name)

    # -- newer endpoints composed of older ones (KIP-745, KIP-769) -----------------------------------
    async def restart_connector(
        self, request: RestartRequest
    ) -> Forward[ConnectorStateView] | Accepted[ConnectorStateView]:
        """``POST /connectors/{c}/restart``: the pre-3.0 request, or a worker that has the options, goes
        through; otherwise 202 with the plan (``domain.restart``), once the restarts are sent."""
        if request.connector_only or not await self._emulates(Feature.RESTART_OPTIONS):
            return Forward()
        if self._view is None or not self._view.ready:
            raise ViewNotReady("Restart options on this Connect version need the sidecar's view, which is not ready")
        try:  # a connector just created elsewhere: the config topic read to its end, as the worker's leader has it
            await self._view.read_to_end("config", self._read_your_writes_s)
        except ReadTimeout as err:
            log.warning("the view did not reach the config topic's end", error=str(err))
        state = self._view.state
        name = request.connector
        if state.connector_config(name) is None:
            raise NotFoundError(f"Unknown connector: {name}")  # DistributedHerder.restartConnectorAndTasks
        status = state.connector_state(name, stopped_overlay=self._stop_emulated())
        if status is None:
            raise NotFoundError(f"Status for connector {name} not found")
        plan = restart_plan(request, status)
        await self._restarter.restart(plan)
        return Accepted(plan.status)

    async def connector_plugins(self, connectors_only: bool) -> Forward[list[PluginInfo]] | Answer[list[PluginInfo]]:
        if connectors_only or not await self._emulates(Feature.PLUGIN_LISTING):
            return Forward()
        plugins, complete = await self._plugins.plugins()
        if complete:
            return Answer(plugins)
        warning = (
            "the converters and header converters of the workers' plugin.path are not listed (Kafka's own are): "
            "this Connect version does not tell them, and the sidecar does not know its plugin.path"
        )
        return Answer(plugins, warnings=(warning,))

    async def plugin_config(
        self, name: str, version: str | None = None
    ) -> Forward[Any] | Answer[list[dict[str, Any]]] | Refusal:
        """``?version=`` (KIP-891) answered as 4.1+ does; then composed where the workers cannot describe
        plugins (already in 4.2's shape); otherwise the worker's answer, in the newest shape
        (``order_in_group``) unless the operator keeps the worker's."""
        if self._plugin_versions is not None and version is not None:
            checked = await self._plugin_versions.plugin_config(name, version)
            if isinstance(checked, Refusal):
                return checked
        if await self._emulates(Feature.PLUGIN_LISTING):
            return Answer(await self._plugins.config(name))
        return await self._newer.plugin_config()

    # -- the sidecar's own endpoints --------------------------------------------------------------
    def readiness(self) -> Readiness:
        """With a view: ready once it has read its topics to the end offsets seen at start (it can then
        answer reads even while every worker is down). Without: once a worker reported its version."""
        if self._view is not None:
            checks = {"view_caught_up": self._view.ready}
        else:
            checks = {"worker_version_detected": self.capabilities.detected}
        return Readiness(all(checks.values()), checks)

    def status_writes(self) -> StatusWrites:
        return self._status_writes.snapshot()

    def capabilities_info(self) -> dict[str, Any]:
        """The workers' real versions and the decisions, with the version ``GET /`` advertises (None: the
        worker's own)."""
        return {**self.capabilities.as_dict(), "advertised_version": self._newer.advertised_version()}

    def info(self) -> dict[str, Any]:
        return {
            "capabilities": self.capabilities_info(),
            "workers": list(self._workers.workers),
            "settings": self._describe_settings(),
            "view": self._view_info(),
        }

    def _view_info(self) -> dict[str, Any] | None:
        if self._view is None:
            return None
        state = self._view.state
        return {
            "ready": self._view.ready,
            "age_s": state.age_s(),
            "workers_answering": self._probe.answering if self._probe else None,
            "counts": state.counts(),
            **self._view.diagnostics(),
        }


__all__ = ["ConnectorListing", "ExpandedConnector", "Herder", "PluginVersionReport", "Readiness"]
