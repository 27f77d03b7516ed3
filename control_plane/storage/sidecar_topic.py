"""The sidecars' own topic: what the sidecars of one Connect cluster share (the connectors' fences), with
no server of their own.

Created at start when it does not exist, as Connect's ``KafkaConfigBackingStore`` creates its config topic
through ``TopicAdmin``: one partition (one order every sidecar reads), compacted, with the replication
factor of the setting (``-1``: the broker's ``default.replication.factor``, as Connect's
``config.storage.replication.factor`` reads it). Beyond Connect's: the broker's append time as the records'
timestamps (one clock for the leases of every sidecar), compaction held back for a day
(``min.compaction.lag.ms``: ``view.fences`` relies on it), and ``min.insync.replicas`` from the replication
factor the broker gives it (``min_insync_replicas``: 2 from 3 replicas, else 1), so that an acknowledged
claim survives a broker's loss where there are replicas to spare, and one broker down never stops writes.

An existing topic is checked at start (``check``): one that is not compacted, not stamped with the append
time, or has several partitions is refused (``TopicRefused``: nothing is written to it, and what needs it
says why); a lower ``min.compaction.lag.ms`` or ``min.insync.replicas`` is logged as a warning.

Records are written one at a time through the sidecar's one write path (``kafka_writes``, ``acks=all``), on
one producer kept from the first write (dropped after a failure, as the config writer does), each write
bounded in all by ``write_timeout_s``, retries included: a fence's claim holds a request, so the topic's
trouble shows in seconds (``unwritable``), never after the producer's minutes. Acknowledged means on the
brokers; a sidecar reads its write back with its tail of the topic (``MaterializedView``, tail
``sidecars``).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

import structlog

from .errors import AttemptTimeout, TopicAdminError, TopicMissing, TopicRefused, describe_error
from .kafka_writes import KafkaWrites, TopicKind
from .record_producer import RecordProducer
from .topic_admin import ExistingTopic, NewTopic, TopicAdmin

log = structlog.get_logger(__name__)

TOPIC_CONFIGS = {
    "cleanup.policy": "compact",
    "message.timestamp.type": "LogAppendTime",
    "min.compaction.lag.ms": str(24 * 3600 * 1000),
}
REQUIRED = ("cleanup.policy", "message.timestamp.type")  # refused when an existing topic differs


def min_insync_replicas(replication_factor: int) -> int:
    """2 from 3 replicas (an acknowledged write is on two brokers, and one broker may be down), else 1 (with
    two replicas, 2 would stop every write while either broker is down)."""
    return 2 if replication_factor >= 3 else 1


def check(topic: ExistingTopic) -> tuple[list[str], list[str]]:
    """What an existing sidecars' topic has that the sidecar cannot use (refusals) or should not (warnings)."""
    refusals, warnings = [], []
    for name in REQUIRED:
        have = topic.configs.get(name)
        if have is not None and have != TOPIC_CONFIGS[name]:
            refusals.append(f"{name} is {have}, not {TOPIC_CONFIGS[name]}")
    if topic.partitions != 1:
        refusals.append(f"it has {topic.partitions} partitions, not 1")
    lag = _number(topic.configs.get("min.compaction.lag.ms"))
    if lag is not None and lag < int(TOPIC_CONFIGS["min.compaction.lag.ms"]):
        warnings.append(
            f"min.compaction.lag.ms is {lag}, below {TOPIC_CONFIGS['min.compaction.lag.ms']}: a fence's records "
            "may be compacted away while a sidecar still reads them"
        )
    isr, wanted = _number(topic.configs.get("min.insync.replicas")), min_insync_replicas(topic.replication_factor)
    if isr is not None and isr < wanted:
        warnings.append(
            f"min.insync.replicas is {isr} with {topic.replication_factor} replicas: an acknowledged claim may be "
            f"lost with one broker (wanted: {wanted})"
        )
    elif isr is not None and isr > topic.replication_factor:
        warnings.append(f"min.insync.replicas is {isr} with {topic.replication_factor} replicas: no write can succeed")
    return refusals, warnings


def _number(value: str | None) -> int | None:
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None


