"""The sidecar's domain entry point (the role Connect's Herder plays): one object the handlers call.

It owns the upstream Connect cluster and the capability decisions; the features of later issues
hang off it. It returns its own dataclasses, never HTTP payloads.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from typing import Any

import orjson
import structlog

from .background import cancel_and_wait
from .capabilities import CapabilityDetector
from .features.offsets import ConnectorOffsets
from .features.stop import ConnectorStopper
from .features.topics import TopicTracking
from .metrics import Metrics
from .settings import Settings, describe
from .storage.config_writer import ConfigWriter
from .storage.consumer_groups import ConsumerGroups
from .storage.kafka_clients import client_kwargs
from .storage.offsets_writer import OffsetsWriter
from .storage.record_producer import AiokafkaRecordProducer
from .storage.status_writer import StatusWriter
from .upstream import ConnectUpstream, UpstreamError, UpstreamRequest, UpstreamResponse
from .upstream.client import build_transport
from .view import MaterializedView

log = structlog.get_logger(__name__)


@dataclass(frozen=True)
class Readiness:
    ready: bool
    checks: dict[str, bool]


class Sidecar:
    def __init__(
        self,
        settings: Settings,
        upstream: ConnectUpstream,
        detector: CapabilityDetector,
        view: MaterializedView | None = None,
    ) -> None:
        self.settings = settings
        self.upstream = upstream
        self.capabilities = detector
        self.view = view
        self.status_writer = StatusWriter.from_settings(settings)  # not started without a status topic
        self.topic_tracking = (
            TopicTracking(
                view.state,
                self.status_writer,
                enabled=settings.topic_tracking_enable,
                allow_reset=settings.topic_tracking_allow_reset,
            )
            if view
            else None
        )
        # KIP-875 where the workers cannot: stop, offsets read, alter and reset (the handlers decide
        # native or emulated per request from the capabilities)
        kafka = client_kwargs(settings)
        write_timeout_ms = settings.emulation_request_timeout_ms

        def producer() -> AiokafkaRecordProducer:
            return AiokafkaRecordProducer(kafka, write_timeout_ms)

        attempt_s = 2 * write_timeout_ms / 1000  # a metadata wait and the produce request
        config_topic = settings.config_storage_topic
        config_writer = ConfigWriter(config_topic, producer, attempt_s) if view and config_topic else None
        groups = ConsumerGroups(kafka, write_timeout_ms)
        self.stopper = ConnectorStopper(view, config_writer, groups, settings.emulation_read_back_timeout_s)
        self.connector_offsets = ConnectorOffsets(settings, view, groups, OffsetsWriter(producer, attempt_s), kafka)
        self.workers_answering: bool | None = None  # from the liveness probe; None until it ran
        self.workers_checked_at: float | None = None
        self._probe_task: asyncio.Task[None] | None = None
        self._plugins_loaded_at = 0.0

    @classmethod
    def from_settings(
        cls, settings: Settings, upstream: ConnectUpstream | None = None, metrics: Metrics | None = None
    ) -> Sidecar:
        upstream = upstream or ConnectUpstream(
            settings.connect_urls,
            transport=build_transport(
                settings.upstream_transport, settings.upstream_max_connections, settings.upstream_keepalive_s
            ),
            connect_timeout_s=settings.upstream_connect_timeout_s,
            read_timeout_s=settings.upstream_read_timeout_s,
            pool_timeout_s=settings.upstream_pool_timeout_s,
            worker_down_s=settings.worker_down_s,
            rebalance_retry_max=settings.rebalance_retry_max,
            rebalance_retry_initial_backoff_ms=settings.rebalance_retry_initial_backoff_ms,
            rebalance_retry_max_backoff_ms=settings.rebalance_retry_max_backoff_ms,
        )
        upstream.observer = metrics
        detector = CapabilityDetector(
            upstream,
            settings.feature_modes(),
            settings.capability_refresh_s,
            on_answer=metrics.worker_answered if metrics else None,
        )
        view = None
        if settings.view_enabled and settings.config_storage_topic and settings.status_storage_topic:
            view = MaterializedView(
                client_kwargs(settings),
                config_topic=settings.config_storage_topic,
                status_topic=settings.status_storage_topic,
                offsets_topic=settings.offset_storage_topic,
            )
            if metrics:
                metrics.watch_view(view)
        sidecar = cls(settings, upstream, detector, view)
        sidecar.status_writer.observer = metrics
        return sidecar

    async def start(self) -> None:
        await self.status_writer.start()
        if self.view:
            await self.view.start()
            self._probe_task = asyncio.create_task(self._probe_workers(), name="worker-probe")
        await self.capabilities.start()

    async def stop(self) -> None:
        await self.capabilities.stop()
        await cancel_and_wait(self._probe_task)
        if self.view:
            await self.view.stop()
        await self.status_writer.stop()
        await self.upstream.aclose()

    # -- where reads come from -------------------------------------------------------------------
    @property
    def view_ready(self) -> bool:
        return self.view is not None and self.view.ready

    def reads_from_view(self) -> bool:
        """The view answers the read endpoints once ready, unless the operator chose the workers."""
        return self.view_ready and self.settings.read_from == "view"

    def view_is_stale(self) -> bool:
        """No worker answered the last probe: what the view shows may be out of date."""
        return self.workers_answering is False

    def view_age_s(self) -> float | None:
        return self.view.state.age_s() if self.view else None

    async def _probe_workers(self) -> None:
        """Keeps ``workers_answering`` current (and the plugin types the view needs) in the background."""
        while True:
            try:
                versions = await self.upstream.worker_versions()
                self.workers_answering = any(v is not None for v in versions.values())
                self.workers_checked_at = time.time()
                refresh = self.settings.capability_refresh_s
                if self.workers_answering and time.monotonic() - self._plugins_loaded_at > refresh:
                    await self._load_plugin_types()
            except Exception as err:  # noqa: BLE001 - the probe must outlive any single failure
                log.warning("worker probe failed", error=repr(err))
            await asyncio.sleep(self.settings.worker_probe_s)

    async def _load_plugin_types(self) -> None:
        """Connector class (and its aliases) -> source/sink, as the worker's plugin list says."""
        assert self.view is not None
        try:
            answer = await self.upstream.forward(UpstreamRequest("GET", "/connector-plugins"))
        except UpstreamError:
            return
        if answer.status != 200:
            return
        types: dict[str, str] = {}
        for plugin in orjson.loads(answer.body):
            cls, kind = plugin.get("class"), plugin.get("type")
            if not isinstance(cls, str) or kind not in ("source", "sink"):
                continue
            simple = cls.rsplit(".", 1)[-1]
            # the aliases Connect accepts (PluginUtils.simpleName / prunedName)
            for alias in (cls, simple, simple.removesuffix("Connector")):
                types[alias] = kind
        self.view.state.plugin_types = types
        self._plugins_loaded_at = time.monotonic()

    def connector_type(self, name: str) -> str | None:
        """``source`` or ``sink`` when the view knows the connector (ready, and its config read)."""
        if self.view is None or not self.view.ready or self.view.state.connector_config(name) is None:
            return None
        return self.view.state.connector_type(name)

    async def forward(self, request: UpstreamRequest) -> UpstreamResponse:
        """Pass a Connect REST request through to a worker of the cluster, unchanged."""
        return await self.upstream.forward(request)

    def readiness(self) -> Readiness:
        """With a view: ready once it has read its topics to the end offsets seen at start (it can then
        answer reads even while every worker is down). Without: once a worker reported its version."""
        if self.view is not None:
            checks = {"view_caught_up": self.view.ready}
        else:
            checks = {"worker_version_detected": self.capabilities.detected}
        return Readiness(all(checks.values()), checks)

    def info(self) -> dict[str, Any]:
        return {
            "capabilities": self.capabilities.as_dict(),
            "workers": list(self.upstream.workers),
            "settings": describe(self.settings),
            "view": self.view_info(),
        }

    def view_info(self) -> dict[str, Any] | None:
        if self.view is None:
            return None
        return {
            "ready": self.view.ready,
            "age_s": self.view_age_s(),
            "workers_answering": self.workers_answering,
            "tails": self.view.progress(),
            "counts": self.view.state.counts(),
            "records_applied": dict(self.view.applied),
            "records_skipped": {f"{t}:{r}": n for (t, r), n in self.view.skipped.items()},
        }
