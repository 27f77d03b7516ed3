"""The checks of a KIP-875 alter body and the java.util.HashMap order of the fields the worker writes."""

from __future__ import annotations

import pytest

from control_plane.codecs import OffsetKey, json_wire, partition_for_key
from control_plane.codecs.javalang import canonical_partition as canonical
from control_plane.codecs.javalang import java_hash_map_order, java_string_hash
from control_plane.domain.errors import BadRequestError, OperationFailed, UnreadableBody
from control_plane.domain.offsets.request import (
    DUPLICATE_OFFSETS,
    NO_ENTITY,
    NO_OFFSETS,
    NULL_ENTRY,
    SinkOffsetEntry,
    SinkOffsetsRefused,
    check_sink_topics,
    check_source_entries,
    parse_alter_request,
    parse_sink_entries,
)


@pytest.mark.parametrize(
    ("body", "status", "message"),
    [
        pytest.param(b"", 500, NO_ENTITY, id="empty"),
        pytest.param(b" \n", 500, NO_ENTITY, id="blank"),
        pytest.param(b"null", 500, NO_ENTITY, id="null-body"),
        pytest.param(b"{nope", 500, "The request body is not valid JSON (", id="not-json"),
        pytest.param(
            b'"x"', 500, "The request body must be a JSON object with the key 'offsets', not a string", id="string"
        ),
        pytest.param(
            b'{"offsets":[],"x":1}',
            500,
            "The request body has the unknown key 'x'; the only key is 'offsets'",
            id="extra",
        ),
        pytest.param(b'{"offsets":[{}],"offsets":[]}', 500, DUPLICATE_OFFSETS, id="offsets-twice"),
        pytest.param(b'{"offsets":null,"offsets":[{}]}', 500, DUPLICATE_OFFSETS, id="offsets-twice-null"),
        pytest.param(b"{}", 400, NO_OFFSETS, id="missing"),
        pytest.param(b'{"offsets":null}', 400, NO_OFFSETS, id="null"),
        pytest.param(b'{"offsets":[]}', 400, NO_OFFSETS, id="empty-list"),
        pytest.param(b'{"offsets":{}}', 500, "'offsets' must be an array of", id="object"),
        pytest.param(b'{"offsets":[null]}', 500, NULL_ENTRY, id="null-entry"),
        pytest.param(
            b'{"offsets":[{"partition":{},"offset":null},{"partition":[1],"offset":null}]}',
            500,
            "offsets[1].partition must be an object, not an array",
            id="second-partition",
        ),
        pytest.param(
            b'{"offsets":[{"partition":{},"offset":"0"}]}',
            500,
            "offsets[0].offset must be an object or null (to reset the partition), not a string",
            id="offset-string",
        ),
        pytest.param(
            b'{"offsets":[{"partition":{},"offsets":{}}]}', 500, "offsets[0] has the unknown key 'offsets'", id="typo"
        ),
    ],
)
def test_malformed_bodies_are_refused_with_connects_status_and_named_precisely(
    body: bytes, status: int, message: str
) -> None:
    """Status and order as Connect 4.3.1 answers (measured): what its JSON binding cannot read is 500, an
    empty body or null the worker's NullPointerException message, no offsets 400."""
    with pytest.raises(UnreadableBody if status == 500 else BadRequestError) as caught:
        parse_alter_request(body)
    assert caught.value.message.startswith(message), caught.value.message


def test_a_good_body_keeps_each_maps_order_and_types() -> None:
    (entry, reset) = parse_alter_request(
        b'{"offsets":[{"partition":{"b":1,"a":2.50},"offset":{"position":10}},{"partition":{"f":"x"},"offset":null}]}'
    )
    assert list(entry.partition or {}) == ["b", "a"] and entry.offset == {"position": 10}
    assert json_wire.dumps(entry.partition) == b'{"b":1,"a":2.5}'
    assert (reset.index, reset.offset) == (1, None)


def test_a_source_entry_without_a_partition_passes_as_the_newest_worker_takes_it() -> None:
    """OffsetUtils.validateFormat takes a null partition; a connector without its own hook accepts it."""
    entries = parse_alter_request(b'{"offsets":[{"partition":null,"offset":{"position":1}},{}]}')
    check_source_entries(entries)
    assert [(e.partition, e.offset) for e in entries] == [(None, {"position": 1}), (None, None)]


