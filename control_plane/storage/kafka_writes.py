"""The one write path of the sidecar to Kafka: every record it produces (status-topic records, emulated
config-topic and offsets-topic records, audit records) is attempted here, under the status-store retry
proposal's rules (docs/features/status-writes.md):

- an error whose class is retriable (``errors.is_retriable``: aiokafka's ``retriable``, never the text of
  a message) is retried, waiting the proposal's backoff (``backoff.ProposalBackoff``), at most
  ``status.storage.retry.max.retries`` times; any other error fails the record at once;
- a record is written when the brokers acknowledged it (the producer's ``acks=all``), and not before: an
  attempt that is not acknowledged within its bound fails with the retriable ``AttemptTimeout``;
- a writer that must know soon (the sidecars' topic: a fence's claim holds a request) bounds the whole
  write, retries included (``write``'s ``within_s``): no retry starts that would end past the bound, and
  the last attempt is cut at it, so the write fails with the broker's last error, never after minutes;
- per kind of topic (``TopicKind``): attempts, retries, records acknowledged, records given up on, and
  each attempt's latency (``KafkaWriteObserver``, met by ``metrics.Metrics``).

``KafkaWrites`` holds the rules and the metrics. The writers above it keep their own semantics and call
it: the status writer (per-key lanes and batches, ``status_writer``, ``status_batch``) drives its own loops
with ``retrying`` and ``attempt`` / ``attempt_round``; the config writer writes one record at a time in
order (``write``), the offsets writer a set of records together (``write_all``), the audit sink one record
at a time (``write``).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Protocol

import structlog
from tenacity import AsyncRetrying, RetryCallState, retry_if_exception, stop_after_attempt
from tenacity.stop import stop_before_delay

from ..backoff import ProposalBackoff
from .errors import AttemptTimeout, describe_error, is_retriable
from .record_producer import RecordProducer
from .status_writes import key_text

log = structlog.get_logger(__name__)

Record = tuple[bytes, bytes | None]  # key, value (None: a tombstone)


class TopicKind(StrEnum):
    """The topics the sidecar writes to, the label of the write metrics."""

    STATUS = "status"
    CONFIG = "config"
    OFFSETS = "offsets"
    AUDIT = "audit"
    SIDECARS = "sidecars"


class KafkaWriteObserver(Protocol):
    """What the write path reports, per kind of topic (``metrics.Metrics`` implements it)."""

    def kafka_write_attempt(self, topic_kind: str, retry: bool, seconds: float, acknowledged: bool) -> None: ...

    def kafka_write_failure(self, topic_kind: str) -> None: ...


@dataclass(frozen=True)
class RetryPolicy:
    """The proposal's bounds: at most ``max_retries`` retries of a record, waiting ``backoff``."""

    max_retries: int
    backoff: ProposalBackoff

    def describe(self) -> dict[str, Any]:
        return {
            "max_retries": self.max_retries,
            "initial_backoff_ms": self.backoff.initial_ms,
            "max_backoff_ms": self.backoff.max_ms,
            "backoff_multiplier": self.backoff.multiplier,
            "jitter_factor": self.backoff.jitter_factor,
        }


class _Round(Exception):
    """A round of ``write_all`` ended with records that failed with a retriable error."""

    def __init__(self, due: list[int]) -> None:
        super().__init__(f"{len(due)} records to send again")
        self.due = due


