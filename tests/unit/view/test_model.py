"""The view's rules, record by record, as the worker's backing stores apply them."""

from __future__ import annotations

import pytest

from control_plane.codecs import (
    ConnectorConfig,
    ConnectorStatus,
    SourceOffset,
    TargetState,
    TaskCommit,
    TaskConfig,
    TaskStatus,
    Tombstone,
    TopicStatus,
)
from control_plane.codecs.config import ConfigKey, ConfigKind
from control_plane.codecs.offsets import OffsetKey
from control_plane.codecs.status import StatusKey, StatusKind
from control_plane.view import ClusterView


def with_connector(name: str = "c", tasks: int = 2, **props: str) -> ClusterView:
    view = ClusterView()
    view.apply_config(ConnectorConfig(name, {"connector.class": "X", "name": name, **props}))
    for task in range(tasks):
        view.apply_config(TaskConfig(name, task, {"task.class": "T"}))
    view.apply_config(TaskCommit(name, tasks))
    return view


def test_a_new_connector_starts_with_target_state_started_and_committed_tasks() -> None:
    view = with_connector(tasks=2)
    assert view.connectors() == ("c",)
    assert view.target_state("c") == "STARTED"
    info = view.connector_info("c")
    assert info is not None and info.tasks == (0, 1)


def test_task_configs_wait_for_their_commit() -> None:
    view = with_connector(tasks=1)
    view.apply_config(TaskConfig("c", 0, {"v": "2"}))
    view.apply_config(TaskConfig("c", 1, {"v": "2"}))
    assert view.connector_info("c").tasks == (0,)  # type: ignore[union-attr]
    view.apply_config(TaskCommit("c", 2))
    assert view.connector_info("c").tasks == (0, 1)  # type: ignore[union-attr]
    assert view.task_configs["c"][1] == {"v": "2"}


def test_an_incomplete_commit_makes_the_connector_inconsistent_until_a_complete_one() -> None:
    view = with_connector(tasks=1)
    view.apply_config(TaskConfig("c", 1, {"v": "3"}))
    view.apply_config(TaskCommit("c", 2))  # task 0 missing from this generation
    assert view.connector_info("c").tasks == ()  # type: ignore[union-attr]
    view.apply_config(TaskConfig("c", 0, {}))
    view.apply_config(TaskConfig("c", 1, {}))
    view.apply_config(TaskCommit("c", 2))
    assert view.connector_info("c").tasks == (0, 1)  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("record", "expected"),
    [
        pytest.param(TargetState("c", "PAUSED"), "PAUSED", id="one-field-paused"),
        pytest.param(TargetState("c", "PAUSED", "STOPPED"), "STOPPED", id="v2-wins"),
        pytest.param(TargetState("c", "STARTED", "STARTED"), "STARTED", id="two-field-started"),
        pytest.param(TargetState("c", "BOGUS"), "STARTED", id="unknown-state-ignored"),
    ],
)
def test_target_states(record: TargetState, expected: str) -> None:
    view = with_connector()
    view.apply_config(record)
    assert view.target_state("c") == expected


def test_target_state_tombstone_falls_back_to_started_while_the_config_exists() -> None:
    view = with_connector()
    view.apply_config(TargetState("c", "PAUSED"))
    view.apply_config(Tombstone(ConfigKey(ConfigKind.TARGET_STATE, "c")))
    assert view.target_state("c") == "STARTED"


def test_connector_tombstone_removes_config_and_tasks() -> None:
    view = with_connector()
    view.apply_config(Tombstone(ConfigKey(ConfigKind.CONNECTOR, "c")))
    assert view.connectors() == ()
    assert view.connector_info("c") is None and view.connector_config("c") is None
    assert view.connector_type("c") == "unknown"


def test_stale_unassigned_does_not_override_running_at_same_or_newer_generation() -> None:
    view = with_connector()
    view.apply_status(TaskStatus("c", 0, "RUNNING", None, "w1", 5))
    view.apply_status(TaskStatus("c", 0, "UNASSIGNED", None, "w2", 5))
    assert view.task_state("c", 0).state == "RUNNING"  # type: ignore[union-attr]
    view.apply_status(TaskStatus("c", 0, "UNASSIGNED", None, "w2", 6))
    assert view.task_state("c", 0).state == "UNASSIGNED"  # type: ignore[union-attr]


def test_before_3_6_the_last_task_record_wins_even_a_stale_unassigned() -> None:
    view = with_connector()
    view.apply_status(ConnectorStatus("c", "RUNNING", None, "w1", 5))
    view.apply_status(TaskStatus("c", 0, "RUNNING", None, "w1", 5))
    view.apply_status(TaskStatus("c", 0, "UNASSIGNED", None, "w2", 4))
    assert view.task_state("c", 0).state == "RUNNING"  # type: ignore[union-attr]
    assert view.task_state("c", 0, ignore_stale_unassigned=False).state == "UNASSIGNED"  # type: ignore[union-attr]
    state = view.connector_state("c", ignore_stale_unassigned=False)
    assert state is not None and [(t, e.state, e.worker_id) for t, e in state.tasks] == [(0, "UNASSIGNED", "w2")]
    # a newer record replaces the stale one under both rules; a tombstone removes both
    view.apply_status(TaskStatus("c", 0, "RUNNING", None, "w1", 6))
    assert view.task_state("c", 0, ignore_stale_unassigned=False).state == "RUNNING"  # type: ignore[union-attr]
    view.apply_status(TaskStatus("c", 0, "UNASSIGNED", None, "w2", 6))
    view.apply_status(Tombstone(StatusKey(StatusKind.TASK, "c", 0)))
    assert view.task_state("c", 0, ignore_stale_unassigned=False) is None
    assert view.stale_unassigned == {}