@pytest.mark.parametrize(
    ("partition", "offset", "message"),
    [
        pytest.param({"f": {"x": 1}}, None, "but field f contains MAP", id="map"),
        pytest.param({"f": "x"}, {"p": [1]}, "but field p contains ARRAY", id="array-offset"),
        pytest.param({"f": 2**64}, None, "but field f contains class java.math.BigInteger", id="big"),
        pytest.param({"f": [1]}, {"p": {"q": 1}}, "but field f contains ARRAY", id="partition-first"),
    ],
)
def test_source_entries_take_primitive_values_only_as_connect_words_it(
    partition: object, offset: object, message: str
) -> None:
    """Worker.normalizeSourceConnectorOffsets (OffsetUtils.validateFormat): a DataException, 500, its
    message word for word (measured on 4.3.1)."""
    body = json_wire.dumps({"offsets": [{"partition": partition, "offset": offset}]})
    with pytest.raises(OperationFailed) as caught:
        check_source_entries(parse_alter_request(body))
    assert caught.value.message == f"Offsets may only contain primitive types as values, {message}"


def test_sink_entries_parse_as_connect_does_numbers_or_strings_last_one_wins() -> None:
    body = json_wire.dumps(
        {
            "offsets": [
                {"partition": {"kafka_topic": "t", "kafka_partition": "1"}, "offset": {"kafka_offset": "10"}},
                {"partition": {"kafka_topic": "t", "kafka_partition": 0}, "offset": None},
                {"partition": {"kafka_topic": "t", "kafka_partition": 1}, "offset": {"kafka_offset": 12}},
            ]
        }
    )
    assert parse_sink_entries(parse_alter_request(body)) == (
        SinkOffsetEntry(1, "t", 0, None),
        SinkOffsetEntry(2, "t", 1, 12),
    )


@pytest.mark.parametrize(
    ("partition", "offset", "message"),
    [
        pytest.param(None, None, "The partition for a sink connector offset cannot be null or missing", id="none"),
        pytest.param(
            {"kafka_partition": 0},
            None,
            "The partition for a sink connector offset must contain the keys 'kafka_topic' and 'kafka_partition'",
            id="no-topic",
        ),
        pytest.param(
            {"kafka_topic": None, "kafka_partition": 0},
            None,
            "Kafka topic names must be valid strings and may not be null",
            id="null-topic",
        ),
        pytest.param(
            {"kafka_topic": "t", "kafka_partition": None},
            None,
            "Kafka partitions must be valid numbers and may not be null",
            id="null-part",
        ),
        pytest.param(
            {"kafka_topic": "t", "kafka_partition": 1.5},
            None,
            "Failed to parse the following Kafka partition value in the provided offsets: '1.5'. "
            "Partition values for sink connectors need to be integers.",
            id="float-part",
        ),
        pytest.param(
            {"kafka_topic": "t", "kafka_partition": True},
            None,
            "Failed to parse the following Kafka partition value in the provided offsets: 'true'. "
            "Partition values for sink connectors need to be integers.",
            id="bool-part",
        ),
        pytest.param(
            {"kafka_topic": "t", "kafka_partition": 2**31},
            None,
            "Failed to parse the following Kafka partition value in the provided offsets: '2147483648'. "
            "Partition values for sink connectors need to be integers.",
            id="int32-overflow",
        ),
        pytest.param(
            {"kafka_topic": "t", "kafka_partition": 0},
            {"kafka_offset": None},
            "Failed to parse the following Kafka offset value in the provided offsets: 'null'. "
            "Offset values for sink connectors need to be integers.",
            id="null-offset",
        ),
        pytest.param(
            {"kafka_topic": "t", "kafka_partition": 0},
            {"offset": 1},
            "The offset for a sink connector should either be null or contain the key 'kafka_offset'",
            id="no-key",
        ),
    ],
)
def test_sink_entries_are_refused_with_connects_messages_word_for_word(
    partition: object, offset: object, message: str
) -> None:
    """SinkUtils.parseSinkConnectorOffsets's BadRequestExceptions (400), no prefix (measured on 4.3.1)."""
    body = json_wire.dumps({"offsets": [{"partition": partition, "offset": offset}]})
    with pytest.raises(BadRequestError) as caught:
        parse_sink_entries(parse_alter_request(body))
    assert caught.value.message == message