class KafkaWrites:
    def __init__(self, policy: RetryPolicy, observer: KafkaWriteObserver | None = None) -> None:
        self.policy = policy
        self.observer = observer
        self.kinds: dict[str, float] = {}  # the kinds of topic written through it, and their attempt bounds

    @property
    def max_retries(self) -> int:
        return self.policy.max_retries

    def covers(self, kind: TopicKind, attempt_timeout_s: float) -> None:
        """A writer of ``kind`` writes through this path, each attempt bounded by ``attempt_timeout_s``
        (what ``describe`` shows)."""
        self.kinds[kind.value] = attempt_timeout_s

    def describe(self) -> dict[str, Any]:
        return {
            "writes": sorted(self.kinds),
            "retry": self.policy.describe(),
            "attempt_timeout_ms": {kind: round(s * 1000) for kind, s in sorted(self.kinds.items())},
            "retriable": "errors whose class Kafka marks retriable, and attempts not acknowledged in time",
            "acknowledged": "acks=all",
        }

    # -- the loop
    def retrying(
        self,
        may_retry: Callable[[BaseException], bool],
        before_sleep: Callable[[RetryCallState], None],
        wake: asyncio.Event | None = None,
        within_s: float | None = None,
    ) -> AsyncRetrying:
        """The proposal's loop: at most ``max_retries`` retries of what ``may_retry`` accepts, waiting the
        backoff; ``wake`` cuts a wait short (a newer write of a status key, or a writer stopping); with a
        ``within_s``, a wait that would end that long after the loop's start ends the loop instead."""

        async def sleep(seconds: float) -> None:
            if wake is None:
                await asyncio.sleep(seconds)
                return
            try:
                async with asyncio.timeout(seconds):
                    await wake.wait()
            except TimeoutError:
                pass

        attempts = stop_after_attempt(self.policy.max_retries + 1)
        stop = attempts if within_s is None else attempts | stop_before_delay(within_s)
        return AsyncRetrying(
            stop=stop,
            wait=self.policy.backoff,
            retry=retry_if_exception(may_retry),
            before_sleep=before_sleep,
            sleep=sleep,
            reraise=True,
        )

    # -- one attempt
    async def attempt(
        self,
        kind: TopicKind,
        producer: RecordProducer,
        topic: str,
        record: Record,
        timeout_s: float,
        *,
        retry: bool = False,
    ) -> None:
        """One attempt of one record: returns once the brokers acknowledged it; raises its error, or
        ``AttemptTimeout`` after ``timeout_s``."""
        started = time.monotonic()
        acknowledged = False
        try:
            async with asyncio.timeout(timeout_s):
                await producer.send(topic, *record)
            acknowledged = True
        except TimeoutError as exc:
            raise AttemptTimeout(timeout_s) from exc
        finally:
            self._attempted(kind, retry, time.monotonic() - started, acknowledged)

    async def attempt_round(
        self,
        kind: TopicKind,
        producer: RecordProducer,
        topic: str,
        records: Sequence[Record],
        timeout_s: float,
        *,
        retry: bool = False,
    ) -> list[BaseException | None]:
        """One attempt of every record, pipelined: all handed to the producer (its batches and requests)
        before any acknowledgement is awaited, then every acknowledgement awaited (at most ``timeout_s``
        in all). Per record: None (acknowledged) or its error."""
        started = time.monotonic()
        futures: list[asyncio.Future[Any]] = []
        error: BaseException | None = None
        try:
            async with asyncio.timeout(timeout_s):
                for key, value in records:
                    futures.append(await producer.enqueue(topic, key, value))
                pending = [f for f in futures if not f.done()]
                if pending:
                    await asyncio.wait(pending)
        except TimeoutError:
            error = AttemptTimeout(timeout_s)
        except Exception as handing:  # noqa: BLE001 - the records not handed over fail with it (a broker that is gone)
            error = handing
        seconds = time.monotonic() - started
        handed = futures + [None] * (len(records) - len(futures))
        outcomes = [_outcome(future, error, timeout_s) for future in handed]
        for outcome in outcomes:
            self._attempted(kind, retry, seconds, outcome is None)
        return outcomes

    def _attempted(self, kind: TopicKind, retry: bool, seconds: float, acknowledged: bool) -> None:
        if self.observer:
            self.observer.kafka_write_attempt(kind.value, retry, seconds, acknowledged)

    def given_up(self, kind: TopicKind, records: int = 1) -> None:
        """Records of ``kind`` failed for good (retries exhausted, or an error that is not retriable)."""
        if self.observer:
            for _ in range(records):
                self.observer.kafka_write_failure(kind.value)

    # -- whole writes
    async def write(
        self,
        kind: TopicKind,
        producer: RecordProducer,
        topic: str,
        record: Record,
        timeout_s: float,
        *,
        wake: asyncio.Event | None = None,
        within_s: float | None = None,
    ) -> int:
        """One record, retried as the proposal says; returns the attempts it took, or raises the last
        attempt's error (counted as given up). ``within_s`` bounds the whole write, retries included."""
        attempts = 0
        deadline = None if within_s is None else time.monotonic() + within_s

        def bound() -> float:
            """This attempt's bound: its own, cut at the whole write's."""
            return timeout_s if deadline is None else max(min(timeout_s, deadline - time.monotonic()), 0.001)

        def before_sleep(state: RetryCallState) -> None:
            _log_retry(kind, topic, [record], state, self.policy.max_retries)

        try:
            async for attempt in self.retrying(is_retriable, before_sleep, wake, within_s):
                with attempt:
                    attempts += 1
                    await self.attempt(kind, producer, topic, record, bound(), retry=attempts > 1)
        except Exception as exc:
            self.given_up(kind)
            log.error(
                "kafka write failed",
                topic_kind=kind.value,
                topic=topic,
                key=key_text(record[0]),
                attempts=attempts,
                retriable=is_retriable(exc),
                error=describe_error(exc),
            )
            raise
        return attempts

    async def write_all(
        self, kind: TopicKind, producer: RecordProducer, topic: str, records: Sequence[Record], timeout_s: float
    ) -> list[BaseException | None]:
        """Every record, pipelined (``attempt_round``); the ones that failed with a retriable error are sent
        again together after the backoff, as the proposal says. Per record: None (acknowledged) or the
        error it failed with for good (counted as given up)."""
        outcomes: list[BaseException | None] = [None] * len(records)
        due = list(range(len(records)))
        rounds = 0

        def may_retry(exc: BaseException) -> bool:
            return isinstance(exc, _Round)

        def before_sleep(state: RetryCallState) -> None:
            failed = state.outcome.exception() if state.outcome else None
            if isinstance(failed, _Round):
                _log_retry(kind, topic, [records[i] for i in failed.due], state, self.policy.max_retries, outcomes)

        try:
            async for attempt in self.retrying(may_retry, before_sleep):
                with attempt:
                    rounds += 1
                    got = await self.attempt_round(
                        kind, producer, topic, [records[i] for i in due], timeout_s, retry=rounds > 1
                    )
                    again = []
                    for index, error in zip(due, got, strict=True):
                        outcomes[index] = error
                        if error is not None and is_retriable(error):
                            again.append(index)
                    if again:
                        due = again
                        raise _Round(again)
        except _Round:
            pass  # retries exhausted: the last errors stand
        failed = [i for i, error in enumerate(outcomes) if error is not None]
        if failed:
            self.given_up(kind, len(failed))
            first = outcomes[failed[0]]
            assert first is not None
            log.error(
                "kafka writes failed",
                topic_kind=kind.value,
                topic=topic,
                records=len(failed),
                first_key=key_text(records[failed[0]][0]),
                rounds=rounds,
                retriable=is_retriable(first),
                error=describe_error(first),
            )
        return outcomes


