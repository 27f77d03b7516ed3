"""Records of the config topic (``config.storage.topic``).

Mirrors org.apache.kafka.connect.storage.KafkaConfigBackingStore (3.4 to 4.3): keys are plain UTF-8
strings, matched by prefix in the worker's order; values are the JsonConverter form of its structs
(CONNECTOR_CONFIGURATION_V0, CONNECTOR_TASKS_COMMIT_V0, TARGET_STATE_V0/V1, RESTART_REQUEST_V0,
TASK_COUNT_RECORD_V0, SESSION_KEY_V0, LOGGER_LEVEL_V0), fields in schema order.

Target states on the wire are ``STARTED``, ``PAUSED`` and ``STOPPED``. Workers before 3.5 write
``{"state":"PAUSED"}``; 3.5+ always write both fields, ``{"state":"STARTED","state.v2":"STARTED"}``,
and STOPPED as ``{"state":"PAUSED","state.v2":"STOPPED"}`` so that old workers pause.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import TypeAlias

from . import json_wire
from .javalang import as_int32, as_int64, java_parse_int, java_split_dash, key_text
from .results import Malformed, Tombstone, UnknownKey


class ConfigKind(StrEnum):
    """Key prefixes, in the order KafkaConfigBackingStore tests them."""

    TARGET_STATE = "target-state-"
    CONNECTOR = "connector-"
    TASK = "task-"
    COMMIT = "commit-"
    RESTART = "restart-connector-"
    TASK_COUNT = "tasks-fencing-"
    SESSION_KEY = "session-key"  # the whole key, not a prefix
    LOGGER = "logger-cluster-"


@dataclass(frozen=True)
class ConfigKey:
    kind: ConfigKind
    name: str = ""  # connector name; the logging namespace for LOGGER; "" for SESSION_KEY
    task: int | None = None  # only for TASK

    def to_bytes(self) -> bytes:
        if self.kind is ConfigKind.SESSION_KEY:
            return b"session-key"
        suffix = f"-{self.task}" if self.kind is ConfigKind.TASK else ""
        return f"{self.kind.value}{self.name}{suffix}".encode()


@dataclass(frozen=True)
class ConnectorConfig:
    connector: str
    properties: Mapping[str, str | None]


@dataclass(frozen=True)
class TaskConfig:
    connector: str
    task: int
    properties: Mapping[str, str | None]


@dataclass(frozen=True)
class TaskCommit:
    connector: str
    tasks: int


@dataclass(frozen=True)
class TargetState:
    connector: str
    state: str | None  # the field every worker reads; PAUSED stands in for STOPPED
    state_v2: str | None = None  # 3.5+: the real state; absent in records of older workers

    @property
    def effective(self) -> str:
        """The state a 3.5+ worker applies: ``state.v2`` when present, else ``state``."""
        return self.state_v2 if self.state_v2 is not None else self.state or ""

    @classmethod
    def of(cls, connector: str, state: str, *, two_fields: bool = True) -> TargetState:
        """What a worker writes for ``state``: the 3.5+ two-field form, or the pre-3.5 form."""
        if two_fields:
            return cls(connector, "PAUSED" if state == "STOPPED" else state, state)
        return cls(connector, state)


@dataclass(frozen=True)
class RestartRecord:
    """``restart-connector-<c>``: a restart request (KafkaConfigBackingStore's RestartRequest record), which
    the leader carries out."""

    connector: str
    include_tasks: bool = False
    only_failed: bool = False


@dataclass(frozen=True)
class TaskCountRecord:
    """``tasks-fencing-<c>``: the task count used for zombie fencing (exactly-once source support)."""

    connector: str
    task_count: int


@dataclass(frozen=True)
class SessionKey:
    key: str  # base64, as written
    algorithm: str
    creation_timestamp: int

    @property
    def key_bytes(self) -> bytes:
        return base64.b64decode(self.key)


@dataclass(frozen=True)
class LoggerLevelRecord:
    """``logger-cluster-<namespace>``: a cluster-wide log level (3.7+)."""

    namespace: str
    level: str


ConfigRecord: TypeAlias = (
    ConnectorConfig
    | TaskConfig
    | TaskCommit
    | TargetState
    | RestartRecord
    | TaskCountRecord
    | SessionKey
    | LoggerLevelRecord
)
ConfigDecoded: TypeAlias = ConfigRecord | Tombstone[ConfigKey] | UnknownKey | Malformed


def parse_config_key(key: bytes | None) -> ConfigKey | UnknownKey | Malformed:
    text = key_text(key)
    if key is None or text is None:
        return Malformed("config key is missing or not UTF-8", key)
    if text == ConfigKind.SESSION_KEY.value:
        return ConfigKey(ConfigKind.SESSION_KEY)
    for kind in ConfigKind:
        if kind is ConfigKind.SESSION_KEY or not text.startswith(kind.value):
            continue
        if kind is not ConfigKind.TASK:
            return ConfigKey(kind, text[len(kind.value) :])
        # KafkaConfigBackingStore.parseTaskId: split on '-', last part the task number
        parts = java_split_dash(text)
        task = java_parse_int(parts[-1]) if len(parts) >= 3 else None
        if task is None:
            return Malformed("task config key without a task number", key)
        return ConfigKey(kind, "-".join(parts[1:-1]), task)
    return UnknownKey(key)


def _properties(value: object) -> Mapping[str, str | None] | None:
    if not isinstance(value, dict) or not isinstance(props := value.get("properties"), dict):
        return None
    return props if all(v is None or isinstance(v, str) for v in props.values()) else None


def _decode_value(key: ConfigKey, value: object) -> ConfigRecord | str:
    """The record, or the reason the worker would reject the value."""
    if not isinstance(value, dict):
        return "value is not a JSON object"
    name, kind = key.name, key.kind
    if kind in (ConfigKind.CONNECTOR, ConfigKind.TASK):
        props = _properties(value)
        if props is None:
            return "'properties' is not a map of strings"
        return ConnectorConfig(name, props) if kind is ConfigKind.CONNECTOR else TaskConfig(name, key.task or 0, props)
    if kind in (ConfigKind.COMMIT, ConfigKind.TASK_COUNT):
        field = "tasks" if kind is ConfigKind.COMMIT else "task-count"
        count = as_int32(value.get(field))
        if count is None:
            return f"'{field}' is not an integer"
        return TaskCommit(name, count) if kind is ConfigKind.COMMIT else TaskCountRecord(name, count)
    if kind is ConfigKind.TARGET_STATE:
        state, v2 = value.get("state"), value.get("state.v2")
        state = state if isinstance(state, str) else None
        v2 = v2 if isinstance(v2, str) else None
        if state is None and v2 is None:
            return "neither 'state' nor 'state.v2' is a string"
        return TargetState(name, state, v2)
    if kind is ConfigKind.RESTART:
        # recordToRestartRequest: a field that is not a boolean defaults to false
        tasks, failed = value.get("include-tasks"), value.get("only-failed")
        return RestartRecord(
            name, tasks if isinstance(tasks, bool) else False, failed if isinstance(failed, bool) else False
        )
    if kind is ConfigKind.SESSION_KEY:
        secret, algorithm, created = value.get("key"), value.get("algorithm"), as_int64(value.get("creation-timestamp"))
        if not isinstance(secret, str) or not isinstance(algorithm, str) or created is None:
            return "session key needs string 'key' and 'algorithm' and integer 'creation-timestamp'"
        try:
            base64.b64decode(secret, validate=True)
        except ValueError:  # binascii.Error, or a character beyond ASCII
            return "session key 'key' is not base64"
        return SessionKey(secret, algorithm, created)
    level = value.get("level")
    if not isinstance(level, str):
        return "'level' is not a string"
    return LoggerLevelRecord(name, level)


def decode_config(key: bytes | None, value: bytes | None) -> ConfigDecoded:
    """Decode one config-topic record; never raises."""
    parsed = parse_config_key(key)
    if not isinstance(parsed, ConfigKey):
        return parsed
    if value is None:
        return Tombstone(parsed)
    data, error = json_wire.loads_fast(value)  # no value keeps a float or an integer beyond a long
    if error is not None:
        return Malformed(error, key)
    record = _decode_value(parsed, data)
    return Malformed(record, key) if isinstance(record, str) else record


def config_key_of(record: ConfigRecord) -> ConfigKey:
    match record:
        case ConnectorConfig():
            return ConfigKey(ConfigKind.CONNECTOR, record.connector)
        case TaskConfig():
            return ConfigKey(ConfigKind.TASK, record.connector, record.task)
        case TaskCommit():
            return ConfigKey(ConfigKind.COMMIT, record.connector)
        case TargetState():
            return ConfigKey(ConfigKind.TARGET_STATE, record.connector)
        case RestartRecord():
            return ConfigKey(ConfigKind.RESTART, record.connector)
        case TaskCountRecord():
            return ConfigKey(ConfigKind.TASK_COUNT, record.connector)
        case SessionKey():
            return ConfigKey(ConfigKind.SESSION_KEY)
        case LoggerLevelRecord():
            return ConfigKey(ConfigKind.LOGGER, record.namespace)
    raise TypeError(f"not a config record: {record!r}")


def _value_of(record: ConfigRecord) -> dict[str, object]:
    match record:
        case ConnectorConfig() | TaskConfig():
            return {"properties": record.properties}
        case TaskCommit():
            return {"tasks": record.tasks}
        case TargetState():
            value: dict[str, object] = {} if record.state is None else {"state": record.state}
            return value if record.state_v2 is None else {**value, "state.v2": record.state_v2}
        case RestartRecord():
            return {"include-tasks": record.include_tasks, "only-failed": record.only_failed}
        case TaskCountRecord():
            return {"task-count": record.task_count}
        case SessionKey():
            return {"key": record.key, "algorithm": record.algorithm, "creation-timestamp": record.creation_timestamp}
        case LoggerLevelRecord():
            return {"level": record.level}
    raise TypeError(f"not a config record: {record!r}")


def encode_config(record: ConfigRecord | Tombstone[ConfigKey]) -> tuple[bytes, bytes | None]:
    """The (key, value) bytes a worker writes for ``record``; value ``None`` for a tombstone."""
    if isinstance(record, Tombstone):
        return record.key.to_bytes(), None
    return config_key_of(record).to_bytes(), json_wire.dumps(_value_of(record))
