"""Connector and task states for dashboards: the view's timeline of status records, the per-connector gauges
kept incrementally (only what changed is recomputed), the summary with failures and since when, the
gauges on /metrics and the two endpoints' parsing and shapes."""

from __future__ import annotations

import pytest

from control_plane.codecs import ConnectorConfig, ConnectorStatus, TargetState, TaskCommit, TaskStatus, Tombstone
from control_plane.codecs.config import ConfigKey, ConfigKind
from control_plane.codecs.status import StatusKey, StatusKind, TopicStatus
from control_plane.domain.errors import BadRequestError, NotFoundError, ViewNotReady
from control_plane.domain.outcomes import Answer, Refusal
from control_plane.domain.reads.states import ConnectorStates, StateRules
from control_plane.metrics import Metrics
from control_plane.rest.resources.connector_states import iso, parse_time, summary_json
from control_plane.view import ClusterView
from control_plane.view.timeline import StateTimeline, TouchLog
from tests.support.asgi_app import Running
from tests.support.fake_cluster import FakeCluster
from tests.support.fakes import FakeView, Kafka
from tests.support.metrics_text import samples

RULES = StateRules(stopped_overlay=False, ignore_stale_unassigned=True)


def connector(view: ClusterView, name: str, tasks: int = 1) -> None:
    view.apply_config(ConnectorConfig(name, {"connector.class": "FileStreamSource", "name": name}))
    view.apply_config(TaskCommit(name, tasks))


def state(view: ClusterView, name: str, value: str, at: int, task: int | None = None, trace: str | None = None) -> None:
    if task is None:
        view.apply_status(ConnectorStatus(name, value, trace, "w1:8083", 1), timestamp_ms=at)
    else:
        view.apply_status(TaskStatus(name, task, value, trace, "w1:8083", 1), timestamp_ms=at)


# -- the timeline -----------------------------------------------------------------------------------
def test_the_timeline_records_each_status_record_as_a_transition_with_its_timestamp() -> None:
    view = ClusterView()
    state(view, "c", "RUNNING", 1_000)
    state(view, "c", "RUNNING", 1_500, task=0)
    state(view, "c", "FAILED", 2_000, task=0, trace="boom")
    changes = [(c.connector, c.task, c.previous, c.state, c.timestamp_ms) for c in view.timeline.changes()]
    assert changes == [
        ("c", None, None, "RUNNING", 1_000),
        ("c", 0, None, "RUNNING", 1_500),
        ("c", 0, "RUNNING", "FAILED", 2_000),
    ]
    assert view.timeline.failed_since("c", 0) == 2_000 and view.timeline.failed_since("c") is None


def test_a_repeated_failure_keeps_its_since_and_a_tombstone_is_destroyed() -> None:
    view = ClusterView()
    state(view, "c", "RUNNING", 500)
    state(view, "c", "FAILED", 1_000, task=0, trace="t")
    view.apply_status(TaskStatus("c", 0, "FAILED", "t", "w2", 2), timestamp_ms=3_000)  # after a rebalance
    assert view.timeline.failed_since("c", 0) == 1_000
    view.apply_status(Tombstone(StatusKey(StatusKind.CONNECTOR, "c")), timestamp_ms=4_000)
    assert view.timeline.failed_since("c", 0) is None  # the tasks go with the connector
    last = view.timeline.changes()[-1]
    assert (last.task, last.previous, last.state, last.worker_id) == (None, "RUNNING", "DESTROYED", None)
    view.apply_status(TopicStatus("t", "c", 0, 5_000), timestamp_ms=5_000)  # not a state
    view.apply_status(Tombstone(StatusKey(StatusKind.TASK, "c", task=0)), timestamp_ms=5_000)  # deleted already
    view.apply_status(Tombstone(StatusKey(StatusKind.CONNECTOR, "c")), timestamp_ms=5_000)
    assert view.timeline.recorded == 4


def test_a_stale_unassigned_is_in_the_timeline_as_the_worker_wrote_it() -> None:
    view = ClusterView()
    view.apply_status(TaskStatus("c", 0, "RUNNING", None, "w1", 2), timestamp_ms=1_000)
    view.apply_status(TaskStatus("c", 0, "UNASSIGNED", None, "w1", 1), timestamp_ms=2_000)  # 3.6+ ignores it
    view.apply_status(TaskStatus("c", 0, "RUNNING", None, "w1", 3), timestamp_ms=3_000)
    assert [(c.previous, c.state) for c in view.timeline.changes()] == [
        (None, "RUNNING"),
        ("RUNNING", "UNASSIGNED"),
        ("UNASSIGNED", "RUNNING"),
    ]


