"""Many status records written at once (``StatusWriter.write_all``: the tombstones of a topics reset),
pipelined: every record goes to the producer before any acknowledgement is awaited, so they share the
producer's batches and produce requests, as a worker's reset does (Connect's
``AbstractHerder.resetConnectorActiveTopics`` calls ``KafkaStatusBackingStore.deleteTopic`` per topic, an
asynchronous ``KafkaBasedLog.send`` each).

One attempt sends every record still due and waits for all their acknowledgements (bounded by the
writer's attempt timeout); the ones that failed with a retriable error are sent again together after the
proposal's backoff for that retry (tenacity, ``backoff.ProposalBackoff``: every record of a round is at the
same retry), at most ``max_retries`` times; a record that failed with an error that is not retriable fails
at once. Before each retry a record is dropped when a newer write of its key was submitted meanwhile (the
writer's ``CacheEntry.canWriteSafely`` rule), or abandoned when the writer is stopping. One log line per
round of retries (how many, the first key, attempt, backoff, error) and one per batch with final failures,
rather than one per record; the metrics still count every record.

Measured (bench/topics_reset.py, docs/benchmarks.md): 10,000 tombstones took about 5 s of CPU through the
per-key lanes (a task, a tenacity loop and a delivery wait per record; aiokafka's accumulator woke every
waiting sender each time a batch filled), and take about 0.3 s this way.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from typing import Protocol

import structlog
from tenacity import RetryCallState

from .errors import AttemptTimeout, describe_error, is_retriable
from .kafka_writes import KafkaWrites, TopicKind
from .record_producer import RecordProducer
from .status_writes import QueuedWrite, StatusWriteObserver, key_text

log = structlog.get_logger(__name__)


class BatchWriter(Protocol):
    """What a batch needs of its writer (``status_writer.StatusWriter``): its settings, and the outcome of
    each write settled in the writer's books (its lanes, its failures, its observer)."""

    attempt_timeout_s: float
    observer: StatusWriteObserver | None

    @property
    def max_retries(self) -> int: ...

    @property
    def closing(self) -> bool: ...

    def succeed(self, write: QueuedWrite, *, quiet: bool = False) -> None: ...

    def fail(self, write: QueuedWrite, exc: BaseException, *, quiet: bool = False) -> None: ...

    def superseded_write(self, write: QueuedWrite) -> bool: ...

    def drop_write(self, write: QueuedWrite) -> None: ...

    def release(self, write: QueuedWrite) -> None: ...

    def abandon(self, write: QueuedWrite) -> None: ...


@dataclass
class BatchRun:
    """What one batch needs: its writer, its topic and producer, the write path (the proposal's loop, the
    attempts and their metrics: ``kafka_writes``), and the event ``stop()`` sets to cut a backoff short."""

    writer: BatchWriter
    topic: str
    producer: RecordProducer
    writes: KafkaWrites
    stopping: asyncio.Event


class _Retry(Exception):
    """A round ended with records that failed with a retriable error: ``writes``, to send again."""

    def __init__(self, writes: list[QueuedWrite]) -> None:
        super().__init__(f"{len(writes)} status records to send again")
        self.writes = writes


async def write_batch(run: BatchRun, writes: list[QueuedWrite]) -> None:
    """Every write of ``writes`` (each the first of its key's lane, which it holds) gets its outcome."""
    writer = run.writer

    def may_retry(exc: BaseException) -> bool:
        return isinstance(exc, _Retry) and not writer.closing

    retrying = run.writes.retrying(may_retry, lambda state: _on_retry(state, writer.max_retries), run.stopping)
    due = writes
    try:
        async for attempt in retrying:
            with attempt:
                if attempt.retry_state.attempt_number > 1:
                    due = _still_due(writer, due)
                    if not due:
                        break
                left = await _attempt(run, due)
                if left:
                    raise _Retry(left)
    except _Retry as exc:  # retries exhausted, or the writer is stopping
        failed = 0
        for write in exc.writes:
            if writer.closing:
                writer.abandon(write)
            else:
                writer.fail(write, _last_error(write), quiet=True)
                failed += 1
            writer.release(write)
        if failed:
            first = exc.writes[0]
            log.error(
                "status writes failed",
                records=failed,
                first_key=key_text(first.key),
                kind=first.kind,
                attempts=first.attempts,
                error=first.last_error,
            )
    finally:  # cancelled by stop(), or a bug: no ticket is left unsettled
        for write in writes:
            if not write.ticket.done():
                writer.abandon(write)
                writer.release(write)


def _still_due(writer: BatchWriter, writes: list[QueuedWrite]) -> list[QueuedWrite]:
    due = []
    for write in writes:
        if writer.closing or writer.superseded_write(write):
            writer.drop_write(write)
            writer.release(write)
            continue
        if writer.observer:
            writer.observer.status_update_retry(write.kind)
        due.append(write)
    return due


async def _attempt(run: BatchRun, writes: list[QueuedWrite]) -> list[QueuedWrite]:
    """One attempt of every write: sent together, then every acknowledgement awaited (at most the
    attempt timeout). Settles the written ones and the ones that failed for good; returns the ones that
    failed with a retriable error."""
    writer = run.writer
    for write in writes:
        write.attempts += 1
        write.sending, write.next_retry_at = True, None
    outcomes = await run.writes.attempt_round(
        TopicKind.STATUS,
        run.producer,
        run.topic,
        [(write.key, write.value) for write in writes],
        writer.attempt_timeout_s,
        retry=writes[0].attempts > 1,
    )
    retry: list[QueuedWrite] = []
    written = 0
    final: list[QueuedWrite] = []
    for write, exc in zip(writes, outcomes, strict=True):
        write.sending = False
        if exc is None:
            writer.succeed(write, quiet=True)
            writer.release(write)
            written += 1
            continue
        write.last_error = describe_error(exc)
        write.error = exc
        if is_retriable(exc):
            retry.append(write)
        else:
            writer.fail(write, exc, quiet=True)
            writer.release(write)
            final.append(write)
    if final:
        log.error(
            "status writes failed",
            records=len(final),
            first_key=key_text(final[0].key),
            kind=final[0].kind,
            attempts=final[0].attempts,
            retriable=False,
            error=final[0].last_error,
        )
    log.debug("status writes sent", records=len(writes), written=written, to_retry=len(retry))
    return retry


def _on_retry(state: RetryCallState, max_retries: int) -> None:
    backoff_s = state.next_action.sleep if state.next_action else 0.0
    outcome = state.outcome.exception() if state.outcome else None
    if not isinstance(outcome, _Retry):
        return
    at = time.time() + backoff_s
    for write in outcome.writes:
        write.next_retry_at = at
    first = outcome.writes[0]
    log.warning(
        "status writes failed; retrying",
        records=len(outcome.writes),
        first_key=key_text(first.key),
        kind=first.kind,
        attempt=state.attempt_number,
        retry=f"{state.attempt_number}/{max_retries}",
        backoff_ms=round(backoff_s * 1000),
        error=first.last_error,
    )


def _last_error(write: QueuedWrite) -> BaseException:
    return write.error if write.error is not None else AttemptTimeout(0)


__all__ = ["BatchRun", "BatchWriter", "write_batch"]
