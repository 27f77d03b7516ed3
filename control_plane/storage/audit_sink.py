"""The audit log's Kafka copy: a bounded queue drained by one background task into a topic.

``offer`` never waits: a record that does not fit in the queue (Kafka down long enough to fill it) is
dropped and counted, so a request never waits on, or fails because of, the audit topic. A record whose
send fails is retried after ``retry_backoff_s`` while the sink runs. ``stop`` flushes what is queued
(retrying as before), bounded by ``stop_timeout_s``, then stops the producer.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable

import structlog

from .record_producer import RecordProducer
from .status_writes import describe_error

log = structlog.get_logger(__name__)


class KafkaAuditSink:
    def __init__(
        self,
        topic: str,
        producer: Callable[[], RecordProducer],
        *,
        max_queued: int,
        retry_backoff_s: float = 1.0,
        stop_timeout_s: float = 10.0,
    ) -> None:
        self.topic = topic
        self._producer_factory = producer
        self._producer: RecordProducer | None = None
        self._queue: asyncio.Queue[tuple[bytes, bytes]] = asyncio.Queue(max_queued)
        self._retry_backoff_s = retry_backoff_s
        self._stop_timeout_s = stop_timeout_s
        self._task: asyncio.Task[None] | None = None
        self.sent = 0
        self.dropped = 0
        self.failures = 0

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
            while True:
                try:
                    await producer.send(self.topic, key, value)
                    self.sent += 1
                    break
                except asyncio.CancelledError:
                    raise
                except Exception as exc:  # noqa: BLE001 - whatever the broker does, the sidecar goes on
                    self.failures += 1
                    log.warning("audit record not written", topic=self.topic, error=describe_error(exc))
                    await asyncio.sleep(self._retry_backoff_s)
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
