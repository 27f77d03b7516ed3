"""The body of ``PATCH /connectors/{c}/offsets`` (KIP-875), checked before anything is written or
forwarded, and the Java map order the worker writes offsets in. Pure functions.

The body is Connect's ``rest/entities/ConnectorOffsets``: ``{"offsets": [{"partition": {..},
"offset": {..} | null}, ..]}``. Checked in Connect 4.3.1's order and with its status codes (measured on the
worker): a body its JSON binding (Jackson) cannot read into that entity is 500 (``UnreadableBody``; the
sidecar's message names the entry and the key, Jackson's names a line and column), an empty body or
``null`` is the worker's 500 ``NullPointerException`` message, no offsets is 400 (ConnectorsResource
``alterConnectorOffsets``); the contents are checked later, per connector type:
``SinkUtils.parseSinkConnectorOffsets`` (400) for sinks, ``OffsetUtils.validateFormat`` for sources.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ...codecs import json_wire
from ...codecs.javalang import INT32_BOUNDS, INT64_BOUNDS, INT64_MAX, INT64_MIN, java_string, java_value_as_int
from ..errors import BadRequestError, UnreadableBody

# ConnectorsResource.alterConnectorOffsets
NO_OFFSETS = "Partitions / offsets need to be provided for an alter offsets request"
# what 4.3.1 answers (500) for a null entry, and for no entity at all (an empty body or ``null``): the
# worker's NullPointerException messages (Java 17's helpful messages)
_ENTITIES = "org.apache.kafka.connect.runtime.rest.entities"
NULL_ENTRY = f'Cannot invoke "{_ENTITIES}.ConnectorOffset.partition()" because "offset" is null'
NO_ENTITY = f'Cannot invoke "{_ENTITIES}.ConnectorOffsets.offsets()" because "offsets" is null'
# SinkUtils
KAFKA_TOPIC_KEY = "kafka_topic"
KAFKA_PARTITION_KEY = "kafka_partition"
KAFKA_OFFSET_KEY = "kafka_offset"
ENTRY_KEYS = ("partition", "offset")


@dataclass(frozen=True)
class OffsetEntry:
    """One entry of the body; ``offset`` None resets the partition."""

    index: int
    partition: Mapping[str, Any] | None
    offset: Mapping[str, Any] | None

    @property
    def where(self) -> str:
        return f"offsets[{self.index}]"


@dataclass(frozen=True)
class SinkOffsetEntry:
    index: int
    topic: str
    partition: int
    offset: int | None  # None: delete the group's offset of this partition


def json_type(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return "an object"


def parse_alter_request(body: bytes) -> tuple[OffsetEntry, ...]:
    """The entries of a PATCH body, or the error Connect 4.3.1 answers for it: ``UnreadableBody`` (500)
    where its binding fails, ``BadRequestError`` (400) for no offsets. Nothing stricter than that binding:
    an entry may lack its partition or offset (the later checks say what they need)."""
    data, error = json_wire.loads(body)
    if not body.strip() or (error is None and data is None):
        raise UnreadableBody(NO_ENTITY)
    if error is not None:
        raise UnreadableBody(f'The request body is not valid JSON ({error}); expected {{"offsets": [...]}}')
    if not isinstance(data, dict):
        raise UnreadableBody(f"The request body must be a JSON object with the key 'offsets', not {json_type(data)}")
    unknown = sorted(set(data) - {"offsets"})
    if unknown:
        raise UnreadableBody(f"The request body has the unknown key '{unknown[0]}'; the only key is 'offsets'")
    offsets = data.get("offsets")
    if offsets is not None and not isinstance(offsets, list):
        raise UnreadableBody(
            '\'offsets\' must be an array of {"partition": {...}, "offset": {...}} objects, '
            f"not {json_type(offsets)}"
        )
    entries = [_entry(index, item) for index, item in enumerate(offsets or [])]
    if not entries:
        raise BadRequestError(NO_OFFSETS)
    return tuple(entries)


def _entry(index: int, item: object) -> OffsetEntry:
    where = f"offsets[{index}]"
    if item is None:  # ConnectorOffsets.toMap on a null entry, as 4.3.1 says it
        raise UnreadableBody(NULL_ENTRY)
    if not isinstance(item, dict):
        raise UnreadableBody(f"{where} must be an object with the keys 'partition' and 'offset', not {json_type(item)}")
    extra = [k for k in item if k not in ENTRY_KEYS]
    if extra:
        raise UnreadableBody(f"{where} has the unknown key '{extra[0]}'; an entry has only 'partition' and 'offset'")
    partition, offset = item.get("partition"), item.get("offset")
    if partition is not None and not isinstance(partition, dict):
        raise UnreadableBody(f"{where}.partition must be an object, not {json_type(partition)}")
    if offset is not None and not isinstance(offset, dict):
        raise UnreadableBody(
            f"{where}.offset must be an object or null (to reset the partition), not {json_type(offset)}"
        )
    return OffsetEntry(index, partition, offset)


def _check_primitives(where: str, values: Mapping[str, Any]) -> None:
    """OffsetUtils.validateFormat: string keys (JSON guarantees them), primitive values."""
    for key, value in values.items():
        if isinstance(value, list | dict):
            kind = "ARRAY" if isinstance(value, list) else "MAP"
            raise BadRequestError(
                f"{where}.{key} is {json_type(value)}: offsets may only contain primitive types as values "
                f"(string, number, boolean, null), but field {key} contains {kind}"
            )
        if isinstance(value, int) and not isinstance(value, bool) and not INT64_MIN <= value <= INT64_MAX:
            raise BadRequestError(f"{where}.{key} is {value}, outside the range of a 64-bit integer")


def check_source_entries(entries: Sequence[OffsetEntry]) -> None:
    """A source connector's entries: each partition an object, values primitive (OffsetUtils)."""
    for entry in entries:
        if entry.partition is None:
            raise BadRequestError(f"{entry.where}.partition is missing or null; a source partition is an object")
        _check_primitives(f"{entry.where}.partition", entry.partition)
        if entry.offset is not None:
            _check_primitives(f"{entry.where}.offset", entry.offset)


