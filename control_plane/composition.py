"""The composition root: everything the sidecar runs is built here, from the settings, in order;
started in that order and stopped in reverse, a partial start undone (as Connect's
``ConnectDistributed.startConnect`` reads top to bottom: stores, herder, REST server).

    metrics (given) -> the write path to Kafka -> the workers' client -> capabilities -> Kafka: status
    writer, view, writers, consumer groups -> the features' parts -> the read rule -> one facade per
    feature -> herder

``running(settings, metrics)`` is an async context manager yielding the ``Runtime``: the typed state the
HTTP layer's lifespan hands its handlers. ``transport`` and ``status_producer`` put fakes under the
real upstream client and status writer (the unit tests' seams); nothing is swapped after construction.
"""

from __future__ import annotations

import contextlib
import re
import socket
import uuid
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass
from typing import Protocol

import structlog

from . import __version__
from .access import Access, build_access
from .access.audit import AuditLog
from .backoff import ProposalBackoff
from .domain.auto_restart import AutoRestarter, Backoff, Selection, ViewStatuses
from .domain.capabilities import CONNECTOR_OFFSETS_TOPIC_SINCE, Capabilities, Feature, Mode
from .domain.config_history import ConfigHistory, HistoryRecorder
from .domain.configs import Configs, ConnectorConfigs, ConnectorCreation
from .domain.connector_writes import ConnectorWrites
from .domain.create_route import CreateRoute
from .domain.errors import WorkerRefused
from .domain.fence import ConnectorFence
from .domain.herder import Herder
from .domain.lag import Lags, SinkLags, sink_group_of
from .domain.liveness import WorkerProbe
from .domain.membership import ClusterMembership
from .domain.newer import HealthCheck, Loggers, NewerApi
from .domain.newer.restart import ConnectorRestarter
from .domain.offsets import ConnectorStopper, EmulatedOffsets, StopAndOffsets, TaskShutdown, WorkerKafka
from .domain.outcomes import Answer, Refusal, Relay
from .domain.plan import Planner, config_digest
from .domain.plugins import PinHealth, PluginCatalog, Plugins, PluginVersions, WorkerCatalogs
from .domain.ports import ConnectorAdmins
from .domain.presence import Presence
from .domain.read_rule import ReadRule
from .domain.reads import Reads
from .domain.topic_creation import CreationPreviews, TopicCreation
from .domain.topics import Topics, TopicTracking
from .heap import HeapFreezer
from .kafka_config import client_kwargs, connector_admin_kwargs
from .kafka_security import KafkaSecurityError
from .metrics import Metrics
from .plugin_path import PluginPathScan
from .rules.config_diff import SecretDigests
from .rules.config_providers import ConfigProviders
from .rules.secrets import SecretRule
from .rules.worker_id import worker_id_of
from .settings import Settings, describe
from .storage.audit_sink import KafkaAuditSink
from .storage.config_writer import ConfigWriter
from .storage.consumer_groups import ConsumerGroups
from .storage.end_offsets import EndOffsets
from .storage.errors import TopicAdminError
from .storage.kafka_writes import KafkaWriteObserver, KafkaWrites, RetryPolicy
from .storage.log_reader import KafkaTopicReader
from .storage.offsets_writer import OffsetsWriter
from .storage.record_producer import AiokafkaRecordProducer, RecordProducer
from .storage.sidecar_topic import SidecarTopic
from .storage.status_writer import StatusWriter
from .storage.status_writes import StatusWriteObserver
from .storage.topic_admin import TopicAdmin
from .upstream import ConnectUpstream, Transport
from .upstream.client import build_transport
from .view import ClusterView, MaterializedView

log = structlog.get_logger(__name__)


@dataclass(frozen=True)
class Runtime:
    """What the handlers get: the herder, and the parts the sidecar's own endpoints and tests read."""

    settings: Settings
    herder: Herder
    metrics: Metrics
    upstream: ConnectUpstream
    status_writer: StatusWriter
    view: MaterializedView | None
    access: Access


