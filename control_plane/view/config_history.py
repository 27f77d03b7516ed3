"""Config history in the view: the changes read from the config topic that no history record covers yet
(``pending``, what the recording sidecar records), and the history records and authors of the sidecars'
topic (``codecs.config_history``), per connector in the config topic's order; and per connector the
newest change a record covers (``baseline``: what a recorder that starts compares the next change's
secrets with, where it keeps no digest of them)."""

from __future__ import annotations

import bisect
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass

from ..codecs.config_history import Author, HistoryEntry, HistoryKey
from ..codecs.results import Tombstone
from ..rules.connectors import sink_topic_via

MAX_PENDING = 20_000  # changes kept for a recorder that is not there (history off everywhere): the oldest go


@dataclass(frozen=True, slots=True)
class ObservedChange:
    """The connector as it was after one config topic record of it (a config, a target state, a deletion)."""

    offset: int
    timestamp_ms: int
    connector: str
    config: Mapping[str, str | None] | None  # None: deleted (or a target state before any config)
    state: str | None
    deleted: bool = False


@dataclass(frozen=True, slots=True)
class EarlierConfig:
    """A connector's newest recorded config that named a topic its config no longer names."""

    connector: str
    version: int  # the config topic offset of that config (its version in the history)
    via: str  # topics or topics.regex
    named_at_ms: int  # when that config was written
    until_ms: int  # when the next version, the first that no longer named it, was written
    deleted: bool  # the connector is deleted now

    def as_json(self) -> dict[str, object]:
        return {
            "connector": self.connector,
            "version": self.version,
            "via": self.via,
            "named_at_ms": self.named_at_ms,
            "until_ms": self.until_ms,
            "deleted": self.deleted,
        }


class ConfigHistoryTable:
    def __init__(self, max_pending: int = MAX_PENDING) -> None:
        self._entries: dict[str, dict[int, HistoryEntry]] = {}
        self._offsets: dict[str, list[int]] = {}  # per connector, its entries' offsets in order
        self._authors: dict[HistoryKey, Author] = {}
        self._pending: deque[ObservedChange] = deque(maxlen=max_pending)
        self._baseline: dict[str, ObservedChange] = {}  # per connector, the newest change covered
        self.observed_through = -1  # the last config topic offset of a change observed
        self.recorded_through = -1  # the last offset a history record covers (never back: retention removes)
        self.dropped = 0  # changes observed that no recorder took before MAX_PENDING newer ones came
        self.made_through = -1  # the last change this sidecar's recorder made a record of (or needed none)

    # -- the config topic's side (the view's config tail)
    def observe(self, change: ObservedChange) -> None:
        self.observed_through = max(self.observed_through, change.offset)
        if change.offset <= self.recorded_through:
            self._covered(change)
            return
        if len(self._pending) == self._pending.maxlen and self._pending[0].offset > self.made_through:
            self.dropped += 1  # not a record of it made: lost (one made is pending in the recorder)
        self._pending.append(change)

    def pending(self) -> list[ObservedChange]:
        """The changes no history record covers yet, oldest first."""
        return [c for c in self._pending if c.offset > self.recorded_through]

    def changes_of(self, connector: str, after: int) -> list[int]:
        """The offsets of the changes of ``connector`` after config topic offset ``after``: recorded
        already (a version), or not yet."""
        pending = {c.offset for c in self._pending if c.connector == connector and c.offset > after}
        offsets = self._offsets.get(connector, [])
        recorded = offsets[bisect.bisect_right(offsets, after) :]
        return sorted(pending.union(recorded))

    def covered_through(self, offset: int) -> None:
        """Every change up to ``offset`` is recorded (or needs no record)."""
        if offset > self.recorded_through:
            self.recorded_through = offset
        while self._pending and self._pending[0].offset <= self.recorded_through:
            self._covered(self._pending.popleft())

    def _covered(self, change: ObservedChange) -> None:
        if change.deleted:
            self._baseline.pop(change.connector, None)
        else:
            self._baseline[change.connector] = change

    def baseline(self, connector: str) -> ObservedChange | None:
        """The newest change of ``connector`` a history record covers, as the config topic had it: its config
        is the newest version's (None: none read, or deleted since)."""
        return self._baseline.get(connector)

    # -- the sidecars' topic's side
    def apply_entry(self, record: HistoryEntry | Tombstone[HistoryKey]) -> None:
        key = record.key
        entries = self._entries.setdefault(key.connector, {})
        offsets = self._offsets.setdefault(key.connector, [])
        if isinstance(record, Tombstone):
            if entries.pop(key.offset, None) is not None:
                offsets.remove(key.offset)
            if not entries:
                del self._entries[key.connector], self._offsets[key.connector]
            return
        if key.offset not in entries:
            bisect.insort(offsets, key.offset)
        entries[key.offset] = record
        self.covered_through(key.offset)

    def apply_author(self, record: Author | Tombstone[HistoryKey]) -> None:
        if isinstance(record, Tombstone):
            self._authors.pop(record.key, None)
        else:
            self._authors[HistoryKey(record.offset, record.connector)] = record

    # -- reads
    def connectors(self) -> list[str]:
        return sorted(self._entries)

    def entries(self, connector: str) -> list[HistoryEntry]:
        """``connector``'s history, oldest first."""
        entries = self._entries.get(connector, {})
        return [entries[o] for o in self._offsets.get(connector, [])]

    def entry(self, connector: str, offset: int) -> HistoryEntry | None:
        return self._entries.get(connector, {}).get(offset)

    def previous(self, connector: str, offset: int) -> HistoryEntry | None:
        """The entry of ``connector`` before ``offset`` (None: the first one kept)."""
        offsets = self._offsets.get(connector, [])
        i = bisect.bisect_left(offsets, offset)
        return self._entries[connector][offsets[i - 1]] if i > 0 else None

    def latest(self, connector: str) -> HistoryEntry | None:
        offsets = self._offsets.get(connector)
        return self._entries[connector][offsets[-1]] if offsets else None

    def earlier_configs_naming(self, topic: str) -> list[EarlierConfig]:
        """Per connector whose newest recorded version does not name ``topic`` (a sink's ``topics`` or
        ``topics.regex``, ``rules.connectors.sink_topic_via``), the newest earlier version that did."""
        found = []
        for connector in sorted(self._entries):
            entries = self.entries(connector)
            if not entries or sink_topic_via(entries[-1].config, topic):
                continue
            for i in range(len(entries) - 2, -1, -1):
                via = sink_topic_via(entries[i].config, topic)
                if via:
                    e = entries[i]
                    until = entries[i + 1].timestamp_ms
                    found.append(
                        EarlierConfig(connector, e.offset, via, e.timestamp_ms, until, entries[-1].change == "deleted")
                    )
                    break
        return found

    def author(self, connector: str, offset: int) -> Author | None:
        return self._authors.get(HistoryKey(offset, connector))

    def authors(self) -> list[Author]:
        return list(self._authors.values())

    def size(self) -> int:
        return sum(len(o) for o in self._offsets.values())


__all__ = ["MAX_PENDING", "ConfigHistoryTable", "EarlierConfig", "ObservedChange"]
