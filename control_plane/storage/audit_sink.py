"""The audit log's Kafka copy: a bounded queue drained by one background task into a topic.

``offer`` never waits: a record that does not fit in the queue (Kafka down long enough to fill it) is
dropped and counted, so a request never waits on, or fails because of, the audit topic. Each record goes
through the sidecar's one write path (``kafka_writes``): one that failed with a retriable error is sent
again after the status-store retry proposal's backoff, at most its max retries; one that failed otherwise,
or ran out of retries, is given up on (logged and counted in ``failures``) and the queue goes on. ``stop``
flushes what is queued (retrying as before), bounded by ``stop_timeout_s``, then stops the producer.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable

import structlog

from .kafka_writes import KafkaWrites, TopicKind
from .record_producer import RecordProducer

log = structlog.get_logger(__name__)


class KafkaAuditSink:
    def __init__(
        self,
        topic: str,
        producer: Callable[[], RecordProducer],
        writes: KafkaWrites,
        *,
        max_queued: int,
        attempt_timeout_s: float,
        stop_timeout_s: float = 10.0,
    ) -> None:
        self.topic = topic
        self._producer_factory = producer
        self._producer: RecordProducer | None = None
        self._queue: asyncio.Queue[tuple[bytes, bytes]] = asyncio.Queue(max_queued)
        self._writes = writes
        self._attempt_timeout_s = attempt_timeout_s
        writes.covers(TopicKind.AUDIT, attempt_timeout_s)
        self._stop_timeout_s = stop_timeout_s
        self._task: asyncio.Task[None] | None = None
        self.sent = 0
        self.dropped = 0
        self.failures = 0  # records given up on

    def offer(self, key: bytes, value: bytes) -> bool:
        try:
            self._queue.put_nowait((key, value))
        except asyncio.QueueFull:
            self.dropped += 1
            if self.dropped == 1 or self.dropped % 1000 == 0:
                log.error("audit records dropped: the audit topic is not keeping up", dropped=self.dropped)
            return False
        return True

    @property
    def queued(self) -> int:
        return self._queue.qsize()

    async def start(self) -> None:
        self._producer = self._producer_factory()
        await self._producer.start()
        self._task = asyncio.create_task(self._drain(), name="audit-sink")

    async def _drain(self) -> None:
        producer = self._producer
        assert producer is not None
        while True:
            key, value = await self._queue.get()
            try:
                await self._writes.write(TopicKind.AUDIT, producer, self.topic, (key, value), self._attempt_timeout_s)
                self.sent += 1
            except Exception:  # noqa: BLE001 - logged by the write path; whatever the broker does, the sidecar goes on
                self.failures += 1
            self._queue.task_done()

    async def stop(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            try:
                async with asyncio.timeout(self._stop_timeout_s):
                    await self._queue.join()
            except TimeoutError:
                log.error("audit records not flushed in time", queued=self._queue.qsize())
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        producer, self._producer = self._producer, None
        if producer is not None:
            await producer.stop()


__all__ = ["KafkaAuditSink"]