def build_upstream(
    settings: Settings, metrics: Metrics | None = None, transport: Transport | None = None
) -> ConnectUpstream:
    return ConnectUpstream(
        settings.connect_urls,
        transport=transport or build_transport(settings.upstream_max_connections, settings.upstream_keepalive_s),
        connect_timeout_s=settings.upstream_connect_timeout_s,
        read_timeout_s=settings.upstream_read_timeout_s,
        pool_timeout_s=settings.upstream_pool_timeout_s,
        worker_down_s=settings.worker_down_s,
        rebalance_retry_max=settings.rebalance_retry_max,
        rebalance_retry_initial_backoff_ms=settings.rebalance_retry_initial_backoff_ms,
        rebalance_retry_max_backoff_ms=settings.rebalance_retry_max_backoff_ms,
        observer=metrics,
        max_concurrent_requests=settings.upstream_max_concurrent_requests,
        probe_timeout_s=settings.worker_probe_timeout_s,
    )


def build_kafka_writes(settings: Settings, observer: KafkaWriteObserver | None = None) -> KafkaWrites:
    """The one write path of every record the sidecar produces, with the status-store retry proposal's
    bounds (``status.storage.retry.*``)."""
    return KafkaWrites(
        RetryPolicy(settings.status_storage_retry_max_retries, ProposalBackoff.from_settings(settings)), observer
    )


def build_status_writer(
    settings: Settings,
    observer: StatusWriteObserver | None = None,
    producer: RecordProducer | None = None,
    writes: KafkaWrites | None = None,
) -> StatusWriter:
    """The status writer of the status-store retry proposal; not started without a status topic."""
    topic = settings.status_storage_topic
    request_timeout_ms = settings.status_write_request_timeout_ms
    if producer is None and topic:
        producer = AiokafkaRecordProducer(client_kwargs(settings), request_timeout_ms)
    return StatusWriter(
        topic,
        producer,
        writes or build_kafka_writes(settings),
        # aiokafka fails a record it could not deliver within its request timeout (a retriable error
        # the writer retries); this bound is the backstop for an attempt that still does not end.
        attempt_timeout_s=2 * request_timeout_ms / 1000,
        stop_timeout_s=request_timeout_ms / 1000,
        observer=observer,
    )


def build_view(settings: Settings, metrics: Metrics | None = None) -> MaterializedView | None:
    if not (settings.view_enabled and settings.config_storage_topic and settings.status_storage_topic):
        return None
    view = MaterializedView(
        client_kwargs(settings),
        config_topic=settings.config_storage_topic,
        status_topic=settings.status_storage_topic,
        offsets_topic=settings.offset_storage_topic,
        sidecars_topic=settings.sidecars_topic_name,
        timeline_capacity=settings.state_timeline_size,
    )
    if metrics is not None:
        metrics.watch_view(view)
    return view


def build_audit_sink(settings: Settings, writes: KafkaWrites) -> KafkaAuditSink | None:
    """The audit log's Kafka copy, with ``audit_topic`` (bounded; never blocks a request)."""
    if not settings.audit_topic:
        return None
    kafka, timeout_ms = client_kwargs(settings), settings.emulation_request_timeout_ms
    return KafkaAuditSink(
        settings.audit_topic,
        lambda: AiokafkaRecordProducer(kafka, timeout_ms),
        writes,
        max_queued=settings.audit_queue_max,
        attempt_timeout_s=2 * timeout_ms / 1000,
        stop_timeout_s=timeout_ms / 1000,
    )


def connector_admins(settings: Settings, timeout_ms: int) -> ConnectorAdmins:
    """The brokers of a connector's ``admin.override.*`` (KIP-158's checks ask them, as its tasks do)."""

    def of(overrides: Mapping[str, str]) -> TopicAdmin:
        try:
            return TopicAdmin(connector_admin_kwargs(settings, overrides), timeout_ms)
        except KafkaSecurityError as err:
            raise TopicAdminError("building the connector's admin client", str(err)) from None

    return of


