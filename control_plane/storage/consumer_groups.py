"""Sink connectors' consumer groups, through Kafka's admin protocol (aiokafka's client).

What Connect's Worker does with its ``Admin`` client for KIP-875 (``sinkConnectorOffsets``,
``alterSinkConnectorOffsets``, ``resetSinkConnectorOffsets``): read a group's committed offsets
(OffsetFetch), commit offsets as an administrator (OffsetCommit with generation -1 and no member id,
as ``Admin.alterConsumerGroupOffsets`` does), delete the offsets of some partitions (OffsetDelete,
``Admin.deleteConsumerGroupOffsets``), delete the group (DeleteGroups). Plus what the checks before
those need: the group's members (DescribeGroups) and the partition counts of topics (Metadata).

One client per call, closed after it (as the Worker makes one ``Admin`` per offsets request): nothing
goes stale while a broker restarts. A call is bounded by twice the request timeout; errors the broker
marks retriable (a coordinator loading or moving) are retried within that bound. Errors, translated
here where they enter::

    GroupOperationError      the broker refused the call or did not answer; ``cause`` says how
     └── GroupNotEmpty       the group has active members (its sink tasks have not stopped)
"""

from __future__ import annotations

import asyncio
from collections import defaultdict
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeAlias, TypeVar

import structlog
from aiokafka.client import AIOKafkaClient
from aiokafka.errors import KafkaError, for_code
from aiokafka.protocol.admin import DeleteGroupsRequest, DescribeGroupsRequest
from aiokafka.protocol.api import Request, RequestStruct, Response
from aiokafka.protocol.commit import OffsetCommitRequest, OffsetFetchRequest
from aiokafka.protocol.metadata import MetadataRequest
from aiokafka.protocol.types import Array, Int16, Int32, Schema, String

from .admin_client import AdminClients
from .errors import GroupNotEmpty, GroupOperationError, describe_error

log = structlog.get_logger(__name__)

TopicPartition: TypeAlias = tuple[str, int]
T = TypeVar("T")

# Kafka error codes (org.apache.kafka.common.protocol.Errors) the callers tell apart
NONE = 0
UNKNOWN_MEMBER_ID = 25
ILLEGAL_GENERATION = 22
REBALANCE_IN_PROGRESS = 27
NON_EMPTY_GROUP = 68
GROUP_ID_NOT_FOUND = 69
GROUP_SUBSCRIBED_TO_TOPIC = 86
# what the coordinator answers an administrator's commit or offset deletion while members are active
ACTIVE_MEMBER_ERRORS = frozenset(
    {UNKNOWN_MEMBER_ID, ILLEGAL_GENERATION, REBALANCE_IN_PROGRESS, NON_EMPTY_GROUP, GROUP_SUBSCRIBED_TO_TOPIC}
)
# the coordinator is loading, moving or not there yet: worth asking again (Admin's retry cases)
COORDINATOR_RETRIABLE = frozenset({14, 15, 16})
# group states without active members (ClassicGroupState / ConsumerGroupState)
EMPTY_STATES = frozenset({"Empty", "Dead", ""})


# -- OffsetDelete (API key 47): aiokafka has no request class for it ------------------------------
class OffsetDeleteResponse_v0(Response):
    API_KEY = 47
    API_VERSION = 0
    SCHEMA = Schema(
        ("error_code", Int16),
        ("throttle_time_ms", Int32),
        (
            "topics",
            Array(
                ("name", String("utf-8")),
                ("partitions", Array(("partition_index", Int32), ("error_code", Int16))),
            ),
        ),
    )


class OffsetDeleteRequest_v0(RequestStruct):
    API_KEY = 47
    API_VERSION = 0
    RESPONSE_TYPE = OffsetDeleteResponse_v0
    SCHEMA = Schema(
        ("group_id", String("utf-8")),
        ("topics", Array(("name", String("utf-8")), ("partitions", Array(Schema(("partition_index", Int32)))))),
    )


class OffsetDeleteRequest(Request[OffsetDeleteRequest_v0]):
    API_KEY = 47

    def __init__(self, group_id: str, topics: list[tuple[str, list[tuple[int]]]]) -> None:
        self._group_id = group_id
        self._topics = topics

    def build(self, request_struct_class: type[OffsetDeleteRequest_v0]) -> OffsetDeleteRequest_v0:
        return request_struct_class(self._group_id, self._topics)


def _by_topic(partitions: Iterable[TopicPartition]) -> dict[str, list[int]]:
    topics: dict[str, list[int]] = defaultdict(list)
    for topic, partition in sorted(set(partitions)):
        topics[topic].append(partition)
    return topics


def _error_name(code: int) -> str:
    return for_code(code).__name__ if code != GROUP_SUBSCRIBED_TO_TOPIC else "GroupSubscribedToTopicError"


