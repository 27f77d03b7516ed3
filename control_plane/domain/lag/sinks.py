"""Sink connectors' consumer lag, per connector and per partition: the end offset of each partition its
group has committed offsets for, minus that committed offset (the group is ``connect-<c>`` or its
``consumer.override.group.id``, as the worker resolves it: the ``SinkGroupOf`` port, the offsets
feature's). Read from the broker on an interval (``LAG_REFRESH_S``), never per request: one OffsetFetch per
sink's group (each to its coordinator, a few at a time), one Metadata, and one ListOffsets for every
partition of every sink (batched per partition leader). A sink whose consumer reads another Kafka cluster,
or whose group depends on a reference the sidecar cannot resolve, is listed with why.

A partition of a sink's topics (``topics``, or the topics ``topics.regex`` matches) that its group has no
committed offset for is listed too, ``committed`` None: a sink that fails before its first commit is not a
sink without lag. Its lag is what the sink has still to read where its consumer starts
(``rules.connectors.sink_offset_reset``): from the log start (``earliest``, Connect's default) it is every
record still in the partition, end minus log start, as ``kafka-consumer-groups`` counts a group reading from
the beginning; from the end (``latest``) it is 0, and the partition stays marked as not committed. A
second ListOffsets (earliest) is asked for those partitions only.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import structlog

from ...background import cancel_and_wait
from ...rules.connectors import sink_offset_reset, sink_topic_via
from ...view.model import ClusterView
from ..ports import GroupUnknown, SinkGroupOf

log = structlog.get_logger(__name__)

NOT_READY = "the view is not ready"
CONCURRENT_FETCHES = 8  # sinks' groups whose committed offsets are asked for at once


@dataclass(frozen=True)
class PartitionLag:
    topic: str
    partition: int
    committed: int | None  # None: the group has committed no offset for it
    end: int | None  # None: the broker did not answer for it (deleted since)
    start: int | None = None  # the log start offset, asked for where nothing is committed
    reset: str = "earliest"  # where the sink's consumer starts without a committed offset

    @property
    def lag(self) -> int | None:
        if self.end is None:
            return None
        if self.committed is not None:
            return max(0, self.end - self.committed)
        if self.reset == "latest":
            return 0  # the consumer starts at the end: nothing before it is to be read
        return None if self.start is None else max(0, self.end - self.start)


@dataclass(frozen=True)
class SinkLag:
    connector: str
    group: str | None
    partitions: tuple[PartitionLag, ...] = ()
    error: str | None = None  # why it is not known

    @property
    def total(self) -> int | None:
        known = [p.lag for p in self.partitions if p.lag is not None]
        return sum(known) if known or not self.error else None

    @property
    def max(self) -> int | None:
        known = [p.lag for p in self.partitions if p.lag is not None]
        return max(known) if known else (0 if not self.error else None)

    @property
    def uncommitted(self) -> tuple[PartitionLag, ...]:
        """The partitions of its topics its group has committed no offset for."""
        return tuple(p for p in self.partitions if p.committed is None)

    @property
    def uncommitted_records(self) -> int:
        """The records of those partitions it has still to read (its lag there)."""
        return sum(p.lag or 0 for p in self.uncommitted)


@dataclass(frozen=True)
class LagSnapshot:
    at_ms: float  # when the refresh started
    took_s: float
    requests: int  # to the broker: OffsetFetch per group, ListOffsets per leader (at most), FindCoordinator
    sinks: Mapping[str, SinkLag] = field(default_factory=dict)
    error: str | None = None  # the refresh failed as a whole (the broker unreachable)


class Committed(Protocol):
    async def committed_of(self, groups: Sequence[str], concurrent: int) -> Mapping[str, Mapping[Any, int] | Exception]:
        """Each group's committed offsets ((topic, partition) -> offset), or the error it failed with."""
        ...


class Ends(Protocol):
    async def ends(self, partitions: Sequence[tuple[str, int]]) -> tuple[Mapping[tuple[str, int], int], int]:
        """Each partition's end offset, and the ListOffsets requests it took (one per partition leader)."""
        ...

    async def starts(self, partitions: Sequence[tuple[str, int]]) -> Mapping[tuple[str, int], int]:
        """Each partition's log start offset."""
        ...

    async def topics(self) -> Mapping[str, int]:
        """Every topic of the cluster a sink may read (not the internal ones), with its number of partitions."""
        ...


