"""Lag and freshness per connector, for dashboards and alerts.

- **Sink connectors: consumer lag**, per connector and per partition: the end offset of each partition its
  group has committed offsets for, minus that committed offset (the group is ``connect-<c>`` or its
  ``consumer.override.group.id``, provider references resolved as the worker resolves them:
  ``rules.connectors.sink_group_id``). Read from the broker on an interval (``LAG_REFRESH_S``), never per
  request: one OffsetFetch per sink's group (each to its coordinator, a few at a time) and one ListOffsets
  for every partition of every sink (batched per partition leader). A sink whose consumer reads another
  Kafka cluster, or whose group depends on a reference the sidecar cannot resolve, is listed with why.
- **Source connectors: freshness**, from the offsets topic the view already reads: per source partition, when
  its offset was last committed (the timestamp of its latest record), the connector's newest commit, and
  the count of offset records read (a counter: its rate is the records committed per interval). Connect's
  offset records do not name the task that wrote them; a partition is what the topic knows.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import structlog

from ..background import cancel_and_wait
from ..rules.connectors import (
    CONSUMER_BOOTSTRAP_OVERRIDE,
    GROUP_OVERRIDE_KEY,
    client_cluster,
    on_another_cluster,
    sink_group_id,
)
from ..view.model import ClusterView
from .errors import NotFoundError, ViewNotReady
from .offsets import WorkerKafka

log = structlog.get_logger(__name__)

NOT_READY = "the view is not ready"
CONCURRENT_FETCHES = 8  # sinks' groups whose committed offsets are asked for at once


@dataclass(frozen=True)
class PartitionLag:
    topic: str
    partition: int
    committed: int
    end: int | None  # None: the broker did not answer for it (deleted since)

    @property
    def lag(self) -> int | None:
        return None if self.end is None else max(0, self.end - self.committed)


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


GroupOf = Callable[[str, Mapping[str, str | None]], "str | Refused"]


@dataclass(frozen=True)
class Refused:
    """Why a sink's lag is not read: its group is not known, or not on the worker's cluster."""

    reason: str


class SinkLags:
    """Refreshes the sinks' lag every ``interval_s`` in the background; ``latest`` is the last refresh."""

    def __init__(
        self,
        state: Callable[[], ClusterView | None],
        group_of: GroupOf,
        committed: Committed,
        ends: Ends,
        *,
        interval_s: float,
        now_ms: Callable[[], float] = lambda: time.time() * 1000,
    ) -> None:
        self._state = state
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
            if isinstance(group, Refused):
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
        partitions = sorted({tp for got in fetched.values() if not isinstance(got, str) for tp in got})
        try:
            ends, listed = await self._ends.ends(partitions)
        except Exception as err:  # noqa: BLE001 - the broker: the refresh says so, the last one stays shown
            return LagSnapshot(at, time.monotonic() - started, len(distinct), error=f"end offsets: {err}")
        out: dict[str, SinkLag] = dict(refused)
        for name, group in groups.items():
            got = fetched[group]
            if isinstance(got, str):
                out[name] = SinkLag(name, group, error=f"committed offsets of group {group}: {got}")
                continue
            lags = tuple(PartitionLag(t, p, offset, ends.get((t, p))) for (t, p), offset in sorted(got.items()))
            out[name] = SinkLag(name, group, lags)
        requests = len(distinct) * 2 + 1 + listed  # a FindCoordinator and an OffsetFetch per group, a Metadata
        return LagSnapshot(at, time.monotonic() - started, requests, out)

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


def sink_json(lag: SinkLag) -> dict[str, Any]:
    return {
        "connector": lag.connector,
        "type": "sink",
        "group": lag.group,
        "lag": lag.total,
        "max_partition_lag": lag.max,
        "partitions": [
            {"topic": p.topic, "partition": p.partition, "committed": p.committed, "end": p.end, "lag": p.lag}
            for p in lag.partitions
        ],
        "error": lag.error,
    }


def source_json(state: ClusterView, connector: str, now_ms: float) -> dict[str, Any]:
    """A source connector's freshness: when each of its partitions' offsets was last committed."""
    commits = state.offset_commits_of(connector)
    last = max((ts for _, ts in commits), default=None)
    return {
        "connector": connector,
        "type": "source",
        "last_commit_ms": last,
        "since_last_commit_s": None if last is None else round(max(0.0, now_ms - last) / 1000, 3),
        "commits": state.offset_commits.get(connector, 0),
        "partitions": [
            {"partition": dict(offset.partition or {}), "offset": dict(offset.offset), "last_commit_ms": ts}
            for offset, ts in commits
        ],
    }


