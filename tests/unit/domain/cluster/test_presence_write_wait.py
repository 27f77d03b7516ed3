"""What the sidecars' presence says of the read-sync window: each sidecar's wait between a write and its
answer, and the least of them among the live ones, which decides whether a read may use the window."""

from __future__ import annotations

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