@dataclass(frozen=True)
class GroupMember:
    """A member as DescribeGroups answers it: its metadata and assignment are the group protocol's bytes."""

    member_id: str
    client_id: str
    host: str
    metadata: bytes
    assignment: bytes


@dataclass(frozen=True)
class GroupDescription:
    group: str
    state: str  # Stable, PreparingRebalance, CompletingRebalance, Empty, Dead ("" when unknown)
    protocol_type: str  # "connect" for a Connect cluster's workers
    protocol: str  # the chosen protocol: default, compatible or sessioned for Connect
    members: tuple[GroupMember, ...]


class _Retriable(Exception):
    def __init__(self, code: int) -> None:
        super().__init__(_error_name(code))
        self.code = code


class ConsumerGroups:
    def __init__(self, client_kwargs: dict[str, Any], request_timeout_ms: int) -> None:
        admin = AdminClients(
            client_kwargs,
            request_timeout_ms,
            client_id="control-plane-offsets",
            error=GroupOperationError,
            plain=(_Retriable,),
        )
        self._client = admin.client
        self.bound_s = admin.bound_s
        self._admin_args = (client_kwargs, request_timeout_ms)

    async def _retrying(self, call: Callable[[], Awaitable[T]]) -> T:
        """Retry while the group's coordinator is loading or moving, or a connection is being made
        again; the caller's time bound ends it."""
        while True:
            try:
                return await call()
            except _Retriable as err:
                log.debug("retriable group error; trying again", error=str(err))
            except KafkaError as err:
                if not type(err).retriable:
                    raise
                log.debug("retriable Kafka error; trying again", error=describe_error(err))
            await asyncio.sleep(0.1)

    @staticmethod
    def _check(code: int) -> None:
        if code in COORDINATOR_RETRIABLE:
            raise _Retriable(code)

    async def _coordinator(self, client: AIOKafkaClient, group: str) -> int:
        return int(await client.coordinator_lookup(0, group))

    # -- reads -----------------------------------------------------------------------------------
    async def committed(self, group: str) -> dict[TopicPartition, int]:
        """The group's committed offsets; empty for a group that does not exist (as Admin answers)."""
        async with self._client(f"reading the offsets of consumer group {group}") as client:
            return await self._retrying(lambda: self._fetch_committed(client, group))

    async def committed_of(
        self, groups: Sequence[str], concurrent: int
    ) -> dict[str, dict[TopicPartition, int] | GroupOperationError]:
        """Many groups' committed offsets over one client (``concurrent`` groups at a time): each group's, or
        the error it failed with (the others go on)."""
        slots = asyncio.Semaphore(concurrent)
        async with self._client(f"reading the offsets of {len(groups)} consumer groups") as client:

            async def one(group: str) -> dict[TopicPartition, int] | GroupOperationError:
                async with slots:
                    try:
                        return await self._retrying(lambda: self._fetch_committed(client, group))
                    except GroupOperationError as err:
                        return err
                    except KafkaError as err:
                        return GroupOperationError("OffsetFetch", describe_error(err))

            return dict(zip(groups, await asyncio.gather(*(one(g) for g in groups)), strict=True))

    async def _fetch_committed(self, client: AIOKafkaClient, group: str) -> dict[TopicPartition, int]:
        node = await self._coordinator(client, group)
        response = await client.send(node, OffsetFetchRequest(group, None))
        top = getattr(response, "error_code", NONE)
        self._check(top)
        if top:
            raise GroupOperationError("OffsetFetch", _error_name(top))
        offsets = {}
        for topic, partitions in response.topics:
            for partition, offset, _metadata, code in partitions:
                self._check(code)
                if code:
                    raise GroupOperationError("OffsetFetch", f"{topic}-{partition}: {_error_name(code)}")
                if offset >= 0:
                    offsets[(topic, partition)] = offset
        return offsets

    async def active_members(self, group: str) -> int:
        """How many members the group has now (0 for an empty or unknown group)."""
        described = await self.describe(group)
        return 0 if described.state in EMPTY_STATES and not described.members else max(len(described.members), 1)

    async def describe(self, group: str) -> GroupDescription:
        """The group's state and members (an unknown group: Dead with none)."""
        async with self._client(f"describing group {group}") as client:

            async def describe() -> GroupDescription:
                node = await self._coordinator(client, group)
                response = await client.send(node, DescribeGroupsRequest([group]))
                for code, _group, state, ptype, protocol, members, *_ in response.groups:
                    self._check(code)
                    if code == GROUP_ID_NOT_FOUND:
                        break
                    if code:
                        raise GroupOperationError("DescribeGroups", _error_name(code))
                    return GroupDescription(
                        group,
                        state,
                        ptype,
                        protocol,
                        tuple(GroupMember(m[0], m[1], m[2], bytes(m[3]), bytes(m[4])) for m in members),
                    )
                return GroupDescription(group, "Dead", "", "", ())

            return await self._retrying(describe)

    async def partition_counts(self, topics: Iterable[str]) -> dict[str, int | None]:
        """Per topic, its number of partitions; None for a topic that does not exist."""
        names = sorted(set(topics))
        async with self._client("reading topic metadata") as client:
            metadata = await client.fetch_all_metadata()
            counts: dict[str, int | None] = {}
            for name in names:
                partitions = metadata.partitions_for_topic(name)
                counts[name] = len(partitions) if partitions else None
            return counts

    async def cluster_id(self, bootstrap: str | None = None) -> str | None:
        """The id of the Kafka cluster that ``bootstrap`` reaches (the sidecar's own brokers when None), as
        Metadata v2+ answers it (ConnectUtils.lookupKafkaClusterId); None from a broker too old to say. Other
        brokers are reached with the sidecar's own security settings."""
        client = self._client
        if bootstrap is not None:
            kwargs, timeout_ms = self._admin_args
            client = AdminClients(
                {**kwargs, "bootstrap_servers": bootstrap},
                timeout_ms,
                client_id="control-plane-offsets",
                error=GroupOperationError,
            ).client
        where = bootstrap or "the worker's brokers"
        async with client(f"describing the Kafka cluster at {where}") as kafka:
            answer = (await kafka.send(kafka.get_random_node(), MetadataRequest([], False))).to_object()
            found = answer.get("cluster_id")
            return str(found) if found else None

    async def unreachable(self) -> str | None:
        """Why Kafka cannot be reached now (the cause to name when a read times out), or None."""
        try:
            async with self._client("reaching Kafka") as client:
                await client.fetch_all_metadata()
        except GroupOperationError as err:
            return err.cause
        return None

    # -- writes ----------------------------------------------------------------------------------
    async def commit(self, group: str, offsets: Mapping[TopicPartition, int]) -> None:
        """Commit ``offsets`` as an administrator; GroupNotEmpty while the group has active members."""
        operation = f"committing offsets of consumer group {group}"
        topics = [
            (topic, [(p, offsets[(topic, p)], "") for p in partitions])
            for topic, partitions in _by_topic(offsets).items()
        ]
        async with self._client(operation) as client:

            async def send() -> None:
                node = await self._coordinator(client, group)
                request = OffsetCommitRequest(
                    group,
                    OffsetCommitRequest.DEFAULT_GENERATION_ID,
                    "",
                    OffsetCommitRequest.DEFAULT_RETENTION_TIME,
                    topics,
                )
                response = await client.send(node, request)
                self._raise_partition_errors(operation, response.topics)

            await self._retrying(send)

    async def delete_offsets(self, group: str, partitions: Iterable[TopicPartition]) -> None:
        """Delete the group's offsets of ``partitions``; GroupNotEmpty while members consume them."""
        operation = f"deleting offsets of consumer group {group}"
        topics = [(topic, [(p,) for p in ps]) for topic, ps in _by_topic(partitions).items()]
        async with self._client(operation) as client:

            async def send() -> None:
                node = await self._coordinator(client, group)
                response = await client.send(node, OffsetDeleteRequest(group, topics))
                if response.error_code == GROUP_ID_NOT_FOUND:
                    return  # no group, no offsets: nothing to delete
                if response.error_code in ACTIVE_MEMBER_ERRORS:
                    raise GroupNotEmpty(operation, _error_name(response.error_code))
                self._check(response.error_code)
                if response.error_code:
                    raise GroupOperationError(operation, _error_name(response.error_code))
                self._raise_partition_errors(operation, response.topics)

            await self._retrying(send)

    async def delete_group(self, group: str) -> bool:
        """Delete the group; False when there was no such group (the caller's success, as Worker's)."""
        operation = f"deleting consumer group {group}"
        async with self._client(operation) as client:

            async def send() -> bool:
                node = await self._coordinator(client, group)
                response = await client.send(node, DeleteGroupsRequest([group]))
                for _group, code in response.results:
                    if code == GROUP_ID_NOT_FOUND:
                        return False
                    if code == NON_EMPTY_GROUP:
                        raise GroupNotEmpty(operation, _error_name(code))
                    self._check(code)
                    if code:
                        raise GroupOperationError(operation, _error_name(code))
                return True

            return await self._retrying(send)

    def _raise_partition_errors(self, operation: str, topics: Iterable[tuple[str, Iterable[tuple[int, int]]]]) -> None:
        for topic, partitions in topics:
            for partition, code in partitions:
                if code in ACTIVE_MEMBER_ERRORS:
                    raise GroupNotEmpty(operation, f"{topic}-{partition}: {_error_name(code)}")
                self._check(code)
                if code:
                    raise GroupOperationError(operation, f"{topic}-{partition}: {_error_name(code)}")


__all__ = [
    "ConsumerGroups",
    "GroupDescription",
    "GroupMember",
    "GroupNotEmpty",
    "GroupOperationError",
    "TopicPartition",
]
