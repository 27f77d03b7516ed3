"""The cross-cluster view's merge and table (``control_plane.clusters_view``), on summaries as the sidecar
renders them (``rest.resources.connector_states.summary_json``), without HTTP."""

from __future__ import annotations

from typing import Any

from control_plane.clusters_view import ClusterRead, first_line, merge, render
from control_plane.domain.reads import FailedState, StateSummary, TimelineInfo
from control_plane.rest.resources.connector_states import summary_json

TRACE = (
    "org.apache.kafka.connect.errors.DataException: Converting byte[] to Kafka Connect data failed\n\tat x.y(Z.java:1)"
)


def summary(connectors: dict[str, int], tasks: dict[str, int], *failed: FailedState) -> dict[str, Any]:
    return summary_json(
        StateSummary(
            connectors,
            tasks,
            tuple(f for f in failed if f.task is None),
            tuple(f for f in failed if f.task is not None),
            (),
            TimelineInfo(5000, 0, None),
        )
    )


def lag(*sinks: tuple[str, int | None]) -> dict[str, Any]:
    return {
        "refreshed_ms": 1,
        "sinks": [
            {"connector": c, "type": "sink", "group": f"connect-{c}", "lag": n, "max_partition_lag": n, "error": None}
            for c, n in sinks
        ],
        "sources": [],
    }


EU = ClusterRead(
    "eu",
    "http://eu:8084",
    summary(
        {"UNASSIGNED": 0, "RUNNING": 3, "PAUSED": 1, "FAILED": 0},
        {"UNASSIGNED": 0, "RUNNING": 5, "FAILED": 1},
        FailedState("orders-sink", 0, "10.0.0.7:8083", TRACE, 2_000),
    ),
    lag(("orders-sink", 40), ("audit-sink", 0), ("new-sink", None)),
)
US = ClusterRead(
    "us",
    "http://us:8084",
    summary(
        {"UNASSIGNED": 0, "RUNNING": 1, "FAILED": 1},
        {"UNASSIGNED": 1, "RUNNING": 2, "FAILED": 0},
        FailedState("cdc-source", None, "10.1.0.2:8083", "java.lang.IllegalStateException: boom", 3_000),
        FailedState("old-sink", 1, "10.1.0.3:8083", None, 1_000),
    ),
    lag(("clicks-sink", 900)),
)
DOWN = ClusterRead("ap", "http://ap:8084", error="ConnectError: [Errno 111] Connection refused")


def test_counts_are_per_cluster_and_summed_over_the_clusters_read() -> None:
    merged = merge([EU, US, DOWN])
    eu, us, ap = merged["clusters"]
    assert eu["connectors"] == {"total": 4, "by_state": {"UNASSIGNED": 0, "RUNNING": 3, "PAUSED": 1, "FAILED": 0}}
    assert us["tasks"] == {"total": 3, "by_state": {"UNASSIGNED": 1, "RUNNING": 2, "FAILED": 0}}
    assert merged["totals"]["connectors"] == {
        "total": 6,
        "by_state": {"UNASSIGNED": 0, "RUNNING": 4, "PAUSED": 1, "FAILED": 1},
    }
    assert merged["totals"]["tasks"]["total"] == 9 and merged["totals"]["tasks"]["by_state"]["FAILED"] == 1
    assert ap == {
        "name": "ap",
        "url": "http://ap:8084",
        "read": False,
        "error": "ConnectError: [Errno 111] Connection refused",
        "lag_error": None,
        "connectors": None,
        "tasks": None,
    }
    assert merged["unread"] == ["ap"]


def test_failures_across_clusters_newest_first_with_the_traces_first_line() -> None:
    failures = merge([EU, US, DOWN])["failures"]
    assert [(f["cluster"], f["connector"], f["task"]) for f in failures] == [
        ("us", "cdc-source", None),
        ("eu", "orders-sink", 0),
        ("us", "old-sink", 1),
    ]
    assert failures[1]["trace_first_line"] == TRACE.splitlines()[0] and failures[1]["trace"] == TRACE
    assert failures[1]["worker_id"] == "10.0.0.7:8083" and failures[1]["state"] == "FAILED"
    assert failures[2]["trace_first_line"] is None


def test_a_connector_fails_ahead_of_its_tasks_at_the_same_time() -> None:
    both = ClusterRead(
        "eu",
        "u",
        summary({"FAILED": 1}, {"FAILED": 1}, FailedState("c", 0, "w", "t", 5), FailedState("c", None, "w", "t", 5)),
        lag(),
    )
    assert [f["task"] for f in merge([both])["failures"]] == [None, 0]


def test_the_most_lagging_sinks_across_clusters_most_first_unknown_lag_left_out() -> None:
    merged = merge([EU, US, DOWN], top=2)
    assert [(s["cluster"], s["connector"], s["lag"]) for s in merged["most_lag"]] == [
        ("us", "clicks-sink", 900),
        ("eu", "orders-sink", 40),
    ]
    assert len(merge([EU, US])["most_lag"]) == 3


def test_a_cluster_whose_lag_was_not_read_keeps_its_counts_and_counts_as_unread() -> None:
    partial = ClusterRead("eu", "u", EU.summary, None, None, "503: Lag and freshness need the sidecar's view")
    merged = merge([partial])
    assert merged["clusters"][0]["read"] and merged["clusters"][0]["connectors"]["total"] == 4
    assert merged["most_lag"] == [] and merged["unread"] == ["eu"]


def test_the_table_shows_counts_unreachable_clusters_failures_and_lag() -> None:
    text = render(merge([EU, US, DOWN]))
    lines = text.splitlines()
    head = ["CLUSTER", "CONNECTORS", "RUNNING", "PAUSED", "FAILED", "TASKS"]
    assert lines[0].split() == [*head, "TASKS", "UNASSIGNED", "TASKS", "RUNNING", "TASKS", "FAILED"]
    assert lines[1].split() == ["eu", "4", "3", "1", "0", "6", "0", "5", "1"]
    assert lines[2].split() == ["us", "2", "1", "0", "1", "3", "1", "2", "0"]
    assert lines[3] == "ap  unreachable: ConnectError: [Errno 111] Connection refused"
    failures = lines[lines.index("Failures: 3") + 2 :]
    assert failures[0].split()[:4] == ["us", "cdc-source", "-", "FAILED"]
    assert failures[1].endswith("DataException: Converting byte[] to Kafka Connect data failed")
    assert "Most lag: 3 sink(s)" in lines
    assert lines[-3].split() == ["us", "clicks-sink", "900", "900"]


def test_nothing_read_still_renders() -> None:
    text = render(merge([DOWN]))
    assert "ap  unreachable:" in text and "Failures: 0" in text and "Most lag: 0 sink(s)" in text


def test_first_line_of_a_trace() -> None:
    assert first_line("\n  a: b\n\tat c") == "a: b"
    assert first_line("") == "" and first_line(None) is None
