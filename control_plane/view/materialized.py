"""The live view: three topic tails feeding one ``ClusterView``, and a fourth, of the sidecars' own topic,
feeding the connectors' fences (``fences``), the live sidecars (``sidecars``) and what their workers have
installed (``installed``).

Reads the config, status and offsets topics from the beginning, decodes every record with the pure
codecs and applies it. Ready once each tail has read up to the end offsets it saw at start. Records
that decode to ``UnknownKey`` or ``Malformed`` are counted (``view_records_skipped_total`` on
/metrics) and logged once per key, never fatal. Consistency: a record is visible in the view as soon
as its tail hands it on; ``read_to_end`` lets a writer wait until its own write is visible.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

import structlog

from ..codecs import Malformed, UnknownKey, decode_config, decode_offset, decode_status, decode_topic_status
from ..codecs.auto_restart import decode_budget, decode_policy, decode_state
from ..codecs.config import ConfigKey, ConfigKind, ConnectorConfig, TargetState
from ..codecs.config_history import decode_author, decode_entry
from ..codecs.fence import decode_fence
from ..codecs.presence import decode_presence
from ..codecs.results import Tombstone
from ..codecs.worker_plugins import decode_installed
from ..storage.log_reader import Record, TailLag, TopicTail, read_all_to_end
from .auto_restarts import AutoRestartTable
from .config_history import ConfigHistoryTable, ObservedChange
from .fences import FenceTable
from .installed import InstalledTable
from .model import ClusterView
from .sidecars import SidecarTable
from .timeline import DEFAULT_CAPACITY, StateTimeline

log = structlog.get_logger(__name__)

MAX_LOGGED_KEYS = 10_000
VIEW_TAILS = frozenset({"config", "status", "offsets"})  # what the view's readiness waits for


class MaterializedView:
    def __init__(
        self,
        client_kwargs: dict[str, Any],
        *,
        config_topic: str,
        status_topic: str,
        offsets_topic: str | None,
        sidecars_topic: str | None = None,
        timeline_capacity: int = DEFAULT_CAPACITY,
    ) -> None:
        self.state = ClusterView(timeline=StateTimeline(timeline_capacity))
        self.fences = FenceTable()
        self.sidecars = SidecarTable()
        self.installed = InstalledTable()
        self.auto_restarts = AutoRestartTable()
        self.history = ConfigHistoryTable()
        self._kinds = self._sidecar_kinds()
        self.applied: Counter[str] = Counter()
        self.skipped: Counter[tuple[str, str]] = Counter()
        self._logged: set[tuple[str, bytes | None]] = set()
        self.tails: dict[str, TopicTail] = {
            "config": TopicTail(config_topic, client_kwargs, self._on_config),
            "status": TopicTail(status_topic, client_kwargs, self._on_status, on_records=self._on_status_records),
        }
        if offsets_topic:
            self.tails["offsets"] = TopicTail(offsets_topic, client_kwargs, self._on_offset)
        if sidecars_topic:
            self.tails["sidecars"] = TopicTail(sidecars_topic, client_kwargs, self._on_sidecars)

    async def start(self) -> None:
        for tail in self.tails.values():
            await tail.start()

    async def stop(self) -> None:
        for tail in self.tails.values():
            await tail.stop()

    @property
    def ready(self) -> bool:
        return all(tail.caught_up.is_set() for name, tail in self.tails.items() if name in VIEW_TAILS)

    async def wait_ready(self) -> None:
        """Until every tail of Connect's topics has read up to the end offsets it saw at start (``ready``;
        the fences need no start: a claim reads the sidecars' topic to its end)."""
        for name, tail in self.tails.items():
            if name in VIEW_TAILS:
                await tail.caught_up.wait()

    def progress(self) -> dict[str, dict[str, Any]]:
        return {
            name: {
                "topic": tail.topic,
                "caught_up": tail.caught_up.is_set(),
                "records_read": tail.records_read,
                "error": tail.error,
            }
            for name, tail in self.tails.items()
        }

    def lag(self) -> dict[str, TailLag | None]:
        """Per tail (``config``, ``status``, ``offsets``): how far behind it is, as of its last fetch."""
        return {name: tail.lag() for name, tail in self.tails.items()}

    def diagnostics(self) -> dict[str, Any]:
        """The tails' progress and the records applied and skipped, for the sidecar's own info endpoint."""
        return {
            "tails": self.progress(),
            "records_applied": dict(self.applied),
            "records_skipped": {f"{t}:{r}": n for (t, r), n in self.skipped.items()},
        }

    async def wait_for(self, topic: str, condition: Callable[[ClusterView], bool], timeout_s: float) -> None:
        """Wait until ``condition`` holds of the view, re-checked as the tail of ``topic`` hands on
        records; raises ``ReadTimeout`` when it does not within ``timeout_s``."""
        await self.tails[topic].wait_until(lambda: condition(self.state), timeout_s)

    def has_tail(self, topic: str) -> bool:
        return topic in self.tails

    def tail_error(self, topic: str) -> str | None:
        """The last error of the tail of ``topic`` (``config``, ``status`` or ``offsets``), if any."""
        tail = self.tails.get(topic)
        return tail.error if tail is not None else None

    async def read_to_end(self, topic: str, timeout_s: float) -> None:
        await self.tails[topic].read_to_end(timeout_s)

    async def read_all_to_end(self, topics: Sequence[str], timeout_s: float | None) -> None:
        """``read_to_end`` of several topics, their end offsets asked for at once."""
        await read_all_to_end([self.tails[t] for t in topics], timeout_s)

    def fresh_within(self, topics: Sequence[str], window_s: float) -> bool:
        """Whether the view shows every record written to ``topics`` before ``window_s`` ago
        (``TopicTail.fresh_within``; each tail asked, so that each reads ahead)."""
        fresh = [self.tails[t].fresh_within(window_s) for t in topics]  # no short cut: all() would skip some
        return all(fresh)

    async def until_fresh(self, topics: Sequence[str], window_s: float) -> None:
        """Until ``fresh_within(topics, window_s)`` holds as of this call (unbounded: the caller bounds it)."""
        since = asyncio.get_running_loop().time() - window_s
        for t in topics:
            await self.tails[t].until_fresh(since)

    # -- the callbacks of the tails ---------------------------------------------------------------
    def _skip(self, topic: str, record: Record, decoded: UnknownKey | Malformed) -> None:
        reason = "unknown_key" if isinstance(decoded, UnknownKey) else "malformed"
        self.skipped[(topic, reason)] += 1
        marker = (topic, record.key)
        if marker not in self._logged and len(self._logged) < MAX_LOGGED_KEYS:
            self._logged.add(marker)
            log.warning(
                "skipped record",
                topic=record.topic,
                partition=record.partition,
                offset=record.offset,
                key=record.key.decode("utf-8", "replace") if record.key is not None else None,
                reason=decoded.reason if isinstance(decoded, Malformed) else "unknown key",
            )

    def _on_config(self, record: Record) -> None:
        decoded = decode_config(record.key, record.value)
        if isinstance(decoded, UnknownKey | Malformed):
            self._skip("config", record, decoded)
            return
        self.state.apply_config(decoded, record.timestamp)
        self.applied["config"] += 1
        if "sidecars" in self.tails:  # where the history is kept
            self._observe_change(decoded, record)

    def _observe_change(self, decoded: object, record: Record) -> None:
        """A change of a connector's config or target state, as the view has the connector after it, for
        the config history (``history``)."""
        if isinstance(decoded, ConnectorConfig | TargetState):
            name = decoded.connector
        elif isinstance(decoded, Tombstone) and isinstance(decoded.key, ConfigKey):
            if decoded.key.kind is not ConfigKind.CONNECTOR:
                return
            name = decoded.key.name
        else:
            return
        state = self.state
        change = ObservedChange(
            record.offset,
            record.timestamp,
            name,
            state.connector_config(name),
            state.target_states.get(name),
            deleted=isinstance(decoded, Tombstone),
        )
        self.history.observe(change)

    def _on_status_records(self, records: Sequence[Record]) -> int:
        """The status tail's records of one fetch. Most records of a status topic track topics (KIP-558):
        applied here as their fields (``decode_topic_status``), without building their objects; the
        others, and those it leaves to ``decode_status``, by ``_on_status``. Returns how many failed."""
        state, decode, failed, topic_records = self.state, decode_topic_status, 0, 0
        for record in records:
            try:
                parts = decode(record.key, record.value)
                if parts is None:
                    self._on_status(record)
                elif len(parts) == 2:
                    state.remove_topic(parts[0], parts[1], record.timestamp)
                    topic_records += 1
                else:
                    state.apply_topic(parts, record.timestamp)
                    topic_records += 1
            except Exception:
                failed += 1
                log.exception(
                    "applying a record failed", topic=record.topic, partition=record.partition, offset=record.offset
                )
        self.applied["status"] += topic_records
        return failed

    def _on_status(self, record: Record) -> None:
        decoded = decode_status(record.key, record.value)
        if isinstance(decoded, UnknownKey | Malformed):
            self._skip("status", record, decoded)
            return
        self.state.apply_status(decoded, record.timestamp)
        self.applied["status"] += 1

    def _on_offset(self, record: Record) -> None:
        decoded = decode_offset(record.key, record.value)
        if isinstance(decoded, Malformed) or record.key is None:
            self._skip("offsets", record, decoded if isinstance(decoded, Malformed) else Malformed("no key"))
            return
        self.state.apply_offset(decoded, record.key, record.timestamp)
        self.applied["offsets"] += 1

    def _sidecar_kinds(self) -> tuple[tuple[Callable[[bytes | None, bytes | None], Any], Callable[..., None]], ...]:
        """Each kind of record of the sidecars' topic: its decoder (``UnknownKey`` for another kind's key)
        and where it goes, with the broker's timestamp where the table reads it."""
        return (
            (decode_fence, self.fences.apply),
            (decode_presence, self.sidecars.apply),
            (decode_installed, lambda record, _: self.installed.apply(record)),
            (decode_policy, lambda record, _: self.auto_restarts.apply_policy(record)),
            (decode_state, lambda record, _: self.auto_restarts.apply_state(record)),
            (decode_budget, lambda record, _: self.auto_restarts.apply_budget(record)),
            (decode_entry, lambda record, _: self.history.apply_entry(record)),
            (decode_author, lambda record, _: self.history.apply_author(record)),
        )

    def _on_sidecars(self, record: Record) -> None:
        for decode, apply in self._kinds:
            decoded = decode(record.key, record.value)
            if isinstance(decoded, UnknownKey):
                continue
            if isinstance(decoded, Malformed):
                self._skip("sidecars", record, decoded)
                return
            apply(decoded, record.timestamp)
            self.applied["sidecars"] += 1
            return
        self._skip("sidecars", record, UnknownKey(record.key or b""))
