"""The fast paths of the status and config codecs give what the exact ones give.

``json_wire.loads_fast`` (orjson first, the exact reader for what orjson refuses) under
``decode_status`` and ``decode_config``; ``decode_topic_status`` (a topic status record's fields without
its objects) and the view's compact storage of them. Compared over records as workers write them and over
odd ones: unicode, escapes, big and float numbers, duplicate fields, tombstones, malformed values a worker
would skip with a warning, and seeded random mutations of all of these.
"""

from __future__ import annotations

import random
from collections.abc import Iterator

import pytest

from control_plane.codecs import (
    ConnectorConfig,
    ConnectorStatus,
    StatusKey,
    StatusKind,
    TargetState,
    TaskCommit,
    TaskConfig,
    TaskStatus,
    Tombstone,
    TopicStatus,
    decode_config,
    decode_status,
    decode_topic_status,
    encode_config,
    encode_status,
    json_wire,
)
from control_plane.storage.log_reader import LogRecord
from control_plane.view import MaterializedView
from control_plane.view.model import ClusterView

Raw = tuple[bytes | None, bytes | None]  # a record's key and value

ODD_TEXTS = [
    "plain",
    "é ü ß",
    "😀 emoji",
    "tab\there",
    'quote " and \\ backslash',
    "nul \x00 and \x1f",
    "\u2028 line separator",
    "\ufeff bom",
    "",
    "with:colon",
    "with-dash-9",
    "connector-",
]

ODD_VALUES = [
    b"",
    b"null",
    b"[]",
    b'"text"',
    b"{}",
    b"{",
    b"\xef\xbb\xbf{}",
    b"\xff\xfe",
    b'{"a":NaN}',
    b'{"a":1e999}',
    b'{"a":"\\ud800"}',
    b'{"a":"\xed\xa0\x80"}',
    b'{"a":1}\x00',
    b'{"a":"\x01"}',
    b'{"a":01}',
    b'{"a":1,}',
    b'{"a":"\\x"}',
    b" " * 3 + b'{"a":1}' + b"\n\t\r",
    b"[" * 2000 + b"]" * 2000,
]

NUMBERS = [
    b"0",
    b"-0",
    b"7",
    b"-1",
    b"2147483647",
    b"2147483648",
    b"-2147483649",
    b"9223372036854775807",
    b"9223372036854775808",
    b"-9223372036854775809",
    b"18446744073709551615",
    b"18446744073709551616",
    b"123456789012345678901234567890",
    b"1.0",
    b"1.5",
    b"-0.0",
    b"1E2",
    b"1e999",
    b"true",
    b"null",
    b'"5"',
]


def _json_text(text: str) -> bytes:
    return json_wire.dumps(text)


def base_status_records() -> list[Raw]:
    out: list[Raw] = []
    for name in ODD_TEXTS:
        for record in (
            ConnectorStatus(name or "c", "RUNNING", None, "w:8083", 3),
            ConnectorStatus(name or "c", "FAILED", "trace " + name, "w:8083", 3, "4.3.1", True),
            TaskStatus(name or "c", 2, "UNASSIGNED", None, "w:8083", 4, None, True),
            TopicStatus("topic-" + name, name or "c", 1, 1_700_000_000_000),
            TopicStatus("t", name or "c", -5, -1, name="other " + name, value_connector="x" + name),
        ):
            out.append(encode_status(record))
        out.append((f"status-topic-t{name}:connector-{name}".encode(), None))
        out.append((f"status-task-{name}-x".encode(), b"{}"))
    out += [
        (b"status-topic-:connector-c", b'{"topic":{}}'),
        (b"status-topic-t:connector-", None),
        (b"status-topic-t", None),
        (b"status-topic-t:connector-c\xff", None),
        (b"status-topic-a:b:connector-c", None),
        (b"status-unknown-x", b"{}"),
        (None, b"{}"),
    ]
    for number in NUMBERS:
        out.append(
            (
                b"status-topic-t:connector-c",
                b'{"topic":{"name":"t","connector":"c","task":' + number + b',"discoverTimestamp":' + number + b"}}",
            )
        )
        out.append(
            (b"status-task-c-1", b'{"state":"RUNNING","trace":null,"worker_id":"w","generation":' + number + b"}")
        )
    for value in ODD_VALUES:
        out.append((b"status-topic-t:connector-c", value))
        out.append((b"status-connector-c", value))
    out.append(
        (
            b"status-topic-t:connector-c",
            b'{"topic":{"name":"t","connector":"c","task":1,"discoverTimestamp":2,"task":3},"topic":{"name":"u",'
            b'"connector":"d","task":4,"discoverTimestamp":5}}',
        )
    )
    return out


