"""What the sidecars' presence says of the read-sync window: each sidecar's wait between a write and its
answer, and the least of them among the live ones, which decides whether a read may use the window."""

from __future__ import annotations

import asyncio

from control_plane.codecs.presence import SidecarPresence, decode_presence, encode_presence
from control_plane.domain.cluster.presence import Presence
from control_plane.view.sidecars import SidecarTable
from tests.support.fakes import FakeSidecarsTopic


def presence_of(table: SidecarTable, sidecar: str, write_wait_s: float, *, read: bool = True) -> Presence:
    return Presence(
        FakeSidecarsTopic(lambda: 0),
        table,
        sidecar=sidecar,
        url=None,
        version="1",
        interval_s=5,
        workers=dict,
        view_lag=dict,
        stop_timeout_s=1,
        write_wait_s=write_wait_s,
        read=lambda: read,
        now_ms=lambda: 1_000,
    )


def test_the_least_wait_is_known_once_the_sidecars_and_this_one_are_read() -> None:
    table = SidecarTable()
    me = presence_of(table, "a", 0.025)
    assert me.least_write_wait_s() is None  # its own presence not read yet
    table.apply(me.record(), 1_000)
    assert me.least_write_wait_s() == 0.025
    table.apply(presence_of(table, "b", 0.05).record(), 1_000)
    assert me.least_write_wait_s() == 0.025
    table.apply(presence_of(table, "c", 0.0).record(), 1_000)  # one that answers its writes at once
    assert me.least_write_wait_s() == 0.0


def test_the_least_wait_is_not_known_before_the_sidecars_topic_is_read() -> None:
    table = SidecarTable()
    me = presence_of(table, "a", 0.025, read=False)
    table.apply(me.record(), 1_000)
    assert me.least_write_wait_s() is None


def test_a_presence_without_a_write_wait_is_one_that_answers_at_once() -> None:
    """An older sidecar's record: it does not wait."""
    key, value = encode_presence(SidecarPresence("old", None, "1", 5000, write_wait_ms=25.0))
    assert value is not None and b'"write_wait_ms":25.0' in value
    decoded = decode_presence(key, value.replace(b',"write_wait_ms":25.0', b""))
    assert isinstance(decoded, SidecarPresence) and decoded.write_wait_ms == 0.0


class Refusing:
    """A sidecars' topic that refuses every write at once (one refused at start: wrong settings)."""

    def __init__(self) -> None:
        self.attempts = 0

    async def write(self, key: bytes, value: bytes | None) -> None:
        self.attempts += 1
        raise RuntimeError("the sidecars' topic cannot be used")


async def test_a_presence_refused_at_once_is_written_again_after_an_interval_not_in_a_loop() -> None:
    topic = Refusing()

    async def ready_at_once() -> None:
        return None

    me = Presence(
        topic,
        SidecarTable(),
        sidecar="a",
        url=None,
        version="1",
        interval_s=0.1,
        workers=dict,
        view_lag=dict,
        stop_timeout_s=0.1,
        until_ready=ready_at_once,
    )
    await me.start()
    await asyncio.sleep(0.25)  # the interval's own pace: what is measured
    await me.stop()
    assert topic.attempts <= 4  # three intervals, and the leave's tombstone
