"""What the config history keeps, as the endpoints read it: a connector's versions (newest first, in pages),
one version with its config, the key-level diff of two, and the config a rollback writes (its secrets back:
supplied, or the current value where it is the version's: its digest is the version's, or no change of it
is recorded since the version and none is waiting to be).

A version's id is the offset of its change in the config topic; its diff is against the version before it
that the history still keeps (``first_kept`` where none is kept).
"""

from __future__ import annotations

import bisect
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass

from ...codecs.config_history import HistoryEntry
from ...rules.config_diff import Change, diff
from ...view.config_history import ConfigHistoryTable
from ..errors import BadRequestError, NotFoundError
from ..outcomes import Refusal, Relay
from .recorder import HistoryRecorder, stored_of

Current = Callable[[str], Awaitable[Mapping[str, str | None] | None]]  # a connector's config, the topic read to its end
# a config write of a connector's: name, the config, the config it must still have
Rollback = Callable[[str, dict[str, str | None], Mapping[str, str | None]], Awaitable[Refusal | Relay]]


@dataclass(frozen=True)
class ConfigVersion:
    """One version kept: what changed (``created``, ``updated``, ``state``, ``deleted``), when, by whom (where
    a sidecar made it), its changes from the version before, and its config (secrets as ``[hidden]``;
    None for a deletion)."""

    connector: str
    version: int
    timestamp_ms: int
    change: str
    state: str | None
    who: str | None
    via_sidecar: str | None
    changes: tuple[Change, ...]
    first_kept: bool
    config: Mapping[str, str | None] | None


@dataclass(frozen=True)
class HistoryPage:
    """Versions of a connector, newest first; ``next_before``: the version the next page starts before."""

    connector: str
    retention_s: float
    recorded_by: str | None
    versions: tuple[ConfigVersion, ...]
    next_before: int | None


@dataclass(frozen=True)
class VersionDiff:
    connector: str
    source: int
    target: int
    source_state: str | None
    target_state: str | None
    changes: tuple[Change, ...]


class KeptHistory:
    def __init__(
        self, table: ConfigHistoryTable, recorder: HistoryRecorder, current: Current, rollback_write: Rollback
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

    def _version(self, entry: HistoryEntry, previous: HistoryEntry | None) -> ConfigVersion:
        author = self._table.author(entry.connector, entry.offset)
        return ConfigVersion(
            entry.connector,
            entry.offset,
            entry.timestamp_ms,
            entry.change,
            entry.state,
            author.who if author is not None else None,
            author.sidecar if author is not None else None,
            tuple(diff(stored_of(previous) if previous else None, stored_of(entry))),
            previous is None,
            dict(entry.config) if entry.config is not None else None,
        )

    def history(self, connector: str, *, limit: int | None = None, before: int | None = None) -> HistoryPage:
        """The versions kept, newest first; at most ``limit`` of them, older than version ``before``."""
        entries = self._entries(connector)
        end = len(entries) if before is None else bisect.bisect_left([e.offset for e in entries], before)
        start = 0 if limit is None else max(0, end - limit)
        versions = [self._version(entries[i], entries[i - 1] if i > 0 else None) for i in range(start, end)]
        return HistoryPage(
            connector,
            self._recorder.retention_s,
            self._recorder.acting_sidecar(),
            tuple(versions[::-1]),
            entries[start].offset if start > 0 else None,
        )

    def version(self, connector: str, version: int) -> ConfigVersion:
        return self._version(self._entry(connector, version), self._table.previous(connector, version))

    def diff(self, connector: str, source: int, target: int | None) -> VersionDiff:
        """The changes from version ``source`` to ``target`` (None: the newest)."""
        old = self._entry(connector, source)
        new = self._entry(connector, target) if target is not None else self._entries(connector)[-1]
        changes = tuple(diff(stored_of(old), stored_of(new)))
        return VersionDiff(connector, old.offset, new.offset, old.state, new.state, changes)

    def restored_config(
        self, connector: str, version: int, supplied: Mapping[str, str], current: Mapping[str, str | None]
    ) -> dict[str, str | None]:
        """Version ``version``'s config with its secrets back: supplied, or the current value where its
        mark says it is the version's value; 400 naming the ones the sidecar cannot restore."""
        entry = self._entry(connector, version)
        if entry.config is None:
            raise BadRequestError(f"Version {version} of connector {connector} is its deletion: nothing to restore")
        config, missing = dict(entry.config), []
        for key, mark in sorted(entry.secrets.items()):
            if key in supplied:
                config[key] = supplied[key]
            elif (value := current.get(key)) is not None and self._still(connector, key, value, mark):
                config[key] = value
            else:
                missing.append(key)
        if missing:
            raise BadRequestError(
                f"Version {version} of connector {connector} held secrets the sidecar does not keep, "
                f"and the connector's current values differ: {', '.join(missing)}. Supply them in the request: "
                '{"secrets": {"' + missing[0] + '": "..."}}'
            )
        return config

    def _still(self, connector: str, key: str, value: str, mark: str) -> bool:
        """Whether the current ``value`` of a secret is the one a version's ``mark`` stands for: the marks
        say so, or the newest version has the same mark and no change of the connector came after it (the
        view read the config topic to its end)."""
        if self._recorder.marks.holds(connector, key, value, mark):
            return True
        newest = self._table.latest(connector)
        return (
            newest is not None
            and newest.secrets.get(key) == mark
            and not self._table.changes_of(connector, newest.offset)
        )

    async def rollback(self, connector: str, version: int, supplied: Mapping[str, str]) -> Refusal | Relay:
        """The connector's config back to version ``version``'s, as a config write of its own."""
        self._entry(connector, version)
        current = await self._current(connector)  # the config topic read to its end
        if current is None:
            raise NotFoundError(f"Connector {connector} not found")  # a rollback rewrites a live connector
        return await self._write(connector, self.restored_config(connector, version, supplied, current), current)


__all__ = ["ConfigVersion", "Current", "HistoryPage", "KeptHistory", "Rollback", "VersionDiff"]