@contextlib.asynccontextmanager
async def running(
    settings: Settings,
    metrics: Metrics,
    *,
    transport: Transport | None = None,
    status_producer: RecordProducer | None = None,
) -> AsyncIterator[Runtime]:
    async with contextlib.AsyncExitStack() as started:
        writes = build_kafka_writes(settings, metrics)
        access = build_access(settings, build_audit_sink(settings, writes))  # first: bad credentials stop the start
        upstream = build_upstream(settings, metrics, transport)
        started.push_async_callback(upstream.aclose)
        view = build_view(settings, metrics)
        status_writer = build_status_writer(settings, metrics, status_producer, writes)
        kafka = client_kwargs(settings)
        write_timeout_ms = settings.emulation_request_timeout_ms
        attempt_s = 2 * write_timeout_ms / 1000  # a metadata wait and the produce request

        def producer() -> RecordProducer:
            return AiokafkaRecordProducer(kafka, write_timeout_ms)

        config_topic = settings.config_storage_topic
        config_log = ConfigWriter(config_topic, producer, attempt_s, writes) if view and config_topic else None
        if config_log is not None:
            started.push_async_callback(config_log.stop)
        groups = ConsumerGroups(kafka, write_timeout_ms)
        read_back_s = settings.emulation_read_back_timeout_s
        me = sidecar_id(settings)
        path_converters = PluginPathScan(settings.plugin_path, settings.capability_refresh_s)
        catalog = PluginCatalog(upstream, refresh_s=settings.capability_refresh_s, path_converters=path_converters)
        worker_catalogs = WorkerCatalogs(  # this sidecar's worker's plugins, and the others' its peers report
            catalog,
            worker_versions=lambda: capabilities.worker_versions,
            worker_ids=settings.worker_ids(),
            sidecars=view.sidecars if view else None,
            installed=view.installed if view else None,
            sidecar=me,
        )
        sidecars = (
            SidecarTopic(
                settings.sidecars_topic_name,
                TopicAdmin(kafka, write_timeout_ms),
                producer,
                attempt_s,
                writes,
                replication_factor=settings.sidecars_topic_replication_factor,
            )
            if view
            else None
        )
        fence = (
            ConnectorFence(
                sidecars,
                view,
                sidecar=me,
                lease_s=settings.fence_lease_ms / 1000,
                wait_s=settings.fence_wait_s,
                read_timeout_s=read_back_s,
            )
            if sidecars and view and settings.fence_enabled
            else None
        )
        presence = (
            Presence(
                sidecars,
                view.sidecars,
                sidecar=me,
                url=settings.advertised,
                version=__version__,
                interval_s=settings.presence_interval_s,
                workers=lambda: capabilities.worker_versions,
                view_lag=lambda: {tail: lag.records if lag else None for tail, lag in view.lag().items()},
                stop_timeout_s=settings.shutdown_flush_timeout_s,
                installed=worker_catalogs.own,
                write_wait_s=settings.view_read_sync_window_s if settings.view_read_sync == "always" else 0.0,
                auto_restart=fence is not None,  # the auto-restarter is built where the fence is
                history=fence is not None and settings.history_enabled,
                read=view.tails["sidecars"].caught_up.is_set,
            )
            if sidecars and view
            else None
        )
        membership = ClusterMembership(
            groups,
            upstream,
            settings.group_id,
            version_timeout_s=settings.worker_probe_timeout_s,
            fence=fence,
            presence=presence,
            plugins=worker_catalogs.records,
        )
        capabilities = Capabilities(
            upstream,
            {Feature(name): mode for name, mode in settings.feature_modes().items()},
            # the versions of every live worker of the group decide, not only the given workers'
            group=membership if settings.workers_group_known else None,
            refresh_s=settings.capability_refresh_s,
            first_detection_wait_s=settings.upstream_connect_timeout_s,
            # the view serves topic tracking when it answers reads and the worker's switches are known
            view_answers=view is not None and settings.read_from == "view" and settings.tracking_switches_known,
            on_answer=metrics.worker_answered,
        )
        probe = (
            WorkerProbe(
                upstream,
                view,
                catalog,
                interval_s=settings.worker_probe_s,
                plugins_refresh_s=settings.capability_refresh_s,
            )
            if view
            else None
        )
        tracking = (
            TopicTracking(
                view.state,
                status_writer,
                enabled=settings.topic_tracking_enable,
                allow_reset=settings.topic_tracking_allow_reset,
            )
            if view
            else None
        )
        topic_creation = TopicCreation(  # KIP-158: the sidecar's own checks and preview, with the broker
            TopicAdmin(kafka, write_timeout_ms),
            worker_enabled=settings.topic_creation_enable,
            plugin_types=lambda: view.state.plugin_types if view else {},
            active=lambda: capabilities.decision(Feature.TOPIC_CREATION).mode is Mode.EMULATED,
            connector_admins=connector_admins(settings, write_timeout_ms),
        )

        async def group_members() -> list[str] | None:
            """The ids of the group's live workers (None when the group cannot be read)."""
            read = await membership.read()
            return None if read.error else [worker_id_of(w.url) for w in read.workers if w.url]

        plugin_versions = PluginVersions(capabilities, catalog, worker_catalogs, group_members)
        pin_health = PinHealth(plugin_versions, lambda: view.state.connector_configs) if view else None
        # the one step of a write under a precondition, fenced among the sidecars
        connector_writes = ConnectorWrites(view, groups, read_back_s, fence)
        configs = ConnectorConfigs(
            upstream,
            checks=(topic_creation, plugin_versions),
            enforce=settings.config_checks == "enforce",
            view=view,
            writes=connector_writes,
        )
        rule = ReadRule(
            capabilities=capabilities,
            workers=upstream,
            view=view,
            probe=probe,
            reads_from_view=settings.read_from == "view",
            read_your_writes_s=settings.read_your_writes_timeout_s,
            view_read_sync=settings.view_read_sync,
            view_read_sync_s=settings.view_read_sync_s,
            view_read_sync_window_s=settings.view_read_sync_window_s,
            writers_wait_s=presence.least_write_wait_s if presence else lambda: None,
        )
        advertise_effective = settings.advertised_version == "effective"
        worker_kafka = WorkerKafka(
            bootstrap=settings.bootstrap_servers,
            offsets_topic=settings.offset_storage_topic,
            consumer_group=settings.consumer_group_id,
            producer_bootstrap=settings.worker_producer_bootstrap_servers,
            consumer_bootstrap=settings.worker_consumer_bootstrap_servers,
            exactly_once_source_support=settings.exactly_once_source_support,
            config_providers=ConfigProviders.from_worker(settings.config_providers),
        )
        offsets = EmulatedOffsets(
            view,
            groups,
            groups,
            OffsetsWriter(producer, attempt_s, writes),
            KafkaTopicReader(kafka),
            worker=worker_kafka,
            read_back_timeout_s=read_back_s,
            shutdown=TaskShutdown(
                view,
                status_timeout_s=settings.emulation_task_stop_timeout_s,
                graceful_shutdown_s=settings.task_shutdown_graceful_timeout_ms / 1000,
            )
            if view
            else None,
            writes=connector_writes,
            connector_offsets_topics=lambda: capabilities.worker_has(CONNECTOR_OFFSETS_TOPIC_SINCE),
        )
        create_route = CreateRoute(
            upstream,
            membership.read_within if settings.workers_group_known else None,
            lambda: capabilities.worker_versions,
            timeout_s=settings.worker_probe_timeout_s,
        )
        auto_restart = (
            AutoRestarter(
                ViewStatuses(rule),
                view.auto_restarts,
                view.sidecars,
                fence,
                sidecars,
                view,
                ConnectorRestarter(upstream),
                backoff=Backoff(
                    settings.auto_restart_backoff_unit_s,
                    settings.auto_restart_backoff_cap_s,
                    settings.auto_restart_max_restarts or None,
                ),
                selection=Selection(settings.auto_restart, re.compile(settings.auto_restart_connectors)),
                interval_s=settings.auto_restart_check_s,
                read_timeout_s=read_back_s,
                audit=audited(access.audit),
            )
            if fence is not None and sidecars is not None and view is not None
            else None
        )
        recorder, history = (
            config_history(settings, view, sidecars, me, configs, connector_writes, access.secrets, read_back_s)
            if fence is not None and sidecars is not None and view is not None
            else (None, None)
        )
        end_offsets = EndOffsets(kafka, write_timeout_ms)
        started.push_async_callback(end_offsets.stop)

        def ready_state() -> ClusterView | None:
            return view.state if view is not None and view.ready else None

        sink_lags = SinkLags(
            ready_state, sink_group_of(worker_kafka), groups, end_offsets, interval_s=settings.lag_refresh_s
        )
        lags = Lags(sink_lags, ready_state) if view is not None else None
        previews = CreationPreviews(rule, topic_creation)
        plugins = Plugins(rule, plugin_versions, path_converters, pin_health)
        herder = Herder(  # one facade per feature, on one read rule; plugin_versions is the reads' StatusVersions
            rule,
            reads=Reads(
                rule,
                status_writer,
                plugin_versions,
                describe_settings=lambda: describe(settings),
                describe_writes=writes.describe,
                advertise_effective=advertise_effective,
            ),
            offsets=StopAndOffsets(rule, ConnectorStopper(view, config_log, connector_writes), offsets),
            topics=Topics(rule, tracking, view.history if view is not None else None),
            topic_creation=previews,
            plugins=plugins,
            configs=Configs(
                rule, configs, ConnectorCreation(create_route, configs, view, config_log, read_back_s, connector_writes)
            ),
            newer=NewerApi(
                rule,
                Loggers(upstream, timeout_s=settings.upstream_read_timeout_s),
                HealthCheck(upstream, settings.health_check_timeout_s),
                advertise_effective=advertise_effective,
            ),
            writes=connector_writes,
            membership=membership,
            route=create_route,
            auto_restart=auto_restart,
            lags=lags,
            history=history,
            plan=planner(
                configs,
                connector_writes,
                recorder.digests if recorder is not None else history_digests(settings, access.secrets),
                previews,
                plugins,
            )
            if view is not None
            else None,
        )
        metrics.watch_states(herder.reads.state_gauges)
        metrics.watch_read_syncs(rule)
        if pin_health is not None:
            metrics.watch_plugin_pins(pin_health.counts)
        await status_writer.start()  # stopped last: pending writes flushed first (graceful shutdown)
        started.push_async_callback(status_writer.stop, settings.shutdown_flush_timeout_s)
        if sidecars is not None:
            await sidecars.ensure()  # before its tail starts
            started.push_async_callback(sidecars.stop)
        if fence is not None:
            started.push_async_callback(fence.stop)  # its releases written before the producer stops
        if auto_restart is not None:
            metrics.watch_auto_restarts(auto_restart)
        if lags is not None:
            metrics.watch_lags(lags)
        sink_lag_refresh = sink_lags if view is not None else None
        if recorder is not None:
            metrics.watch_history(recorder)
        parts = (access.audit.sink, view, probe, capabilities, presence, auto_restart, recorder, sink_lag_refresh)
        for part in parts:
            if part is not None:
                await _start(started, part)
        if view is not None:  # the view's heap out of the full collections once it is read (control_plane.heap)
            await _start(started, HeapFreezer(view.wait_ready))
        yield Runtime(settings, herder, metrics, upstream, status_writer, view, access)


