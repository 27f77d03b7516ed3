"""Lag and freshness (``domain.lag``): ``GET /_sidecar/lag``, every connector's (the sinks' last refresh, the
sources' newest commits), and ``GET /_sidecar/connectors/{c}/lag``, one connector's per partition. Parse, one
domain call, render."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from ...domain.lag import LagOverview, PartitionLag, SinkLag, SinkLagAt, SourceFreshness
from ..entities.responses import answered
from ..request.runtime import herder


def partition_json(p: PartitionLag) -> dict[str, Any]:
    """A partition's lag; one its group has committed nothing for says so, with the log start its lag
    counts from and where the sink's consumer starts (``auto.offset.reset``)."""
    body: dict[str, Any] = {"topic": p.topic, "partition": p.partition, "committed": p.committed, "end": p.end}
    if p.committed is None:
        body |= {"no_commit_yet": True, "log_start": p.start, "offset_reset": p.reset}
    return body | {"lag": p.lag}


def sink_json(lag: SinkLag, *, partitions: bool = True) -> dict[str, Any]:
    body: dict[str, Any] = {
        "connector": lag.connector,
        "type": "sink",
        "group": lag.group,
        "lag": lag.total,
        "max_partition_lag": lag.max,
        "uncommitted_partitions": len(lag.uncommitted),
        "uncommitted_records": lag.uncommitted_records,
    }
    if partitions:
        body["partitions"] = [partition_json(p) for p in lag.partitions]
    body["error"] = lag.error
    return body


def source_json(source: SourceFreshness, *, partitions: bool = True) -> dict[str, Any]:
    since = source.since_last_commit_s
    body: dict[str, Any] = {
        "connector": source.connector,
        "type": "source",
        "last_commit_ms": source.last_commit_ms,
        "since_last_commit_s": None if since is None else round(since, 3),
        "commits": source.commits,
    }
    if partitions:
        body["partitions"] = [
            {"partition": dict(p.partition), "offset": dict(p.offset), "last_commit_ms": p.last_commit_ms}
            for p in source.partitions
        ]
    return body


def overview_json(overview: LagOverview) -> dict[str, Any]:
    latest = overview.latest
    return {
        "refreshed_ms": None if latest is None else latest.at_ms,
        "refresh_took_s": None if latest is None else round(latest.took_s, 3),
        "refresh_requests": None if latest is None else latest.requests,
        "refresh_interval_s": overview.refresh_interval_s,
        "sinks": [sink_json(lag, partitions=False) for lag in overview.sinks],
        "sources": [source_json(source, partitions=False) for source in overview.sources],
    }


def connector_json(lag: SinkLagAt | SourceFreshness) -> dict[str, Any]:
    if isinstance(lag, SourceFreshness):
        return source_json(lag)
    return {**sink_json(lag.lag), "refreshed_ms": lag.refreshed_ms}


async def overview(request: Request) -> Response:
    return answered(herder(request).lag.overview(), overview_json)


async def connector(request: Request) -> Response:
    return answered(herder(request).lag.of(request.path_params["connector"]), connector_json)
