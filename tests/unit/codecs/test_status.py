"""Status-topic codec: records as Connect 3.4.1 and 4.3.1 workers wrote them, and keys parsed exactly as
KafkaStatusBackingStore parses them."""

from __future__ import annotations

import pytest

from control_plane.codecs import (
    ConnectorStatus,
    Malformed,
    StatusKey,
    StatusKind,
    TaskStatus,
    Tombstone,
    TopicStatus,
    UnknownKey,
    decode_status,
    encode_status,
    parse_status_key,
)

W = "127.0.0.1:56531"
TRACE = "org.apache.kafka.connect.errors.ConnectException: boom\n\tat X.start(X.java:1)\n"

VECTORS = [
    # 3.4.1: no version field
    (
        b"status-connector-source-old-0892d421",
        b'{"state":"RUNNING","trace":null,"worker_id":"127.0.0.1:51161","generation":14}',
        ConnectorStatus("source-old-0892d421", "RUNNING", None, "127.0.0.1:51161", 14),
    ),
    (
        b"status-task-source-old-0892d421-0",
        b'{"state":"PAUSED","trace":null,"worker_id":"127.0.0.1:51161","generation":15}',
        TaskStatus("source-old-0892d421", 0, "PAUSED", None, "127.0.0.1:51161", 15),
    ),
    # 4.3.1: "version" always written, null while UNASSIGNED or RESTARTING
    (
        b"status-connector-source-new-d626fd56",
        b'{"state":"RUNNING","trace":null,"worker_id":"127.0.0.1:56531","generation":2,"version":"4.3.1"}',
        ConnectorStatus("source-new-d626fd56", "RUNNING", None, W, 2, "4.3.1", True),
    ),
    (
        b"status-connector-source-new-d626fd56",
        b'{"state":"UNASSIGNED","trace":null,"worker_id":"127.0.0.1:56531","generation":3,"version":null}',
        ConnectorStatus("source-new-d626fd56", "UNASSIGNED", None, W, 3, None, True),
    ),
    (
        b"status-task-src-new-74490d51-0",
        b'{"state":"RESTARTING","trace":null,"worker_id":"127.0.0.1:56531","generation":9,"version":null}',
        TaskStatus("src-new-74490d51", 0, "RESTARTING", None, W, 9, None, True),
    ),
    (
        b"status-task-a-3",
        b'{"state":"FAILED",'
        b'"trace":"org.apache.kafka.connect.errors.ConnectException: boom\\n\\tat X.start(X.java:1)\\n",'
        b'"worker_id":"127.0.0.1:56531","generation":1,"version":"4.3.1"}',
        TaskStatus("a", 3, "FAILED", TRACE, W, 1, "4.3.1", True),
    ),
    # topic tracking (KIP-558), the same on both versions
    (
        b"status-topic-lines-new-d626fd56:connector-source-new-d626fd56",
        b'{"topic":{"name":"lines-new-d626fd56","connector":"source-new-d626fd56","task":0,"discoverTimestamp":1795321616748}}',
        TopicStatus("lines-new-d626fd56", "source-new-d626fd56", 0, 1795321616748),
    ),
    # connector names with '-' and ':'
    (
        b"status-topic-t.1_x:connector-codec:src-new-1",
        b'{"topic":{"name":"t.1_x","connector":"codec:src-new-1","task":2,"discoverTimestamp":1}}',
        TopicStatus("t.1_x", "codec:src-new-1", 2, 1),
    ),
    (
        b"status-topic-t:connector-a:connector-b",
        b'{"topic":{"name":"t","connector":"a:connector-b","task":0,"discoverTimestamp":1}}',
        TopicStatus("t", "a:connector-b", 0, 1),
    ),
    (
        b"status-task-codec:src-new-1-0",
        b'{"state":"RUNNING","trace":null,"worker_id":"w","generation":1}',
        TaskStatus("codec:src-new-1", 0, "RUNNING", None, "w", 1),
    ),
    (
        b"status-connector-codec:src-new-1",
        b'{"state":"RUNNING","trace":null,"worker_id":"w","generation":1}',
        ConnectorStatus("codec:src-new-1", "RUNNING", None, "w", 1),
    ),
    # a topic record whose value disagrees with its key keeps both
    (
        b"status-topic-t:connector-c",
        b'{"topic":{"name":"other","connector":"d","task":0,"discoverTimestamp":1}}',
        TopicStatus("t", "c", 0, 1, name="other", value_connector="d"),
    ),
]


@pytest.mark.parametrize(("key", "value", "record"), VECTORS)
def test_decode_and_encode_real_records(key: bytes, value: bytes, record: object) -> None:
    assert decode_status(key, value) == record
    assert encode_status(record) == (key, value)  # type: ignore[arg-type]


