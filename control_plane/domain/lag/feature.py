"""``Lags``: lag and freshness per connector, for dashboards and alerts; the lag feature's one entry.

- **Sink connectors: consumer lag** (``sinks``): the last refresh, read from the broker on an interval.
- **Source connectors: freshness**, from the offsets topic the view already reads: per source partition, when
  its offset was last committed (the timestamp of its latest record), the connector's newest commit, and
  the count of offset records read (a counter: its rate is the records committed per interval). Connect's
  offset records do not name the task that wrote them; a partition is what the topic knows.

Both need the sidecar's view: without one every request is answered 503.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ...view.model import ClusterView
from ..errors import NotFoundError, ViewNotReady
from ..outcomes import Answer, Refusal, answer
from .sinks import LagSnapshot, SinkLag, SinkLags

NO_VIEW = "Lag and freshness need the sidecar's view (READ_FROM=upstream without one has none)"


@dataclass(frozen=True)
class PartitionCommit:
    """A source partition's offset, and when it was last committed."""

    partition: Mapping[str, Any]
    offset: Mapping[str, Any]
    last_commit_ms: int


@dataclass(frozen=True)
class SourceFreshness:
    """A source connector's freshness: when each of its partitions' offsets was last committed."""

    connector: str
    last_commit_ms: int | None
    since_last_commit_s: float | None
    commits: int
    partitions: tuple[PartitionCommit, ...]


@dataclass(frozen=True)
class SinkLagAt:
    """A sink connector's lag as of the last refresh (``refreshed_ms``: None before the first)."""

    lag: SinkLag
    refreshed_ms: float | None


@dataclass(frozen=True)
class LagOverview:
    """Every connector's: the sinks' last refresh (``latest``: None before the first), the sources' newest
    commits."""

    latest: LagSnapshot | None
    refresh_interval_s: float
    sinks: tuple[SinkLag, ...]
    sources: tuple[SourceFreshness, ...]


def source_freshness(state: ClusterView, connector: str, now_ms: float) -> SourceFreshness:
    commits = state.offset_commits_of(connector)
    last = max((ts for _, ts in commits), default=None)
    return SourceFreshness(
        connector,
        last,
        None if last is None else max(0.0, now_ms - last) / 1000,
        state.offset_commits.get(connector, 0),
        tuple(PartitionCommit(dict(offset.partition or {}), dict(offset.offset), ts) for offset, ts in commits),
    )


class Lags:
    """What ``/_sidecar/lag`` and ``/_sidecar/connectors/{c}/lag`` show: the sinks' last refresh, the
    sources' freshness as the view has it now; and the figures the metrics read."""

    def __init__(
        self,
        sinks: SinkLags | None,
        state: Callable[[], ClusterView | None],
        now_ms: Callable[[], float] = lambda: time.time() * 1000,
    ) -> None:
        """``sinks``: None where the sidecar has no view."""
        self.sinks = sinks
        self._state = state
        self._now_ms = now_ms

    def overview(self) -> Answer[LagOverview] | Refusal:
        return answer(self._overview)

    def of(self, connector: str) -> Answer[SinkLagAt | SourceFreshness] | Refusal:
        return answer(lambda: self._of(connector))

    def _refresher(self) -> SinkLags:
        if self.sinks is None:
            raise ViewNotReady(NO_VIEW)
        return self.sinks

    def _ready(self) -> ClusterView:
        state = self._state()
        if state is None:
            raise ViewNotReady("Lag and freshness need the sidecar's view, which is not ready")
        return state

    def _overview(self) -> LagOverview:
        sinks = self._refresher()
        state, latest, now = self._ready(), sinks.latest, self._now_ms()
        return LagOverview(
            latest,
            sinks.interval_s,
            () if latest is None else tuple(lag for _, lag in sorted(latest.sinks.items())),
            tuple(
                source_freshness(state, name, now)
                for name in sorted(state.connectors())
                if state.connector_type(name) == "source"
            ),
        )

    def _of(self, connector: str) -> SinkLagAt | SourceFreshness:
        sinks = self._refresher()
        state = self._ready()
        if state.connector_config(connector) is None:
            raise NotFoundError(f"Connector {connector} not found")
        if state.connector_type(connector) == "source":
            return source_freshness(state, connector, self._now_ms())
        latest = sinks.latest
        lag = None if latest is None else latest.sinks.get(connector)
        return SinkLagAt(
            lag if lag is not None else SinkLag(connector, None, error="not refreshed yet"),
            None if latest is None else latest.at_ms,
        )

    # -- what the metrics read (``metrics.LagReading``)
    def readings(self) -> Lags | None:
        """What the metrics read: None without a view (no lag metrics are shown then)."""
        return self if self.sinks is not None else None

    def sink_totals(self) -> Mapping[str, int]:
        latest = self.sinks.latest if self.sinks is not None else None
        if latest is None:
            return {}
        return {name: lag.total for name, lag in latest.sinks.items() if lag.total is not None}

    def sink_uncommitted(self) -> Mapping[str, tuple[int, int]]:
        """Per sink, the partitions of its topics its group has committed no offset for, and their records
        it has still to read."""
        latest = self.sinks.latest if self.sinks is not None else None
        if latest is None:
            return {}
        return {name: (len(lag.uncommitted), lag.uncommitted_records) for name, lag in latest.sinks.items()}

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


__all__ = ["NO_VIEW", "LagOverview", "Lags", "PartitionCommit", "SinkLagAt", "SourceFreshness", "source_freshness"]
