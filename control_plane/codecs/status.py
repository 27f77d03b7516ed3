"""Records of the status topic (``status.storage.topic``).

Mirrors org.apache.kafka.connect.storage.KafkaStatusBackingStore:

- ``status-connector-<c>`` and ``status-task-<c>-<n>``: STATUS_SCHEMA_V0, fields in the order
  ``state, trace, worker_id, generation`` and, from 4.1 (KIP-891), ``version``. The optional fields are
  always written, as ``null`` when unset: 4.x writes ``"version":null`` for UNASSIGNED and RESTARTING,
  3.x has no ``version`` field at all.
- ``status-topic-<topic>:connector-<c>`` (KIP-558): ``{"topic":{"name","connector","task",
  "discoverTimestamp"}}`` (TOPIC_STATUS_VALUE_SCHEMA_V0; no ``version`` field, also in 4.3.1).

Keys are parsed as the worker parses them: a task key is split on ``-`` and its last part is the task
number, so connector names may contain ``-``; a topic key is cut at its *first* ``:`` (topic names cannot
contain one), so connector names may contain ``:``; the ``:connector-`` separator is skipped by length.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import TypeAlias

from . import json_wire
from .javalang import (
    INT32_MAX,
    INT32_MIN,
    INT64_MAX,
    INT64_MIN,
    as_int32,
    as_int64,
    java_parse_int,
    java_split_dash,
    key_text,
)
from .results import Malformed, Tombstone, UnknownKey

TOPIC_SEPARATOR = ":connector-"


class StatusKind(StrEnum):
    CONNECTOR = "status-connector-"
    TASK = "status-task-"
    TOPIC = "status-topic-"


@dataclass(frozen=True, slots=True)
class StatusKey:
    kind: StatusKind
    connector: str
    task: int | None = None  # only for TASK
    topic: str | None = None  # only for TOPIC

    def to_bytes(self) -> bytes:
        if self.kind is StatusKind.TASK:
            return f"{self.kind.value}{self.connector}-{self.task}".encode()
        if self.kind is StatusKind.TOPIC:
            return f"{self.kind.value}{self.topic}{TOPIC_SEPARATOR}{self.connector}".encode()
        return f"{self.kind.value}{self.connector}".encode()


@dataclass(frozen=True)
class ConnectorStatus:
    connector: str
    state: str  # UNASSIGNED, RUNNING, PAUSED, FAILED, DESTROYED, RESTARTING, STOPPED
    trace: str | None
    worker_id: str
    generation: int
    version: str | None = None  # the plugin version (KIP-891, 4.1+)
    version_field: bool = False  # whether the value carries "version" (4.1+ workers always write it)


@dataclass(frozen=True)
class TaskStatus:
    connector: str
    task: int
    state: str
    trace: str | None
    worker_id: str
    generation: int
    version: str | None = None
    version_field: bool = False


@dataclass(frozen=True)
class TopicStatus:
    topic: str  # from the key, which is what the worker indexes by
    connector: str  # from the key
    task: int
    discover_timestamp: int
    name: str | None = None  # the value's "name", only when it differs from the key's topic
    value_connector: str | None = None  # the value's "connector", only when it differs from the key's


# a TopicStatus's fields in its order (topic, connector, task, discover_timestamp, name, value_connector)
TopicParts: TypeAlias = tuple[str, str, int, int, str | None, str | None]
StatusRecord: TypeAlias = ConnectorStatus | TaskStatus | TopicStatus
StatusDecoded: TypeAlias = StatusRecord | Tombstone[StatusKey] | UnknownKey | Malformed


# the prefixes as plain strings (an enum member's .value is a descriptor call: this runs for every record)
_CONNECTOR_PREFIX, _TASK_PREFIX, _TOPIC_PREFIX = (
    k.value for k in (StatusKind.CONNECTOR, StatusKind.TASK, StatusKind.TOPIC)
)
_TOPIC_START, _SEPARATOR_LENGTH = len(_TOPIC_PREFIX), len(TOPIC_SEPARATOR)
_TOPIC_PREFIX_BYTES = _TOPIC_PREFIX.encode()


def _split_topic_key(text: str) -> tuple[str, str] | str:
    """``(topic, connector)`` of a topic status key, or why it is malformed (as
    KafkaStatusBackingStore.readTopicStatus reads it)."""
    colon = text.find(":")
    if colon < _TOPIC_START:
        return "topic status key without ':'"
    topic = text[_TOPIC_START:colon]
    connector = text[colon + _SEPARATOR_LENGTH :]
    if not topic:
        return "topic status key with an empty topic"
    if not connector:
        return "topic status key with an empty connector"
    return topic, connector


def parse_status_key(key: bytes | None) -> StatusKey | UnknownKey | Malformed:
    text = key_text(key)
    if key is None or text is None:
        return Malformed("status key is missing or not UTF-8", key)
    if text.startswith(_TOPIC_PREFIX):  # the most frequent records first
        split = _split_topic_key(text)
        return (
            Malformed(split, key) if isinstance(split, str) else StatusKey(StatusKind.TOPIC, split[1], topic=split[0])
        )
    if text.startswith(_CONNECTOR_PREFIX):
        connector = text[len(_CONNECTOR_PREFIX) :]
        return StatusKey(StatusKind.CONNECTOR, connector) if connector else Malformed("empty connector name", key)
    if text.startswith(_TASK_PREFIX):
        # parseConnectorTaskId: at least 4 parts ("status", "task", name..., number)
        parts = java_split_dash(text)
        task = java_parse_int(parts[-1]) if len(parts) >= 4 else None
        if task is None:
            return Malformed("task status key without a task number", key)
        return StatusKey(StatusKind.TASK, "-".join(parts[2:-1]), task)
    return UnknownKey(key)


def _decode_state(key: StatusKey, value: dict[str, object]) -> StatusRecord | str:
    state, trace, worker, version = (value.get(f) for f in ("state", "trace", "worker_id", "version"))
    generation = as_int32(value.get("generation"))
    if not isinstance(state, str) or not state:
        return "'state' is not a string"
    if trace is not None and not isinstance(trace, str):
        return "'trace' is not a string"
    if not isinstance(worker, str):
        return "'worker_id' is not a string"
    if generation is None:
        return "'generation' is not an integer"
    if version is not None and not isinstance(version, str):
        return "'version' is not a string"
    has_version = "version" in value
    if key.kind is StatusKind.CONNECTOR:
        return ConnectorStatus(key.connector, state, trace, worker, generation, version, has_version)
    return TaskStatus(key.connector, key.task or 0, state, trace, worker, generation, version, has_version)


def _topic_parts(topic: str, connector: str, value: dict[str, object]) -> TopicParts | str:
    inner = value.get("topic")
    if not isinstance(inner, dict):
        return "'topic' is not an object"
    name, value_connector = inner.get("name"), inner.get("connector")
    task, timestamp = as_int32(inner.get("task")), as_int64(inner.get("discoverTimestamp"))
    if not isinstance(name, str) or not isinstance(value_connector, str):
        return "'name' and 'connector' must be strings"
    if task is None or timestamp is None:
        return "'task' and 'discoverTimestamp' must be integers"
    return (
        topic,
        connector,
        task,
        timestamp,
        None if name == topic else name,
        None if value_connector == connector else value_connector,
    )


def decode_topic_status(key: bytes | None, value: bytes | None) -> TopicParts | tuple[str, str] | None:
    """``decode_status`` of a well-formed topic status record (KIP-558) without building its objects, for
    a reader of millions of them: the fields of its ``TopicStatus`` (``TopicParts``), ``(topic,
    connector)`` for its tombstone, ``None`` for any other record (another kind of key, a value orjson
    does not read, a malformed topic status record: ``decode_status`` says what it is).

    The rules of ``_split_topic_key`` and ``_topic_parts`` inlined (a function call costs as much as a
    check here); tests/unit/codecs/test_fast_paths.py proves it gives what ``decode_status`` gives."""
    if key is None or not key.startswith(_TOPIC_PREFIX_BYTES):
        return None
    try:
        text = key.decode()
    except UnicodeDecodeError:
        return None
    colon = text.find(":")
    topic, connector = text[_TOPIC_START:colon], text[colon + _SEPARATOR_LENGTH :]
    if colon < _TOPIC_START or not topic or not connector:
        return None
    if value is None:
        return topic, connector
    try:
        data = json_wire.orjson_loads(value)  # exact types: dict, str, int (never bool or a subclass)
    except ValueError:
        return None
    inner = data.get("topic") if type(data) is dict else None
    if type(inner) is not dict:
        return None
    name, value_connector, task, discovered = (
        inner.get("name"),
        inner.get("connector"),
        inner.get("task"),
        inner.get("discoverTimestamp"),
    )
    if (
        type(name) is not str
        or type(value_connector) is not str
        or type(task) is not int
        or type(discovered) is not int
        or not (INT32_MIN <= task <= INT32_MAX and INT64_MIN <= discovered <= INT64_MAX)
    ):
        return None
    return (
        topic,
        connector,
        task,
        discovered,
        None if name == topic else name,
        None if value_connector == connector else value_connector,
    )


def decode_status(key: bytes | None, value: bytes | None) -> StatusDecoded:
    """Decode one status-topic record; never raises."""
    parsed = parse_status_key(key)
    if not isinstance(parsed, StatusKey):
        return parsed
    if value is None:
        return Tombstone(parsed)
    data, error = json_wire.loads_fast(value)
    if error is not None:
        return Malformed(error, key)
    if not isinstance(data, dict):
        return Malformed("value is not a JSON object", key)
    if parsed.kind is StatusKind.TOPIC:
        parts = _topic_parts(parsed.topic or "", parsed.connector, data)
        return Malformed(parts, key) if isinstance(parts, str) else TopicStatus(*parts)
    record = _decode_state(parsed, data)
    return Malformed(record, key) if isinstance(record, str) else record


def status_key_of(record: StatusRecord) -> StatusKey:
    if isinstance(record, ConnectorStatus):
        return StatusKey(StatusKind.CONNECTOR, record.connector)
    if isinstance(record, TaskStatus):
        return StatusKey(StatusKind.TASK, record.connector, record.task)
    return StatusKey(StatusKind.TOPIC, record.connector, topic=record.topic)


def _value_of(record: StatusRecord) -> dict[str, object]:
    if isinstance(record, TopicStatus):
        inner = {
            "name": record.topic if record.name is None else record.name,
            "connector": record.connector if record.value_connector is None else record.value_connector,
            "task": record.task,
            "discoverTimestamp": record.discover_timestamp,
        }
        return {"topic": inner}
    value: dict[str, object] = {
        "state": record.state,
        "trace": record.trace,
        "worker_id": record.worker_id,
        "generation": record.generation,
    }
    if record.version_field or record.version is not None:
        value["version"] = record.version
    return value


def encode_status(record: StatusRecord | Tombstone[StatusKey]) -> tuple[bytes, bytes | None]:
    """The (key, value) bytes a worker writes for ``record``; value ``None`` for a tombstone."""
    if isinstance(record, Tombstone):
        return record.key.to_bytes(), None
    return status_key_of(record).to_bytes(), json_wire.dumps(_value_of(record))
