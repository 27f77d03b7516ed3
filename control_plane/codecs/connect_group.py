"""Connect's group membership protocol, read from the bytes a ``DescribeGroups`` of the workers' group
(``group.id``) answers: each member's metadata (the worker's advertised URL and the config-topic offset it
has read) and its assignment (who leads, at which URL, and what the member runs).

Mirrors Connect's ``ConnectProtocol`` (version 0, the ``default`` protocol) and
``IncrementalCooperativeConnectProtocol`` (versions 1 and 2, ``compatible`` and ``sessioned``):

- metadata: ``version`` INT16, ``url`` STRING, ``config-offset`` INT64, then from version 1 the member's
  previous allocation (NULLABLE_BYTES), not read here;
- assignment: ``version`` INT16, ``error`` INT16, ``leader`` STRING, ``leader-url`` STRING,
  ``config-offset`` INT64, ``assignment`` [connector STRING, tasks [INT32]] (nullable from version 1), then
  from version 1 ``revoked`` (the same) and ``scheduled-delay`` INT32. A task -1 is the connector itself
  (``ConnectProtocol.CONNECTOR_TASK``).

Kafka's protocol types: STRING is an INT16 length and UTF-8 bytes; an array an INT32 count (-1: null);
integers big-endian. Pure: no I/O, shared with the Spark jobs.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

CONNECTOR_TASK = -1  # ConnectProtocol.CONNECTOR_TASK: the connector's own entry in a tasks array


class GroupRecordError(ValueError):
    """Bytes that are not Connect's group protocol (another group's, or a newer version's)."""


@dataclass(frozen=True)
class WorkerMetadata:
    version: int
    url: str
    config_offset: int


@dataclass(frozen=True)
class WorkerAssignment:
    version: int
    error: int  # 0: none; 1: CONFIG_MISMATCH (ConnectProtocol.Assignment)
    leader: str  # the leader's member id
    leader_url: str
    config_offset: int
    connectors: tuple[str, ...]
    tasks: tuple[tuple[str, int], ...]


class _Reader:
    def __init__(self, data: bytes) -> None:
        self._data, self._at = data, 0

    def _take(self, fmt: str) -> int:
        size = struct.calcsize(fmt)
        if self._at + size > len(self._data):
            raise GroupRecordError(f"truncated at byte {self._at}")
        (value,) = struct.unpack_from(fmt, self._data, self._at)
        self._at += size
        return int(value)

    def int16(self) -> int:
        return self._take(">h")

    def int32(self) -> int:
        return self._take(">i")

    def int64(self) -> int:
        return self._take(">q")

    def string(self) -> str:
        size = self.int16()
        if size < 0 or self._at + size > len(self._data):
            raise GroupRecordError(f"a string of {size} bytes at byte {self._at}")
        text = self._data[self._at : self._at + size].decode("utf-8", "replace")
        self._at += size
        return text

    def at_end(self) -> bool:
        return self._at >= len(self._data)


def decode_metadata(data: bytes) -> WorkerMetadata:
    reader = _Reader(data)
    version = reader.int16()
    if version < 0:
        raise GroupRecordError(f"unsupported Connect protocol version {version}")
    return WorkerMetadata(version, reader.string(), reader.int64())


def decode_assignment(data: bytes) -> WorkerAssignment:
    reader = _Reader(data)
    version = reader.int16()
    if version < 0:
        raise GroupRecordError(f"unsupported Connect protocol version {version}")
    error, leader, leader_url, config_offset = reader.int16(), reader.string(), reader.string(), reader.int64()
    connectors: list[str] = []
    tasks: list[tuple[str, int]] = []
    count = 0 if reader.at_end() else reader.int32()
    for _ in range(max(count, 0)):
        connector = reader.string()
        for _ in range(max(reader.int32(), 0)):
            task = reader.int32()
            if task == CONNECTOR_TASK:
                connectors.append(connector)
            else:
                tasks.append((connector, task))
    return WorkerAssignment(version, error, leader, leader_url, config_offset, tuple(connectors), tuple(tasks))


def _string(text: str) -> bytes:
    raw = text.encode()
    return struct.pack(">h", len(raw)) + raw


def encode_metadata(metadata: WorkerMetadata) -> bytes:
    """As a worker of ``metadata.version`` writes it (from version 1 with no previous allocation)."""
    out = struct.pack(">h", metadata.version) + _string(metadata.url) + struct.pack(">q", metadata.config_offset)
    return out + (struct.pack(">i", -1) if metadata.version >= 1 else b"")


def encode_assignment(assignment: WorkerAssignment) -> bytes:
    """As a leader of ``assignment.version`` writes it (from version 1 with nothing revoked, no delay)."""
    by_connector: dict[str, list[int]] = {}
    for connector in assignment.connectors:
        by_connector.setdefault(connector, []).append(CONNECTOR_TASK)
    for connector, task in assignment.tasks:
        by_connector.setdefault(connector, []).append(task)
    out = struct.pack(">hh", assignment.version, assignment.error)
    out += _string(assignment.leader) + _string(assignment.leader_url) + struct.pack(">q", assignment.config_offset)
    out += struct.pack(">i", len(by_connector))
    for connector, ids in by_connector.items():
        out += _string(connector) + struct.pack(">i", len(ids)) + b"".join(struct.pack(">i", i) for i in ids)
    if assignment.version >= 1:
        out += struct.pack(">i", 0) + struct.pack(">i", 0)
    return out


__all__ = [
    "CONNECTOR_TASK",
    "GroupRecordError",
    "WorkerAssignment",
    "WorkerMetadata",
    "decode_assignment",
    "decode_metadata",
    "encode_assignment",
    "encode_metadata",
]