def test_where_the_sidecar_stops_a_late_unassigned_of_a_task_no_longer_configured_is_not_shown() -> None:
    view = with_connector(tasks=1)
    view.apply_status(ConnectorStatus("c", "PAUSED", None, "w1", 3))
    view.apply_status(TaskStatus("c", 0, "PAUSED", None, "w1", 3))
    view.apply_config(TaskCommit("c", 0))  # the sidecar's stop: no task, then a STOPPED target state
    view.apply_config(TargetState.of("c", "STOPPED"))
    view.apply_status(Tombstone(StatusKey(StatusKind.TASK, "c", 0)))  # the leader deletes the status
    view.apply_status(TaskStatus("c", 0, "UNASSIGNED", None, "w1", 4))  # the task stopped after that
    view.apply_config(TargetState.of("c", "PAUSED"))  # paused while stopped
    state = view.connector_state("c", stopped_overlay=True)
    assert state is not None and state.connector.state == "PAUSED" and state.tasks == ()
    assert view.task_state("c", 0, stopped_overlay=True) is None
    unfiltered = view.connector_state("c")  # a worker's own rule (3.5+) is unchanged
    assert unfiltered is not None and [t for t, _ in unfiltered.tasks] == [0]
    view.apply_status(TaskStatus("c", 0, "FAILED", "trace", "w1", 5))  # any other state is shown
    assert [e.state for _, e in view.connector_state("c", stopped_overlay=True).tasks] == ["FAILED"]  # type: ignore[union-attr]


def test_connector_status_tombstone_removes_its_task_statuses() -> None:
    view = with_connector()
    view.apply_status(ConnectorStatus("c", "RUNNING", None, "w1", 1))
    view.apply_status(TaskStatus("c", 0, "RUNNING", None, "w1", 1))
    view.apply_status(Tombstone(StatusKey(StatusKind.CONNECTOR, "c")))
    assert view.connector_state("c") is None and view.task_state("c", 0) is None


def test_connector_state_sorts_tasks_and_carries_the_version() -> None:
    view = with_connector(topics="t")
    view.apply_status(ConnectorStatus("c", "RUNNING", None, "w1", 1, "4.3.1", True))
    view.apply_status(TaskStatus("c", 1, "FAILED", "trace", "w1", 1))
    view.apply_status(TaskStatus("c", 0, "RUNNING", None, "w1", 1))
    state = view.connector_state("c")
    assert state is not None
    assert [t for t, _ in state.tasks] == [0, 1]
    assert state.connector.version == "4.3.1" and state.type == "sink"


def test_plugin_types_win_over_the_topics_heuristic() -> None:
    view = with_connector()
    assert view.connector_type("c") == "source"
    view.plugin_types = {"X": "sink"}
    assert view.connector_type("c") == "sink"


def test_topic_records_and_tombstones_keep_the_inverse_index() -> None:
    view = ClusterView()
    view.apply_status(TopicStatus("t1", "a", 0, 1000))
    view.apply_status(TopicStatus("t1", "b", 1, 2000))
    view.apply_status(TopicStatus("t2", "a", 0, 3000))
    assert view.topic_connectors("t1") == ("a", "b")
    assert sorted(t.topic for t in view.active_topics("a")) == ["t1", "t2"]
    view.apply_status(Tombstone(StatusKey(StatusKind.TOPIC, "a", topic="t1")))
    assert view.topic_connectors("t1") == ("b",)
    view.apply_status(Tombstone(StatusKey(StatusKind.TOPIC, "b", topic="t1")))
    assert view.topic_connectors("t1") == () and all("t1" not in active for active in view.topics.values())


def test_offsets_last_record_per_key_bytes_wins_and_tombstones_delete() -> None:
    view = ClusterView()
    key = OffsetKey("c", {"filename": "f"})
    view.apply_offset(SourceOffset("c", {"filename": "f"}, {"position": 1}), key.to_bytes())
    view.apply_offset(SourceOffset("c", {"filename": "f"}, {"position": 9}), key.to_bytes())
    assert [o.offset for o in view.source_offsets("c")] == [{"position": 9}]
    view.apply_offset(Tombstone(key), key.to_bytes())
    assert view.source_offsets("c") == ()


def test_age_follows_the_newest_record_timestamp() -> None:
    view = ClusterView()
    assert view.age_s() is None
    view.apply_status(TopicStatus("t", "a", 0, 1), timestamp_ms=10_000)
    assert view.age_s(now=15.0) == pytest.approx(5.0)


def test_a_class_the_workers_plugin_list_lacks_is_unknown_as_the_worker_answers() -> None:
    view = with_connector(topics="t")
    view.plugin_types = {"org.example.Sink": "sink", "Sink": "sink"}
    assert view.connector_type("c") == "unknown"
    view.plugin_types = {}
    assert view.connector_type("c") == "sink"  # no list yet: from the config
