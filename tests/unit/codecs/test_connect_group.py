"""Connect's group protocol read from bytes a real worker wrote (a 2.8.2 worker of the test stack, alone in
its group, answered by DescribeGroups), and written back as a worker of each version writes it."""

from __future__ import annotations

import pytest

from control_plane.codecs.connect_group import (
    GroupRecordError,
    WorkerAssignment,
    WorkerMetadata,
    decode_assignment,
    decode_metadata,
    encode_assignment,
    encode_metadata,
)

MEMBER = "connect-1-a29fcf12-2f55-4b90-a7dd-4d86193be014"
URL = "http://127.0.0.1:47283/"
# the member's metadata of the "sessioned" protocol (version 2): its URL, config offset and last allocation
METADATA_2_8_2 = bytes.fromhex(
    "00020017687474703a2f2f3132372e302e302e313a34373238332f000000000000018a0000006100010000002e636f6e6e6563742d"
    "312d61323966636631322d326635352d346239302d613764642d3464383631393362653031340017687474703a2f2f3132372e302e"
    "302e313a34373238332f000000000000018a000000000000000000000000"
)
# its assignment (version 1): the leader is itself, nothing assigned
ASSIGNMENT_2_8_2 = bytes.fromhex(
    "00010000002e636f6e6e6563742d312d61323966636631322d326635352d346239302d613764642d34643836313933626530313400"
    "17687474703a2f2f3132372e302e302e313a34373238332f000000000000018a000000000000000000000000"
)


def test_a_real_workers_metadata_and_assignment() -> None:
    assert decode_metadata(METADATA_2_8_2) == WorkerMetadata(2, URL, 394)
    assert decode_assignment(ASSIGNMENT_2_8_2) == WorkerAssignment(1, 0, MEMBER, URL, 394, (), ())


@pytest.mark.parametrize("version", [0, 1, 2])
def test_what_a_worker_of_each_version_writes_reads_back(version: int) -> None:
    metadata = WorkerMetadata(version, "http://w1:8083/", 12)
    assert decode_metadata(encode_metadata(metadata)) == metadata
    assignment = WorkerAssignment(version, 0, "m1", "http://w1:8083/", 12, ("a", "b"), (("a", 0), ("a", 1), ("c", 0)))
    assert decode_assignment(encode_assignment(assignment)) == assignment


@pytest.mark.parametrize("data", [b"", b"\x00", b"\x00\x02\x00\x09http", b"\xff\xff"], ids=repr)
def test_bytes_that_are_not_connects_protocol_are_refused(data: bytes) -> None:
    with pytest.raises(GroupRecordError):
        decode_metadata(data)
