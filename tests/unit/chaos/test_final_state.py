"""The final state as the campaign reads it past the sidecars: Connect's records and the worker's request
log, decoded."""

from __future__ import annotations

from datetime import datetime

from tests.chaos.final_state import positions, restart_requests, status_sightings, target_states
from tests.chaos.history import Clock
from tests.support.kafka_topics import TopicRecord


def record(key: bytes, value: bytes | None, timestamp: int = -1) -> TopicRecord:
    return TopicRecord(0, 0, key, value, timestamp)


def test_the_last_target_state_of_each_connector() -> None:
    records = [
        record(b"target-state-a", b'{"state":"PAUSED","state.v2":"STOPPED"}'),
        record(b"target-state-b", b'{"state":"PAUSED"}'),
        record(b"target-state-b", b'{"state":"STARTED"}'),
        record(b"connector-a", b'{"properties":{}}'),
    ]
    assert target_states(records) == {"a": "STOPPED", "b": "RUNNING"}


def test_the_last_position_of_each_connector() -> None:
    records = [
        record(b'["a",{"filename":"/dev/null"}]', b'{"position":7}'),
        record(b'["a",{"filename":"/dev/null"}]', b'{"position":9}'),
        record(b'["b",{"filename":"/dev/null"}]', b'{"position":1}'),
    ]
    assert positions(records) == {"a": "9", "b": "1"}


def test_status_records_are_sightings_at_their_time() -> None:
    clock = Clock(monotonic_start=0.0, wall_start=1000.0)
    records = [
        record(b"status-connector-a", b'{"state":"RUNNING","trace":null,"worker_id":"w","generation":1}', 1002500),
        record(b"status-task-a-0", b'{"state":"PAUSED","trace":null,"worker_id":"w","generation":1}', 1003000),
    ]
    seen = status_sightings(records, clock)
    assert [(s.at, s.connector, s.running, s.detail) for s in seen] == [
        (2.5, "a", True, "connector RUNNING"),
        (3.0, "a", False, "task 0 PAUSED"),
    ]


def test_restart_requests_from_the_worker_request_log() -> None:
    wall = datetime(2026, 12, 7, 1, 0, 0).timestamp()
    clock = Clock(monotonic_start=0.0, wall_start=wall)
    log = [
        '[2026-12-07 01:00:02,500] INFO 127.0.0.1 - - [07/Dec/2026:01:00:02 +0000] "POST /connectors/f/restart?'
        'includeTasks=true&onlyFailed=true HTTP/1.1" 202 (org.apache.kafka.connect.runtime.rest.RestServer:57)',
        '[2026-12-07 01:00:04,000] INFO 127.0.0.1 - - [07/Dec/2026:01:00:04 +0000] "POST /connectors/f/tasks/0/restart'
        ' HTTP/1.1" 204 (org.apache.kafka.connect.runtime.rest.RestServer:57)',
        '[2026-12-07 01:00:05,000] INFO 127.0.0.1 - - [07/Dec/2026:01:00:05 +0000] "POST /connectors/other/restart'
        ' HTTP/1.1" 204 (org.apache.kafka.connect.runtime.rest.RestServer:57)',
        '[2026-12-07 01:00:06,000] INFO 127.0.0.1 - - [07/Dec/2026:01:00:06 +0000] "GET /connectors/f/status'
        ' HTTP/1.1" 200 (org.apache.kafka.connect.runtime.rest.RestServer:57)',
        # refused for a rebalance: the worker did nothing (the sidecar's client sends it again)
        '[2026-12-07 01:00:07,000] INFO 127.0.0.1 - - [07/Dec/2026:01:00:07 +0000] "POST /connectors/f/tasks/0/restart'
        ' HTTP/1.1" 409 142 "" "" 497 (org.apache.kafka.connect.runtime.rest.RestServer:57)',
    ]
    assert restart_requests(log, ["f"], clock) == {"f": [2.5, 4.0]}
