"""The I/O seam under the sidecar's writes to Kafka (``kafka_writes``, which the status, config, offsets
and audit writers write through): a small producer, and its aiokafka implementation.

``RecordProducer.send`` writes one record and returns once the broker acknowledged it, or raises;
``enqueue`` hands one over and returns its delivery future at once, so that many records go out together
(pipelined, in the producer's batches: a batch of status records, the records of an offsets write).
``AiokafkaRecordProducer`` is the real one; tests put a fake with the same methods underneath.

Which failures are retriable is decided by ``storage.errors.is_retriable``, never by the text of a
message.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any, Protocol

import structlog
from aiokafka import AIOKafkaProducer
from aiokafka.errors import KafkaError

from .errors import AttemptTimeout, is_retriable

log = structlog.get_logger(__name__)


class RecordProducer(Protocol):
    async def start(self) -> None: ...

    async def send(self, topic: str, key: bytes, value: bytes | None) -> None: ...

    async def enqueue(self, topic: str, key: bytes, value: bytes | None) -> asyncio.Future[Any]:
        """The record is in the producer's buffer; the future ends when the broker acknowledged it."""
        ...

    async def stop(self) -> None: ...


class AiokafkaRecordProducer:
    """One ``AIOKafkaProducer`` with ``acks=all``, connected on first use.

    Connecting lazily lets the sidecar start while the brokers are down: the first attempt that cannot
    bootstrap fails with aiokafka's retriable ``KafkaConnectionError`` and is retried like any other.
    As Connect's KafkaStatusBackingStore does (``retries=0``, idempotence off), the producer is not
    asked to make retries of its own beyond the one request timeout; the write path retries.
    """

    def __init__(self, client_kwargs: dict[str, Any], request_timeout_ms: int) -> None:
        self._kwargs = {
            **client_kwargs,
            "acks": "all",
            "enable_idempotence": False,
            "request_timeout_ms": request_timeout_ms,
            "client_id": "control-plane-status-writer",
        }
        self._stop_timeout_s = 2 * request_timeout_ms / 1000
        self._producer: AIOKafkaProducer | None = None
        self._connected = False
        self._connecting = asyncio.Lock()
        self._warm: asyncio.Task[None] | None = None

    async def start(self) -> None:
        self._producer = AIOKafkaProducer(**self._kwargs)  # needs the running loop: created here
        self._connected = False
        # Connected in the background now, so that the first write does not wait for the bootstrap (about
        # 0.8 s on a busy 2-core machine, the first topics reset's wait); a failure is only logged, and
        # the first write connects then (a retriable error while the brokers are down).
        self._warm = asyncio.get_running_loop().create_task(self._warm_up(self._producer), name="producer-connect")

    async def _warm_up(self, producer: AIOKafkaProducer) -> None:
        try:
            await self._connect(producer)
        except Exception as exc:  # noqa: BLE001 - the first write tries again and reports it
            log.info("record producer not connected yet", error=str(exc))

    async def _connect(self, producer: AIOKafkaProducer) -> None:
        async with self._connecting:
            if not self._connected:
                await producer.start()
                self._connected = True
                log.info("record producer connected", bootstrap_servers=self._kwargs["bootstrap_servers"])

    async def send(self, topic: str, key: bytes, value: bytes | None) -> None:
        # Shielded: a caller's timeout must not cancel aiokafka's own future (the record stays queued
        # in order behind its partition's earlier records and may still be delivered).
        await asyncio.shield(await self.enqueue(topic, key, value))

    async def enqueue(self, topic: str, key: bytes, value: bytes | None) -> asyncio.Future[Any]:
        producer = self._producer
        if producer is None:
            raise RuntimeError("the producer is not started")
        await self._connect(producer)
        delivery: asyncio.Future[Any] = await producer.send(topic, value=value, key=key)
        delivery.add_done_callback(_consume)
        return delivery

    async def stop(self) -> None:
        """Flushes what is queued, bounded: with the brokers gone, queued batches expire after one
        request timeout and aiokafka fails them, so the flush ends."""
        producer, self._producer = self._producer, None
        if producer is None:
            return
        if self._warm is not None and not self._warm.done():
            self._warm.cancel()
            await asyncio.gather(self._warm, return_exceptions=True)
        try:
            async with asyncio.timeout(self._stop_timeout_s):
                await producer.stop()
        except TimeoutError:
            log.error("record producer did not stop in time", timeout_s=self._stop_timeout_s)
            # aiokafka closes its client last, so a stop cut short leaves the connections open: closed
            # here, not left to the garbage collector
            with contextlib.suppress(KafkaError, OSError):
                await producer.client.close()


def _consume(future: asyncio.Future[Any]) -> None:
    """Retrieve a delivery's outcome so that a late failure nobody awaits is not reported as lost."""
    if not future.cancelled():
        future.exception()


__all__ = ["AiokafkaRecordProducer", "AttemptTimeout", "RecordProducer", "is_retriable"]
