"""Records of the offsets topic (``offset.storage.topic``, or a connector's own offsets topic).

Source offsets are written by OffsetStorageWriter through the worker's internal key and value converters
(JsonConverter, schemas disabled): the key is ``[<connector>, <partition map>]`` and the value the offset
map, compact JSON with map keys in the connector's order. The worker looks offsets up by the exact key
bytes, so a key must be re-encoded with the same key order (decoded maps keep it). A null value deletes
the partition's offset (KIP-875). Keys are read back as OffsetUtils.processPartitionKey does: a list of
exactly two elements, a string and a map (or null). The producer's default partitioner places each record
at ``toPositive(murmur2(key)) % partitions`` (see :mod:`.murmur2`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, TypeAlias

from . import json_wire
from .murmur2 import partition_for_key
from .results import Malformed, Tombstone

__all__ = [
    "OffsetDecoded",
    "OffsetKey",
    "SourceOffset",
    "decode_offset",
    "encode_offset",
    "parse_offset_key",
    "parse_offset_value",
    "partition_for_key",
]


@dataclass(frozen=True)
class OffsetKey:
    connector: str
    partition: Mapping[str, Any] | None  # the source partition, in the order the connector built it

    def to_bytes(self) -> bytes:
        return json_wire.dumps([self.connector, self.partition])


@dataclass(frozen=True)
class SourceOffset:
    connector: str
    partition: Mapping[str, Any] | None
    offset: Mapping[str, Any]

    @property
    def key(self) -> OffsetKey:
        return OffsetKey(self.connector, self.partition)


OffsetDecoded: TypeAlias = SourceOffset | Tombstone[OffsetKey] | Malformed


def parse_offset_key(key: bytes | None) -> OffsetKey | Malformed:
    if key is None:
        return Malformed("offset key is missing", key)
    data, error = json_wire.loads(key)
    if error is not None:
        return Malformed(f"offset key {error}", key)
    if not isinstance(data, list) or len(data) != 2:
        return Malformed("offset key is not a list of two elements", key)
    connector, partition = data
    if not isinstance(connector, str):
        return Malformed("offset key's first element is not a string", key)
    if partition is not None and not isinstance(partition, dict):
        return Malformed("offset key's second element is not a map", key)
    return OffsetKey(connector, partition)


def decode_offset(key: bytes | None, value: bytes | None) -> OffsetDecoded:
    """Decode one offsets-topic record; never raises."""
    parsed = parse_offset_key(key)
    if isinstance(parsed, Malformed):
        return parsed
    if value is None:
        return Tombstone(parsed)
    offset = parse_offset_value(value)
    if isinstance(offset, str):
        return Malformed(offset, key)
    return SourceOffset(parsed.connector, parsed.partition, offset)


def parse_offset_value(value: bytes) -> dict[str, Any] | str:
    """An offset value on its own (a non-null value): the offset map, or why the worker rejects it. The
    Spark jobs decode each distinct key once and the values apart, with this same rule."""
    data, error = json_wire.loads(value)
    if error is not None:
        return f"offset value {error}"
    if not isinstance(data, dict):
        return "offset value is not a JSON object"
    return data


def encode_offset(record: SourceOffset | Tombstone[OffsetKey]) -> tuple[bytes, bytes | None]:
    """The (key, value) bytes a worker writes for ``record``; value ``None`` for a tombstone."""
    if isinstance(record, Tombstone):
        return record.key.to_bytes(), None
    return record.key.to_bytes(), json_wire.dumps(record.offset)