class SidecarTopic:
    def __init__(
        self,
        topic: str,
        admin: TopicAdmin,
        producer_factory: Callable[[], RecordProducer],
        attempt_timeout_s: float,
        writes: KafkaWrites,
        *,
        replication_factor: int,
        write_timeout_s: float | None = None,
        create: bool = True,
    ) -> None:
        self.topic = topic
        self._admin = admin
        self._producer_factory = producer_factory
        self.attempt_timeout_s = attempt_timeout_s
        self._writes = writes
        self._replication_factor = replication_factor
        self.write_timeout_s = write_timeout_s
        self._create = create  # False: the topic must exist (created by `control-plane create-sidecars-topic`)
        self._producer: RecordProducer | None = None
        self._ensured = False
        self.refusal: str | None = None  # why the existing topic is not used (kept until a restart)
        self.unwritable: str | None = None  # why the last write failed; None once one succeeds
        self.missing: str | None = None  # the topic does not exist and is not the sidecar's to create
        self._starting = asyncio.Lock()
        self._users: dict[int, int] = {}  # per producer (by id): the writes under way on it
        writes.covers(TopicKind.SIDECARS, attempt_timeout_s)

    def trouble(self) -> str | None:
        """Why the topic cannot be used now (refused at start, or its last write failed); None when fine."""
        return self.refusal or self.missing or self.unwritable

    async def ensure(self) -> None:
        """The topic created unless it exists, else checked; a failure to reach the brokers is logged, never
        fatal (the next write tries again; the tail says meanwhile why it cannot read)."""
        try:
            await self._ensure()
        except TopicAdminError as err:
            log.error("creating the sidecars' topic failed", topic=self.topic, error=str(err))
        except TopicMissing as err:
            self.missing = str(err)
            log.error("the sidecars' topic does not exist and is not created by the sidecar", topic=self.topic)

    async def create(self) -> tuple[bool, str | None]:
        """``control-plane create-sidecars-topic``: the topic created as the sidecar creates it, or the existing
        one checked. (whether it is usable, why not)."""
        self._create = True
        await self._ensure()
        return self._ensured and self.refusal is None, self.refusal

    async def _ensure(self) -> None:
        self.missing = None
        if not self._create and (await self._admin.describe([self.topic])).get(self.topic) is None:
            raise TopicMissing(
                f"the sidecars' topic {self.topic} does not exist, and the sidecar does not create it "
                "(SIDECARS_TOPIC_CREATE=false, or the worker's internal.topics.automatic.creation.enable=false): "
                "create it with `control-plane create-sidecars-topic`"
            )
        # a validate-only creation first: the replication factor the broker gives it (-1: its default)
        wanted = NewTopic(self.topic, 1, self._replication_factor, TOPIC_CONFIGS)
        (preview,) = await self._admin.try_create([wanted])
        if preview.error is None:
            replicas = preview.replication_factor or 1
            configs = {**TOPIC_CONFIGS, "min.insync.replicas": str(min_insync_replicas(replicas))}
            (outcome,) = await self._admin.create([NewTopic(self.topic, 1, self._replication_factor, configs)])
            if outcome.error is None:
                log.info("sidecars' topic created", topic=self.topic, replication_factor=replicas, **configs)
                self._ensured = True
                return
        else:
            outcome = preview
        if outcome.error != "TopicAlreadyExistsError":
            log.error(
                "creating the sidecars' topic failed", topic=self.topic, error=outcome.error, message=outcome.message
            )
            return
        existing = (await self._admin.describe([self.topic])).get(self.topic)
        if existing is None:  # deleted meanwhile: the next write creates it
            return
        refusals, warnings = check(existing)
        for warning in warnings:
            log.warning("the sidecars' topic is usable, but", topic=self.topic, problem=warning)
        if refusals:
            self.refusal = f"the sidecars' topic {self.topic} cannot be used: {'; '.join(refusals)}"
            log.error("the sidecars' topic is refused", topic=self.topic, problems=refusals)
        self._ensured = True

    async def write(self, key: bytes, value: bytes | None) -> None:
        """One record, with the write path's retries, within ``write_timeout_s`` in all; raises its last
        error. Writes run concurrently (a presence, a claim, a release): they share the one producer, made
        once."""
        started = time.monotonic()
        if self.refusal is not None:
            raise TopicRefused(self.refusal)
        try:
            if not self._ensured:
                async with asyncio.timeout(self.write_timeout_s):
                    await self.ensure()
                if self.refusal is not None:
                    raise TopicRefused(self.refusal)
                if self.missing is not None:
                    raise TopicMissing(self.missing)
            within = None if self.write_timeout_s is None else self.write_timeout_s - (time.monotonic() - started)
            await self._write(key, value, within)
        except TimeoutError as err:  # the topic's creation or check did not finish within the bound
            self.unwritable = describe_error(AttemptTimeout(self.write_timeout_s or 0.0))
            raise AttemptTimeout(self.write_timeout_s or 0.0) from err
        except Exception as err:
            self.unwritable = describe_error(err)
            raise
        self.unwritable = None

    async def _write(self, key: bytes, value: bytes | None, within_s: float | None) -> None:
        producer = await self._started()
        self._users[id(producer)] = self._users.get(id(producer), 0) + 1
        try:
            await self._writes.write(
                TopicKind.SIDECARS,
                producer,
                self.topic,
                (key, value),
                self.attempt_timeout_s,
                within_s=max(within_s, 0.001) if within_s is not None else None,
            )
        except Exception:
            if self._producer is producer:
                self._producer = None  # failed for good: the next write makes a new one
            raise
        finally:
            left = self._users.pop(id(producer)) - 1
            if left:
                self._users[id(producer)] = left
            elif self._producer is not producer:
                # stopped once no other write uses it: a write that failed never stops the producer under
                # the others still retrying on it (a fence's release riding out a broker restart, say)
                await producer.stop()

    async def _started(self) -> RecordProducer:
        async with self._starting:
            if self._producer is None:
                producer = self._producer_factory()
                try:
                    await producer.start()
                except BaseException:
                    await producer.stop()
                    raise
                self._producer = producer
            return self._producer

    async def stop(self) -> None:
        producer, self._producer = self._producer, None
        if producer is not None:
            await producer.stop()


__all__ = ["TOPIC_CONFIGS", "SidecarTopic", "check", "min_insync_replicas"]
