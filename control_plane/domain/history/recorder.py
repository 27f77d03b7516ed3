"""The config history's recording: every change of every connector's config and target state, whoever made
it (through a sidecar, straight to a worker, another tool), kept in the sidecars' own topic
(``codecs.config_history``) so that it outlives the config topic's compaction and the sidecars' restarts.

- **Recorded once per cluster**: the acting sidecar (``cluster.acting``: the first live sidecar by id whose
  presence says it records; an older release does not) writes one record per change the view read from the
  config topic, keyed by the change's offset there (the version's id). A sidecar that takes over reads the
  sidecars' topic to its end and goes on after the last change recorded; two that both record for an
  interval write the same keys. A change that changes nothing (a PUT of the same config) is no version.
- **Secrets** are kept as keyed digests (``rules.config_diff``), provider references as written.
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
from ...codecs.config_history import Author, HistoryEntry, HistoryKey, encode_author, encode_entry
from ...codecs.results import Tombstone
from ...rules.config_diff import SecretDigests, StoredConfig, diff
from ...view.config_history import ConfigHistoryTable, ObservedChange
from ..cluster.fence import TAIL, FenceReader, SidecarLog
from ..ports import Actor

log = structlog.get_logger(__name__)

# The principal of the request being served (set by the access layer for writes): who a change is by.
AUTHOR: ContextVar[str | None] = ContextVar("config_author", default=None)
BATCH = 200  # history records written at once (the producer batches them)


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
        digests: SecretDigests,
        *,
        retention_s: float,
        interval_s: float,
        read_timeout_s: float,
        ready: Callable[[], bool],
        now_ms: Callable[[], float] = lambda: time.time() * 1000,
    ) -> None:
        self._table = table
        self._actor = actor
        self.sidecar = me
        self._log = log_
        self._reader = reader
        self.digests = digests
        self.retention_s = retention_s
        self._interval_s = interval_s
        self._read_timeout_s = read_timeout_s
        self._ready = ready
        self._now_ms = now_ms
        self.counts: Counter[str] = Counter()  # recorded, unchanged, expired, attributed, failed
        self._task: asyncio.Task[None] | None = None
        self._authoring: set[asyncio.Task[None]] = set()  # authors being written

    def kept(self) -> int:
        return self._table.size()

    def pending(self) -> int:
        return len(self._table.pending())

    def acting_sidecar(self) -> str | None:
        """The sidecar of the cluster that records (``cluster.acting``)."""
        return self._actor.acting_sidecar()

    def acting(self) -> bool:
        return self._actor.acting()

    # -- recording
    async def check(self) -> None:
        """One pass of the acting sidecar: record what is pending, then expire what is past retention."""
        if not self._ready() or not self.acting():
            return
        if self._table.pending():
            await self._reader.read_to_end(TAIL, self._read_timeout_s)  # another recorder's records first
            await self.record(self._table.pending())
        await self.expire()

    def entry_of(self, change: ObservedChange) -> HistoryEntry | None:
        """The history record of ``change`` (None: it changes nothing the history shows)."""
        before = self._table.latest(change.connector)
        if change.deleted:
            if before is None or before.change == "deleted":
                return None
            return HistoryEntry(
                change.offset, change.connector, change.timestamp_ms, "deleted", None, None, self.sidecar
            )
        if change.config is None:
            return None  # a target state before the connector's config (KIP-980's initial state): with it
        stored = self.digests.stored(change.connector, change.config)
        if before is None or before.change == "deleted":
            kind = "created"
        elif diff(stored_of(before), stored):
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

    async def record(self, changes: list[ObservedChange]) -> None:
        for start in range(0, len(changes), BATCH):
            batch, entries = changes[start : start + BATCH], []
            for change in batch:
                entry = self.entry_of(change)
                if entry is None:
                    self.counts["unchanged"] += 1
                    continue
                self._table.apply_entry(entry)  # the next change of the connector compares with it
                entries.append(entry)
            await asyncio.gather(*(self._log.write(*encode_entry(e)) for e in entries))
            self.counts["recorded"] += len(entries)
            self._table.covered_through(batch[-1].offset)

    async def expire(self) -> None:
        """Versions older than the retention go, each live connector's newest kept (a deleted one's too,
        until it is past retention itself)."""
        cutoff = self._now_ms() - self.retention_s * 1000
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
            self._table.apply_entry(Tombstone(key))
        await asyncio.gather(*writes)
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