class SinkLags:
    """Refreshes the sinks' lag every ``interval_s`` in the background; ``latest`` is the last refresh."""

    def __init__(
        self,
        state: Callable[[], ClusterView | None],
        group_of: SinkGroupOf,
        committed: Committed,
        ends: Ends,
        *,
        interval_s: float,
        worker_offset_reset: str | None = None,
        now_ms: Callable[[], float] = lambda: time.time() * 1000,
    ) -> None:
        """``worker_offset_reset``: the worker's ``consumer.auto.offset.reset``, if it sets one."""
        self._state = state
        self._worker_reset = worker_offset_reset
        self._group_of = group_of
        self._committed = committed
        self._ends = ends
        self.interval_s = interval_s
        self._now_ms = now_ms
        self.latest: LagSnapshot | None = None
        self._task: asyncio.Task[None] | None = None

    async def refresh(self) -> LagSnapshot:
        started, at = time.monotonic(), self._now_ms()
        state = self._state()
        if state is None:
            return LagSnapshot(at, 0.0, 0, error=NOT_READY)
        sinks = [name for name in state.connectors() if state.connector_type(name) == "sink"]
        groups: dict[str, str] = {}
        refused: dict[str, SinkLag] = {}
        for name in sinks:
            group = self._group_of(name, state.connector_config(name) or {})
            if isinstance(group, GroupUnknown):
                refused[name] = SinkLag(name, None, error=group.reason)
            else:
                groups[name] = group
        distinct = sorted(set(groups.values()))
        try:
            found = await self._committed.committed_of(distinct, CONCURRENT_FETCHES) if distinct else {}
        except Exception as err:  # noqa: BLE001 - the broker: the refresh says so, the last one stays shown
            return LagSnapshot(at, time.monotonic() - started, 1, error=f"committed offsets: {err}")
        fetched: dict[str, Mapping[tuple[str, int], int] | str] = {
            group: (str(got) if isinstance(got, Exception) else {(tp[0], tp[1]): o for tp, o in got.items()})
            for group, got in found.items()
        }
        try:
            topics = await self._ends.topics() if groups else {}
            reads = {name: self._reads(state, name, topics, fetched[group]) for name, group in groups.items()}
            partitions = sorted({tp for got in fetched.values() if not isinstance(got, str) for tp in got})
            partitions = sorted(set(partitions).union(tp for unread in reads.values() for tp in unread))
            ends, listed = await self._ends.ends(partitions)
            unread = sorted({tp for tps in reads.values() for tp in tps})
            starts = await self._ends.starts(unread) if unread else {}
        except Exception as err:  # noqa: BLE001 - the broker: the refresh says so, the last one stays shown
            return LagSnapshot(at, time.monotonic() - started, len(distinct), error=f"end offsets: {err}")
        out: dict[str, SinkLag] = dict(refused)
        for name, group in groups.items():
            got = fetched[group]
            if isinstance(got, str):
                out[name] = SinkLag(name, group, error=f"committed offsets of group {group}: {got}")
                continue
            reset = sink_offset_reset(state.connector_config(name), self._worker_reset)
            lags = [PartitionLag(t, p, offset, ends.get((t, p))) for (t, p), offset in got.items()]
            lags.extend(PartitionLag(t, p, None, ends.get((t, p)), starts.get((t, p)), reset) for t, p in reads[name])
            out[name] = SinkLag(name, group, tuple(sorted(lags, key=lambda lag: (lag.topic, lag.partition))))
        listed += 1 if unread else 0
        requests = len(distinct) * 2 + 1 + listed  # a FindCoordinator and an OffsetFetch per group, a Metadata
        return LagSnapshot(at, time.monotonic() - started, requests, out)

    @staticmethod
    def _reads(
        state: ClusterView,
        name: str,
        topics: Mapping[str, int],
        committed: Mapping[tuple[str, int], int] | str,
    ) -> list[tuple[str, int]]:
        """The partitions of the sink's topics (``topics``, or those ``topics.regex`` matches) that its group
        has committed no offset for."""
        if isinstance(committed, str):
            return []
        config = state.connector_config(name)
        return [
            (topic, partition)
            for topic, count in sorted(topics.items())
            if sink_topic_via(config, topic)
            for partition in range(count)
            if (topic, partition) not in committed
        ]

    async def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name="sink-lag")

    async def stop(self) -> None:
        await cancel_and_wait(self._task)

    async def _run(self) -> None:
        while True:
            wait = self.interval_s
            try:
                snapshot = await self.refresh()
            except Exception as err:  # noqa: BLE001 - the next interval tries again
                log.warning("refreshing the sinks' lag failed", error=str(err))
            else:
                if snapshot.error is None:
                    self.latest = snapshot
                elif snapshot.error == NOT_READY:  # at start: refreshed as soon as the view has caught up
                    wait = min(wait, 1.0)
                else:
                    log.warning("refreshing the sinks' lag failed", error=snapshot.error)
            await asyncio.sleep(wait)


__all__ = ["NOT_READY", "Committed", "Ends", "LagSnapshot", "PartitionLag", "SinkLag", "SinkLags"]
