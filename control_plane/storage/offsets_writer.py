"""Writing source offsets to an offsets topic, where the worker cannot do it itself (KIP-875's alter
and reset on workers before 3.6).

The records come encoded (``codecs.offsets`` and the exact key bytes the caller chose): a value of
None is a tombstone. The record producer seam (``record_producer``) partitions a keyed record with
Kafka's default partitioner, ``toPositive(murmur2(key)) % partitions`` (``codecs.murmur2``), which is
where the worker's own producer puts it and where the worker looks it up. The records of one call are
sent together and each acknowledged (``acks=all``) or failed; ``OffsetsWriteFailed`` lists the keys that
were written and the ones that were not. One producer per call, stopped after it; each record is bounded
by twice the request timeout. Consistency: acknowledged means on the brokers; the caller reads the
topic back to confirm.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence

import structlog

from .errors import AttemptTimeout, WriteFailed
from .record_producer import RecordProducer
from .status_writes import describe_error, key_text

log = structlog.get_logger(__name__)

OffsetRecord = tuple[bytes, bytes | None]


class OffsetsWriteFailed(WriteFailed):
    def __init__(self, topic: str, written: Sequence[bytes], failed: Sequence[bytes], cause: BaseException) -> None:
        self.topic = topic
        self.written = tuple(written)
        self.failed = tuple(failed)
        self.cause = describe_error(cause)
        super().__init__(
            f"{len(self.failed)} of {len(self.written) + len(self.failed)} records to {topic} were not written "
            f"(first: {key_text(self.failed[0]) if self.failed else '-'}): {self.cause}"
        )


class OffsetsWriter:
    def __init__(self, producer_factory: Callable[[], RecordProducer], attempt_timeout_s: float) -> None:
        self._producer_factory = producer_factory
        self.attempt_timeout_s = attempt_timeout_s

    async def write(self, topic: str, records: Sequence[OffsetRecord]) -> None:
        """Write every record to ``topic``; raises OffsetsWriteFailed unless all were acknowledged."""
        if not records:
            return
        producer = self._producer_factory()

        async def send(key: bytes, value: bytes | None) -> None:
            try:
                async with asyncio.timeout(self.attempt_timeout_s):
                    await producer.send(topic, key, value)
            except TimeoutError as exc:
                raise AttemptTimeout(self.attempt_timeout_s) from exc

        try:
            await producer.start()
            outcomes = await asyncio.gather(*(send(k, v) for k, v in records), return_exceptions=True)
        finally:
            await producer.stop()
        sent = [(key, out) for (key, _), out in zip(records, outcomes, strict=True)]
        failed = [(key, out) for key, out in sent if isinstance(out, BaseException)]
        written = [key for key, out in sent if not isinstance(out, BaseException)]
        for key in written:
            log.info("offset record written", topic=topic, key=key_text(key))
        if failed:
            raise OffsetsWriteFailed(topic, written, [key for key, _ in failed], failed[0][1])


__all__ = ["OffsetRecord", "OffsetsWriteFailed", "OffsetsWriter"]
