"""Config-topic codec: records as Connect 3.4.1 and 4.3.1 workers wrote them, and what the worker rejects."""

from __future__ import annotations

import pytest

from control_plane.codecs import (
    ConfigKey,
    ConfigKind,
    ConnectorConfig,
    LoggerLevelRecord,
    Malformed,
    RestartRecord,
    SessionKey,
    TargetState,
    TaskCommit,
    TaskConfig,
    TaskCountRecord,
    Tombstone,
    UnknownKey,
    decode_config,
    encode_config,
    parse_config_key,
)

# (key, value, decoded): every kind of record, copied from the topics of the real workers where they
# write it (logger-cluster- only on 3.7+, tasks-fencing- only with exactly-once source support).
VECTORS = [
    (
        b"session-key",
        b'{"key":"AiCNg0i0D9UzGTZ9B2V2lVrstnHSOJVeyNJRVmi0Awg=","algorithm":"HmacSHA256","creation-timestamp":1795321615091}',
        SessionKey("AiCNg0i0D9UzGTZ9B2V2lVrstnHSOJVeyNJRVmi0Awg=", "HmacSHA256", 1795321615091),
    ),
    (
        b"connector-source-new-d626fd56",
        b'{"properties":{"connector.class":"org.apache.kafka.connect.file.FileStreamSourceConnector",'
        b'"tasks.max":"1","topic":"lines","name":"source-new-d626fd56"}}',
        ConnectorConfig(
            "source-new-d626fd56",
            {
                "connector.class": "org.apache.kafka.connect.file.FileStreamSourceConnector",
                "tasks.max": "1",
                "topic": "lines",
                "name": "source-new-d626fd56",
            },
        ),
    ),
    (
        b"task-source-new-d626fd56-0",
        b'{"properties":{"task.class":"org.apache.kafka.connect.file.FileStreamSourceTask","topic":"lines"}}',
        TaskConfig(
            "source-new-d626fd56",
            0,
            {"task.class": "org.apache.kafka.connect.file.FileStreamSourceTask", "topic": "lines"},
        ),
    ),
    (b"commit-source-new-d626fd56", b'{"tasks":1}', TaskCommit("source-new-d626fd56", 1)),
    (b"target-state-a", b'{"state":"PAUSED"}', TargetState("a", "PAUSED")),  # 3.4.1
    (b"target-state-a", b'{"state":"STARTED"}', TargetState("a", "STARTED")),
    (b"target-state-a", b'{"state":"PAUSED","state.v2":"PAUSED"}', TargetState("a", "PAUSED", "PAUSED")),  # 4.3.1
    (b"target-state-a", b'{"state":"STARTED","state.v2":"STARTED"}', TargetState("a", "STARTED", "STARTED")),
    (b"target-state-a", b'{"state":"PAUSED","state.v2":"STOPPED"}', TargetState("a", "PAUSED", "STOPPED")),
    (
        b"restart-connector-source-new-d626fd56",
        b'{"include-tasks":true,"only-failed":false}',
        RestartRecord("source-new-d626fd56", include_tasks=True, only_failed=False),
    ),
    (b"tasks-fencing-a", b'{"task-count":3}', TaskCountRecord("a", 3)),
    (
        b"logger-cluster-org.apache.kafka.connect",
        b'{"level":"DEBUG"}',
        LoggerLevelRecord("org.apache.kafka.connect", "DEBUG"),
    ),
    # names with '-' and ':' (and a trailing '-<digits>' that is part of the name)
    (b"connector-my:conn-1", b'{"properties":{"k":null}}', ConnectorConfig("my:conn-1", {"k": None})),
    (b"task-my:conn-1-12", b'{"properties":{}}', TaskConfig("my:conn-1", 12, {})),
    (b"task-a--0", b'{"properties":{}}', TaskConfig("a-", 0, {})),
    (b"task--x-0", b'{"properties":{}}', TaskConfig("-x", 0, {})),
    (b"commit-a:b-c", b'{"tasks":0}', TaskCommit("a:b-c", 0)),
    (
        "connector-ünï-😀".encode(),
        '{"properties":{"v":"tab\\there \\u0001 é \\uD83D\\uDE00"}}'.encode(),
        ConnectorConfig("ünï-😀", {"v": "tab\there \x01 é 😀"}),
    ),
]


@pytest.mark.parametrize(("key", "value", "record"), VECTORS)
def test_decode_and_encode_real_records(key: bytes, value: bytes, record: object) -> None:
    assert decode_config(key, value) == record
    assert encode_config(record) == (key, value)  # type: ignore[arg-type]


def test_property_order_is_kept() -> None:
    value = b'{"properties":{"z":"1","a":"2","m":"3"}}'
    record = decode_config(b"connector-c", value)
    assert isinstance(record, ConnectorConfig)
    assert list(record.properties) == ["z", "a", "m"]
    assert encode_config(record)[1] == value