def test_version_field_presence() -> None:
    base = {"connector": "c", "state": "RUNNING", "trace": None, "worker_id": "w", "generation": 1}
    old = b'{"state":"RUNNING","trace":null,"worker_id":"w","generation":1}'
    assert encode_status(ConnectorStatus(**base))[1] == old  # type: ignore[arg-type]
    assert encode_status(ConnectorStatus(**base, version_field=True))[1] == old[:-1] + b',"version":null}'  # type: ignore[arg-type]
    assert encode_status(ConnectorStatus(**base, version="1.2"))[1] == old[:-1] + b',"version":"1.2"}'  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("key", "parsed"),
    [
        (b"status-connector-a", StatusKey(StatusKind.CONNECTOR, "a")),
        (b"status-connector-status-task-a-0", StatusKey(StatusKind.CONNECTOR, "status-task-a-0")),
        (b"status-task-a-b-c-10", StatusKey(StatusKind.TASK, "a-b-c", 10)),
        (b"status-task-a--1", StatusKey(StatusKind.TASK, "a-", 1)),  # not task -1: '-' is the separator
        (b"status-task--0", StatusKey(StatusKind.TASK, "", 0)),  # the worker accepts an empty name here
        (b"status-task-a-0-", StatusKey(StatusKind.TASK, "a", 0)),  # Java's split drops trailing ""
        (b"status-task-x:y-2", StatusKey(StatusKind.TASK, "x:y", 2)),
        (b"status-topic-t:connector-c", StatusKey(StatusKind.TOPIC, "c", topic="t")),
        (b"status-topic-t:connector-c:d-e", StatusKey(StatusKind.TOPIC, "c:d-e", topic="t")),
        # the worker cuts at the first ':' and skips the separator's length without checking it
        (b"status-topic-t:XXXXXXXXXXc", StatusKey(StatusKind.TOPIC, "c", topic="t")),
    ],
)
def test_key_parsing_as_the_worker(key: bytes, parsed: StatusKey) -> None:
    assert parse_status_key(key) == parsed


@pytest.mark.parametrize(
    "key", [b"status-connector-a", b"status-task-a-b-0", b"status-topic-t:connector-a:b", b"status-topic-x:connector-y"]
)
def test_tombstones(key: bytes) -> None:
    decoded = decode_status(key, None)
    assert isinstance(decoded, Tombstone)
    assert encode_status(decoded) == (key, None)


@pytest.mark.parametrize("key", [b"status-a", b"connector-a", b"topic-t:connector-c", b"", b"status-tasks-a-0"])
def test_unknown_keys(key: bytes) -> None:
    assert decode_status(key, None) == UnknownKey(key)


@pytest.mark.parametrize(
    ("key", "value"),
    [
        (None, b"{}"),
        (b"status-connector-\xff", b"{}"),
        (b"status-connector-", b"{}"),
        (b"status-task-a", None),
        (b"status-task-a-x", None),
        (b"status-topic-t", None),  # no ':'
        (b"status-topic-:connector-c", None),  # empty topic
        (b"status-topic-t:connector-", None),  # empty connector
        (b"status-topic-t:conn", None),  # shorter than the separator
        (b"status-connector-a", b"nope"),
        (b"status-connector-a", b"[1]"),
        (b"status-connector-a", b'{"state":"RUNNING","trace":null,"worker_id":"w"}'),
        (b"status-connector-a", b'{"state":"RUNNING","trace":null,"worker_id":"w","generation":"1"}'),
        (b"status-connector-a", b'{"state":null,"trace":null,"worker_id":"w","generation":1}'),
        (b"status-connector-a", b'{"state":"RUNNING","trace":3,"worker_id":"w","generation":1}'),
        (b"status-connector-a", b'{"state":"RUNNING","trace":null,"worker_id":"w","generation":1,"version":4}'),
        (b"status-task-a-0", b'{"state":"RUNNING","trace":null,"worker_id":null,"generation":1}'),
        (b"status-topic-t:connector-c", b'{"name":"t"}'),
        (b"status-topic-t:connector-c", b'{"topic":{"name":"t","connector":"c","task":0}}'),
        (b"status-topic-t:connector-c", b'{"topic":{"name":"t","connector":"c","task":0.5,"discoverTimestamp":1}}'),
    ],
)
def test_malformed(key: bytes | None, value: bytes | None) -> None:
    decoded = decode_status(key, value)
    assert isinstance(decoded, Malformed)
    assert decoded.reason and decoded.key == key
