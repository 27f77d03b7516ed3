"""Writing records to the config topic, where the worker cannot do it itself (KIP-875's stop).

Records go out one at a time, in the order given, each acknowledged by the brokers (``acks=all``) before
the next is sent, through the sidecar's one write path (``kafka_writes``: a record that failed with a
retriable error is sent again after the status-store retry proposal's backoff, at most its max retries,
before the next goes; one that failed otherwise fails at once): a failure leaves exactly the records
before it written, and ``ConfigWriteFailed`` says which. The config topic has one partition
(KafkaConfigBackingStore requires it), so the order written is the order every worker reads.

One producer (the record producer seam of ``record_producer``) made on the first write and kept, as
Connect's KafkaBasedLog keeps its own: a producer per call paid a bootstrap, a metadata request and a
connection to the leader each time, the most of an emulated stop's time and its slow tail; after a failed
write it is dropped and the next write makes a new one. Each attempt is bounded by twice the request
timeout. Consistency: acknowledged means on the brokers, not yet read by anyone: the caller reads the
topic back (the view's ``read_to_end``) to confirm.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import structlog

from ..codecs import ConfigRecord, Tombstone, encode_config
from ..codecs.config import ConfigKey
from .errors import WriteFailed, describe_error
from .kafka_writes import KafkaWrites, TopicKind
from .record_producer import RecordProducer
from .status_writes import key_text

log = structlog.get_logger(__name__)


class ConfigWriteFailed(WriteFailed):
    def __init__(
        self,
        written: Sequence[ConfigRecord | Tombstone[ConfigKey]],
        failed: ConfigRecord | Tombstone[ConfigKey],
        cause: BaseException,
    ) -> None:
        self.written = tuple(written)
        self.failed = failed
        self.cause = describe_error(cause)
        super().__init__(f"writing {key_text(encode_config(failed)[0])!r} failed: {self.cause}")


class ConfigWriter:
    def __init__(
        self,
        topic: str,
        producer_factory: Callable[[], RecordProducer],
        attempt_timeout_s: float,
        writes: KafkaWrites,
    ) -> None:
        self.topic = topic
        self._producer_factory = producer_factory
        self.attempt_timeout_s = attempt_timeout_s
        self._writes = writes
        self._producer: RecordProducer | None = None
        writes.covers(TopicKind.CONFIG, attempt_timeout_s)

    async def _started(self) -> RecordProducer:
        if self._producer is None:
            producer = self._producer_factory()
            await producer.start()
            self._producer = producer
        return self._producer

    async def _drop(self) -> None:
        producer, self._producer = self._producer, None
        if producer is not None:
            await producer.stop()

    async def stop(self) -> None:
        """At shutdown: the kept producer flushed and closed."""
        await self._drop()

    async def write(self, records: Sequence[ConfigRecord | Tombstone[ConfigKey]]) -> None:
        """Write ``records`` (a tombstone: a null value) in order, each with the proposal's retries; raises
        ConfigWriteFailed at the first that fails for good (the producer is then dropped: the next write
        starts a new one)."""
        written: list[ConfigRecord | Tombstone[ConfigKey]] = []
        try:
            producer = await self._started()
            for record in records:
                key, value = encode_config(record)
                try:
                    attempts = await self._writes.write(
                        TopicKind.CONFIG, producer, self.topic, (key, value), self.attempt_timeout_s
                    )
                except Exception as exc:
                    raise ConfigWriteFailed(written, record, exc) from exc
                log.info("config record written", topic=self.topic, key=key_text(key), attempts=attempts)
                written.append(record)
        except BaseException:
            await self._drop()
            raise


__all__ = ["ConfigWriteFailed", "ConfigWriter"]
