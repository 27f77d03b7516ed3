"""murmur2 and the default partitioner against Kafka's own vectors (UtilsTest) and values computed with
org.apache.kafka.common.utils.Utils from kafka-clients 4.3.1."""

from __future__ import annotations

import pytest

from control_plane.codecs.murmur2 import murmur2, partition_for_key, to_positive


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (b"21", -973932308),
        (b"foobar", -790332482),
        (b"a-little-bit-long-string", -985981536),
        (b"a-little-bit-longer-string", -1486304829),
        (b"lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8", -58897971),
        (b"abc", 479470107),
        (b"", 275646681),
        (b"\x00", 375494588),
        (b"\xff", -311467685),
        (b"\x80\x01", 1506208697),
        (b"\x01\x02\x03", 2139322793),
        (b"\xfe\xfd\xfc\xfb", 1154207786),
        (b"\xff\xff\xff\xff\xff", -363838622),
        ('["codec:src-1",{"filename":"/tmp/é.txt"}]'.encode(), -478375241),
    ],
)
def test_murmur2_vectors(data: bytes, expected: int) -> None:
    assert murmur2(data) == expected


def test_to_positive_clears_the_sign_bit() -> None:
    assert to_positive(-1) == 0x7FFFFFFF
    assert to_positive(-(2**31)) == 0
    assert to_positive(5) == 5


@pytest.mark.parametrize(
    ("key", "partitions", "expected"),
    [
        # records a 4.3.1 worker wrote to its 25-partition offsets topic
        (
            b'["source-new-d626fd56",{"filename":"/tmp/pytest-of-root/pytest-1/test_source_connector_lifecycl0/in.txt"}]',
            25,
            13,
        ),
        (
            b'["src-new-069043aa",{"filename":"/tmp/pytest-of-root/pytest-2/test_sink_connector_reads_thro0/in.txt"}]',
            25,
            20,
        ),
        (b"\xff\xff\xff\xff\xff", 25, 1),
        (b"anything", 1, 0),
    ],
)
def test_partition_for_key(key: bytes, partitions: int, expected: int) -> None:
    assert partition_for_key(key, partitions) == expected


def test_partition_count_must_be_positive() -> None:
    with pytest.raises(ValueError):
        partition_for_key(b"k", 0)