def test_the_timeline_is_a_bounded_ring_asked_by_time_connector_and_limit() -> None:
    timeline = StateTimeline(capacity=3)
    # partitions interleave: a later record may be read first
    timeline.change("a", None, "RUNNING", None, 1_000)
    timeline.change("b", None, "RUNNING", None, 3_000)
    timeline.change("a", None, "PAUSED", "RUNNING", 2_000)
    timeline.change("b", None, "PAUSED", "RUNNING", 4_000)
    assert timeline.recorded == 4 and timeline.oldest_ms() == 2_000  # a's first change left the ring
    assert [(c.connector, c.timestamp_ms) for c in timeline.changes()] == [("a", 2_000), ("b", 3_000), ("b", 4_000)]
    assert [c.timestamp_ms for c in timeline.changes(since_ms=3_000)] == [3_000, 4_000]
    assert [c.timestamp_ms for c in timeline.changes(connector="a")] == [2_000]
    assert [c.timestamp_ms for c in timeline.changes(limit=1)] == [4_000]


def test_the_touch_log_says_what_changed_since_a_reader_looked_or_to_rebuild() -> None:
    log = TouchLog(slack=1)
    for name in ("a", "b", "a", "c"):
        log.touch(name)
    assert log.touched_since(0) == ["c", "a", "b"]
    assert log.touched_since(2) == ["c", "a"]
    assert log.touched_since(log.seq) == []
    log.prune(live=1)  # b is forgotten (a deleted connector's name): a reader that had not seen it rebuilds
    assert log.touched_since(1) is None
    assert log.touched_since(2) == ["c", "a"]


# -- the gauges and the summary ----------------------------------------------------------------------
def ready_states() -> tuple[FakeView, ConnectorStates]:
    view = Kafka().view
    return view, ConnectorStates(view)


def test_gauges_count_connectors_and_tasks_by_state_once_configured_and_reported() -> None:
    view, states = ready_states()
    connector(view.state, "a", tasks=2)
    connector(view.state, "b")
    connector(view.state, "configured-only")
    state(view.state, "a", "RUNNING", 1)
    state(view.state, "a", "RUNNING", 1, task=0)
    state(view.state, "a", "FAILED", 2, task=1, trace="t")
    state(view.state, "b", "PAUSED", 1)
    state(view.state, "orphan", "RUNNING", 1)  # a status without a configuration is not listed
    gauges = states.gauges(RULES)
    assert gauges is not None
    assert {n: (g.state, dict(g.tasks), g.failed_tasks) for n, g in gauges.connectors.items()} == {
        "a": ("RUNNING", {"RUNNING": 1, "FAILED": 1}, (1,)),
        "b": ("PAUSED", {}, ()),
    }
    assert gauges.connector_totals == {
        "UNASSIGNED": 0,
        "RUNNING": 1,
        "PAUSED": 1,
        "FAILED": 0,
        "RESTARTING": 0,
        "STOPPED": 0,
    }
    assert gauges.task_totals["RUNNING"] == 1 and gauges.task_totals["FAILED"] == 1


def test_gauges_recompute_only_the_connectors_that_changed(monkeypatch: pytest.MonkeyPatch) -> None:
    view, states = ready_states()
    for name in ("a", "b", "c"):
        connector(view.state, name)
        state(view.state, name, "RUNNING", 1)
    first = states.gauges(RULES)
    computed: list[str] = []
    original = ClusterView.connector_state

    def counting(self: ClusterView, name: str, **kwargs: bool) -> object:
        computed.append(name)
        return original(self, name, **kwargs)

    monkeypatch.setattr(ClusterView, "connector_state", counting)
    assert states.gauges(RULES) is first  # nothing changed: nothing computed, the same gauges
    assert computed == []
    state(view.state, "b", "FAILED", 2, trace="t")
    view.state.apply_config(Tombstone(ConfigKey(ConfigKind.CONNECTOR, "c")))  # deleted
    gauges = states.gauges(RULES)
    assert sorted(computed) == ["b"]  # c has no configuration any more: dropped without computing
    assert gauges is not None and gauges is not first and set(gauges.connectors) == {"a", "b"}
    assert gauges.connector_totals["RUNNING"] == 1 and gauges.connector_totals["FAILED"] == 1
    computed.clear()
    stopped_overlay = StateRules(stopped_overlay=True, ignore_stale_unassigned=True)
    states.gauges(stopped_overlay)  # other rules: everything again
    assert sorted(computed) == ["a", "b"]


def test_a_connector_the_sidecar_stopped_counts_as_stopped_where_the_workers_cannot_stop() -> None:
    view, states = ready_states()
    connector(view.state, "s")
    state(view.state, "s", "PAUSED", 1)
    state(view.state, "s", "PAUSED", 1, task=0)
    view.state.apply_config(TargetState("s", "STOPPED", None))  # the sidecar's stop: STOPPED, then no task
    view.state.apply_config(TaskCommit("s", 0))
    gauges = states.gauges(StateRules(stopped_overlay=True, ignore_stale_unassigned=True))
    assert gauges is not None and gauges.connectors["s"].state == "STOPPED" and not gauges.connectors["s"].tasks


