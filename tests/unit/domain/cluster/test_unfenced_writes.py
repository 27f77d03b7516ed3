"""A fence that cannot be claimed because the sidecars' topic cannot be used (domain/cluster/writes.py): a
write the workers do natively goes on without it, told why and counted; a write that needs it fails fast
with ``CoordinationUnavailable``, which the one mapper answers 503 in Connect's shape."""

from __future__ import annotations

import time

import orjson
import pytest

from control_plane.domain.cluster.fence import ConnectorFence
from control_plane.domain.cluster.writes import ConnectorWrites
from control_plane.domain.errors import CoordinationUnavailable, OperationFailed
from control_plane.rest.errors import error_response
from control_plane.rest.request.proxy import answer_headers
from control_plane.upstream import UpstreamResponse
from tests.support.fakes import FakeSidecarsTopic


class Unwritable(FakeSidecarsTopic):
    """The sidecars' topic with its replicas down: every write fails with the broker's error."""

    async def write(self, key: bytes, value: bytes | None) -> None:
        raise OperationFailed("NotEnoughReplicasError: [Error 19] the ISR is below min.insync.replicas")


class Counted:
    def __init__(self) -> None:
        self.count = 0

    def unfenced_write(self) -> None:
        self.count += 1


def writes_over(topic: FakeSidecarsTopic, counted: Counted) -> ConnectorWrites:
    fence = ConnectorFence(topic, topic.reader(), sidecar="s0", lease_s=5, wait_s=60, read_timeout_s=1)
    return ConnectorWrites(None, None, 1.0, fence, unfenced=counted)  # type: ignore[arg-type]


async def test_a_native_write_goes_on_without_the_fence_told_why_and_counted() -> None:
    counted = Counted()
    writes = writes_over(Unwritable(lambda: time.time() * 1000), counted)
    started = time.monotonic()
    async with writes.serialized("c", native=True) as unfenced:
        assert unfenced is not None
        assert "Written without the sidecars' fence of connector c" in unfenced
        assert "the sidecars' topic cannot be written" in unfenced and "NotEnoughReplicasError" in unfenced
    assert time.monotonic() - started < 1  # not the fence's 60 s wait
    assert counted.count == 1


async def test_a_write_that_needs_the_fence_fails_fast_naming_the_cause() -> None:
    counted = Counted()
    writes = writes_over(Unwritable(lambda: time.time() * 1000), counted)
    started = time.monotonic()
    with pytest.raises(CoordinationUnavailable) as caught:
        async with writes.serialized("c"):
            raise AssertionError("written without the fence")
    assert time.monotonic() - started < 1
    assert caught.value.message.startswith("Cannot claim the fence of connector c: the sidecars' topic cannot be")
    assert counted.count == 0
    answer = error_response(caught.value)
    assert answer.status_code == 503
    assert orjson.loads(answer.body) == {"error_code": 503, "message": caught.value.message}


async def test_with_the_topic_writable_a_native_write_holds_the_fence() -> None:
    counted = Counted()
    topic = FakeSidecarsTopic(lambda: time.time() * 1000)
    writes = writes_over(topic, counted)
    async with writes.serialized("c", native=True) as unfenced:
        assert unfenced is None
        assert [h.connector for h in writes.fence.holders()] == ["c"]  # type: ignore[union-attr]
    assert counted.count == 0


def test_the_warning_reaches_the_client_as_a_warning_header() -> None:
    answer = UpstreamResponse(202, [], b"", "w1", warnings=('Written without the fence ("down")',))
    assert (b"warning", b'199 - "Written without the fence (\\"down\\")"') in answer_headers("PUT", answer)
