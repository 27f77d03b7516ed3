"""The sidecar's clients, built from the settings: the one write path of every record it produces, the
workers' client, the status writer, the audit log's Kafka copy, the consumer groups' and end offsets'
clients. ``Clients`` holds them for the rest of the composition; the ``build_*`` functions are also what the
tests build one part with."""

from __future__ import annotations

import socket
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..access import Access, build_access
from ..backoff import ProposalBackoff
from ..domain.ports import ConnectorAdmins
from ..kafka_config import client_kwargs, connector_admin_kwargs
from ..kafka_security import KafkaSecurityError
from ..metrics import Metrics
from ..settings import Settings
from ..storage.audit_sink import KafkaAuditSink
from ..storage.consumer_groups import ConsumerGroups
from ..storage.end_offsets import EndOffsets
from ..storage.errors import TopicAdminError
from ..storage.kafka_writes import KafkaWriteObserver, KafkaWrites, RetryPolicy
from ..storage.record_producer import AiokafkaRecordProducer, RecordProducer
from ..storage.status_writer import StatusWriter
from ..storage.status_writes import StatusWriteObserver
from ..storage.topic_admin import TopicAdmin
from ..upstream import ConnectUpstream, Transport
from ..upstream.client import build_transport
from ..view import MaterializedView


@dataclass(frozen=True)
class Clients:
    """What every part of the sidecar is built on: the settings, its id among the sidecars (``me``), the
    metrics, access control, the workers' client, the one Kafka write path and the status writer, the
    consumer groups' and end offsets' clients, and what a Kafka client is made with (``kafka``: its
    arguments; ``attempt_s``: a write attempt's bound; ``read_back_s``: a read-back's)."""

    settings: Settings
    me: str
    metrics: Metrics
    access: Access
    upstream: ConnectUpstream
    writes: KafkaWrites
    status_writer: StatusWriter
    groups: ConsumerGroups
    end_offsets: EndOffsets
    kafka: dict[str, Any]
    attempt_s: float
    read_back_s: float

    def producer(self) -> RecordProducer:
        """A producer of the sidecar's own records (each writer makes its own)."""
        return AiokafkaRecordProducer(self.kafka, self.settings.emulation_request_timeout_ms)

    def topic_admin(self) -> TopicAdmin:
        return TopicAdmin(self.kafka, self.settings.emulation_request_timeout_ms)


def build_clients(
    settings: Settings,
    metrics: Metrics,
    transport: Transport | None = None,
    status_producer: RecordProducer | None = None,
) -> Clients:
    writes = build_kafka_writes(settings, metrics)
    access = build_access(settings, build_audit_sink(settings, writes))  # first: bad credentials stop the start
    kafka, timeout_ms = client_kwargs(settings), settings.emulation_request_timeout_ms
    return Clients(
        settings,
        sidecar_id(settings),
        metrics,
        access,
        build_upstream(settings, metrics, transport),
        writes,
        build_status_writer(settings, metrics, status_producer, writes),
        ConsumerGroups(kafka, timeout_ms),
        EndOffsets(kafka, timeout_ms),
        kafka,
        attempt_s=2 * timeout_ms / 1000,  # a metadata wait and the produce request
        read_back_s=settings.emulation_read_back_timeout_s,
    )


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
    """The materialized view of the internal topics; None when the settings turn it off or name no config or
    status topic (the sidecar then has no Kafka side: ``kafka_side``)."""
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


def sidecar_id(settings: Settings) -> str:
    """How this sidecar names itself to the others: its host and port, and a suffix of this process."""
    return f"{socket.gethostname()}:{settings.port}/{uuid.uuid4().hex[:6]}"


__all__ = [
    "Clients",
    "build_audit_sink",
    "build_clients",
    "build_kafka_writes",
    "build_status_writer",
    "build_upstream",
    "build_view",
    "connector_admins",
    "sidecar_id",
]
