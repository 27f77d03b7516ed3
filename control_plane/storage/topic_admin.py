"""What the brokers say about topics that do not exist yet (KIP-158's checks and preview), through Kafka's
admin protocol (aiokafka's client):

- ``live_brokers``: how many brokers the cluster's metadata lists (the bound of a replication factor), and
  the brokers that hold a replica of some partition but are not listed (down, or restarting): while there
  are any, the count is not the cluster's size;
- ``try_create``: a validate-only CreateTopics (v5+, KIP-525): for each topic, the broker's error, or the
  partitions, replication factor and every topic config the topic would be created with, the broker's
  defaults filled in (``-1`` partitions or replication factor: ``num.partitions``,
  ``default.replication.factor``). Nothing is created. Connect's ``TopicAdmin.createOrFindTopics`` sends
  the same request without ``validate_only`` when a source task first writes to a topic;
- ``describe``: topics that exist: their partitions, replication factor (Metadata, never auto-creating)
  and topic configs (DescribeConfigs).

One client per call (``storage.admin_client``), closed after it, bounded by twice the request timeout;
failures are raised as ``TopicAdminError`` naming the operation and the cause.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from aiokafka.client import AIOKafkaClient
from aiokafka.errors import for_code
from aiokafka.protocol.admin import DescribeConfigsRequest
from aiokafka.protocol.api import Request, RequestStruct, Response
from aiokafka.protocol.metadata import MetadataRequest
from aiokafka.protocol.types import Boolean, CompactArray, CompactString, Int8, Int16, Int32, Schema, TaggedFields

from .admin_client import AdminClients
from .errors import TopicAdminError

BROKER_DEFAULT = -1  # CreateTopics v4+: the broker's num.partitions / default.replication.factor
TOPIC_RESOURCE = 2  # ConfigResource.Type.TOPIC
TOPIC_ALREADY_EXISTS = 36
UNKNOWN_TOPIC_OR_PARTITION = 3
INVALID_TOPIC = 17  # a name no topic can have: none exists (a creation says why)


# -- CreateTopics v5 (API key 19, flexible): aiokafka has v0-v3, which do not answer the configs ---------
class CreateTopicsResponse_v5(Response):
    API_KEY = 19
    API_VERSION = 5
    SCHEMA = Schema(
        ("throttle_time_ms", Int32),
        (
            "topics",
            CompactArray(
                ("name", CompactString("utf-8")),
                ("error_code", Int16),
                ("error_message", CompactString("utf-8")),
                ("num_partitions", Int32),
                ("replication_factor", Int16),
                (
                    "configs",
                    CompactArray(
                        ("name", CompactString("utf-8")),
                        ("value", CompactString("utf-8")),
                        ("read_only", Boolean),
                        ("config_source", Int8),
                        ("is_sensitive", Boolean),
                        ("tags", TaggedFields),
                    ),
                ),
                ("tags", TaggedFields),
            ),
        ),
        ("tags", TaggedFields),
    )


class CreateTopicsRequest_v5(RequestStruct):
    FLEXIBLE_VERSION = True
    API_KEY = 19
    API_VERSION = 5
    RESPONSE_TYPE = CreateTopicsResponse_v5
    SCHEMA = Schema(
        (
            "topics",
            CompactArray(
                ("name", CompactString("utf-8")),
                ("num_partitions", Int32),
                ("replication_factor", Int16),
                (
                    "assignments",
                    CompactArray(
                        ("partition_index", Int32), ("broker_ids", CompactArray(Int32)), ("tags", TaggedFields)
                    ),
                ),
                (
                    "configs",
                    CompactArray(
                        ("name", CompactString("utf-8")), ("value", CompactString("utf-8")), ("tags", TaggedFields)
                    ),
                ),
                ("tags", TaggedFields),
            ),
        ),
        ("timeout_ms", Int32),
        ("validate_only", Boolean),
        ("tags", TaggedFields),
    )


class CreateTopicsV5Request(Request[CreateTopicsRequest_v5]):
    API_KEY = 19

    def __init__(self, topics: list[tuple[Any, ...]], timeout_ms: int, validate_only: bool) -> None:
        self._topics = topics
        self._timeout_ms = timeout_ms
        self._validate_only = validate_only

    def build(self, request_struct_class: type[CreateTopicsRequest_v5]) -> CreateTopicsRequest_v5:
        return request_struct_class(self._topics, self._timeout_ms, self._validate_only, {})


# -- what the callers get --------------------------------------------------------------------------------
@dataclass(frozen=True)
class NewTopic:
    """A topic to create: ``-1`` partitions or replication factor leaves them to the broker's defaults."""

    name: str
    partitions: int = BROKER_DEFAULT
    replication_factor: int = BROKER_DEFAULT
    configs: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class CreationOutcome:
    """The broker's answer to a validate-only creation: an error (its name and message), or what the
    topic would get (every topic config, with the broker's defaults)."""

    name: str
    error: str | None
    message: str | None
    partitions: int | None
    replication_factor: int | None
    configs: Mapping[str, str | None]


