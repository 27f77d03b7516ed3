"""The sidecars' own topic: what the sidecars of one Connect cluster share (the connectors' fences), with
no server of their own.

Created at start when it does not exist, as Connect creates its internal topics (``TopicAdmin``): one
partition (one order every sidecar reads), compacted, with the broker's append time as the records'
timestamps (one clock for the leases of every sidecar) and compaction held back for a day
(``min.compaction.lag.ms``: ``view.fences`` relies on it). Records are written one at a time through the
sidecar's one write path (``kafka_writes``), on one producer kept from the first write (dropped after a
failure, as the config writer does). Acknowledged means on the brokers; a sidecar reads its write back with
its tail of the topic (``MaterializedView``, tail ``sidecars``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import structlog

from .errors import TopicAdminError
from .kafka_writes import KafkaWrites, TopicKind
from .record_producer import RecordProducer
from .topic_admin import NewTopic, TopicAdmin

log = structlog.get_logger(__name__)

TOPIC_CONFIGS = {
    "cleanup.policy": "compact",
    "message.timestamp.type": "LogAppendTime",
    "min.compaction.lag.ms": str(24 * 3600 * 1000),
}


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
    ) -> None:
        self.topic = topic
        self._admin = admin
        self._producer_factory = producer_factory
        self.attempt_timeout_s = attempt_timeout_s
        self._writes = writes
        self._replication_factor = replication_factor
        self._producer: RecordProducer | None = None
        self._ensured = False
        self._starting = asyncio.Lock()
        self._users: dict[int, int] = {}  # per producer (by id): the writes under way on it
        writes.covers(TopicKind.SIDECARS, attempt_timeout_s)

    async def ensure(self) -> None:
        """The topic created unless it exists; a failure is logged, never fatal (the next write tries
        again; the tail says meanwhile why it cannot read)."""
        wanted = NewTopic(self.topic, 1, self._replication_factor, TOPIC_CONFIGS)
        try:
            (outcome,) = await self._admin.create([wanted])
        except TopicAdminError as err:
            log.error("creating the sidecars' topic failed", topic=self.topic, error=str(err))
            return
        if outcome.error is None:
            log.info("sidecars' topic created", topic=self.topic)
        elif outcome.error != "TopicAlreadyExistsError":
            log.error(
                "creating the sidecars' topic failed", topic=self.topic, error=outcome.error, message=outcome.message
            )
            return
        self._ensured = True

    async def write(self, key: bytes, value: bytes | None) -> None:
        """One record, with the write path's retries; raises its last error. Writes run concurrently (a
        presence, a claim, a release): they share the one producer, made once."""
        if not self._ensured:
            await self.ensure()
        producer = await self._started()
        self._users[id(producer)] = self._users.get(id(producer), 0) + 1
        try:
            await self._writes.write(TopicKind.SIDECARS, producer, self.topic, (key, value), self.attempt_timeout_s)
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


__all__ = ["TOPIC_CONFIGS", "SidecarTopic"]
