"""Connector and task states for dashboards, the sidecar's own endpoints (parse, one herder call, render);
from the view (``domain.reads.states``):

- ``GET /_sidecar/summary[?recent=N]``: counts of connectors and tasks by state, every failed connector and
  task with its trace and since when, and the ``N`` (default 50) most recent state changes;
- ``GET /_sidecar/state-changes[?since=T][&connector=C][&limit=N]``: the state timeline read from the
  status topic, at or after ``T`` (epoch milliseconds, or ISO-8601; without a zone: UTC), of connector
  ``C`` and its tasks, the newest ``N`` of them; ordered by the records' timestamps.

Times are the status records' own timestamps (the worker's clock when it wrote them), as epoch
milliseconds and in ISO-8601 UTC. 503 until the view has read the topics to their end; 404 without a view.
"""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from ...domain.errors import BadRequestError
from ...domain.reads import FailedState, StateChanges, StateSummary, TimelineInfo
from ...rules import times
from ...rules.times import iso
from ...view.timeline import StateChange
from ..entities.responses import answered
from ..request.runtime import herder

DEFAULT_RECENT = 50


def parse_time(text: str) -> int:
    """A time parameter as epoch milliseconds (``rules.times.parse_time``: epoch milliseconds, or ISO-8601,
    UTC when it names no zone); a ``BadRequestError`` for any other text."""
    try:
        return times.parse_time(text)
    except ValueError:
        raise BadRequestError(f"Invalid time {text!r}: epoch milliseconds or ISO-8601 expected") from None


def _count(request: Request, name: str, minimum: int) -> int | None:
    text = request.query_params.get(name)
    if text is None:
        return None
    if not text.isdigit() or int(text) < minimum:
        raise BadRequestError(f"Invalid {name} {text!r}: an integer of at least {minimum} expected")
    return int(text)


def _failed(failed: FailedState) -> dict[str, Any]:
    entry: dict[str, Any] = {"connector": failed.connector}
    if failed.task is not None:
        entry["task"] = failed.task
    entry.update(
        {
            "worker_id": failed.worker_id,
            "trace": failed.trace,
            "since": iso(failed.since_ms),
            "since_ms": failed.since_ms,
        }
    )
    return entry


def change_json(change: StateChange) -> dict[str, Any]:
    return {
        "time": iso(change.timestamp_ms),
        "timestamp_ms": change.timestamp_ms,
        "connector": change.connector,
        "task": change.task,
        "previous": change.previous,
        "state": change.state,
        "worker_id": change.worker_id,
        "generation": change.generation,
    }


def _timeline(info: TimelineInfo) -> dict[str, Any]:
    return {
        "capacity": info.capacity,
        "recorded": info.recorded,
        "oldest": iso(info.oldest_ms),
        "oldest_ms": info.oldest_ms,
    }


def summary_json(summary: StateSummary) -> dict[str, Any]:
    return {
        "connectors": {"total": sum(summary.connector_totals.values()), "by_state": dict(summary.connector_totals)},
        "tasks": {"total": sum(summary.task_totals.values()), "by_state": dict(summary.task_totals)},
        "failed": {
            "connectors": [_failed(f) for f in summary.failed_connectors],
            "tasks": [_failed(f) for f in summary.failed_tasks],
        },
        "recent_changes": [change_json(c) for c in summary.recent],
        "timeline": _timeline(summary.timeline),
    }


def changes_json(changes: StateChanges) -> dict[str, Any]:
    return {"changes": [change_json(c) for c in changes.changes], "timeline": _timeline(changes.timeline)}


async def summary(request: Request) -> Response:
    recent = _count(request, "recent", 0)
    return answered(herder(request).reads.state_summary(DEFAULT_RECENT if recent is None else recent), summary_json)


async def state_changes(request: Request) -> Response:
    since = request.query_params.get("since")
    since_ms = parse_time(since) if since is not None else None
    connector = request.query_params.get("connector")
    limit = _count(request, "limit", 1)
    return answered(herder(request).reads.state_changes(since_ms, connector, limit), changes_json)


__all__ = ["change_json", "changes_json", "iso", "parse_time", "state_changes", "summary", "summary_json"]
