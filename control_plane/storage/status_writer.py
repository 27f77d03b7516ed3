"""The status writer: every record the sidecar writes to the status topic, with the retries of the
status-store retry proposal (docs/features/status-writes.md), in the background.

``submit(key, value, kind)`` returns a ``WriteTicket`` at once; the write goes on in a task of its own
key's lane. ``write(...)`` is ``submit`` then ``await ticket.result()``. ``write_all(records)`` writes many
at once (a topics reset): they go to the producer together and share its batches and requests, with the
same guarantees (``status_batch``).

Mirrors Connect's ``KafkaStatusBackingStore.send``: each key carries a sequence that grows with every
write; a write whose attempt failed with a retriable error is sent again only while it is still the
newest write of its key (``CacheEntry.canWriteSafely(status, sequence)``), so an old value never
overwrites a new one. Writes of one key are attempted one at a time, in the order submitted. Unlike
Connect (which retries forever), retries stop after ``status.storage.retry.max.retries``, waiting the
proposal's backoff (``backoff.ProposalBackoff``) in between. Each attempt, the loop and the per-topic-kind
metrics are the sidecar's one write path (``kafka_writes.KafkaWrites``), which its other writers share.

What it hands out, and its errors, are in ``status_writes``.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import OrderedDict, deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from types import TracebackType

import structlog
from tenacity import RetryCallState

from ..codecs import StatusRecord, Tombstone, encode_status
from ..codecs.status import StatusKey, StatusKind, status_key_of
from .errors import describe_error, is_retriable
from .kafka_writes import KafkaWrites, TopicKind
from .record_producer import RecordProducer
from .status_batch import BatchRun, write_batch
from .status_writes import (
    KINDS,
    Outcome,
    QueuedWrite,
    StatusBatchFailed,
    StatusStoreNotConfigured,
    StatusWriteError,
    StatusWriteFailed,
    StatusWriteObserver,
    StatusWriterClosed,
    StatusWrites,
    StatusWriteState,
    WriteTicket,
    key_text,
)

log = structlog.get_logger(__name__)

FAILED_KEPT = 1000  # failed writes listed by the endpoint, newest kept
_KIND_NAMES = {StatusKind.CONNECTOR: "connector", StatusKind.TASK: "task", StatusKind.TOPIC: "topic"}


@dataclass(eq=False)
class _Lane:
    """The writes of one key, oldest first; ``wake`` cuts a backoff short (a newer write, or stop)."""

    queue: deque[QueuedWrite] = field(default_factory=deque)
    sequence: int = 0
    wake: asyncio.Event = field(default_factory=asyncio.Event)
    task: asyncio.Task[None] | None = None
    batched: bool = False  # its first write belongs to a batch of ``write_all``, which hands the lane on


class _Dropped(Exception):
    """A retry that must not be made: a newer write of the key exists, or the writer is stopping."""


class StatusWriter:
    def __init__(
        self,
        topic: str | None,
        producer: RecordProducer | None,
        writes: KafkaWrites,
        *,
        attempt_timeout_s: float,
        stop_timeout_s: float | None = None,
        observer: StatusWriteObserver | None = None,
    ) -> None:
        self.topic = topic
        self.attempt_timeout_s = attempt_timeout_s
        self.stop_timeout_s = attempt_timeout_s if stop_timeout_s is None else stop_timeout_s
        self.observer = observer
        self._producer = producer
        self._writes = writes
        if topic is not None:
            writes.covers(TopicKind.STATUS, attempt_timeout_s)
        self._lanes: dict[bytes, _Lane] = {}
        self._failed: OrderedDict[bytes, StatusWriteState] = OrderedDict()
        self._batches: set[asyncio.Task[None]] = set()
        self._stopping = asyncio.Event()  # cuts a batch's backoff short at stop()
        self._running = False
        self._closing = False

    @property
    def max_retries(self) -> int:
        return self._writes.max_retries

    @property
    def configured(self) -> bool:
        return self.topic is not None and self._producer is not None

    @property
    def running(self) -> bool:
        return self._running

    @property
    def closing(self) -> bool:
        """``stop()`` has begun: retries and queued writes are dropped."""
        return self._closing

    # -- lifecycle
    async def start(self) -> None:
        if not self.configured or self._running:
            if not self.configured:
                log.info("status writer not started: no status.storage.topic")
            return
        assert self._producer is not None
        await self._producer.start()
        self._running, self._closing = True, False
        self._stopping.clear()
        log.info("status writer started", topic=self.topic, max_retries=self.max_retries)

    async def flush(self, timeout_s: float) -> bool:
        """Wait until every write submitted so far has its outcome (retries included), at most ``timeout_s``;
        True when none is left."""
        loop = asyncio.get_running_loop()
        until = loop.time() + timeout_s
        while tasks := self._tasks():
            left = until - loop.time()
            if left <= 0:
                return False
            await asyncio.wait(tasks, timeout=left)
        return True

    async def stop(self, flush_timeout_s: float = 0.0) -> None:
        """Flushes pending writes for at most ``flush_timeout_s`` (graceful shutdown), then drops pending
        retries and queued writes, gives attempts under way ``stop_timeout_s`` to end (the producer's
        request timeout: by then aiokafka has delivered or failed their records), then stops the producer
        (bounded too): never hangs on a broker that is gone."""
        if not self._running:
            return
        if flush_timeout_s > 0 and self._lanes:
            pending = sum(len(lane.queue) for lane in self._lanes.values())
            flushed = await self.flush(flush_timeout_s)
            log.info("status writes flushed" if flushed else "status writes not all flushed in time", pending=pending)
        self._running, self._closing = False, True
        self._stopping.set()
        for lane in self._lanes.values():
            lane.wake.set()
        tasks = self._tasks()
        if tasks:
            _, late = await asyncio.wait(tasks, timeout=self.stop_timeout_s)
            for task in late:
                task.cancel()
            if late:
                await asyncio.wait(late)
        assert self._producer is not None
        await self._producer.stop()
        log.info("status writer stopped", topic=self.topic)

    def _tasks(self) -> list[asyncio.Task[None]]:
        lanes = [lane.task for lane in self._lanes.values() if lane.task is not None and not lane.task.done()]
        return lanes + list(self._batches)

    async def __aenter__(self) -> StatusWriter:
        await self.start()
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.stop()

    # -- writing
    def submit(self, key: bytes, value: bytes | None, kind: str) -> WriteTicket:
        """Queue a record (``value`` None: a tombstone) and return at once; never waits for Kafka."""
        self._check_open(kind)
        write, lane = self._queue(key, value, kind)
        if lane.task is None and not lane.batched:
            lane.task = asyncio.get_running_loop().create_task(self._drain(key, lane), name=f"status-write {key!r}")
        return write.ticket

    def _check_open(self, kind: str) -> None:
        if not self.configured:
            raise StatusStoreNotConfigured()
        if not self._running:
            raise StatusWriterClosed("the status writer is not running")
        if kind not in KINDS:
            raise ValueError(f"unknown status record kind {kind!r}; one of {sorted(KINDS)}")

    def _queue(self, key: bytes, value: bytes | None, kind: str) -> tuple[QueuedWrite, _Lane]:
        lane = self._lanes.get(key)
        if lane is None:
            lane = self._lanes[key] = _Lane()
        lane.sequence += 1
        write = QueuedWrite(key, value, kind, WriteTicket(key, kind, lane.sequence))
        lane.queue.append(write)
        lane.wake.set()  # a retry of an older write of this key, if waiting, is dropped now
        return write, lane

    def submit_all(self, records: Sequence[StatusRecord | Tombstone[StatusKey]]) -> list[WriteTicket]:
        """Queue every record and return at once (never waits for Kafka), as ``submit`` does for one: the
        records go to the producer together (``status_batch.write_batch``: pipelined, in the producer's
        batches and requests), with the same guarantees as ``submit``: order per key (a record whose key
        has a write under way goes behind it), the proposal's retries with backoff for those that failed
        with a retriable error, a retry dropped when a newer write of its key came; listed by ``snapshot``
        while pending, and among the failures when they fail for good. Raises at once (nothing queued) when
        the writer is not running."""
        encoded = [(*encode_status(r), _KIND_NAMES[_status_key(r).kind]) for r in records]
        for _, _, kind in encoded:
            self._check_open(kind)
        owned: list[QueuedWrite] = []
        tickets: list[WriteTicket] = []
        for key, value, kind in encoded:
            write, lane = self._queue(key, value, kind)
            tickets.append(write.ticket)
            if lane.task is None and not lane.batched:  # its lane was idle: the batch writes it
                lane.batched = True
                owned.append(write)
        if owned:
            task = asyncio.get_running_loop().create_task(write_batch(self._batch_run(), owned), name="status-batch")
            self._batches.add(task)
            task.add_done_callback(self._batches.discard)
        return tickets

    async def write_all(self, records: Sequence[StatusRecord | Tombstone[StatusKey]]) -> None:
        """``submit_all``, then wait until each record has its final outcome: written (acknowledged,
        acks=all) or superseded by a newer write of its key. Raises ``StatusBatchFailed`` when any failed
        finally (retries exhausted, or an error that is not retriable; the writer stopped first): never
        returns while a record is unwritten. The writes go on if the caller stops waiting."""
        tickets = self.submit_all(records)
        for ticket in tickets:
            if not ticket.done():
                with contextlib.suppress(StatusWriteError):
                    await ticket.result()
        failed = [t.error for t in tickets if t.error is not None]
        if failed:
            raise StatusBatchFailed(failed, len(tickets))

    def _batch_run(self) -> BatchRun:
        assert self.topic is not None and self._producer is not None
        return BatchRun(self, self.topic, self._producer, self._writes, self._stopping)

    def submit_record(self, record: StatusRecord | Tombstone[StatusKey]) -> WriteTicket:
        """``submit`` of a codec record: encoded as the worker encodes it, its kind from its key."""
        key, value = encode_status(record)
        return self.submit(key, value, _KIND_NAMES[_status_key(record).kind])

    async def write(self, key: bytes, value: bytes | None, kind: str) -> Outcome:
        """``submit`` and wait for the final outcome; raises ``StatusWriteFailed`` on final failure."""
        return await self.submit(key, value, kind).result()

    def snapshot(self) -> StatusWrites:
        pending = []
        for lane in self._lanes.values():
            for write in lane.queue:
                name = "sending" if write.sending else "waiting-retry" if write.next_retry_at else "queued"
                pending.append(write.state(name))
        return StatusWrites(self.topic, self._running, pending, list(reversed(self._failed.values())))

    # -- the lane of one key
    async def _drain(self, key: bytes, lane: _Lane) -> None:
        try:
            while lane.queue:
                lane.wake.clear()
                await self._write_with_retries(lane, lane.queue[0])
                lane.queue.popleft()
        except BaseException:  # cancelled by stop(), or a bug: no ticket is left unsettled
            for write in lane.queue:
                self.abandon(write)
            raise
        finally:
            if self._lanes.get(key) is lane:
                del self._lanes[key]

    def _superseded(self, lane: _Lane, write: QueuedWrite) -> bool:
        # KafkaStatusBackingStore's send callback drops a retry when !entry.canWriteSafely(status, sequence):
        # a write of this key was made since this one.
        return write.ticket.sequence != lane.sequence

    async def _write_with_retries(self, lane: _Lane, write: QueuedWrite) -> None:
        if self._closing:
            self.abandon(write)
            return

        def may_retry(exc: BaseException) -> bool:
            return is_retriable(exc) and not self._superseded(lane, write) and not self._closing

        retrying = self._writes.retrying(may_retry, lambda state: self._on_retry(write, state), lane.wake)
        try:
            async for attempt in retrying:
                with attempt:
                    if write.attempts:
                        if self._closing or self._superseded(lane, write):
                            raise _Dropped()
                        if self.observer:
                            self.observer.status_update_retry(write.kind)
                    await self._attempt(write)
        except _Dropped:
            self._drop(lane, write)
        except Exception as exc:  # noqa: BLE001 - every failure is an outcome of the write
            if is_retriable(exc) and (self._closing or self._superseded(lane, write)):
                self._drop(lane, write)
            else:
                self.fail(write, exc)
        else:
            self.succeed(write)

    async def _attempt(self, write: QueuedWrite) -> None:
        assert self.topic is not None and self._producer is not None
        write.attempts += 1
        write.sending, write.next_retry_at = True, None
        try:
            await self._writes.attempt(
                TopicKind.STATUS,
                self._producer,
                self.topic,
                (write.key, write.value),
                self.attempt_timeout_s,
                retry=write.attempts > 1,
            )
        except Exception as exc:
            write.last_error = describe_error(exc)
            raise
        finally:
            write.sending = False

    # -- outcomes
    def _on_retry(self, write: QueuedWrite, state: RetryCallState) -> None:
        backoff_s = state.next_action.sleep if state.next_action else 0.0
        write.next_retry_at = time.time() + backoff_s
        log.warning(
            "status write failed; retrying",
            key=key_text(write.key),
            kind=write.kind,
            attempt=state.attempt_number,
            retry=f"{state.attempt_number}/{self.max_retries}",
            backoff_ms=round(backoff_s * 1000),
            error=write.last_error,
        )

    def succeed(self, write: QueuedWrite, *, quiet: bool = False) -> None:
        self._failed.pop(write.key, None)
        if self.observer:
            self.observer.status_update_success(write.kind)
        if not quiet:
            log.debug("status written", key=key_text(write.key), kind=write.kind, attempts=write.attempts)
        write.ticket._settle(Outcome.WRITTEN)

    def fail(self, write: QueuedWrite, exc: BaseException, *, quiet: bool = False) -> None:
        error = StatusWriteFailed(write.key, write.kind, write.attempts, exc)
        write.last_error = write.last_error or describe_error(exc)
        write.next_retry_at = None
        self._failed[write.key] = write.state("failed")
        self._failed.move_to_end(write.key)
        while len(self._failed) > FAILED_KEPT:
            self._failed.popitem(last=False)
        if self.observer:
            self.observer.status_update_failure(write.kind)
        self._writes.given_up(TopicKind.STATUS)
        if quiet:  # a batch's: one line for all of them (status_batch)
            write.ticket._settle(Outcome.FAILED, error)
            return
        log.error(
            "status write failed",
            key=key_text(write.key),
            kind=write.kind,
            attempts=write.attempts,
            retriable=is_retriable(exc),
            error=write.last_error,
        )
        write.ticket._settle(Outcome.FAILED, error)

    def _drop(self, lane: _Lane, write: QueuedWrite) -> None:
        if self._closing:
            self.abandon(write)
            return
        log.info("status write superseded by a newer one; retry dropped", key=key_text(write.key), kind=write.kind)
        write.ticket._settle(Outcome.SUPERSEDED)

    # -- what a batch of ``write_all`` uses (``status_batch.BatchWriter``)
    def superseded_write(self, write: QueuedWrite) -> bool:
        lane = self._lanes.get(write.key)
        return lane is None or self._superseded(lane, write)

    def drop_write(self, write: QueuedWrite) -> None:
        lane = self._lanes.get(write.key)
        if lane is None or self._closing:
            self.abandon(write)
        else:
            self._drop(lane, write)

    def release(self, write: QueuedWrite) -> None:
        """A batch's write has its outcome: its lane goes on with the writes queued behind it, if any."""
        lane = self._lanes.get(write.key)
        if lane is None or not lane.queue or lane.queue[0] is not write:
            return
        lane.queue.popleft()
        lane.batched = False
        if not lane.queue:
            del self._lanes[write.key]
        elif self._closing:
            for queued in lane.queue:
                self.abandon(queued)
            del self._lanes[write.key]
        else:
            lane.task = asyncio.get_running_loop().create_task(
                self._drain(write.key, lane), name=f"status-write {write.key!r}"
            )

    def abandon(self, write: QueuedWrite) -> None:
        if write.ticket.done():
            return
        log.error("status write abandoned: the writer stopped", key=key_text(write.key), kind=write.kind)
        error = StatusWriterClosed(f"the status writer stopped before {key_text(write.key)!r} was written")
        write.ticket._settle(Outcome.ABANDONED, error)


def _status_key(record: StatusRecord | Tombstone[StatusKey]) -> StatusKey:
    return record.key if isinstance(record, Tombstone) else status_key_of(record)


__all__ = ["FAILED_KEPT", "StatusWriter"]
