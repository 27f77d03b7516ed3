"""The broker's facts, taken once by the job's driver with Kafka's admin API (aiokafka, the client the
sidecar already uses): reachability, the internal topics' end offsets, topic metadata and cleanup
policies, sink connectors' committed group offsets, their partitions' log start and end offsets, and the
offsets at a point in time. Every call is bounded by ``timeout_s``; a failure raises ``KafkaUnreachable``.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from control_plane.rules.connectors import sink_group_id
from control_plane.rules.java_regex import JavaRegex

if TYPE_CHECKING:  # aiokafka is imported when the broker is asked: an offline run never loads it (0.2 s)
    from aiokafka import AIOKafkaConsumer, TopicPartition
    from aiokafka.admin import AIOKafkaAdminClient

T = TypeVar("T")
PER_TOPIC_TIMEOUT_S = 5.0


class KafkaUnreachable(RuntimeError):
    """Kafka did not answer in time, or refused; the message names the bootstrap servers."""


@dataclass(frozen=True)
class SinkSpec:
    connector: str
    group: str
    exists: bool
    topics: tuple[str, ...] = ()
    regex: JavaRegex | None = None  # topics.regex, translated with java.util.regex's semantics

    def reads(self, topic: str) -> bool:
        """Whether the sink's consumer subscribes to ``topic``: one of its ``topics``, or a name its
        ``topics.regex`` matches whole (WorkerSinkTask subscribes with the Pattern; the consumer tests
        ``matcher(topic).matches()``)."""
        return topic in self.topics or (self.regex is not None and self.regex.fullmatch(topic))


@dataclass(frozen=True)
class BrokerTopic:
    topic: str
    partitions: int
    replication_factor: int
    cleanup_policy: str | None
    cleanup_policy_default: bool | None
    internal: bool


@dataclass(frozen=True)
class SinkPartition:
    connector: str
    group: str
    exists: bool
    topic: str
    partition: int
    committed: int | None
    log_start: int | None
    log_end: int | None
    offset_at_as_of: int | None
    offset_at_as_of_basis: str | None  # committed, offsets_for_times or log_end (see position_then)
    subscribed: bool  # the connector reads the topic (SinkSpec.reads); else its group's offset is another's


@dataclass
class BrokerFacts:
    topics: list[BrokerTopic] = field(default_factory=list)
    sink_partitions: list[SinkPartition] = field(default_factory=list)
    unreadable_topics: list[str] = field(default_factory=list)  # whose log offsets did not come back
    unreadable_groups: list[str] = field(default_factory=list)  # whose committed offsets did not


def sink_group(connector: str, properties: dict[str, str] | None, worker_group: str | None) -> str:
    """The sink's consumer group, by the rule the sidecar uses too (``rules.connectors.sink_group_id``)."""
    return sink_group_id(connector, properties, worker_group)


async def _bounded(awaitable: Awaitable[T], timeout_s: float, what: str, bootstrap: str) -> T:
    try:
        async with asyncio.timeout(timeout_s):
            return await awaitable
    except TimeoutError:
        raise KafkaUnreachable(f"Kafka at {bootstrap} did not answer within {timeout_s:g}s ({what})") from None
    except KafkaUnreachable:
        raise
    except Exception as err:  # noqa: BLE001 - aiokafka's errors, connection refused...
        raise KafkaUnreachable(f"Kafka at {bootstrap} failed ({what}): {err!r}") from None


