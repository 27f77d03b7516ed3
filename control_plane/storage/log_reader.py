"""Tailing one of Connect's internal topics from the beginning, as every worker does (KafkaBasedLog).

``TopicTail`` assigns itself every partition of the topic (no consumer group), seeks to the beginning
and hands each record to a callback, in offset order per partition. It remembers the end offsets it
saw at start: ``caught_up`` is set once it has read up to them. ``read_to_end`` waits until everything
written before the call has been read, which is how a writer confirms its write (read-your-writes).
Consistency: the callback sees every record of a partition exactly once and in order; the callback
must not block.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple, Protocol

import structlog
from aiokafka import AIOKafkaConsumer, TopicPartition
from aiokafka.errors import KafkaError

from ..background import cancel_and_wait
from .consumer_stop import stop_consumer
from .errors import ReadTimeout

log = structlog.get_logger(__name__)

# How long the broker holds a tail's fetch that finds nothing new: aiokafka's default, 500 ms. A broker
# answers the requests of one connection in order, so any other request on the tail's connection waits
# behind a held fetch; the end offsets are therefore asked on a connection of their own, at start too
# (``end_offsets``; asked on the tail's, a tail of an empty topic waited the whole hold to catch up).
# A longer hold (5 s) halved an idle sidecar's CPU but is not safe for freshness: once a partition's
# records wait unconsumed for aiokafka's ``prefetch_backoff`` (100 ms; a busy loop), its fetcher sends a
# fetch for the node's other partitions, and while the broker holds that one (they are idle) the
# partition with records cannot be fetched again: its next record waits up to the hold
# (``Fetcher._get_actions_per_node``: no fetch to a node with one in flight). Seen once as the view
# lagging a 4.3.1 worker in tests/integration/test_view.py under load.
IDLE_FETCH_WAIT_MS = 500
# How long a round of a tail's read-ahead (``fresh_within``) may take before it is given up.
READ_AHEAD_TIMEOUT_S = 5.0


class Record(Protocol):
    """What a tail hands on: the consumer's own record, not copied (a tail hands on a million of them
    while it catches up), read-only. ``LogRecord`` is one too."""

    @property
    def topic(self) -> str: ...
    @property
    def partition(self) -> int: ...
    @property
    def offset(self) -> int: ...
    @property
    def timestamp(self) -> int: ...
    @property
    def key(self) -> bytes | None: ...
    @property
    def value(self) -> bytes | None: ...


@dataclass(frozen=True, slots=True)
class LogRecord:
    topic: str
    partition: int
    offset: int
    timestamp: int  # ms since the epoch, as the broker stored it
    key: bytes | None
    value: bytes | None

    @classmethod
    def of(cls, record: Record) -> LogRecord:
        """A record a tail handed on, kept (the tail's own may hold more than these fields)."""
        return cls(record.topic, record.partition, record.offset, record.timestamp, record.key, record.value)


class FetchedRecord(NamedTuple):
    """A record as the tail hands it on when it could skip the consumer's own record object (a tuple is
    a third of its cost: the consumer's has eleven fields, headers copied)."""

    topic: str
    partition: int
    offset: int
    timestamp: int
    key: bytes | None
    value: bytes | None


def _lean_records(consumer: AIOKafkaConsumer) -> None:
    """Make the fetches the consumer holds, not yet handed out, hand out ``FetchedRecord`` tuples.

    aiokafka builds a ``ConsumerRecord`` per record in ``PartitionRecords._consumer_record`` (looked up on
    the instance for every record): shadowed on each buffered fetch's instance. Fetches that arrive while
    ``getmany`` waits are handed out as usual; where aiokafka's internals differ (another version), nothing
    is changed. Both kinds are a ``Record``."""
    buffered = getattr(getattr(consumer, "_fetcher", None), "_records", None)
    if not isinstance(buffered, dict):
        return
    for result in buffered.values():
        records = getattr(result, "_partition_records", None)
        own = getattr(records, "__dict__", None)
        if own is not None and "_consumer_record" not in own and hasattr(records, "_consumer_record"):
            own["_consumer_record"] = _fetched_record


def _fetched_record(tp: TopicPartition, record: Any) -> FetchedRecord:
    return FetchedRecord(tp.topic, tp.partition, record.offset, record.timestamp, record.key, record.value)


@dataclass(frozen=True, slots=True)
class TailLag:
    records: int  # records written and not yet read (by the ends the last fetches saw)
    poll_age_s: float  # since the oldest last fetch over the topic's partitions


class TopicTail:
    def __init__(
        self,
        topic: str,
        client_kwargs: dict[str, Any],
        on_record: Callable[[Record], None],
        *,
        poll_timeout_ms: int = 500,
        max_records: int = 5000,
        on_records: Callable[[Sequence[Record]], int] | None = None,
    ) -> None:
        """``on_records``: if given, handed each partition's records of a fetch at once instead of one by
        one to ``on_record`` (a million at start: a call each costs); it applies each record on its own,
        as ``on_record`` would be called, and returns how many of them failed."""
        self.topic = topic
        self._kwargs = client_kwargs
        self._on_record = on_record
        self._on_records = on_records
        self._poll_timeout_ms = poll_timeout_ms
        self._max_records = max_records
        self._consumer: AIOKafkaConsumer | None = None
        self._task: asyncio.Task[None] | None = None
        self._positions: dict[int, int] = {}  # next offset to read, per partition
        self._partition_ids: list[int] = []
        self._start_ends: dict[int, int] | None = None
        self._progress = asyncio.Condition()
        self.caught_up = asyncio.Event()
        self.records_read = 0
        self.failed_records = 0
        self.last_record_at: float | None = None  # wall clock of the last record applied
        self.error: str | None = None
        # end offsets are asked on a connection of their own: a broker answers the requests of one
        # connection in order, so on the tail's they would wait behind its long-poll fetch (up to 500 ms)
        self._ends_client: AIOKafkaConsumer | None = None
        self._ends_lock = asyncio.Lock()
        # callers of ``read_to_end`` share end-offset requests: those who came while one was in flight wait
        # for the next, which all of them share (``_ends_after_now``)
        self._next_ends: asyncio.Future[dict[int, int]] | None = None
        self._asking: asyncio.Task[None] | None = None
        # the loop time before the send of the last end-offsets request the tail has read to (``fresh_within``),
        # the last time a read wanted it fresher, and the read-ahead
        self._fresh_at = float("-inf")
        self._wanted_at = float("-inf")
        self._ahead_asked_at = float("-inf")  # when the read-ahead's round under way was sent, at the earliest
        self._freshened = asyncio.Event()  # set, and replaced, each time ``_fresh_at`` moves
        self._reading_ahead: asyncio.Task[None] | None = None

    async def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name=f"tail-{self.topic}")

    async def stop(self) -> None:
        await cancel_and_wait(self._task)
        await cancel_and_wait(self._reading_ahead)
        await cancel_and_wait(self._asking)
        if self._next_ends is not None and not self._next_ends.done():
            self._next_ends.set_exception(ReadTimeout(f"stopped reading {self.topic}"))
        consumer, self._consumer = self._consumer, None
        await stop_consumer(consumer, self.topic)
        await self._close_ends_client()

    async def _close_ends_client(self) -> None:
        client, self._ends_client = self._ends_client, None
        await stop_consumer(client, self.topic)

    async def _partitions(self, consumer: AIOKafkaConsumer) -> list[TopicPartition]:
        delay = 0.2
        while True:
            # a fresh metadata snapshot of the whole cluster (the consumer's own cache only holds
            # topics it was told about)
            metadata = await consumer._client.fetch_all_metadata()
            partitions = metadata.partitions_for_topic(self.topic)
            if partitions:
                return [TopicPartition(self.topic, p) for p in sorted(partitions)]
            self.error = f"topic {self.topic} does not exist (yet)"
            log.info("waiting for topic", topic=self.topic)
            await asyncio.sleep(delay)
            delay = min(delay * 2, 5.0)

    async def _run(self) -> None:
        delay = 0.5
        while True:
            try:
                await self._consume()
            except asyncio.CancelledError:
                raise
            except Exception as err:
                self.error = repr(err)
                log.warning(
                    "reading topic failed; retrying",
                    topic=self.topic,
                    error=repr(err),
                    exc_info=not isinstance(err, KafkaError),
                )
                consumer, self._consumer = self._consumer, None
                await stop_consumer(consumer, self.topic)  # its connections closed even if its close fails
                await asyncio.sleep(delay)
                delay = min(delay * 2, 10.0)

    async def _consume(self) -> None:
        consumer = AIOKafkaConsumer(
            **self._kwargs,
            group_id=None,
            enable_auto_commit=False,
            auto_offset_reset="earliest",
            isolation_level="read_committed",  # as KafkaConfigBackingStore reads with exactly-once on
            fetch_max_wait_ms=IDLE_FETCH_WAIT_MS,
        )
        self._consumer = consumer
        await consumer.start()
        tps = await self._partitions(consumer)
        self._partition_ids = [tp.partition for tp in tps]
        consumer.assign(tps)
        fresh = []
        for tp in tps:
            if tp.partition in self._positions:
                consumer.seek(tp, self._positions[tp.partition])
            else:
                fresh.append(tp)
        if fresh:  # one call for all: each call waits for a round of the fetcher
            await consumer.seek_to_beginning(*fresh)
        if self._start_ends is None:  # on the ends' connection: on the tail's, behind a held fetch (an empty topic)
            self._start_ends = await self.end_offsets()
            log.info("tailing topic", topic=self.topic, end_offsets=self._start_ends)
        self.error = None
        while True:
            await self._check_caught_up(consumer, tps)
            _lean_records(consumer)
            batch = await consumer.getmany(timeout_ms=self._poll_timeout_ms, max_records=self._max_records)
            on_record, on_records = self._on_record, self._on_records
            for tp, records in batch.items():
                if on_records is not None:
                    self.failed_records += on_records(records)
                else:
                    for r in records:
                        try:
                            on_record(r)
                        except Exception:
                            self.failed_records += 1
                            log.exception(
                                "applying a record failed", topic=r.topic, partition=r.partition, offset=r.offset
                            )
                if records:  # nobody reads the positions before the batch is handed on (no await above)
                    self._positions[tp.partition] = records[-1].offset + 1
                self.records_read += len(records)
            if batch:
                self.last_record_at = time.time()
            # positions also move past control records and compacted gaps
            for tp in tps:
                position = await consumer.position(tp)
                if position > self._positions.get(tp.partition, 0):
                    self._positions[tp.partition] = position
            async with self._progress:
                self._progress.notify_all()

    async def _check_caught_up(self, consumer: AIOKafkaConsumer, tps: list[TopicPartition]) -> None:
        if self.caught_up.is_set() or self._start_ends is None:
            return
        if all(self._positions.get(p, 0) >= end for p, end in self._start_ends.items()):
            self.caught_up.set()
            log.info("caught up", topic=self.topic, records=self.records_read)

    async def end_offsets(self) -> dict[int, int]:
        if self._consumer is None:
            raise ReadTimeout(f"not reading {self.topic}: {self.error or 'not started'}")
        tps = [TopicPartition(self.topic, p) for p in self._partition_ids]
        async with self._ends_lock:
            if self._ends_client is None:
                client = AIOKafkaConsumer(
                    **self._kwargs, group_id=None, enable_auto_commit=False, isolation_level="read_committed"
                )
                try:
                    await client.start()
                except BaseException:  # cut short (a stop, a broker down): its connections closed here
                    await stop_consumer(client, self.topic)
                    raise
                self._ends_client = client
            try:
                ends = await self._ends_client.end_offsets(tps)
            except KafkaError:
                await self._close_ends_client()  # made again on the next call
                raise
        return {tp.partition: off for tp, off in ends.items()}

    def lag(self) -> TailLag | None:
        """How far behind the tail is, as of its last fetch (no request: the fetch responses carry each
        partition's last stable offset, under read_committed, and high watermark): records between its
        positions and those ends, and how long ago the oldest of its partitions was last fetched. None
        before a first fetch of every partition, or while no consumer runs."""
        consumer = self._consumer
        if consumer is None or not self._partition_ids:
            return None
        assigned = consumer.assignment()
        behind, oldest_poll_ms = 0, None
        for partition in self._partition_ids:
            tp = TopicPartition(self.topic, partition)
            if tp not in assigned:
                return None
            lso, highwater, polled_ms = (
                consumer.last_stable_offset(tp),
                consumer.highwater(tp),
                consumer.last_poll_timestamp(tp),
            )
            end = lso if lso is not None and lso >= 0 else highwater
            if end is None or polled_ms is None:
                return None
            behind += max(0, end - self._positions.get(partition, 0))
            oldest_poll_ms = polled_ms if oldest_poll_ms is None else min(oldest_poll_ms, polled_ms)
        assert oldest_poll_ms is not None
        return TailLag(behind, max(0.0, time.time() - oldest_poll_ms / 1000))

    async def wait_until(self, condition: Callable[[], bool], timeout_s: float) -> None:
        """Wait until ``condition`` holds, checked now and after each batch this tail hands on; raises
        ``ReadTimeout`` when it does not hold within ``timeout_s``."""
        try:
            async with asyncio.timeout(timeout_s), self._progress:
                await self._progress.wait_for(condition)
        except TimeoutError:
            raise ReadTimeout(f"the condition did not hold within {timeout_s:g}s of reading {self.topic}") from None

    def ends_after_now(self) -> asyncio.Future[dict[int, int]]:
        """The end offsets from a request sent after this call: one request shared by every caller that
        came while the previous one was in flight (many concurrent reads cost one round trip, not many).
        Await it shielded: it is every such caller's."""
        if self._next_ends is None:
            self._next_ends = asyncio.get_running_loop().create_future()
            self._next_ends.add_done_callback(_retrieved)  # all its callers may have given up
            if self._asking is None or self._asking.done():
                self._asking = asyncio.create_task(self._ask_ends(), name=f"end-offsets-{self.topic}")
        return self._next_ends

    async def _ask_ends(self) -> None:
        while (waiting := self._next_ends) is not None:
            self._next_ends = None  # who comes from now on waits for the next request
            try:
                waiting.set_result(await self.end_offsets())
            except Exception as err:  # noqa: BLE001 - handed to the callers, who decide
                waiting.set_exception(err)
            except BaseException:  # stopped
                waiting.set_exception(ReadTimeout(f"stopped reading {self.topic}"))
                raise

    def _reached(self, ends: Mapping[int, int]) -> bool:
        return all(self._positions.get(p, 0) >= end for p, end in ends.items())

    async def read_to(self, ends: Mapping[int, int]) -> None:
        """Wait until every record before ``ends`` has been handed on (at once when it has)."""
        if self._reached(ends):
            return
        async with self._progress:
            await self._progress.wait_for(lambda: self._reached(ends))

    async def read_to_end(self, timeout_s: float) -> None:
        """Wait until every record written to the topic before this call has been handed on."""
        await read_all_to_end([self], timeout_s)

    def fresh_within(self, window_s: float) -> bool:
        """Whether the tail has handed on every record written before ``window_s`` ago: it has read to
        the end offsets of a request sent since then. Past an eighth of the window the tail reads ahead (one
        round after another while reads come, nobody waits for them), so that steady reads find it fresh."""
        now = asyncio.get_running_loop().time()
        age = now - self._fresh_at
        if age > window_s / 8:
            self._wanted_at = now
            if self._reading_ahead is None or self._reading_ahead.done():
                self._reading_ahead = asyncio.create_task(self._read_ahead(), name=f"read-ahead-{self.topic}")
        return age <= window_s

    async def until_fresh(self, since: float) -> None:
        """Until the tail has read to the end offsets of a request sent at loop time ``since`` or later: the
        read-ahead's round under way if it was sent since then, else its next (unbounded: the caller bounds
        it)."""
        while self._fresh_at < since:
            if self._reading_ahead is None or self._reading_ahead.done():
                self._reading_ahead = asyncio.create_task(self._read_ahead(), name=f"read-ahead-{self.topic}")
            elif self._ahead_asked_at < since:
                self._wanted_at = asyncio.get_running_loop().time()  # the round under way is too old: one more
            await self._freshened.wait()

    async def _read_ahead(self) -> None:
        loop = asyncio.get_running_loop()
        try:
            while True:
                asked_at = self._ahead_asked_at = loop.time()
                await read_all_to_end([self], READ_AHEAD_TIMEOUT_S)
                if self._wanted_at < asked_at:
                    return  # no read wanted the tail fresher during the round
        except ReadTimeout:
            pass  # a read that waits for it is bounded by its caller; the next read starts another

    def note_fresh(self, asked_at: float) -> None:
        """The tail has read to the end offsets of a request sent after loop time ``asked_at``."""
        if asked_at > self._fresh_at:
            self._fresh_at = asked_at
            freshened, self._freshened = self._freshened, asyncio.Event()
            freshened.set()