def base_config_records() -> list[Raw]:
    out: list[Raw] = []
    for name in ODD_TEXTS:
        props: dict[str, str | None] = {"connector.class": name, "b": None, "a": name + "\n", "é": "😀"}
        for record in (
            ConnectorConfig(name or "c", props),
            TaskConfig(name or "c", 0, props),
            TaskCommit(name or "c", 3),
            TargetState.of(name or "c", "STOPPED"),
            TargetState.of(name or "c", "PAUSED", two_fields=False),
        ):
            out.append(encode_config(record))
        out.append((f"connector-{name}".encode(), None))
    for number in NUMBERS:
        out.append((b"commit-c", b'{"tasks":' + number + b"}"))
        out.append((b"connector-c", b'{"properties":{"a":' + number + b"}}"))
        out.append((b"session-key", b'{"key":"AAAA","algorithm":"HmacSHA256","creation-timestamp":' + number + b"}"))
    for value in ODD_VALUES:
        out.append((b"connector-c", value))
        out.append((b"target-state-c", value))
    out.append((b"connector-c", b'{"properties":{"z":"1","a":"2","z":"3"},"properties":{"y":"4","x":"5","y":"6"}}'))
    out.append((b"restart-connector-c", b'{"include-tasks":1.0,"only-failed":true}'))
    out.append((b"logger-cluster-org.x", b'{"level":"DEBUG","level":7}'))
    return out


def mutations(records: list[Raw], seed: int, count: int) -> Iterator[Raw]:
    """Random edits of the records' values: bytes replaced, cut, repeated; numbers, escapes, unicode put in."""
    rng = random.Random(seed)
    inserts = [b"\\u00e9", b"\\uD83D\\uDE00", b"\\ud800", b"\xc3\xa9", b"\xf0\x9f\x98\x80", b"\xff", b"1.5", b"1e400"]
    inserts += [b"99999999999999999999999", b"-0", b'"', b"\\", b",", b"}", b"{", b"null", b"\x00", b" "]
    for _ in range(count):
        key, value = rng.choice(records)
        if value is None:
            yield key, value
            continue
        data = bytearray(value)
        for _ in range(rng.randint(1, 3)):
            at = rng.randrange(len(data) + 1)
            edit = rng.randrange(4)
            if edit == 0:
                data[at:at] = rng.choice(inserts)
            elif edit == 1 and data:
                del data[at : at + rng.randint(1, 4)]
            elif edit == 2 and at < len(data):
                data[at] = rng.randrange(256)
            else:
                data = data[:at]
        yield key, bytes(data)


STATUS = base_status_records()
CONFIG = base_config_records()
STATUS_ALL = STATUS + list(mutations(STATUS, 13, 4000))
CONFIG_ALL = CONFIG + list(mutations(CONFIG, 17, 3000))


@pytest.fixture
def exact(monkeypatch: pytest.MonkeyPatch) -> None:
    """The codecs with the exact JSON reader only."""
    monkeypatch.setattr(json_wire, "loads_fast", json_wire.loads)


def _same(a: object, b: object) -> bool:
    return type(a) is type(b) and a == b and repr(a) == repr(b)


def test_status_decoding_is_the_exact_one(monkeypatch: pytest.MonkeyPatch) -> None:
    fast = [decode_status(k, v) for k, v in STATUS_ALL]
    monkeypatch.setattr(json_wire, "loads_fast", json_wire.loads)
    for (key, value), got in zip(STATUS_ALL, fast, strict=True):
        assert _same(got, decode_status(key, value)), (key, value)


def test_config_decoding_is_the_exact_one(monkeypatch: pytest.MonkeyPatch) -> None:
    fast = [decode_config(k, v) for k, v in CONFIG_ALL]
    monkeypatch.setattr(json_wire, "loads_fast", json_wire.loads)
    for (key, value), got in zip(CONFIG_ALL, fast, strict=True):
        expected = decode_config(key, value)
        assert _same(got, expected), (key, value)
        if isinstance(expected, ConnectorConfig | TaskConfig):  # the order of the properties too
            assert isinstance(got, ConnectorConfig | TaskConfig)
            assert list(got.properties.items()) == list(expected.properties.items())


def test_odd_values_are_read_by_the_exact_reader_where_orjson_refuses() -> None:
    assert json_wire.loads_fast(b'{"a":"\\ud800"}') == ({"a": "\ud800"}, None)
    assert json_wire.loads_fast(b'{"a":1e999}') == ({"a": float("inf")}, None)
    assert json_wire.loads_fast(b"\xef\xbb\xbf{}") == json_wire.loads(b"\xef\xbb\xbf{}")
    assert json_wire.loads_fast(b'{"a":NaN}') == (None, "not JSON: non-standard JSON constant NaN")


