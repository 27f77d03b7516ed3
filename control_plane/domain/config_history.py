"""Config history: every change of every connector's config and target state, whoever made it (through a
sidecar, straight to a worker, another tool), kept in the sidecars' own topic (``codecs.config_history``)
so that it outlives the config topic's compaction and the sidecars' restarts; a key-level diff between any
two versions; a rollback to a version.

- **Recorded once per cluster**: the first live sidecar by id whose presence says it records
  (``view.sidecars``; an older release does not) writes one record per change the view read from the
  config topic, keyed by the change's offset there (the version's id). A sidecar that takes over reads the
  sidecars' topic to its end and goes on after the last change recorded; two that both record for an
  interval write the same keys. A change that changes nothing (a PUT of the same config) is no version.
- **Secrets** are kept as keyed digests (``rules.config_diff``), provider references as written.
- **Who**: a write a sidecar makes for a connector holds the connector's fence (``connector_writes``);
  before it lets go, the sidecar names the principal of the request (``AUTHOR``) for the changes of that
  connector its write put in the config topic (``attribute``).
- **Retention**: the recording sidecar removes versions older than ``HISTORY_RETENTION_S``, always keeping
  each live connector's newest.
- **Rollback** is an ordinary config write (``ConnectorConfigs.replace``: the same checks, the connector's
  fence, and refused with a 409 when the config changed since the rollback read it). A secret of the
  version is restored from the connector's current config when its digest is the current value's; any
  other must be supplied by the caller.
"""

from __future__ import annotations

import asyncio
import bisect
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Mapping
from contextvars import ContextVar
from typing import Any

import structlog

from ..background import cancel_and_wait
from ..codecs.config_history import Author, HistoryEntry, HistoryKey, encode_author, encode_entry
from ..codecs.results import Tombstone
from ..rules.config_diff import SecretDigests, StoredConfig, diff
from ..view.config_history import ConfigHistoryTable, ObservedChange
from ..view.sidecars import SidecarTable
from .errors import BadRequestError, NotFoundError
from .fence import TAIL, FenceReader, SidecarLog

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
        sidecars: SidecarTable,
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
        self._sidecars = sidecars
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
        """The sidecar that records: the first by id of the live sidecars that can (``SidecarTable.acting``)."""
        return self._sidecars.acting(self._now_ms(), lambda presence: presence.history)

    def acting(self) -> bool:
        return self.acting_sidecar() == self.sidecar

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


Rollback = Callable[[str, dict[str, str | None], Mapping[str, str | None]], Any]  # name, config, expected


class ConfigHistory:
    """What the endpoints ask: a connector's history, one version, the diff of two, a rollback."""

    def __init__(
        self,
        table: ConfigHistoryTable,
        recorder: HistoryRecorder,
        current: Callable[[str], Awaitable[Mapping[str, str | None] | None]],
        rollback_write: Rollback,
    ) -> None:
        self._table = table
        self._recorder = recorder
        self._current = current
        self._write = rollback_write

    def _entries(self, connector: str) -> list[HistoryEntry]:
        entries = self._table.entries(connector)
        if not entries:
            raise NotFoundError(f"No config history of connector {connector}")
        return entries

    def _entry(self, connector: str, version: int) -> HistoryEntry:
        entry = self._table.entry(connector, version)
        if entry is None:
            self._entries(connector)
            raise NotFoundError(f"Connector {connector} has no version {version} in its config history")
        return entry

    def _version(self, entry: HistoryEntry, previous: HistoryEntry | None, *, config: bool) -> dict[str, Any]:
        author = self._table.author(entry.connector, entry.offset)
        body: dict[str, Any] = {
            "version": entry.offset,
            "timestamp_ms": entry.timestamp_ms,
            "change": entry.change,
            "state": entry.state,
            "who": author.who if author is not None else None,
            "via_sidecar": author.sidecar if author is not None else None,
            "changes": [c.as_json() for c in diff(stored_of(previous) if previous else None, stored_of(entry))],
        }
        if previous is None:
            body["first_kept"] = True
        if config:
            body["config"] = dict(entry.config) if entry.config is not None else None
        return body

    def history(self, connector: str, *, limit: int | None = None, before: int | None = None) -> dict[str, Any]:
        """``GET /_sidecar/connectors/{c}/history``: the versions kept, newest first, each with its diff; at most
        ``limit`` of them, older than version ``before`` (a page: ``next_before`` names the next one)."""
        entries = self._entries(connector)
        end = len(entries) if before is None else bisect.bisect_left([e.offset for e in entries], before)
        start = 0 if limit is None else max(0, end - limit)
        versions = [
            self._version(entries[i], entries[i - 1] if i > 0 else None, config=False) for i in range(start, end)
        ]
        return {
            "connector": connector,
            "retention_s": self._recorder.retention_s,
            "recorded_by": self._recorder.acting_sidecar(),
            "versions": versions[::-1],
            "next_before": entries[start].offset if start > 0 else None,
        }

    def version(self, connector: str, version: int) -> dict[str, Any]:
        entry = self._entry(connector, version)
        return {"connector": connector, **self._version(entry, self._table.previous(connector, version), config=True)}

    def diff(self, connector: str, source: int, target: int | None) -> dict[str, Any]:
        """The changes from version ``source`` to ``target`` (None: the newest)."""
        old = self._entry(connector, source)
        new = self._entry(connector, target) if target is not None else self._entries(connector)[-1]
        changes = diff(stored_of(old), stored_of(new))
        return {
            "connector": connector,
            "from": old.offset,
            "to": new.offset,
            "state": {"from": old.state, "to": new.state},
            "changes": [c.as_json() for c in changes],
        }

    def restored_config(
        self, connector: str, version: int, supplied: Mapping[str, str], current: Mapping[str, str | None]
    ) -> dict[str, str | None]:
        """Version ``version``'s config with its secrets back: supplied, or the current value where its
        digest is the version's; 400 naming the ones the sidecar cannot restore."""
        entry = self._entry(connector, version)
        if entry.config is None:
            raise BadRequestError(f"Version {version} of connector {connector} is its deletion: nothing to restore")
        config, missing = dict(entry.config), []
        for key, digest in sorted(entry.secrets.items()):
            if key in supplied:
                config[key] = supplied[key]
            elif (value := current.get(key)) is not None and self._recorder.digests.digest(
                connector, key, value
            ) == digest:
                config[key] = value
            else:
                missing.append(key)
        if missing:
            raise BadRequestError(
                f"Version {version} of connector {connector} held secrets the sidecar keeps only as digests, "
                f"and the connector's current values differ: {', '.join(missing)}. Supply them in the request: "
                '{"secrets": {"' + missing[0] + '": "..."}}'
            )
        return config

    async def rollback(self, connector: str, version: int, supplied: Mapping[str, str]) -> Any:
        """The connector's config back to version ``version``'s, as a config write of its own."""
        self._entry(connector, version)
        current = await self._current(connector)  # the config topic read to its end
        if current is None:
            raise NotFoundError(f"Connector {connector} not found")  # a rollback rewrites a live connector
        return await self._write(connector, self.restored_config(connector, version, supplied, current), current)


__all__ = ["AUTHOR", "ConfigHistory", "HistoryRecorder", "stored_of"]