class KafkaAdmin:
    """``async with KafkaAdmin(kwargs, timeout_s) as admin``: one admin client and one consumer."""

    def __init__(self, client_kwargs: dict[str, Any], timeout_s: float = 10.0) -> None:
        self._kwargs = client_kwargs
        self.bootstrap = str(client_kwargs.get("bootstrap_servers"))
        self.timeout_s = timeout_s
        self._request_ms = int(timeout_s * 1000)
        self.admin: AIOKafkaAdminClient
        self.consumer: AIOKafkaConsumer

    def _bound(self, awaitable: Awaitable[T], what: str) -> Awaitable[T]:
        return _bounded(awaitable, self.timeout_s, what, self.bootstrap)

    async def __aenter__(self) -> KafkaAdmin:
        from aiokafka import AIOKafkaConsumer
        from aiokafka.admin import AIOKafkaAdminClient

        self.admin = AIOKafkaAdminClient(**self._kwargs, request_timeout_ms=self._request_ms)
        self.consumer = AIOKafkaConsumer(
            **self._kwargs, group_id=None, enable_auto_commit=False, request_timeout_ms=self._request_ms
        )
        try:
            await self._bound(self.admin.start(), "connecting")
            await self._bound(self.admin.describe_cluster(), "describing the cluster")
            await self._bound(self.consumer.start(), "connecting a consumer")
        except BaseException:
            await self.__aexit__(None, None, None)
            raise
        return self

    async def __aexit__(self, *exc: object) -> None:
        for close in (self.consumer.stop, self.admin.close):
            with contextlib.suppress(Exception):  # closing is best effort
                await asyncio.wait_for(close(), 5)

    async def partitions(self, topics: Iterable[str]) -> dict[str, int]:
        """Partition counts of the topics that exist."""
        described = await self._bound(self.admin.describe_topics(list(topics)), "describing topics")
        return {d["topic"]: len(d["partitions"]) for d in described if d.get("error_code", 0) == 0 and d["partitions"]}

    async def end_offsets(self, topics: dict[str, int]) -> dict[str, dict[int, int]]:
        from aiokafka import TopicPartition

        tps = [TopicPartition(t, p) for t, count in topics.items() for p in range(count)]
        if not tps:
            return {}
        ends = await self._bound(self.consumer.end_offsets(tps), "reading end offsets")
        out: dict[str, dict[int, int]] = {}
        for tp, offset in ends.items():
            out.setdefault(tp.topic, {})[tp.partition] = offset
        return out

    async def topics(self) -> list[BrokerTopic]:
        names = await self._bound(self.admin.list_topics(), "listing topics")
        if not names:
            return []
        described = await self._bound(self.admin.describe_topics(names), "describing topics")
        from aiokafka.admin.config_resource import ConfigResource, ConfigResourceType

        resources = [ConfigResource(ConfigResourceType.TOPIC, n, configs={"cleanup.policy": None}) for n in names]
        responses = await self._bound(self.admin.describe_configs(resources), "describing topic configs")
        policies: dict[str, tuple[str | None, bool | None]] = {}
        for response in responses:
            for resource in response.resources:
                error_code, _message, _type, name, entries = resource[:5]
                if error_code:
                    continue
                for entry in entries:
                    if entry[0] == "cleanup.policy":
                        # v0: (name, value, read_only, is_default, is_sensitive); v1+: (..., config_source, ...)
                        source = entry[3]
                        is_default = source is True if isinstance(source, bool) else source == 5  # DEFAULT_CONFIG
                        policies[name] = (entry[1], is_default)
        out = []
        for d in described:
            if d.get("error_code", 0) or not d["partitions"]:
                continue
            replicas = max(len(p["replicas"]) for p in d["partitions"])
            policy, is_default = policies.get(d["topic"], (None, None))
            out.append(
                BrokerTopic(d["topic"], len(d["partitions"]), replicas, policy, is_default, bool(d.get("is_internal")))
            )
        return sorted(out, key=lambda t: t.topic)

    async def groups(self) -> set[str]:
        listed = await self._bound(self.admin.list_consumer_groups(), "listing consumer groups")
        return {g[0] for g in listed}

    async def committed(self, group: str) -> dict[TopicPartition, int]:
        offsets = await self._bound(self.admin.list_consumer_group_offsets(group), f"offsets of group {group}")
        return {tp: meta.offset for tp, meta in offsets.items() if meta.offset is not None and meta.offset >= 0}

    async def log_bounds(
        self, tps: list[TopicPartition], as_of_ms: int | None
    ) -> tuple[dict[TopicPartition, int], dict[TopicPartition, int], dict[TopicPartition, int | None], list[str]]:
        """Log start and end offsets (and the offsets at ``as_of_ms``), topic by topic: a topic deleted
        meanwhile, or one whose leader does not answer, is left out and named, the others still count."""
        starts: dict[TopicPartition, int] = {}
        ends: dict[TopicPartition, int] = {}
        at: dict[TopicPartition, int | None] = {}
        unreadable: list[str] = []
        by_topic: dict[str, list[TopicPartition]] = {}
        for tp in tps:
            by_topic.setdefault(tp.topic, []).append(tp)
        for topic, parts in sorted(by_topic.items()):
            try:
                async with asyncio.timeout(min(self.timeout_s, PER_TOPIC_TIMEOUT_S)):
                    topic_starts = await self.consumer.beginning_offsets(parts)
                    topic_ends = await self.consumer.end_offsets(parts)
                    found = (
                        await self.consumer.offsets_for_times(dict.fromkeys(parts, as_of_ms))
                        if as_of_ms is not None
                        else {}
                    )
            except Exception:  # noqa: BLE001 - a timeout, or the topic went away: this topic only
                unreadable.append(topic)
                continue
            starts.update(topic_starts)
            ends.update(topic_ends)
            at.update({tp: (o.offset if o is not None else None) for tp, o in found.items()})
        return starts, ends, at, unreadable


