"""The cross-cluster view of ``control-plane clusters``: what several clusters' sidecars answered to ``GET
/_sidecar/summary`` and ``GET /_sidecar/lag``, merged into one document, and that document as a table.
Pure functions, no I/O: the reads are ``clusters_cli``'s.

The document (``merge``)::

    {"clusters": [{"name", "url", "read": true|false, "error": null|"why the summary could not be read",
                   "lag_error": null|"why the lag could not be read",
                   "connectors": {"total", "by_state"} | null, "tasks": {"total", "by_state"} | null}],
     "totals": {"connectors": {"total", "by_state"}, "tasks": {"total", "by_state"}},
     "failures": [{"cluster", "connector", "task": null|N, "state": "FAILED", "worker_id", "since",
                   "since_ms", "trace_first_line", "trace"}],
     "most_lag": [{"cluster", "connector", "group", "lag", "max_partition_lag", "error"}],
     "unread": ["the names of the clusters some part of whose answer is missing"]}

``failures`` are every cluster's failed connectors and tasks, the newest failure first (a dashboard's top
line is what broke last); ``most_lag`` the sinks with the most records behind, most first, as the sidecars'
last lag refresh measured them (sources have freshness, not lag: ``GET /_sidecar/lag``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

DEFAULT_TOP = 10


@dataclass(frozen=True)
class ClusterRead:
    """One cluster's answers: the summary's and the lag's JSON, or why each could not be read."""

    name: str
    url: str
    summary: Mapping[str, Any] | None = None
    lag: Mapping[str, Any] | None = None
    error: str | None = None  # the summary's
    lag_error: str | None = None


def _counts(counts: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """``{"total", "by_state"}`` summed over ``counts``; states in the order the answers list them."""
    by_state: dict[str, int] = {}
    for each in counts:
        for state, n in each["by_state"].items():
            by_state[state] = by_state.get(state, 0) + n
    return {"total": sum(by_state.values()), "by_state": by_state}


def first_line(trace: str | None) -> str | None:
    return None if trace is None else (trace.strip().splitlines() or [""])[0]


def _failures(read: ClusterRead) -> list[dict[str, Any]]:
    failed = (read.summary or {}).get("failed", {})
    return [
        {
            "cluster": read.name,
            "connector": f["connector"],
            "task": f.get("task"),
            "state": "FAILED",
            "worker_id": f.get("worker_id"),
            "since": f.get("since"),
            "since_ms": f.get("since_ms"),
            "trace_first_line": first_line(f.get("trace")),
            "trace": f.get("trace"),
        }
        for f in [*failed.get("connectors", []), *failed.get("tasks", [])]
    ]


def _lags(read: ClusterRead) -> list[dict[str, Any]]:
    return [
        {
            "cluster": read.name,
            "connector": s["connector"],
            "group": s.get("group"),
            "lag": s["lag"],
            "max_partition_lag": s.get("max_partition_lag"),
            "error": s.get("error"),
        }
        for s in (read.lag or {}).get("sinks", [])
        if s.get("lag") is not None
    ]


def merge(reads: Sequence[ClusterRead], *, top: int = DEFAULT_TOP) -> dict[str, Any]:
    """The clusters' answers as one document (the module's docstring draws it), clusters in the given order."""
    clusters = [
        {
            "name": r.name,
            "url": r.url,
            "read": r.summary is not None,
            "error": r.error,
            "lag_error": r.lag_error,
            "connectors": None if r.summary is None else _counts([r.summary["connectors"]]),
            "tasks": None if r.summary is None else _counts([r.summary["tasks"]]),
        }
        for r in reads
    ]
    summaries = [r.summary for r in reads if r.summary is not None]
    failures = [f for r in reads for f in _failures(r)]
    failures.sort(
        key=lambda f: (-(f["since_ms"] or 0), f["cluster"], f["connector"], f["task"] is not None, f["task"] or 0)
    )
    lags = sorted((s for r in reads for s in _lags(r)), key=lambda s: (-s["lag"], s["cluster"], s["connector"]))
    return {
        "clusters": clusters,
        "totals": {
            "connectors": _counts(s["connectors"] for s in summaries),
            "tasks": _counts(s["tasks"] for s in summaries),
        },
        "failures": failures,
        "most_lag": lags[:top],
        "unread": [r.name for r in reads if r.summary is None or r.lag is None],
    }


def _table(rows: Sequence[Sequence[str]]) -> list[str]:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return ["  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip() for row in rows]


def _states(totals: Mapping[str, Any]) -> list[str]:
    """The states some cluster counts anything in (a column each), in the order the answers list them."""
    return [state for state, n in totals["by_state"].items() if n]


def render(document: Mapping[str, Any]) -> str:
    """The document as a person reads it: a row per cluster (connectors, then tasks, by state), the
    failures across clusters, the sinks with the most lag; a cluster not read says why."""
    clusters = document["clusters"]
    totals = document["totals"]
    connector_states, task_states = _states(totals["connectors"]), _states(totals["tasks"])
    head = ["CLUSTER", "CONNECTORS", *connector_states, "TASKS", *(f"TASKS {s}" for s in task_states)]
    rows = [head]
    for c in clusters:
        if c["read"]:
            rows.append(
                [
                    c["name"],
                    str(c["connectors"]["total"]),
                    *(str(c["connectors"]["by_state"].get(s, 0)) for s in connector_states),
                    str(c["tasks"]["total"]),
                    *(str(c["tasks"]["by_state"].get(s, 0)) for s in task_states),
                ]
            )
    lines = _table(rows)
    lines += [f"{c['name']}  unreachable: {c['error']}" for c in clusters if not c["read"]]
    lines += [f"{c['name']}  lag not read: {c['lag_error']}" for c in clusters if c["read"] and c["lag_error"]]

    failures = document["failures"]
    lines += ["", f"Failures: {len(failures)}"]
    if failures:
        lines += _table(
            [
                ["CLUSTER", "CONNECTOR", "TASK", "STATE", "SINCE", "TRACE"],
                *(
                    [
                        f["cluster"],
                        f["connector"],
                        "-" if f["task"] is None else str(f["task"]),
                        f["state"],
                        f["since"] or "",
                        f["trace_first_line"] or "",
                    ]
                    for f in failures
                ),
            ]
        )
    lagging = document["most_lag"]
    lines += ["", f"Most lag: {len(lagging)} sink(s)"]
    if lagging:
        lines += _table(
            [
                ["CLUSTER", "CONNECTOR", "LAG", "MAX PARTITION LAG"],
                *([s["cluster"], s["connector"], str(s["lag"]), str(s["max_partition_lag"])] for s in lagging),
            ]
        )
    return "\n".join(lines)


__all__ = ["DEFAULT_TOP", "ClusterRead", "first_line", "merge", "render"]
