"""What the status writer hands out and reports: tickets and outcomes, the states its endpoint lists,
its observer, and its errors (``StatusWriteError`` and below, in the tree of ``storage.errors``); and the
writes it queues (``QueuedWrite``), which its lanes (``status_writer``) and batches (``status_batch``) share,
so that the two modules import one way: the writer the batch, never back."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Protocol

from .errors import StorageError, describe_error

KINDS = frozenset({"connector", "task", "topic"})


class StatusWriteError(StorageError):
    """A status write that cannot be, or was not, made."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class StatusStoreNotConfigured(StatusWriteError):
    def __init__(self) -> None:
        super().__init__(
            "the sidecar has no status topic to write to: give it the worker's properties file "
            "(--worker-properties) or set status.storage.topic (CONTROL_PLANE_STATUS_STORAGE_TOPIC)"
        )


class StatusWriterClosed(StatusWriteError):
    pass


class StatusWriteFailed(StatusWriteError):
    def __init__(self, key: bytes, kind: str, attempts: int, cause: BaseException) -> None:
        super().__init__(
            f"writing the {kind} status record {key_text(key)!r} failed after {attempts} "
            f"attempt{'s' if attempts != 1 else ''}: {describe_error(cause)}"
        )
        self.key, self.kind, self.attempts, self.cause = key, kind, attempts, cause


class StatusBatchFailed(StatusWriteError):
    """Records of one ``write_all`` were not all written: ``failures``, each a final failure (or the
    writer stopped first)."""

    def __init__(self, failures: list[StatusWriteError], total: int) -> None:
        first = failures[0].message
        super().__init__(
            first if len(failures) == 1 else f"{len(failures)} of {total} status records were not written; {first}"
        )
        self.failures, self.total = failures, total


class StatusWriteObserver(Protocol):
    """What the writer reports as it works (``metrics.Metrics`` implements it)."""

    def status_update_success(self, kind: str) -> None: ...

    def status_update_retry(self, kind: str) -> None: ...

    def status_update_failure(self, kind: str) -> None: ...


class Outcome(StrEnum):
    WRITTEN = "written"
    SUPERSEDED = "superseded"  # a newer write of the same key came first; nothing to do
    FAILED = "failed"
    ABANDONED = "abandoned"  # the writer stopped first


class WriteTicket:
    """The handle ``submit`` returns; ``await ticket.result()`` for the final outcome."""

    def __init__(self, key: bytes, kind: str, sequence: int) -> None:
        self.key, self.kind, self.sequence = key, kind, sequence
        self.outcome: Outcome | None = None
        self.error: StatusWriteError | None = None
        self._done = asyncio.Event()

    def done(self) -> bool:
        return self._done.is_set()

    def _settle(self, outcome: Outcome, error: StatusWriteError | None = None) -> None:
        self.outcome, self.error = outcome, error
        self._done.set()

    async def result(self) -> Outcome:
        """WRITTEN or SUPERSEDED; raises ``StatusWriteFailed`` or ``StatusWriterClosed`` otherwise."""
        await self._done.wait()
        if self.error is not None:
            raise self.error
        assert self.outcome is not None
        return self.outcome


@dataclass(frozen=True)
class StatusWriteState:
    """One write still pending, or finally failed, as the sidecar's endpoint lists it."""

    key: str
    kind: str
    state: str  # queued, sending, waiting-retry, failed
    attempts: int
    last_error: str | None
    next_retry_ms: int | None  # epoch milliseconds
    first_submitted_ms: int  # epoch milliseconds


@dataclass(frozen=True)
class StatusWrites:
    topic: str | None
    running: bool
    pending: list[StatusWriteState]
    failed: list[StatusWriteState]


@dataclass(eq=False)
class QueuedWrite:
    """A record on its way to the status topic: what the writer's lanes and batches hold of it."""

    key: bytes
    value: bytes | None
    kind: str
    ticket: WriteTicket
    submitted_at: float = field(default_factory=time.time)
    attempts: int = 0
    sending: bool = False
    last_error: str | None = None
    error: BaseException | None = None  # the last attempt's (a batch's record)
    next_retry_at: float | None = None

    def state(self, name: str) -> StatusWriteState:
        return StatusWriteState(
            key_text(self.key),
            self.kind,
            name,
            self.attempts,
            self.last_error,
            epoch_ms(self.next_retry_at) if self.next_retry_at is not None else None,
            epoch_ms(self.submitted_at),
        )


def key_text(key: bytes) -> str:
    return key.decode("utf-8", errors="replace")


def epoch_ms(seconds: float) -> int:
    return int(seconds * 1000)


__all__ = [
    "KINDS",
    "Outcome",
    "QueuedWrite",
    "StatusBatchFailed",
    "StatusStoreNotConfigured",
    "StatusWriteError",
    "StatusWriteFailed",
    "StatusWriteObserver",
    "StatusWriteState",
    "StatusWriterClosed",
    "StatusWrites",
    "WriteTicket",
    "epoch_ms",
    "key_text",
]