def _outcome(future: asyncio.Future[Any] | None, error: BaseException | None, timeout_s: float) -> BaseException | None:
    """What one record's attempt ended with: None (acknowledged) or its error."""
    if future is None:  # not handed over: the error that stopped the hand-over
        return error if error is not None else AttemptTimeout(timeout_s)
    if not future.done() or future.cancelled():
        return AttemptTimeout(timeout_s)
    return future.exception()


def _log_retry(
    kind: TopicKind,
    topic: str,
    records: Sequence[Record],
    state: RetryCallState,
    max_retries: int,
    outcomes: Sequence[BaseException | None] | None = None,
) -> None:
    backoff_s = state.next_action.sleep if state.next_action else 0.0
    error = state.outcome.exception() if state.outcome else None
    if outcomes is not None:  # a round's: the first record's error
        error = next((e for e in outcomes if e is not None), error)
    log.warning(
        "kafka write failed; retrying",
        topic_kind=kind.value,
        topic=topic,
        records=len(records),
        first_key=key_text(records[0][0]) if records else None,
        retry=f"{state.attempt_number}/{max_retries}",
        backoff_ms=round(backoff_s * 1000),
        error=describe_error(error) if error is not None else None,
    )


__all__ = ["KafkaWriteObserver", "KafkaWrites", "Record", "RetryPolicy", "TopicKind"]