def test_the_summary_lists_every_failure_with_its_trace_and_since_when() -> None:
    view, states = ready_states()
    connector(view.state, "broken")
    connector(view.state, "fine")
    state(view.state, "broken", "FAILED", 5_000, trace="connector trace")
    state(view.state, "fine", "RUNNING", 1_000)
    state(view.state, "fine", "RUNNING", 1_100, task=0)
    state(view.state, "fine", "FAILED", 6_000, task=0, trace="task trace")
    state(view.state, "fine", "FAILED", 7_000, task=0, trace="task trace")  # the same failure again
    outcome = states.summary(RULES, recent=2, stale=False)
    assert isinstance(outcome, Answer)
    summary = outcome.value
    assert [(f.connector, f.task, f.trace, f.since_ms) for f in summary.failed_connectors] == [
        ("broken", None, "connector trace", 5_000)
    ]
    assert [(f.connector, f.task, f.trace, f.since_ms) for f in summary.failed_tasks] == [
        ("fine", 0, "task trace", 6_000)
    ]
    assert [(c.connector, c.state, c.timestamp_ms) for c in summary.recent] == [
        ("fine", "FAILED", 6_000),
        ("fine", "FAILED", 7_000),
    ]
    body = summary_json(summary)
    assert body["connectors"] == {
        "total": 2,
        "by_state": {**dict.fromkeys(body["connectors"]["by_state"], 0), "FAILED": 1, "RUNNING": 1},
    }
    assert body["tasks"]["total"] == 1 and body["tasks"]["by_state"]["FAILED"] == 1
    assert body["failed"]["tasks"] == [
        {
            "connector": "fine",
            "task": 0,
            "worker_id": "w1:8083",
            "trace": "task trace",
            "since": "1970-01-01T00:00:06.000Z",
            "since_ms": 6_000,
        }
    ]
    assert body["timeline"] == {
        "capacity": 5000,
        "recorded": 5,
        "oldest": "1970-01-01T00:00:01.000Z",
        "oldest_ms": 1_000,
    }


def test_without_a_ready_view_no_gauges_and_a_refusal() -> None:
    view, states = ready_states()
    view.ready = False
    assert states.gauges(RULES) is None
    refused = states.summary(RULES, 10, stale=False)
    assert isinstance(refused, Refusal) and isinstance(refused.error, ViewNotReady)
    absent = ConnectorStates(None).changes(None, None, None, stale=False)
    assert isinstance(absent, Refusal) and isinstance(absent.error, NotFoundError)


async def test_the_herder_applies_its_workers_rules() -> None:
    cluster = FakeCluster("3.4.1")  # before 3.5: the sidecar stops connectors, the view shows them STOPPED
    await cluster.detect()
    cluster.running("c")
    cluster.kafka.view.state.apply_config(TargetState("c", "STOPPED", None))
    gauges = cluster.herder.reads.state_gauges()
    assert gauges is not None and gauges.connectors["c"].state == "STOPPED"
    changes = cluster.herder.reads.state_changes(None, "c", None)
    assert isinstance(changes, Answer) and [c.state for c in changes.value.changes] == ["RUNNING", "RUNNING"]


# -- /metrics -------------------------------------------------------------------------------------------
def test_metrics_show_the_state_gauges_from_the_source() -> None:
    view, states = ready_states()
    connector(view.state, 'odd "name"\\', tasks=2)
    state(view.state, 'odd "name"\\', "RUNNING", 1)
    state(view.state, 'odd "name"\\', "FAILED", 2, task=0)
    state(view.state, 'odd "name"\\', "FAILED", 2, task=1)
    metrics = Metrics()
    metrics.watch_states(lambda: states.gauges(RULES))
    text = metrics.render().decode()
    assert samples(text, "connector_state") == {(("connector", 'odd "name"\\'), ("state", "RUNNING")): 1.0}
    assert samples(text, "connector_tasks") == {(("connector", 'odd "name"\\'), ("state", "FAILED")): 2.0}
    assert samples(text, "connectors_by_state")[(("state", "RUNNING"),)] == 1.0
    assert samples(text, "tasks_by_state")[(("state", "FAILED"),)] == 2.0
    view.ready = False
    assert "connector_state" not in metrics.render().decode()  # nothing rather than partial counts


# -- the endpoints ----------------------------------------------------------------------------------------
def test_times_are_epoch_milliseconds_or_iso_8601() -> None:
    assert parse_time("1700000000123") == 1_700_000_000_123
    assert parse_time("2023-11-14T22:13:20.123Z") == 1_700_000_000_123
    assert parse_time("2023-11-14T23:13:20.123+01:00") == 1_700_000_000_123
    assert parse_time("2023-11-14T22:13:20.123") == 1_700_000_000_123  # no zone: UTC
    assert iso(1_700_000_000_123) == "2023-11-14T22:13:20.123Z"
    with pytest.raises(BadRequestError):
        parse_time("yesterday")


async def test_the_endpoints_need_the_view_and_refuse_bad_parameters(serve) -> None:
    async with serve(version="4.3.1") as running:
        assert isinstance(running, Running)
        summary = await running.client.get("/_sidecar/summary")
        assert summary.status_code == 404 and summary.json()["error_code"] == 404
        bad = await running.client.get("/_sidecar/state-changes", params={"since": "yesterday"})
        assert bad.status_code == 400 and "yesterday" in bad.json()["message"]
        limit = await running.client.get("/_sidecar/state-changes", params={"limit": "0"})
        assert limit.status_code == 400 and limit.json()["error_code"] == 400
