"""The small interfaces the domain's features depend on, each implemented by one class of ``storage``,
``upstream`` or ``view`` (named below) and by a few-line fake in the unit tests. Built and wired in one
place, ``control_plane.composition``; the features never see settings or Kafka client arguments.

Some ports are met by a feature of the domain itself, so that the features never import one another
(the ``domain-features`` import contract): the plugin list the view needs for connector types
(``PluginTypes``, read by the spine's ``liveness.WorkerProbe``) and the plugin versions the reads add to
statuses (``StatusVersions``), both ``plugins``' own; the restarts of a connector's instances
(``InstanceRestarts``, ``newer``'s, for ``auto_restart``); a sink's consumer group as its worker has it
(``SinkGroupOf``, ``offsets``', for ``lag``). ``Actor`` is the cluster's (``cluster.acting``). Each is
handed to the others at composition.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from ..codecs import ConfigRecord, StatusRecord, Tombstone
from ..codecs.config import ConfigKey
from ..codecs.status import StatusKey
from ..storage.consumer_groups import GroupDescription
from ..storage.log_reader import LogRecord
from ..storage.offsets_writer import OffsetRecord
from ..storage.status_writes import StatusWrites
from ..storage.topic_admin import CreationOutcome, ExistingTopic, LiveBrokers, NewTopic
from ..upstream import UpstreamRequest, UpstreamResponse
from ..view import ClusterView, ConnectorStateView, StateEntry
from .connect_api import Config

TopicPartition = tuple[str, int]
ConfigOf = Callable[[str], Awaitable[Config | None]]  # a connector's configuration by name, None if unknown
Amend = Callable[[Any], Awaitable[Any]]  # a worker's JSON answer, with what the sidecar adds


class ConfigLog(Protocol):
    """Writes to the config topic, in order (``storage.config_writer.ConfigWriter``); raises
    ``ConfigWriteFailed`` naming what was written before the failure."""

    async def write(self, records: Sequence[ConfigRecord | Tombstone[ConfigKey]]) -> None: ...


class OffsetsLog(Protocol):
    """Writes to an offsets topic (``storage.offsets_writer.OffsetsWriter``): exact key bytes, a value of
    None is a tombstone; raises ``OffsetsWriteFailed`` naming what was and was not written."""

    async def write(self, topic: str, records: Sequence[OffsetRecord]) -> None: ...


class TopicReader(Protocol):
    """Reads a whole topic once, from its beginning to its end (``storage.log_reader.KafkaTopicReader``);
    raises ``ReadTimeout``."""

    async def read_all(self, topic: str, timeout_s: float) -> Sequence[LogRecord]: ...


class GroupAdmin(Protocol):
    """Sink connectors' consumer groups (``storage.consumer_groups.ConsumerGroups``); raises
    ``GroupOperationError`` and ``GroupNotEmpty``."""

    async def committed(self, group: str) -> dict[TopicPartition, int]: ...

    async def active_members(self, group: str) -> int: ...

    async def commit(self, group: str, offsets: Mapping[TopicPartition, int]) -> None: ...

    async def delete_offsets(self, group: str, partitions: Iterable[TopicPartition]) -> None: ...

    async def delete_group(self, group: str) -> bool: ...


class WorkerGroup(Protocol):
    """The members of a Kafka group (``storage.consumer_groups.ConsumerGroups``): Connect's workers are one."""

    async def describe(self, group: str) -> GroupDescription: ...


class ClusterMetadata(Protocol):
    """What the brokers say about topics and themselves (``storage.consumer_groups.ConsumerGroups``)."""

    async def partition_counts(self, topics: Iterable[str]) -> dict[str, int | None]: ...

    async def cluster_id(self, bootstrap: str | None = None) -> str | None:
        """The id of the cluster ``bootstrap`` reaches (None: the sidecar's own brokers); raises
        ``GroupOperationError`` when it cannot be reached."""
        ...

    async def unreachable(self) -> str | None: ...


class BrokerTopics(Protocol):
    """What the brokers say about topics to create (``storage.topic_admin.TopicAdmin``); raises
    ``TopicAdminError``."""

    async def live_brokers(self) -> LiveBrokers: ...

    async def try_create(self, topics: Sequence[NewTopic]) -> list[CreationOutcome]: ...

    async def describe(self, names: Iterable[str]) -> dict[str, ExistingTopic | None]: ...


class ConnectorAdmins(Protocol):
    """The brokers a connector's own admin client reaches: ``overrides`` are its ``admin.override.*`` keys
    without the prefix, on top of the worker's settings (``Worker.adminConfigs``). Raises
    ``TopicAdminError`` when the sidecar cannot use them (a security setting it does not support, a config
    provider reference only the worker resolves)."""

    def __call__(self, overrides: Mapping[str, str]) -> BrokerTopics: ...


