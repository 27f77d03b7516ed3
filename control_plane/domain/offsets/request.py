"""The body of ``PATCH /connectors/{c}/offsets`` (KIP-875) where the sidecar alters offsets itself (a
worker that does the job gets the bytes as they came, and checks them), checked before anything is written,
and the Java map order the worker writes offsets in. Pure functions.

The body is Connect's ``rest/entities/ConnectorOffsets``: ``{"offsets": [{"partition": {..},
"offset": {..} | null}, ..]}``. Checked in Connect 4.3.1's order and with its status codes (measured on the
worker): a body its JSON binding (Jackson) cannot read into that entity is 500 (``UnreadableBody``; the
sidecar's message names the entry and the key, Jackson's names a line and column), an empty body or
``null`` is the worker's 500 ``NullPointerException`` message, no offsets is 400 (ConnectorsResource
``alterConnectorOffsets``); the contents are checked later (after the connector's state, as
DistributedHerder.modifyConnectorOffsets does), per connector type, with Connect's messages word for word:
``SinkUtils.parseSinkConnectorOffsets`` (400), then what the worker's admin client refuses (500,
``SinkOffsetsRefused``) for sinks; ``Worker.normalizeSourceConnectorOffsets`` (``OffsetUtils.validateFormat``,
500) for sources. Nothing stricter than the worker: a source entry without a partition is written under the
key ``[name, null]``, as the newest worker does for a connector without its own ``alterOffsets`` hook.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from ...codecs import json_wire
from ...codecs.javalang import INT32_BOUNDS, INT64_BOUNDS, INT64_MAX, INT64_MIN, java_string, java_value_as_int
from ..errors import BadRequestError, OperationFailed, UnreadableBody
from .messages import sink_alter_failed, sink_modify_failed

# ConnectorsResource.alterConnectorOffsets
NO_OFFSETS = "Partitions / offsets need to be provided for an alter offsets request"
# what 4.3.1 answers (500) for a null entry, and for no entity at all (an empty body or ``null``): the
# worker's NullPointerException messages (Java 17's helpful messages)
_ENTITIES = "org.apache.kafka.connect.runtime.rest.entities"
NULL_ENTRY = f'Cannot invoke "{_ENTITIES}.ConnectorOffset.partition()" because "offset" is null'
NO_ENTITY = f'Cannot invoke "{_ENTITIES}.ConnectorOffsets.offsets()" because "offsets" is null'
# Jackson's answer (500) to a second "offsets" key: the entity's list has no setter to take it
DUPLICATE_OFFSETS = (
    "Should never call `set()` on setterless property ('offsets') (through reference chain: "
    f'{_ENTITIES}.ConnectorOffsets["offsets"])'
)
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
    if _top_level_keys(body).count("offsets") > 1:
        raise UnreadableBody(DUPLICATE_OFFSETS)
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


def _top_level_keys(body: bytes) -> list[str]:
    """The keys of the body's object as written, a repeated one as often as it is (the decoded dict keeps
    the last); the body is known to be a JSON object."""
    try:
        pairs = json.loads(body, object_pairs_hook=lambda items: items)
    except (ValueError, RecursionError):  # json_wire read it: not expected
        return []
    return [key for key, _ in pairs] if isinstance(pairs, list) else []


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


def _java_type(value: object) -> str:
    """What ``OffsetUtils.validateFormat`` names a value Jackson read that is no Connect primitive: the
    schema type of a map or a list, the class of a number beyond a long (Jackson's BigInteger)."""
    if isinstance(value, dict):
        return "MAP"
    if isinstance(value, list):
        return "ARRAY"
    return "class java.math.BigInteger"


def _check_primitives(values: Mapping[str, Any]) -> None:
    """OffsetUtils.validateFormat: string keys (JSON guarantees them), primitive values (DataException: 500)."""
    for key, value in values.items():
        big = isinstance(value, int) and not isinstance(value, bool) and not INT64_MIN <= value <= INT64_MAX
        if isinstance(value, list | dict) or big:
            raise OperationFailed(
                f"Offsets may only contain primitive types as values, but field {key} contains {_java_type(value)}"
            )


def check_source_entries(entries: Sequence[OffsetEntry]) -> None:
    """A source connector's entries (Worker.normalizeSourceConnectorOffsets): values primitive, the
    partition's then the offset's, with Connect's message (500). A missing or null partition passes
    (OffsetUtils.validateFormat takes null): the newest worker hands it to the connector's ``alterOffsets``,
    which for a connector without its own hook accepts it, and writes it under the key ``[name, null]``."""
    for entry in entries:
        if entry.partition is not None:
            _check_primitives(entry.partition)
        if entry.offset is not None:
            _check_primitives(entry.offset)


class SinkOffsetsRefused(Exception):
    """Sink offsets the worker's admin client refuses after the body was read: Connect answers 500 with a
    message naming the connector (``message``); the offsets feature, which knows the name, raises it."""

    def __init__(self, step: Literal["modify", "alter"]) -> None:
        super().__init__(step)
        self.step = step

    def message(self, name: str) -> str:
        return sink_modify_failed(name) if self.step == "modify" else sink_alter_failed(name)


def parse_sink_entries(entries: Sequence[OffsetEntry]) -> tuple[SinkOffsetEntry, ...]:
    """SinkUtils.parseSinkConnectorOffsets (400, its messages), then ``new OffsetAndMetadata`` of each
    offset (Worker.alterSinkConnectorOffsets: a negative one fails the request before any write, 500); a
    partition given twice: the last entry wins, as in Connect's map."""
    parsed: dict[tuple[str, int], SinkOffsetEntry] = {}
    for entry in entries:
        partition = entry.partition
        if partition is None:
            raise BadRequestError("The partition for a sink connector offset cannot be null or missing")
        if KAFKA_TOPIC_KEY not in partition or KAFKA_PARTITION_KEY not in partition:
            raise BadRequestError(
                f"The partition for a sink connector offset must contain the keys "
                f"'{KAFKA_TOPIC_KEY}' and '{KAFKA_PARTITION_KEY}'"
            )
        raw_topic, number = partition[KAFKA_TOPIC_KEY], partition[KAFKA_PARTITION_KEY]
        if raw_topic is None:
            raise BadRequestError("Kafka topic names must be valid strings and may not be null")
        if number is None:
            raise BadRequestError("Kafka partitions must be valid numbers and may not be null")
        topic = java_string(raw_topic)  # String.valueOf: a topic the broker then refuses, not a 400
        kafka_partition = java_value_as_int(number, INT32_BOUNDS)
        if kafka_partition is None:
            raise BadRequestError(
                f"Failed to parse the following Kafka partition value in the provided offsets: "
                f"'{java_string(number)}'. Partition values for sink connectors need to be integers."
            )
        kafka_offset: int | None = None
        if entry.offset is not None:
            if KAFKA_OFFSET_KEY not in entry.offset:
                raise BadRequestError(
                    f"The offset for a sink connector should either be null or contain the key '{KAFKA_OFFSET_KEY}'"
                )
            raw = entry.offset[KAFKA_OFFSET_KEY]
            kafka_offset = java_value_as_int(raw, INT64_BOUNDS)
            if kafka_offset is None:
                raise BadRequestError(
                    f"Failed to parse the following Kafka offset value in the provided offsets: "
                    f"'{java_string(raw)}'. Offset values for sink connectors need to be integers."
                )
        parsed.pop((topic, kafka_partition), None)
        parsed[(topic, kafka_partition)] = SinkOffsetEntry(entry.index, topic, kafka_partition, kafka_offset)
    if any(e.offset is not None and e.offset < 0 for e in parsed.values()):
        raise SinkOffsetsRefused("modify")  # OffsetAndMetadata: "Invalid negative offset"
    return tuple(parsed.values())


def check_sink_topics(entries: Sequence[SinkOffsetEntry], partition_counts: Mapping[str, int | None]) -> None:
    """Every entry names a partition of a topic that exists: else the worker's admin client fails to alter or
    delete the group's offsets (500, ``SinkOffsetsRefused``); nothing is written."""
    for entry in entries:
        count = partition_counts.get(entry.topic)
        if count is None or not 0 <= entry.partition < count:
            raise SinkOffsetsRefused("alter")


__all__ = [
    "DUPLICATE_OFFSETS",
    "KAFKA_OFFSET_KEY",
    "KAFKA_PARTITION_KEY",
    "KAFKA_TOPIC_KEY",
    "NO_ENTITY",
    "NO_OFFSETS",
    "OffsetEntry",
    "SinkOffsetEntry",
    "SinkOffsetsRefused",
    "check_sink_topics",
    "check_source_entries",
    "parse_alter_request",
    "parse_sink_entries",
]