@pytest.mark.parametrize(
    "partition",
    [
        pytest.param({"kafka_topic": 5, "kafka_partition": 0}, id="number-topic"),
        pytest.param({"kafka_topic": "", "kafka_partition": 0}, id="empty-topic"),
        pytest.param({"kafka_topic": "t", "kafka_partition": -1}, id="negative-partition"),
    ],
)
def test_what_connect_reads_as_a_topic_partition_is_no_400(partition: dict[str, object]) -> None:
    """String.valueOf of the topic, any int partition: the broker refuses what does not exist, later."""
    body = json_wire.dumps({"offsets": [{"partition": partition, "offset": {"kafka_offset": 1}}]})
    (entry,) = parse_sink_entries(parse_alter_request(body))
    with pytest.raises(SinkOffsetsRefused) as caught:
        check_sink_topics((entry,), {"t": 1})
    assert caught.value.message("c") == "Failed to alter consumer group offsets for connector c"


def test_a_negative_sink_offset_fails_after_every_entry_parsed() -> None:
    """OffsetAndMetadata refuses it in Worker.alterSinkConnectorOffsets, once SinkUtils has read every entry:
    a later entry's 400 comes first, else 500 "Failed to modify offsets for sink connector <c>"."""
    negative = {"partition": {"kafka_topic": "t", "kafka_partition": 0}, "offset": {"kafka_offset": -1}}
    unreadable = {"partition": {"kafka_topic": "t"}, "offset": None}
    with pytest.raises(BadRequestError):
        parse_sink_entries(parse_alter_request(json_wire.dumps({"offsets": [negative, unreadable]})))
    with pytest.raises(SinkOffsetsRefused) as caught:
        parse_sink_entries(parse_alter_request(json_wire.dumps({"offsets": [negative]})))
    assert caught.value.message("c") == "Failed to modify offsets for sink connector c"


def test_sink_topics_and_partitions_must_exist() -> None:
    entries = (SinkOffsetEntry(0, "t", 0, 1), SinkOffsetEntry(3, "t", 2, 1))
    with pytest.raises(SinkOffsetsRefused):
        check_sink_topics(entries, {"t": 2})
    with pytest.raises(SinkOffsetsRefused):
        check_sink_topics(entries, {"t": None})
    check_sink_topics(entries, {"t": 3})


def test_java_string_hash_is_string_hashcode() -> None:
    assert java_string_hash("") == 0
    assert java_string_hash("a") == 97 and java_string_hash("ab") == 97 * 31 + 98
    assert java_string_hash("😀") == (0xD83D * 31 + 0xDE00)  # UTF-16 code units


def test_hash_map_order_matches_what_a_430_worker_wrote() -> None:
    """Bytes a Connect 4.3.1 worker wrote to its offsets topic for a PATCH of this partition (13 fields:
    the HashMap resized to 32 buckets) and offset."""
    request = json_wire.loads(
        b'{"zeta":1,"filename":"/tmp/x","b":2.50,"alpha":true,"mid":"m","k1":1,"k2":2,"k3":3,"k4":4,"k5":5,'
        b'"k6":6,"k7":7,"k8":8}'
    )[0]
    assert isinstance(request, dict)
    key = OffsetKey("exp-src", java_hash_map_order(request)).to_bytes()
    assert key == (
        b'["exp-src",{"zeta":1,"b":2.5,"k1":1,"k2":2,"k3":3,"mid":"m","k4":4,"k5":5,"k6":6,"k7":7,"k8":8,'
        b'"filename":"/tmp/x","alpha":true}]'
    )
    assert partition_for_key(key, 25) == 13  # where the worker put it
    assert json_wire.dumps(java_hash_map_order({"position": 5, "zz": 1, "aa": 2})) == b'{"zz":1,"aa":2,"position":5}'
    # and what 4.3.1 answers for a sink partition
    assert list(java_hash_map_order({"kafka_topic": "t", "kafka_partition": 0})) == ["kafka_partition", "kafka_topic"]


def test_canonical_ignores_field_order_but_not_types() -> None:
    assert canonical({"a": 1, "b": 2}) == canonical({"b": 2, "a": 1})
    assert canonical({"a": 1}) != canonical({"a": 1.0}) != canonical({"a": True})