@dataclass(frozen=True)
class LiveBrokers:
    """The brokers the metadata lists (``count``), and the ids of those that hold a replica of a partition
    but are not listed (``absent``: down or restarting)."""

    count: int
    absent: frozenset[int] = frozenset()


@dataclass(frozen=True)
class ExistingTopic:
    name: str
    partitions: int
    replication_factor: int
    configs: Mapping[str, str | None]


def _error_name(code: int) -> str:
    return str(for_code(code).__name__)


class TopicAdmin:
    def __init__(self, client_kwargs: dict[str, Any], request_timeout_ms: int) -> None:
        admin = AdminClients(client_kwargs, request_timeout_ms, client_id="control-plane-topics", error=TopicAdminError)
        self._client = admin.client
        self._timeout_ms = request_timeout_ms
        self.bound_s = admin.bound_s

    @staticmethod
    def _node(client: AIOKafkaClient) -> Any:
        """The controller the metadata names (KRaft brokers forward admin requests to the quorum)."""
        controller = client.cluster.controller
        return controller.nodeId if controller is not None else client.get_random_node()

    async def live_brokers(self) -> LiveBrokers:
        """The Metadata of every topic: the brokers it lists, and the replicas on brokers it does not."""
        async with self._client("reading the cluster's brokers") as client:
            metadata = (await client.send(self._node(client), MetadataRequest(None, False))).to_object()
        listed = {broker["node_id"] for broker in metadata["brokers"]}
        replicas = {
            replica
            for topic in metadata["topics"]
            for partition in topic["partitions"] or ()
            for replica in partition["replicas"] or ()
        }
        return LiveBrokers(len(listed), frozenset(replicas - listed))

    async def try_create(self, topics: Sequence[NewTopic]) -> list[CreationOutcome]:
        """A validate-only CreateTopics of ``topics`` (distinct names), answered per topic in their order."""
        return await self._create(topics, validate_only=True)

    async def create(self, topics: Sequence[NewTopic]) -> list[CreationOutcome]:
        """CreateTopics of ``topics``, answered per topic in their order (``TopicAlreadyExistsError`` for one
        that exists)."""
        return await self._create(topics, validate_only=False)

    async def _create(self, topics: Sequence[NewTopic], *, validate_only: bool) -> list[CreationOutcome]:
        if not topics:
            return []
        entries: list[tuple[Any, ...]] = [
            (t.name, t.partitions, t.replication_factor, [], [(k, v, {}) for k, v in t.configs.items()], {})
            for t in topics
        ]
        doing = "validating new topics (CreateTopics, validate_only)" if validate_only else "creating topics"
        async with self._client(doing) as client:
            request = CreateTopicsV5Request(entries, self._timeout_ms, validate_only)
            response = (await client.send(self._node(client), request)).to_object()
        by_name = {}
        for topic in response["topics"]:
            code = topic["error_code"]
            by_name[topic["name"]] = CreationOutcome(
                topic["name"],
                _error_name(code) if code else None,
                topic["error_message"] if code else None,
                None if code else topic["num_partitions"],
                None if code else topic["replication_factor"],
                {} if code else {c["name"]: c["value"] for c in topic["configs"] or ()},
            )
        return [by_name[t.name] for t in topics]

    async def describe(self, names: Iterable[str]) -> dict[str, ExistingTopic | None]:
        """Per topic, what it has now; None for a topic that does not exist."""
        wanted = sorted(set(names))
        if not wanted:
            return {}
        async with self._client("describing topics") as client:
            metadata = (await client.send(self._node(client), MetadataRequest(wanted, False))).to_object()
            shape: dict[str, tuple[int, int]] = {}
            for topic in metadata["topics"]:
                code = topic["error_code"]
                if code in (UNKNOWN_TOPIC_OR_PARTITION, INVALID_TOPIC):
                    continue
                if code:
                    raise TopicAdminError(f"describing topic {topic['topic']}", _error_name(code))
                partitions = topic["partitions"]
                replicas = max((len(p["replicas"]) for p in partitions), default=0)
                shape[topic["topic"]] = (len(partitions), replicas)
            configs: dict[str, dict[str, str | None]] = {}
            if shape:
                request = DescribeConfigsRequest([(TOPIC_RESOURCE, name, None) for name in sorted(shape)])
                described = (await client.send(self._node(client), request)).to_object()
                for resource in described["resources"]:
                    if resource["error_code"]:
                        raise TopicAdminError(
                            f"describing the configs of topic {resource['resource_name']}",
                            f"{_error_name(resource['error_code'])}: {resource['error_message']}",
                        )
                    configs[resource["resource_name"]] = {
                        entry["config_names"]: entry["config_value"] for entry in resource["config_entries"]
                    }
        return {
            name: ExistingTopic(name, *shape[name], configs.get(name, {})) if name in shape else None for name in wanted
        }


__all__ = [
    "BROKER_DEFAULT",
    "CreationOutcome",
    "ExistingTopic",
    "LiveBrokers",
    "NewTopic",
    "TopicAdmin",
    "TopicAdminError",
]