@pytest.mark.usefixtures("exact")
def test_topic_status_fields_are_decode_status() -> None:
    seen = {"parts": 0, "tombstone": 0, "other": 0}
    for key, value in STATUS_ALL:
        parts = decode_topic_status(key, value)
        decoded = decode_status(key, value)
        if parts is None:  # the caller asks decode_status (orjson refused the value, or it is another record)
            seen["other"] += 1
        elif len(parts) == 2:
            seen["tombstone"] += 1
            assert decoded == Tombstone(StatusKey(StatusKind.TOPIC, parts[1], topic=parts[0])), (key, value)
        else:
            seen["parts"] += 1
            assert _same(decoded, TopicStatus(*parts)), (key, value)
    assert min(seen.values()) > 20, seen


def test_without_orjson_the_exact_reader_reads_all(monkeypatch: pytest.MonkeyPatch) -> None:
    """Where orjson is missing (a Spark worker's Python): every value goes to the exact reader."""
    with_orjson = [decode_status(k, v) for k, v in STATUS_ALL] + [decode_config(k, v) for k, v in CONFIG_ALL]
    monkeypatch.setattr(json_wire, "orjson_loads", json_wire._no_orjson)
    without = [decode_status(k, v) for k, v in STATUS_ALL] + [decode_config(k, v) for k, v in CONFIG_ALL]
    assert all(_same(a, b) for a, b in zip(with_orjson, without, strict=True))
    assert all(decode_topic_status(k, v) is None for k, v in STATUS_ALL if v is not None)


def test_the_views_compact_topics_answer_as_the_records(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(5)
    records = list(STATUS_ALL)
    # the same topics for several connectors, some removed again
    records += [
        encode_status(TopicStatus(f"shared-{t}", f"c{c}", t - 3, 1_000 * c - 7)) for t in range(6) for c in range(4)
    ]
    records += [(f"status-topic-shared-{t}:connector-c{c}".encode(), None) for t in range(6) for c in range(3)]
    rng.shuffle(records)
    fast = MaterializedView({}, config_topic="c", status_topic="s", offsets_topic=None)
    assert fast._on_status_records([LogRecord("s", 0, i, i, k, v) for i, (k, v) in enumerate(records)]) == 0
    monkeypatch.setattr(json_wire, "loads_fast", json_wire.loads)
    exact = ClusterView()
    for i, (key, value) in enumerate(records):
        decoded = decode_status(key, value)
        if isinstance(decoded, ConnectorStatus | TaskStatus | TopicStatus | Tombstone):
            exact.apply_status(decoded, i)
    topic_records = [p for p in (decode_status(*r) for r in records) if isinstance(p, TopicStatus)]
    assert len(topic_records) > 50
    for connector in {t.connector for t in topic_records}:
        assert sorted(fast.state.active_topics(connector), key=repr) == sorted(exact.active_topics(connector), key=repr)
        assert fast.state.connector_state(connector) == exact.connector_state(connector)
    for topic in {t.topic for t in topic_records}:
        assert fast.state.topic_connectors(topic) == exact.topic_connectors(topic)
    assert fast.state.revision == exact.revision
    assert fast.state.last_record_timestamp_ms == exact.last_record_timestamp_ms
    assert fast.state.counts() == exact.counts()


def test_packed_topic_records_keep_every_int_and_long() -> None:
    view, exact = ClusterView(), ClusterView()
    cases = [(0, 0), (-1, -1), (2**31 - 1, 2**63 - 1), (-(2**31), -(2**63)), (7, 1_700_000_000_000)]
    cases += [(2**17 - 1, 2**43 - 1), (2**17, 1), (1, 2**43), (0, -1), (-1, 0)]
    for i, (task, timestamp) in enumerate(cases):
        view.apply_topic((f"t{i}", "c", task, timestamp, None, None))
        exact.apply_status(TopicStatus(f"t{i}", "c", task, timestamp))
    got = {t.topic: (t.task, t.discover_timestamp) for t in view.active_topics("c")}
    assert got == {f"t{i}": case for i, case in enumerate(cases)}
    assert view.active_topics("c") == exact.active_topics("c")


def test_a_record_that_fails_is_counted_and_the_others_applied(monkeypatch: pytest.MonkeyPatch) -> None:
    view = MaterializedView({}, config_topic="c", status_topic="s", offsets_topic=None)
    apply_topic = view.state.apply_topic

    def failing(parts: tuple[str, str, int, int, str | None, str | None], timestamp_ms: int = 0) -> None:
        if parts[0] == "bad":
            raise RuntimeError("boom")
        apply_topic(parts, timestamp_ms)

    monkeypatch.setattr(view.state, "apply_topic", failing)
    records = [encode_status(TopicStatus(t, "c", 0, 1)) for t in ("a", "bad", "b")]
    records.append(encode_status(ConnectorStatus("c", "RUNNING", None, "w", 1)))
    assert view._on_status_records([LogRecord("s", 0, i, 1, k, v) for i, (k, v) in enumerate(records)]) == 1
    assert [t.topic for t in view.state.active_topics("c")] == ["a", "b"]
    assert view.applied["status"] == 3 and view.state.connector_statuses["c"].state == "RUNNING"
