"""Writing source offsets to an offsets topic, where the worker cannot do it itself (KIP-875's alter
and reset on workers before 3.6).

The records come encoded (``codecs.offsets`` and the exact key bytes the caller chose): a value of
None is a tombstone. The record producer seam (``record_producer``) partitions a keyed record with
Kafka's default partitioner, ``toPositive(murmur2(key)) % partitions`` (``codecs.murmur2``), which is
where the worker's own producer puts it and where the worker looks it up. The records of one call are
sent together (pipelined) through the sidecar's one write path (``kafka_writes.KafkaWrites.write_all``):
each acknowledged (``acks=all``), or, having failed with a retriable error, sent again with the others that
did after the status-store retry proposal's backoff, at most its max retries; one that failed otherwise
fails at once. ``OffsetsWriteFailed`` lists the keys that were written and the ones that were not. One
producer per call, stopped after it; each attempt is bounded by twice the request timeout. Consistency:
acknowledged means on the brokers; the caller reads the topic back to confirm.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import structlog

from .errors import WriteFailed, describe_error
from .kafka_writes import KafkaWrites, TopicKind
from .record_producer import RecordProducer
from .status_writes import key_text

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
    def __init__(
        self, producer_factory: Callable[[], RecordProducer], attempt_timeout_s: float, writes: KafkaWrites
    ) -> None:
        self._producer_factory = producer_factory
        self.attempt_timeout_s = attempt_timeout_s
        self._writes = writes
        writes.covers(TopicKind.OFFSETS, attempt_timeout_s)

    async def write(self, topic: str, records: Sequence[OffsetRecord]) -> None:
        """Write every record to ``topic``, with the proposal's retries; raises OffsetsWriteFailed unless
        all were acknowledged."""
        if not records:
            return
        producer = self._producer_factory()
        try:
            await producer.start()
            outcomes = await self._writes.write_all(
                TopicKind.OFFSETS, producer, topic, list(records), self.attempt_timeout_s
            )
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