async def _collect_sinks(
    admin: KafkaAdmin, sinks: list[SinkSpec], topics: list[BrokerTopic], as_of_ms: int | None, facts: BrokerFacts
) -> list[SinkPartition]:
    from aiokafka import TopicPartition

    existing_groups = await admin.groups()
    partition_counts = {t.topic: t.partitions for t in topics}
    per_sink: list[tuple[SinkSpec, dict[TopicPartition, int | None]]] = []
    for sink in sinks:
        committed: dict[TopicPartition, int | None] = {}
        if sink.group in existing_groups:
            try:
                committed.update(await admin.committed(sink.group))
            except KafkaUnreachable:  # e.g. the group went away meanwhile: this sink only
                facts.unreadable_groups.append(sink.group)
        if sink.exists:
            # a pattern subscription leaves out internal topics (exclude.internal.topics; ConsumerMetadata.retainTopic)
            names = {t.topic for t in topics if not t.internal and sink.reads(t.topic)} | set(sink.topics)
            for name in names:
                for p in range(partition_counts.get(name, 0)):
                    committed.setdefault(TopicPartition(name, p), None)
        if committed:
            per_sink.append((sink, committed))
    all_tps = sorted({tp for _, c in per_sink for tp in c if tp.topic in partition_counts})
    now_ms = int(time.time() * 1000)
    past = as_of_ms is not None and as_of_ms < now_ms
    starts, ends, at, unreadable = await admin.log_bounds(all_tps, as_of_ms if past else None)
    facts.unreadable_topics.extend(unreadable)

    def position_then(tp: TopicPartition, committed: int | None) -> tuple[int | None, str | None]:
        """Where the sink was at the restore time, and what that is based on: for a plan as of now
        (``as_of_ms`` None or not in the past) its committed offset; for a past time the first record
        written at or after it (Kafka's offsets-for-times), or the log end when there is none: where the
        sink stood then had it caught up (its group's commit history is not read)."""
        if not past:
            return committed, ("committed" if committed is not None else None)
        found = at.get(tp)
        if found is not None:
            return found, "offsets_for_times"
        end = ends.get(tp)
        return end, ("log_end" if end is not None else None)

    return [
        SinkPartition(
            sink.connector,
            sink.group,
            sink.exists,
            tp.topic,
            tp.partition,
            offset,
            starts.get(tp),
            ends.get(tp),
            *position_then(tp, offset),
            sink.reads(tp.topic),
        )
        for sink, committed in per_sink
        for tp, offset in sorted(committed.items())
    ]


def check_reachable(client_kwargs: dict[str, Any], timeout_s: float) -> None:
    """Fail fast (before Spark starts) when Kafka does not answer."""

    async def run() -> None:
        async with KafkaAdmin(client_kwargs, timeout_s):
            pass

    asyncio.run(run())


def internal_topic_ends(
    client_kwargs: dict[str, Any], topics: list[str], timeout_s: float, optional: tuple[str, ...] = ()
) -> dict[str, dict[int, int]]:
    """Per internal topic, its partitions' end offsets now (the Kafka read stops there). A topic of
    ``optional`` that does not exist is left out; any other is an error."""

    async def run() -> dict[str, dict[int, int]]:
        async with KafkaAdmin(client_kwargs, timeout_s) as admin:
            counts = await admin.partitions([*topics, *optional])
            missing = [t for t in topics if t not in counts]
            if missing:
                raise KafkaUnreachable(f"Kafka at {admin.bootstrap} has no topic {', '.join(missing)}")
            return await admin.end_offsets(counts)

    return asyncio.run(run())


def broker_facts(
    client_kwargs: dict[str, Any], sinks: list[SinkSpec], as_of_ms: int | None, timeout_s: float
) -> BrokerFacts:
    async def run() -> BrokerFacts:
        async with KafkaAdmin(client_kwargs, timeout_s) as admin:
            topics = await admin.topics()
            facts = BrokerFacts(topics)
            facts.sink_partitions = await _collect_sinks(admin, sinks, topics, as_of_ms, facts) if sinks else []
            return facts

    return asyncio.run(run())