def config_history(
    settings: Settings,
    view: MaterializedView,
    log_: SidecarTopic,
    me: str,
    configs: ConnectorConfigs,
    writes: ConnectorWrites,
    secrets: SecretRule,
    read_back_s: float,
) -> tuple[HistoryRecorder, ConfigHistory]:
    """The config history's recorder (it records when this sidecar is the one that acts, and names the
    authors of this sidecar's writes) and what the endpoints ask."""
    if settings.history_secret_key is None:
        log.warning("HISTORY_SECRET_KEY is not set: the history's digests of secrets are keyed by the group id")
    digests = history_digests(settings, secrets)
    recorder = HistoryRecorder(
        view.history,
        view.sidecars,
        me,
        log_,
        view,
        digests,
        retention_s=settings.history_retention_s,
        interval_s=settings.history_check_s,
        read_timeout_s=read_back_s,
        ready=lambda: view.ready and view.tails["sidecars"].caught_up.is_set(),
    )
    if settings.history_enabled:  # off: this sidecar neither records nor names who made its writes
        writes.attribution = recorder

    async def rollback(name: str, config: dict[str, str | None], expected: Mapping[str, str | None]) -> object:
        return await configs.replace(name, config, lambda now: now == expected, what="the rollback")

    async def current(name: str) -> Mapping[str, str | None] | None:
        return (
            await writes.read_to_end(f"Failed to roll back connector {name}: cannot read the config topic")
        ).connector_config(name)

    return recorder, ConfigHistory(view.history, recorder, current, rollback)