def sink_group_of(worker: WorkerKafka) -> GroupOf:
    """A sink's consumer group as its worker resolves it, or why its lag is not read here: a reference the
    sidecar cannot resolve, or a consumer on other brokers than the worker's (by bootstrap servers; the lag
    is read from the worker's cluster only)."""

    def group_of(name: str, config: Mapping[str, str | None]) -> str | Refused:
        resolved = worker.config_providers.resolve(config)
        for key in (GROUP_OVERRIDE_KEY, CONSUMER_BOOTSTRAP_OVERRIDE):
            if key in resolved.unresolved:
                return Refused(f"{key} is a reference the sidecar cannot resolve: {resolved.unresolved[key]}")
        servers = client_cluster(
            resolved.values, CONSUMER_BOOTSTRAP_OVERRIDE, worker.bootstrap, worker.consumer_bootstrap
        )
        if on_another_cluster(servers, worker.bootstrap):
            return Refused(f"its consumer reads other brokers ({servers}) than the worker's")
        return sink_group_id(name, resolved.values, worker.consumer_group)

    return group_of


class Lags:
    """What ``/_sidecar/lag`` and ``/_sidecar/connectors/{c}/lag`` show: the sinks' last refresh, the
    sources' freshness as the view has it now."""

    def __init__(
        self,
        sinks: SinkLags,
        state: Callable[[], ClusterView | None],
        now_ms: Callable[[], float] = lambda: time.time() * 1000,
    ) -> None:
        self.sinks = sinks
        self._state = state
        self._now_ms = now_ms

    def _ready(self) -> ClusterView:
        state = self._state()
        if state is None:
            raise ViewNotReady("Lag and freshness need the sidecar's view, which is not ready")
        return state

    def overview(self) -> dict[str, Any]:
        state, latest, now = self._ready(), self.sinks.latest, self._now_ms()
        sinks = (
            []
            if latest is None
            else [
                {k: v for k, v in sink_json(lag).items() if k != "partitions"}
                for _, lag in sorted(latest.sinks.items())
            ]
        )
        sources = [
            {k: v for k, v in source_json(state, name, now).items() if k != "partitions"}
            for name in sorted(state.connectors())
            if state.connector_type(name) == "source"
        ]
        return {
            "refreshed_ms": None if latest is None else latest.at_ms,
            "refresh_took_s": None if latest is None else round(latest.took_s, 3),
            "refresh_requests": None if latest is None else latest.requests,
            "refresh_interval_s": self.sinks.interval_s,
            "sinks": sinks,
            "sources": sources,
        }

    def of(self, connector: str) -> dict[str, Any]:
        state = self._ready()
        if state.connector_config(connector) is None:
            raise NotFoundError(f"Connector {connector} not found")
        if state.connector_type(connector) == "source":
            return source_json(state, connector, self._now_ms())
        latest = self.sinks.latest
        lag = None if latest is None else latest.sinks.get(connector)
        shown = sink_json(lag) if lag is not None else sink_json(SinkLag(connector, None, error="not refreshed yet"))
        return {**shown, "refreshed_ms": None if latest is None else latest.at_ms}

    def sink_totals(self) -> Mapping[str, int]:
        latest = self.sinks.latest
        if latest is None:
            return {}
        return {name: lag.total for name, lag in latest.sinks.items() if lag.total is not None}

    def source_ages(self) -> Mapping[str, float]:
        state = self._state()
        if state is None:
            return {}
        now = self._now_ms()
        out = {}
        for name, times in state.offset_commit_ms.items():
            if times:
                out[name] = max(0.0, now - max(times.values())) / 1000
        return out

    def source_commits(self) -> Mapping[str, int]:
        state = self._state()
        return {} if state is None else dict(state.offset_commits)


__all__ = [
    "LagSnapshot",
    "Lags",
    "PartitionLag",
    "Refused",
    "SinkLag",
    "SinkLags",
    "sink_group_of",
    "sink_json",
    "source_json",
]