async def read_all_to_end(tails: Sequence[TopicTail], timeout_s: float | None) -> None:
    """Wait until each tail has handed on every record written to its topic before this call: their end
    offsets asked for at once (one round trip for all, each shared with the other callers of the moment).
    ``timeout_s`` None: the caller bounds the wait itself (no second timer on a read's path)."""
    try:
        async with asyncio.timeout(timeout_s):
            asked_at = asyncio.get_running_loop().time()  # each request is sent after this
            asked = [(tail, tail.ends_after_now()) for tail in tails]
            for tail, ends in asked:
                await tail.read_to(await asyncio.shield(ends))
                tail.note_fresh(asked_at)
    except TimeoutError:
        topics = ", ".join(tail.topic for tail in tails)
        raise ReadTimeout(f"did not read {topics} to its end within {timeout_s}s") from None
    except KafkaError as err:
        topics = ", ".join(tail.topic for tail in tails)
        raise ReadTimeout(f"cannot read {topics} to its end: {err!r}") from err


def _retrieved(future: asyncio.Future[Any]) -> None:
    if not future.cancelled():
        future.exception()


class KafkaTopicReader:
    """Reads a whole topic once, from its beginning to the end offsets it finds (a KafkaBasedLog started,
    read to its end and stopped): for a connector's own offsets topic, which no tail follows."""

    def __init__(self, client_kwargs: dict[str, Any]) -> None:
        self._kwargs = client_kwargs

    async def read_all(self, topic: str, timeout_s: float) -> list[LogRecord]:
        records: list[LogRecord] = []
        tail = TopicTail(topic, self._kwargs, lambda record: records.append(LogRecord.of(record)))
        await tail.start()
        try:
            async with asyncio.timeout(timeout_s):
                await tail.caught_up.wait()
        except TimeoutError:
            cause = f" ({tail.error})" if tail.error else ""
            raise ReadTimeout(f"did not read the topic {topic} to its end within {timeout_s:g}s{cause}") from None
        finally:
            await tail.stop()
        return records