class ViewSnapshot(Protocol):
    """The materialized view of the internal topics (``view.MaterializedView``): its state, whether it
    has read to the end offsets seen at start, and read-your-writes."""

    @property
    def state(self) -> ClusterView: ...

    @property
    def ready(self) -> bool: ...

    def has_tail(self, topic: str) -> bool: ...

    def diagnostics(self) -> dict[str, Any]: ...

    def tail_error(self, topic: str) -> str | None: ...

    async def read_to_end(self, topic: str, timeout_s: float) -> None: ...

    async def read_all_to_end(self, topics: Sequence[str], timeout_s: float | None) -> None: ...

    def fresh_within(self, topics: Sequence[str], window_s: float) -> bool: ...

    async def until_fresh(self, topics: Sequence[str], window_s: float) -> None: ...

    async def wait_for(self, topic: str, condition: Callable[[ClusterView], bool], timeout_s: float) -> None: ...


class StatusSink(Protocol):
    """Status-topic writes with the status-store retry proposal's retries, in the background
    (``storage.status_writer.StatusWriter``); ``submit_all``: many at once, pipelined, returning at once;
    ``write_all``: the same, until each is acknowledged or failed for good (raises ``StatusWriteError``
    then)."""

    @property
    def running(self) -> bool: ...

    def submit_record(self, record: StatusRecord | Tombstone[StatusKey]) -> object: ...

    def submit_all(self, records: Sequence[StatusRecord | Tombstone[StatusKey]]) -> Sequence[object]: ...

    async def write_all(self, records: Sequence[StatusRecord | Tombstone[StatusKey]]) -> None: ...

    def snapshot(self) -> StatusWrites: ...


class Workers(Protocol):
    """The Connect workers' REST API (``upstream.ConnectUpstream``): a request passed through unchanged (to
    any worker, or to a given one), and every worker's version."""

    @property
    def workers(self) -> tuple[str, ...]: ...

    async def forward(self, request: UpstreamRequest) -> UpstreamResponse: ...

    async def send_to(self, worker: str, request: UpstreamRequest, timeout_s: float | None = None) -> UpstreamResponse:
        """To that worker only; raises ``UpstreamError`` (``UpstreamTimeout`` after ``timeout_s``)."""
        ...

    async def worker_versions(self) -> dict[str, str | None]: ...


class Actor(Protocol):
    """Which sidecar of the cluster does one piece of work for all of them (``cluster.acting.OneActor``)."""

    def acting_sidecar(self) -> str | None:
        """The sidecar that acts now (None: none can)."""
        ...

    def acting(self) -> bool:
        """Whether this sidecar is the one that acts."""
        ...


class InstanceRestarts(Protocol):
    """Restarts of a connector's instance and of some of its tasks, through the restart endpoints every
    worker version has (``newer.restart.ConnectorRestarter``): the connector first, then each task; raises
    ``WorkerRefused`` when a worker refuses one (the ones after it are not sent)."""

    async def restart_instances(self, connector: str, *, connector_instance: bool, tasks: Sequence[int]) -> None: ...


@dataclass(frozen=True)
class GroupUnknown:
    """Why a sink's consumer group is not read here: a reference the sidecar cannot resolve, or a consumer
    on another Kafka cluster than the worker's."""

    reason: str


SinkGroupOf = Callable[[str, Config], "str | GroupUnknown"]  # a sink's consumer group, by its name and config


class PluginTypes(Protocol):
    """The workers' plugin list, loaded for the view's connector types (``plugins.PluginCatalog``):
    ``load`` keeps the last list when it fails (False)."""

    async def load(self) -> bool: ...

    def connector_types(self) -> dict[str, str]: ...


class StatusVersions(Protocol):
    """The plugin versions statuses show where the workers do not (KIP-891 before 4.1;
    ``plugins.PluginVersions``): in the view's answers, and added to a worker's JSON answers, each
    connector's configuration read with ``config_of``; each connector's and task's version that of the
    worker that runs it (its ``worker_id``)."""

    def emulated(self) -> bool: ...

    def revision(self) -> object:
        """Changes when a version shown may change (what is known of the workers' plugins)."""
        ...

    def with_versions(self, state: ConnectorStateView, config: Config | None) -> ConnectorStateView: ...

    def task_with_version(self, entry: StateEntry, config: Config | None) -> StateEntry: ...

    def amend_listing(self, config_of: ConfigOf) -> Amend: ...

    def amend_status(self, config_of: ConfigOf) -> Amend: ...

    def amend_task(self, name: str, config_of: ConfigOf) -> Amend: ...


__all__ = [
    "Actor",
    "Amend",
    "BrokerTopics",
    "ClusterMetadata",
    "ConfigLog",
    "ConfigOf",
    "ConnectorAdmins",
    "GroupAdmin",
    "GroupUnknown",
    "InstanceRestarts",
    "OffsetsLog",
    "PluginTypes",
    "SinkGroupOf",
    "StatusSink",
    "StatusVersions",
    "TopicPartition",
    "TopicReader",
    "ViewSnapshot",
    "WorkerGroup",
    "Workers",
]