def history_digests(settings: Settings, secrets: SecretRule) -> SecretDigests:
    """The keyed digests that stand for secret values (``HISTORY_SECRET_KEY``, else derived from the group id)."""
    key = settings.history_secret_key.get_secret_value() if settings.history_secret_key else None
    return SecretDigests((key or f"connect-group:{settings.group_id}").encode(), secrets)


def planner(
    configs: ConnectorConfigs,
    writes: ConnectorWrites,
    digests: SecretDigests,
    previews: CreationPreviews,
    plugins: Plugins,
) -> Planner:
    """Plan and apply (``domain.plan``): compared with the config topic read to its end, written as config
    writes of the sidecar's own."""

    async def current() -> dict[str, Mapping[str, str | None]]:
        state = await writes.read_to_end("Failed to plan: cannot read the config topic")
        return {name: dict(config) for name, config in state.connector_configs.items()}

    async def write(name: str, config: dict[str, str | None], seen: str | None) -> None:
        done = await configs.replace(name, config, lambda now: config_digest(now) == seen, what="the apply")
        checked(done)

    async def delete(name: str, seen: str) -> None:
        checked(await configs.delete_if(name, lambda now: config_digest(now) == seen, what="the apply"))

    async def topics(name: str, config: dict[str, str | None]) -> object:
        """KIP-158: what the worker would create for the topics the config names (``topic``, ``topics``)."""
        named = [t.strip() for key in ("topic", "topics") for t in (config.get(key) or "").split(",") if t.strip()]
        preview = await previews.preview(config, named, name)
        return preview.value if isinstance(preview, Answer) else None

    async def versions(name: str, config: dict[str, str | None]) -> object:
        report = await plugins.version_report(name, config)
        return report.value if isinstance(report, Answer) else None

    return Planner(current, digests, configs.validation_errors, write, delete, topics=topics, plugins=versions)


