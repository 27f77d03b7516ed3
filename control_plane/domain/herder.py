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

from ..storage.errors import ReadTimeout
from ..storage.status_writes import StatusWrites
from ..upstream import UpstreamRequest, UpstreamResponse
from ..view import ActiveTopic, ClusterView, ConnectorInfoView, ConnectorStateView, StateEntry
from .capabilities import Capabilities, Feature, Mode
from .config_infos import ConfigInfos
from .connector_configs import Config, ConnectorConfigs
from .errors import ControlPlaneError, NotFoundError
from .liveness import WorkerProbe
from .offsets import ConnectorOffset, ConnectorOffsets
from .offsets_request import OffsetEntry
from .outcomes import Accepted, Answer, Done, Forward, Provenance, Read, Refusal, Source
from .ports import StatusSink, ViewSnapshot, Workers
from .stop import ConnectorStopper
from .topics import TopicTracking

T = TypeVar("T")
log = structlog.get_logger(__name__)

WRITE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})

VIEW_NEEDED = "Topic tracking needs the view (the worker's internal topics are not configured)."


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
        status_writes: StatusSink,
        reads_from_view: bool,
        describe_settings: Callable[[], dict[str, Any]],
        read_your_writes_s: float = 5.0,
    ) -> None:
        self._read_your_writes_s = read_your_writes_s
        self.capabilities = capabilities
        self._workers = workers
        self._view = view
        self._probe = probe
        self._tracking = tracking
        self._stopper = stopper
        self._offsets = offsets
        self._configs = configs
        self._status_writes = status_writes
        self._reads_from_view_setting = reads_from_view
        self._describe_settings = describe_settings
        self._listing: tuple[tuple[object, ...], ConnectorListing] | None = None  # list_connectors' last

    async def forward(self, request: UpstreamRequest) -> UpstreamResponse:
        """Pass a Connect REST request through to a worker of the cluster, unchanged.

        Read-your-writes: a worker answers a change of a connector (create, config, pause, resume, stop,
        delete) once the leader has written it to the config topic and read it back. When one succeeded,
        the view reads the config topic to its end before the answer goes back, so the client's next read
        through the view shows the change (bounded by ``read_your_writes_timeout_s``)."""
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
        return answer

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

    def _stopped_by_sidecar(self, names: Sequence[str]) -> bool:
        if not self._stop_emulated() or not self.view_ready or self._view is None:
            return False
        return any(self._view.state.target_state(name) == "STOPPED" for name in names)

    # -- connectors: reads ------------------------------------------------------------------------
    def list_connectors(self, expand: Sequence[str]) -> Read[ConnectorListing]:
        overlay = self._stop_emulated()
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
                status = view.connector_state(name, stopped_overlay=overlay) if with_status else None
                info = view.connector_info(name) if with_info else None
                # ConnectorsResource.listConnectors leaves out a connector it cannot expand
                if (with_status and status is None) or (with_info and info is None):
                    continue
                expanded[name] = ExpandedConnector(status, info)
            return ConnectorListing(names, expanded)

        names = self._view.state.connectors() if self._view is not None else ()
        return self._read(build, view_knows_better=with_status and self._stopped_by_sidecar(names))

    def connector_status(self, name: str) -> Read[ConnectorStateView]:
        overlay = self._stop_emulated()

        def build(view: ClusterView) -> ConnectorStateView:
            state = view.connector_state(name, stopped_overlay=overlay)
            if state is None:
                raise NotFoundError(f"No status found for connector {name}")  # AbstractHerder.connectorStatus
            return state

        return self._read(build, view_knows_better=self._stopped_by_sidecar([name]))

    def connector_config(self, name: str) -> Read[Mapping[str, str | None]]:
        def build(view: ClusterView) -> Mapping[str, str | None]:
            config = view.connector_config(name)
            if config is None:
                raise NotFoundError(f"Connector {name} not found")  # DistributedHerder.connectorConfig
            return config

        return self._read(build)

    def task_status(self, name: str, task: int) -> Read[StateEntry]:
        overlay = self._stop_emulated()

        def build(view: ClusterView) -> StateEntry:
            state = view.task_state(name, task, stopped_overlay=overlay)
            if state is None:
                raise NotFoundError(f"No status found for task {name}-{task}")  # AbstractHerder.taskStatus
            return state

        return self._read(build, view_knows_better=self._stopped_by_sidecar([name]))

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

    async def reset_connector_topics(self, name: str) -> Forward[None] | Accepted:
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
    async def validate_config(self, path: str, config: Config) -> Answer[ConfigInfos] | Forward[ConfigInfos]:
        return await self._configs.validate(path, config)

    async def create_connector(self, name: str | None, config: Config) -> Refusal | Forward[None]:
        return await self._configs.create(name, config)

    async def put_connector_config(self, name: str, config: Config) -> Refusal | Forward[None]:
        return await self._configs.update(name, config)

    async def patch_connector_config(self, name: str, patch: Config) -> Refusal | Forward[None]:
        return await self._configs.patch(name, patch)

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

    def info(self) -> dict[str, Any]:
        return {
            "capabilities": self.capabilities.as_dict(),
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


__all__ = ["ConnectorListing", "ExpandedConnector", "Herder", "Readiness"]
