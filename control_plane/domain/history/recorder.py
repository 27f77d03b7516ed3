"""The config history's recording: every change of every connector's config and target state, whoever made
it (through a sidecar, straight to a worker, another tool), kept in the sidecars' own topic
(``codecs.config_history``) so that it outlives the config topic's compaction and the sidecars' restarts.

- **Recorded once per cluster**: the acting sidecar (``cluster.acting``: the first live sidecar by id whose
  presence says it records; an older release does not) writes one record per change the view read from the
  config topic, keyed by the change's offset there (the version's id). A sidecar that takes over reads the
  sidecars' topic to its end and goes on after the last change recorded; two that both record for an
  interval write the same keys. A change that changes nothing (a PUT of the same config) is no version.
- **Nothing recorded is lost**: a record is pending (``pending``) until the broker acknowledged it, written
  again with a backoff while it is not; the history the sidecar shows (``view.config_history``) holds
  only records read back from the sidecars' topic, so a record whose write failed is never shown as kept,
  and every sidecar shows the same versions. A record's key is its change's offset: a record written
  again, or by the sidecar that took over meanwhile, is the same version, never a second one.
- **Secrets** are kept as marks (``rules.config_diff``): keyed digests under ``HISTORY_SECRET_KEY``, else
  the version where the value was first recorded, compared with the version before in memory (where this
  process did not record it, with the view's ``baseline``); provider references as written.
- **Who**: a write a sidecar makes for a connector holds the connector's fence (``cluster.writes``);
  before it lets go, the sidecar names the principal of the request (``AUTHOR``) for the changes of that
  connector its write put in the config topic (``attribute``).
- **Retention**: the recording sidecar removes versions older than ``HISTORY_RETENTION_S``, always keeping
  each live connector's newest.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from collections.abc import Callable
from contextvars import ContextVar

import structlog

from ...background import cancel_and_wait
from ...backoff import ProposalBackoff
from ...codecs.config_history import Author, HistoryEntry, HistoryKey, encode_author, encode_entry
from ...codecs.results import Tombstone
from ...rules.config_diff import SecretMarks, StoredConfig, diff
from ...view.config_history import ConfigHistoryTable, ObservedChange
from ..cluster.fence import TAIL, FenceReader, SidecarLog
from ..ports import Actor
from .pending import PendingRecords

log = structlog.get_logger(__name__)

# The principal of the request being served (set by the access layer for writes): who a change is by.
AUTHOR: ContextVar[str | None] = ContextVar("config_author", default=None)
BATCH = 200  # history records written at once (the producer batches them)
MAX_PENDING_RECORDS = 10_000  # records made and not acknowledged yet (HISTORY_MAX_PENDING_RECORDS)


def stored_of(entry: HistoryEntry) -> StoredConfig | None:
    return StoredConfig(dict(entry.config), dict(entry.secrets)) if entry.config is not None else None


class HistoryRecorder:
    """The recording loop of the acting sidecar, and the attribution every sidecar writes for its writes."""

    def __init__(
        self,
        table: ConfigHistoryTable,
        actor: Actor,
        me: str,
        log_: SidecarLog,
        reader: FenceReader,
        marks: SecretMarks,
        *,
        retention_s: float,
        interval_s: float,
        read_timeout_s: float,
        ready: Callable[[], bool],
        pending: PendingRecords | None = None,
        now_ms: Callable[[], float] = lambda: time.time() * 1000,
    ) -> None:
        """``pending``: the records not acknowledged yet, with their bound and backoff (by default
        ``MAX_PENDING_RECORDS`` of them, retried after 0.5 s, doubling up to 30 s)."""
        self._table = table
        self._actor = actor
        self.sidecar = me
        self._log = log_
        self._reader = reader
        self.marks = marks
        self.retention_s = retention_s
        self._interval_s = interval_s
        self._read_timeout_s = read_timeout_s
        self._ready = ready
        self._now_ms = now_ms
        self._pending = (
            pending
            if pending is not None
            else PendingRecords(MAX_PENDING_RECORDS, ProposalBackoff(500, 30_000, 2.0, 0.2))
        )
        # recorded (acknowledged), unchanged, unacknowledged (a write that failed: written again), dropped (past
        # retention while pending), expired, attributed, failed (a pass)
        self.counts: Counter[str] = Counter()
        self._task: asyncio.Task[None] | None = None
        self._authoring: set[asyncio.Task[None]] = set()  # authors being written

    def kept(self) -> int:
        return self._table.size()

    def pending(self) -> int:
        """Changes the view read that no record read back covers yet."""
        return len(self._table.pending())

    def unacknowledged(self) -> int:
        """Records made and not acknowledged by the broker yet (the pending set)."""
        return len(self._pending)

    def dropped(self) -> int:
        """Changes the view read and dropped before any record covered them (its queue full)."""
        return self._table.dropped

    def acting_sidecar(self) -> str | None:
        """The sidecar of the cluster that records (``cluster.acting``)."""
        return self._actor.acting_sidecar()

    def acting(self) -> bool:
        return self._actor.acting()

    # -- recording
    async def check(self) -> None:
        """One pass: write again what the broker has not acknowledged; then, where this sidecar records,
        record the changes no record covers yet, then expire what is past retention."""
        if not self._ready():
            return
        await self._flush()  # whether or not this sidecar still records: the same keys as the one that does
        if not self.acting():
            return
        if self._unmade():
            await self._reader.read_to_end(TAIL, self._read_timeout_s)  # another recorder's records first
            await self.record(self._unmade())
        await self.expire()

    def _unmade(self) -> list[ObservedChange]:
        """The changes no record read back covers and none pending here was made of."""
        return [c for c in self._table.pending() if c.offset > self._pending.made_through]

    def entry_of(self, change: ObservedChange) -> HistoryEntry | None:
        """The history record of ``change`` (None: it changes nothing the history shows)."""
        before = self._pending.newest(change.connector, self._table.latest(change.connector))
        if change.deleted:
            if before is None or before.change == "deleted":
                return None
            return HistoryEntry(
                change.offset, change.connector, change.timestamp_ms, "deleted", None, None, self.sidecar
            )
        if change.config is None:
            return None  # a target state before the connector's config (KIP-980's initial state): with it
        previous = stored_of(before) if before is not None else None
        if before is not None and previous is not None:
            self._learn(change.connector, before, previous)
        stored = self.marks.stored(change.connector, change.config, previous, change.offset)
        if before is None or before.change == "deleted":
            kind = "created"
        elif diff(previous, stored):
            kind = "updated"
        elif before.state != change.state:
            kind = "state"
        else:
            return None
        return HistoryEntry(
            change.offset,
            change.connector,
            change.timestamp_ms,
            kind,
            stored.config,
            change.state,
            self.sidecar,
            stored.secrets,
        )

    def _learn(self, connector: str, before: HistoryEntry, previous: StoredConfig) -> None:
        """The secrets of ``before`` in clear where the config topic still has them (the view's
        ``baseline``, a change no later than those the records cover and no earlier than ``before``)."""
        baseline = self._table.baseline(connector)
        if baseline is not None and baseline.config is not None and baseline.offset >= before.offset:
            self.marks.know(connector, baseline.config, previous)

    async def record(self, changes: list[ObservedChange]) -> None:
        """The records of ``changes`` made (pending until acknowledged), then written; a full pending set
        takes no more (the rest wait in the view's queue of changes)."""
        pending = self._pending
        for change in changes:
            if change.offset <= pending.made_through:
                continue
            if pending.full():
                log.warning("the config history's pending records are at their limit", records=len(pending))
                break
            entry = self.entry_of(change)
            if entry is None:
                self.counts["unchanged"] += 1
            else:
                pending.add(entry)
            pending.made_through = change.offset
        self._table.made_through = pending.made_through
        await self._flush()

    async def _flush(self) -> None:
        """The pending records written, in order, while the backoff allows; those acknowledged leave the set.
        Once all are, the sidecars' topic read to its end: the history shown is what is read back."""
        pending = self._pending
        if not pending:
            self._table.covered_through(pending.made_through)  # each change made since was read back or needed none
            return
        if not pending.due():
            return
        self.counts["dropped"] += pending.settle(self._table.latest, self._cutoff_ms())
        records = pending.records()
        for start in range(0, len(records), BATCH):
            batch = records[start : start + BATCH]
            results = await asyncio.gather(*(self._log.write(*encode_entry(e)) for e in batch), return_exceptions=True)
            errors = [r for r in results if isinstance(r, BaseException)]
            for entry, result in zip(batch, results, strict=True):
                if not isinstance(result, BaseException):
                    pending.acknowledged(entry)
                    self.counts["recorded"] += 1
            if errors:
                self.counts["unacknowledged"] += len(errors)
                wait_s = pending.failed()
                log.warning(
                    "config history records were not acknowledged: written again after a backoff",
                    records=len(errors),
                    pending=len(pending),
                    retry_in_s=round(wait_s, 3),
                    error=str(errors[0]) or type(errors[0]).__name__,
                )
                return
        pending.succeeded()
        await self._reader.read_to_end(TAIL, self._read_timeout_s)
        self._table.covered_through(pending.made_through)  # the changes after the last record needed none
        pending.settle(self._table.latest, self._cutoff_ms())

    def _cutoff_ms(self) -> float:
        return self._now_ms() - self.retention_s * 1000

    async def expire(self) -> None:
        """Versions older than the retention go, each live connector's newest kept (a deleted one's too,
        until it is past retention itself): tombstones written, the history shown without them once read
        back. A failed write is tried again after the backoff, as a record's."""
        if not self._pending.due():
            return
        cutoff = self._cutoff_ms()
        gone: list[HistoryKey] = []
        for connector in self._table.connectors():
            entries = self._table.entries(connector)
            keep_last = entries[-1].change != "deleted"
            old = [e for e in (entries[:-1] if keep_last else entries) if e.timestamp_ms < cutoff]
            gone.extend(e.key for e in old)
        if not gone:
            return
        writes = []
        for key in gone:
            writes.append(self._log.write(*encode_entry(Tombstone(key))))
            if self._table.author(key.connector, key.offset) is not None:
                writes.append(self._log.write(*encode_author(Tombstone(key))))
        try:
            await asyncio.gather(*writes)
        except Exception:
            self._pending.failed()
            raise
        await self._reader.read_to_end(TAIL, self._read_timeout_s)
        self.counts["expired"] += len(gone)

    # -- who
    def position(self) -> int:
        """The config topic offset of the last change the view has read: a write's changes come after it."""
        return self._table.observed_through

    async def attribute(self, connector: str, after: int) -> None:
        """The changes of ``connector`` after config topic offset ``after`` (the view read to the config
        topic's end by the caller) are by the request's principal (``AUTHOR``), under the connector's fence."""
        who = AUTHOR.get()
        changes = self._table.changes_of(connector, after)
        if who is None or not changes:
            return
        # written after the answer: each record's key is its change's offset, which no other sidecar names
        # (its writes of the connector start after this one's, under the fence), so nothing waits for it
        task = asyncio.create_task(self._write_authors(connector, changes, who))
        self._authoring.add(task)
        task.add_done_callback(self._authoring.discard)

    async def _write_authors(self, connector: str, offsets: list[int], who: str) -> None:
        try:
            await asyncio.gather(
                *(self._log.write(*encode_author(Author(o, connector, who, self.sidecar))) for o in offsets)
            )
            self.counts["attributed"] += len(offsets)
        except Exception as err:  # noqa: BLE001 - the change is then shown without who
            self.counts["failed"] += 1
            log.warning("the author of a change was not recorded", connector=connector, error=str(err))

    async def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name="config-history")

    async def authors_written(self) -> None:
        """Once the authors of the writes made so far are written (or failed)."""
        if self._authoring:
            await asyncio.wait(set(self._authoring), timeout=self._read_timeout_s)

    async def stop(self) -> None:
        await cancel_and_wait(self._task)
        await self.authors_written()  # the authors of the last writes, before the producer stops

    async def _run(self) -> None:
        while True:
            await asyncio.sleep(self._interval_s)
            try:
                await self.check()
            except Exception as err:  # noqa: BLE001 - the next pass tries again
                self.counts["failed"] += 1
                log.warning("a config history pass failed", error=str(err))


__all__ = ["AUTHOR", "HistoryRecorder", "stored_of"]
