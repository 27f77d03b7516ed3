"""The features on top of the clients and the Kafka side: the read rule, one facade per feature, the herder.
Each feature decides for itself, native or emulated, and whether it can answer at all with what this
sidecar has (a part of the Kafka side it lacks is None: the feature answers its own refusal or does
without); nothing here decides."""

from __future__ import annotations

from dataclasses import dataclass

from ..domain.auto_restart import AutoRestart
from ..domain.capabilities import CONNECTOR_OFFSETS_TOPIC_SINCE, Capabilities
from ..domain.cluster.forward_route import ForwardRoute
from ..domain.cluster.outcome import OutcomeBarrier
from ..domain.cluster.writes import ConnectorWrites
from ..domain.configs import Configs, ConnectorConfigs, ConnectorCreation
from ..domain.herder import Herder
from ..domain.history import ConfigHistory, HistoryRecorder
from ..domain.lag import Lags, SinkLags
from ..domain.newer import HealthCheck, Loggers, NewerApi
from ..domain.newer.restart import ConnectorRestarter
from ..domain.offsets import ConnectorStopper, EmulatedOffsets, StopAndOffsets, WorkerKafka, sink_group_of
from ..domain.plan import PlanAndApply
from ..domain.plugins import PinHealth, PluginCatalog, Plugins, PluginVersions, WorkerCatalogs
from ..domain.read_rule import ReadRule
from ..domain.reads import Reads
from ..domain.topic_creation import CreationPreviews, TopicCreation, checks_active
from ..domain.topics import Topics
from ..plugin_path import PluginPathScan
from ..rules.config_providers import ConfigProviders
from ..rules.worker_id import worker_id_of
from ..settings import describe
from ..storage.log_reader import KafkaTopicReader
from ..storage.offsets_writer import OffsetsWriter
from .clients import Clients, connector_admins
from .kafka_side import NoKafkaSide


@dataclass(frozen=True)
class Features:
    """The herder, and the parts beside it that run in the background or that the metrics read (each None
    where the Kafka side lacks what it needs)."""

    herder: Herder
    rule: ReadRule
    pin_health: PinHealth | None
    recorder: HistoryRecorder | None
    sink_lags: SinkLags | None
    writes: ConnectorWrites


def build_features(
    clients: Clients,
    side: NoKafkaSide,
    capabilities: Capabilities,
    catalog: PluginCatalog,
    catalogs: WorkerCatalogs,
    path_converters: PluginPathScan,
) -> Features:
    settings, upstream = clients.settings, clients.upstream
    timeout_ms = settings.emulation_request_timeout_ms
    topic_creation = TopicCreation(  # KIP-158: the sidecar's own checks and preview, with the broker
        clients.topic_admin(),
        worker_enabled=settings.topic_creation_enable,
        plugin_types=side.plugin_types,
        active=checks_active(capabilities),
        connector_admins=connector_admins(settings, timeout_ms),
    )

    async def group_members() -> list[str] | None:
        """The ids of the group's live workers (None when the group cannot be read)."""
        read = await side.membership.read()
        return None if read.error else [worker_id_of(w.url) for w in read.workers if w.url]

    plugin_versions = PluginVersions(capabilities, catalog, catalogs, group_members)
    pin_health = side.pin_health(plugin_versions)
    # the one step of a write under a precondition, fenced among the sidecars
    writes = ConnectorWrites(
        side.view,
        clients.groups,
        clients.read_back_s,
        side.fence,
        unfenced=clients.metrics,
        barrier=OutcomeBarrier(
            upstream, hold_s=settings.unknown_outcome_hold_s, settle_s=settings.unknown_outcome_settle_s
        ),
        wait_s=settings.fence_wait_s,
    )
    configs = ConnectorConfigs(
        upstream,
        checks=(topic_creation, plugin_versions),
        enforce=settings.config_checks == "enforce",
        view=side.view,
        writes=writes,
    )
    rule = ReadRule(
        capabilities=capabilities,
        workers=upstream,
        view=side.view,
        probe=side.probe,
        reads_from_view=settings.read_from == "view",
        read_your_writes_s=settings.read_your_writes_timeout_s,
        view_read_sync=settings.view_read_sync,
        view_read_sync_s=settings.view_read_sync_s,
        view_read_sync_window_s=settings.view_read_sync_window_s,
        writers_wait_s=side.writers_wait_s,
    )
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
        side.view,
        clients.groups,
        clients.groups,
        OffsetsWriter(clients.producer, clients.attempt_s, clients.writes),
        KafkaTopicReader(clients.kafka),
        worker=worker_kafka,
        read_back_timeout_s=clients.read_back_s,
        shutdown=side.task_shutdown(),
        writes=writes,
        connector_offsets_topics=lambda: capabilities.worker_has(CONNECTOR_OFFSETS_TOPIC_SINCE),
    )
    route = ForwardRoute(
        upstream,
        side.membership.read_within if settings.workers_group_known else None,
        lambda: capabilities.worker_versions,
        timeout_s=settings.worker_probe_timeout_s,
    )
    restarter = ConnectorRestarter(upstream)
    recorder, kept = side.history(configs, writes)
    sink_lags = side.sink_lags(sink_group_of(worker_kafka))
    previews = CreationPreviews(rule, topic_creation)
    plugins = Plugins(rule, plugin_versions, path_converters, pin_health)
    advertise_effective = settings.advertised_version == "effective"
    herder = Herder(  # one facade per feature, on one read rule; plugin_versions is the reads' StatusVersions
        rule,
        reads=Reads(
            rule,
            clients.status_writer,
            plugin_versions,
            describe_settings=lambda: describe(settings),
            describe_writes=clients.writes.describe,
            advertise_effective=advertise_effective,
            coordination=side.coordination,
        ),
        offsets=StopAndOffsets(rule, ConnectorStopper(side.view, side.config_log, writes), offsets),
        topics=Topics(rule, side.tracking(clients.status_writer), side.history_table),
        topic_creation=previews,
        plugins=plugins,
        configs=Configs(
            rule,
            configs,
            ConnectorCreation(route, configs, side.view, side.config_log, clients.read_back_s, writes),
        ),
        newer=NewerApi(
            rule,
            Loggers(upstream, timeout_s=settings.upstream_read_timeout_s),
            HealthCheck(upstream, settings.health_check_timeout_s),
            advertise_effective=advertise_effective,
        ),
        auto_restart=AutoRestart(side.auto_restarter(rule, restarter)),
        history=ConfigHistory(kept),
        lag=Lags(sink_lags, side.ready_state),
        plan=PlanAndApply(side.planner(configs, writes, previews, plugins)),
        writes=writes,
        membership=side.membership,
        route=route,
        bulk_concurrency=settings.bulk_concurrency,
        bulk_budget_s=settings.request_budget_s,
    )
    return Features(herder, rule, pin_health, recorder, sink_lags, writes)


__all__ = ["Features", "build_features"]