def parse_sink_entries(entries: Sequence[OffsetEntry]) -> tuple[SinkOffsetEntry, ...]:
    """SinkUtils.parseSinkConnectorOffsets, each message naming its entry; a partition given twice:
    the last entry wins, as in Connect's map."""
    parsed: dict[tuple[str, int], SinkOffsetEntry] = {}
    for entry in entries:
        where, partition = entry.where, entry.partition
        if partition is None:
            raise BadRequestError(f"{where}: The partition for a sink connector offset cannot be null or missing")
        if KAFKA_TOPIC_KEY not in partition or KAFKA_PARTITION_KEY not in partition:
            raise BadRequestError(
                f"{where}: The partition for a sink connector offset must contain the keys "
                f"'{KAFKA_TOPIC_KEY}' and '{KAFKA_PARTITION_KEY}'"
            )
        topic, number = partition[KAFKA_TOPIC_KEY], partition[KAFKA_PARTITION_KEY]
        if topic is None:
            raise BadRequestError(f"{where}: Kafka topic names must be valid strings and may not be null")
        if not isinstance(topic, str) or not topic:
            raise BadRequestError(
                f"{where}.partition.{KAFKA_TOPIC_KEY} must be a non-empty string (a topic name), not {json_type(topic)}"
            )
        if number is None:
            raise BadRequestError(f"{where}: Kafka partitions must be valid numbers and may not be null")
        kafka_partition = java_value_as_int(number, INT32_BOUNDS)
        if kafka_partition is None:
            raise BadRequestError(
                f"{where}: Failed to parse the following Kafka partition value in the provided offsets: "
                f"'{java_string(number)}'. Partition values for sink connectors need to be integers."
            )
        if kafka_partition < 0:
            raise BadRequestError(
                f"{where}.partition.{KAFKA_PARTITION_KEY} is {kafka_partition}; partitions are not negative"
            )
        kafka_offset: int | None = None
        if entry.offset is not None:
            if KAFKA_OFFSET_KEY not in entry.offset:
                raise BadRequestError(
                    f"{where}: The offset for a sink connector should either be null or contain the key "
                    f"'{KAFKA_OFFSET_KEY}'"
                )
            raw = entry.offset[KAFKA_OFFSET_KEY]
            kafka_offset = java_value_as_int(raw, INT64_BOUNDS)
            if kafka_offset is None:
                raise BadRequestError(
                    f"{where}: Failed to parse the following Kafka offset value in the provided offsets: "
                    f"'{java_string(raw)}'. Offset values for sink connectors need to be integers."
                )
            if kafka_offset < 0:
                raise BadRequestError(f"{where}.offset.{KAFKA_OFFSET_KEY} is {kafka_offset}; offsets are not negative")
        parsed.pop((topic, kafka_partition), None)
        parsed[(topic, kafka_partition)] = SinkOffsetEntry(entry.index, topic, kafka_partition, kafka_offset)
    return tuple(parsed.values())


def check_sink_topics(entries: Sequence[SinkOffsetEntry], partition_counts: Mapping[str, int | None]) -> None:
    """Every entry names a partition of a topic that exists (Connect fails such a request with 500)."""
    for entry in entries:
        count = partition_counts.get(entry.topic)
        where = f"offsets[{entry.index}]"
        if count is None:
            raise BadRequestError(f"{where}: the topic '{entry.topic}' does not exist")
        if entry.partition >= count:
            plural = "partition" if count == 1 else "partitions"
            raise BadRequestError(
                f"{where}: partition {entry.partition} of topic '{entry.topic}' does not exist "
                f"(the topic has {count} {plural})"
            )


__all__ = [
    "KAFKA_OFFSET_KEY",
    "KAFKA_PARTITION_KEY",
    "KAFKA_TOPIC_KEY",
    "NO_ENTITY",
    "NO_OFFSETS",
    "OffsetEntry",
    "SinkOffsetEntry",
    "check_sink_topics",
    "check_source_entries",
    "parse_alter_request",
    "parse_sink_entries",
]
