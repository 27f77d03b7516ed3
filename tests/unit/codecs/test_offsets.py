"""Offsets-topic codec: keys and values byte-for-byte as OffsetStorageWriter's JsonConverter writes them."""

from __future__ import annotations

import pytest

from control_plane.codecs import (
    JsonFloat,
    Malformed,
    OffsetKey,
    SourceOffset,
    Tombstone,
    decode_offset,
    encode_offset,
    parse_offset_key,
    partition_for_key,
)

VECTORS = [
    (  # a FileStreamSource record from the 4.3.1 worker (partition 13 of 25)
        b'["source-new-d626fd56",{"filename":"/tmp/pytest-of-root/pytest-1/test_source_connector_lifecycl0/in.txt"}]',
        b'{"position":34}',
        SourceOffset(
            "source-new-d626fd56",
            {"filename": "/tmp/pytest-of-root/pytest-1/test_source_connector_lifecycl0/in.txt"},
            {"position": 34},
        ),
    ),
    (
        b'["codec:src-new-1",{"z":1,"a":"x","m":true}]',
        b'{"b":2,"a":null,"f":1.5,"big":9223372036854775807}',
        SourceOffset(
            "codec:src-new-1", {"z": 1, "a": "x", "m": True}, {"b": 2, "a": None, "f": 1.5, "big": 9223372036854775807}
        ),
    ),
    (b'["c",null]', b"{}", SourceOffset("c", None, {})),
    (
        '["ünï",{"file":"/tmp/é \\"q\\" \\\\ \\uD83D\\uDE00"}]'.encode(),
        b'{"d":1.0E-7}',
        SourceOffset("ünï", {"file": '/tmp/é "q" \\ 😀'}, {"d": 1e-7}),
    ),
]


@pytest.mark.parametrize(("key", "value", "record"), VECTORS)
def test_decode_and_encode(key: bytes, value: bytes, record: SourceOffset) -> None:
    assert decode_offset(key, value) == record
    assert encode_offset(record) == (key, value)


def test_map_key_order_is_kept_for_lookups_by_key_bytes() -> None:
    key = b'["c",{"b":1,"a":2}]'
    parsed = parse_offset_key(key)
    assert isinstance(parsed, OffsetKey)
    assert list(parsed.partition or {}) == ["b", "a"]
    assert parsed.to_bytes() == key
    assert OffsetKey("c", {"a": 2, "b": 1}).to_bytes() == b'["c",{"a":2,"b":1}]'


def test_worker_written_double_text_survives() -> None:
    key, value = b'["c",{"p":0}]', b'{"t":9.999999999999999E22}'
    record = decode_offset(key, value)
    assert isinstance(record, SourceOffset) and isinstance(record.offset["t"], JsonFloat)
    assert encode_offset(record) == (key, value)


def test_tombstone() -> None:
    key = b'["c",{"filename":"/x"}]'
    decoded = decode_offset(key, None)
    assert decoded == Tombstone(OffsetKey("c", {"filename": "/x"}))
    assert encode_offset(decoded) == (key, None)


@pytest.mark.parametrize(
    ("key", "value"),
    [
        (None, b"{}"),
        (b"not json", b"{}"),
        (b"\xff", b"{}"),
        (b'{"c":1}', b"{}"),
        (b'["c"]', b"{}"),
        (b'["c",{},1]', b"{}"),
        (b'[1,{"p":1}]', b"{}"),
        (b'["c","p"]', b"{}"),
        (b'["c",{"p":1}]', b"[1]"),
        (b'["c",{"p":1}]', b"{bad"),
        (b'["c",{"p":1}]', b"null"),
        (b'["c",{"p":1}]', b'{"x":NaN}'),
    ],
)
def test_malformed(key: bytes | None, value: bytes) -> None:
    decoded = decode_offset(key, value)
    assert isinstance(decoded, Malformed)
    assert decoded.reason and decoded.key == key


def test_partition_of_a_real_offsets_record() -> None:
    key = b'["src-new-069043aa",{"filename":"/tmp/pytest-of-root/pytest-2/test_sink_connector_reads_thro0/in.txt"}]'
    assert partition_for_key(key, 25) == 20