def checked(done: Refusal | Relay) -> None:
    """A write's outcome as an error when it was refused, by the sidecar or the worker."""
    if isinstance(done, Refusal):
        raise done.error
    if done.response.status >= 400:
        raise WorkerRefused.of(done.response.status, done.response.body)


def audited(audit: AuditLog) -> Callable[[str, str, int, float], None]:
    """Auto-restart's restarts in the audit log, as a request of its own would be."""

    def record(connector: str, path: str, status: int, duration_ms: float) -> None:
        audit.record(
            who="auto-restart",
            role=None,
            client=None,
            method="POST",
            path=path,
            query="includeTasks=true&onlyFailed=true",
            connector=connector,
            status=status,
            duration_ms=duration_ms,
            body=None,
            refused=False,
        )

    return record


def sidecar_id(settings: Settings) -> str:
    """How this sidecar names itself to the others: its host and port, and a suffix of this process."""
    return f"{socket.gethostname()}:{settings.port}/{uuid.uuid4().hex[:6]}"


class _Part(Protocol):
    async def start(self) -> None: ...

    async def stop(self) -> None: ...


async def _start(started: contextlib.AsyncExitStack, part: _Part) -> None:
    await part.start()
    started.push_async_callback(part.stop)


__all__ = [
    "Runtime",
    "build_audit_sink",
    "build_kafka_writes",
    "build_status_writer",
    "build_upstream",
    "build_view",
    "running",
]