@pytest.mark.parametrize(
    ("key", "parsed"),
    [
        (b"connector-a", ConfigKey(ConfigKind.CONNECTOR, "a")),
        (b"target-state-a", ConfigKey(ConfigKind.TARGET_STATE, "a")),
        (b"target-state-connector-x", ConfigKey(ConfigKind.TARGET_STATE, "connector-x")),
        (b"connector-target-state-x", ConfigKey(ConfigKind.CONNECTOR, "target-state-x")),
        (b"task-a-b-7", ConfigKey(ConfigKind.TASK, "a-b", 7)),
        (b"tasks-fencing-a-1", ConfigKey(ConfigKind.TASK_COUNT, "a-1")),
        (b"restart-connector-a", ConfigKey(ConfigKind.RESTART, "a")),
        (b"commit-a", ConfigKey(ConfigKind.COMMIT, "a")),
        (b"session-key", ConfigKey(ConfigKind.SESSION_KEY)),
        (b"logger-cluster-root", ConfigKey(ConfigKind.LOGGER, "root")),
        # as KafkaConfigBackingStore.parseTaskId: Integer.parseInt, trailing empty parts dropped
        (b"task-a-+3", ConfigKey(ConfigKind.TASK, "a", 3)),
        (b"task-a-0-", ConfigKey(ConfigKind.TASK, "a", 0)),
    ],
)
def test_key_parsing(key: bytes, parsed: ConfigKey) -> None:
    assert parse_config_key(key) == parsed


@pytest.mark.parametrize(
    "key",
    [
        b"connector-a",
        b"task-a-0",
        b"commit-a",
        b"target-state-a",
        b"restart-connector-a",
        b"session-key",
        b"logger-cluster-x",
    ],
)
def test_tombstones(key: bytes) -> None:
    decoded = decode_config(key, None)
    assert isinstance(decoded, Tombstone)
    assert encode_config(decoded) == (key, None)


@pytest.mark.parametrize("key", [b"connectors-a", b"foo", b"session-key-2", b"status-connector-a", b"", b"Connector-a"])
def test_unknown_keys(key: bytes) -> None:
    assert decode_config(key, b'{"properties":{}}') == UnknownKey(key)
    assert decode_config(key, None) == UnknownKey(key)


@pytest.mark.parametrize(
    ("key", "value"),
    [
        (None, b"{}"),
        (b"\xffconnector-a", b"{}"),
        (b"task-a", b'{"properties":{}}'),  # no task number
        (b"task-a-x", b'{"properties":{}}'),
        (b"task-a-99999999999", b'{"properties":{}}'),  # beyond Java int
        (b"connector-a", b"{not json"),
        (b"connector-a", b"\xff"),
        (b"connector-a", b"[]"),
        (b"connector-a", b'{"props":{}}'),
        (b"connector-a", b'{"properties":{"k":1}}'),
        (b"commit-a", b'{"tasks":"1"}'),
        (b"commit-a", b'{"tasks":1.0}'),
        (b"commit-a", b'{"tasks":true}'),
        (b"target-state-a", b'{"state":1}'),
        (b"target-state-a", b"{}"),
        (b"tasks-fencing-a", b"{}"),
        (b"session-key", b'{"key":"AAAA","algorithm":"HmacSHA256"}'),
        (b"session-key", b'{"key":"not base64!","algorithm":"HmacSHA256","creation-timestamp":1}'),
        (b"logger-cluster-x", b'{"level":null}'),
        (b"restart-connector-a", b'"x"'),
    ],
)
def test_malformed(key: bytes | None, value: bytes) -> None:
    decoded = decode_config(key, value)
    assert isinstance(decoded, Malformed)
    assert decoded.reason and decoded.key == key


def test_target_state_falls_back_like_the_worker() -> None:
    assert decode_config(b"target-state-a", b'{"state":"PAUSED","state.v2":7}') == TargetState("a", "PAUSED")
    only_v2 = decode_config(b"target-state-a", b'{"state.v2":"STOPPED"}')
    assert isinstance(only_v2, TargetState) and only_v2.effective == "STOPPED"


def test_target_state_constructors() -> None:
    assert encode_config(TargetState.of("c", "STOPPED"))[1] == b'{"state":"PAUSED","state.v2":"STOPPED"}'
    assert encode_config(TargetState.of("c", "STARTED"))[1] == b'{"state":"STARTED","state.v2":"STARTED"}'
    assert encode_config(TargetState.of("c", "PAUSED", two_fields=False))[1] == b'{"state":"PAUSED"}'
    assert TargetState("c", "PAUSED", "STOPPED").effective == "STOPPED"
    assert TargetState("c", "PAUSED").effective == "PAUSED"


def test_restart_request_fields_default_to_false_like_the_worker() -> None:
    assert decode_config(b"restart-connector-a", b'{"include-tasks":"yes"}') == RestartRecord("a", False, False)


def test_session_key_bytes() -> None:
    record = decode_config(b"session-key", b'{"key":"AQID","algorithm":"HmacSHA256","creation-timestamp":5}')
    assert isinstance(record, SessionKey) and record.key_bytes == b"\x01\x02\x03"
