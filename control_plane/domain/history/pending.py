"""The config history's records the recording sidecar has made and the broker has not acknowledged yet: the
pending set. A record leaves it only when its write is acknowledged; the history the sidecar shows is what
it reads back from the sidecars' topic (``view.config_history``), never this set.

- **In order, retried with a backoff**: the records are written in the order of their changes in the
  config topic; a write that fails leaves its record here, and the set is written again after a backoff
  that grows with each failure in a row (``backoff.ProposalBackoff``), until acknowledged. It is written
  whether or not this sidecar still records: a sidecar that took over writes the same keys (a record's
  key is its change's offset in the config topic), so a record written by both is one version.
- **Bounded**: at most ``limit`` records. A full set takes no new change: the changes wait in the view's
  own bounded queue of changes no record covers (``view.config_history.MAX_PENDING``), whose oldest are
  dropped and counted once it is full too. A record older than the retention that a newer version of its
  connector supersedes is dropped (retention would remove it at once).
- **What the next change compares with**: the newest record made of each connector, acknowledged or not,
  until the history read back has it.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from ...backoff import ProposalBackoff
from ...codecs.config_history import HistoryEntry, HistoryKey


class PendingRecords:
    def __init__(self, limit: int, backoff: ProposalBackoff, clock: Callable[[], float] = time.monotonic) -> None:
        self.limit = limit
        self._backoff = backoff
        self._clock = clock
        self._records: dict[HistoryKey, HistoryEntry] = {}  # in the order of their changes
        self._newest: dict[str, HistoryEntry] = {}  # per connector, the newest record made
        self.made_through = -1  # the config topic offset of the last change made a record of (or none needed)
        self.failures = 0  # writes failed in a row
        self._retry_at = 0.0

    def __len__(self) -> int:
        return len(self._records)

    def full(self) -> bool:
        return len(self._records) >= self.limit

    def records(self) -> list[HistoryEntry]:
        return list(self._records.values())

    def add(self, entry: HistoryEntry) -> None:
        self._records[entry.key] = entry
        self._newest[entry.connector] = entry

    def newest(self, connector: str, kept: HistoryEntry | None) -> HistoryEntry | None:
        """What the next change of ``connector`` compares with: the newer of the history's ``kept`` newest and
        the newest record made here."""
        made = self._newest.get(connector)
        if made is None or (kept is not None and kept.offset >= made.offset):
            return kept
        return made

    def acknowledged(self, entry: HistoryEntry) -> None:
        self._records.pop(entry.key, None)

    # -- the backoff of the writes
    def due(self) -> bool:
        return self._clock() >= self._retry_at

    def failed(self) -> float:
        """A write failed: the seconds until the next is due."""
        wait_s = self._backoff.backoff_ms(self.failures) / 1000
        self.failures += 1
        self._retry_at = self._clock() + wait_s
        return wait_s

    def succeeded(self) -> None:
        self.failures, self._retry_at = 0, 0.0

    # -- pruning
    def settle(self, kept: Callable[[str], HistoryEntry | None], cutoff_ms: float) -> int:
        """Forget the newest records made that were acknowledged and that the history read back has (or a newer
        one), or are past retention; drop the records past retention that a newer version supersedes (or that
        are a deletion). Returns how many records were dropped."""
        for connector, made in list(self._newest.items()):
            latest = kept(connector)
            if made.key in self._records:
                continue
            if (latest is not None and latest.offset >= made.offset) or made.timestamp_ms < cutoff_ms:
                del self._newest[connector]
        old = [
            e
            for e in self._records.values()
            if e.timestamp_ms < cutoff_ms
            and (e.change == "deleted" or self.newest(e.connector, kept(e.connector)) is not e)
        ]
        for entry in old:
            del self._records[entry.key]
        return len(old)


__all__ = ["PendingRecords"]
