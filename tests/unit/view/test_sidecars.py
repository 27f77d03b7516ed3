"""The live sidecars of a cluster, from their presence records, and their workers' installed plugins."""

from __future__ import annotations

import pytest

from control_plane.codecs import Malformed, Tombstone, UnknownKey
from control_plane.codecs.presence import SidecarPresence, decode_presence, encode_presence
from control_plane.codecs.worker_plugins import InstalledOnWorker
from control_plane.view.installed import InstalledTable
from control_plane.view.sidecars import SidecarTable


def presence(sidecar: str, interval_ms: int = 1000) -> SidecarPresence:
    return SidecarPresence(
        sidecar, f"http://{sidecar}:8084", "0.1.0", interval_ms, {"http://w:8083": "3.4.1"}, {"config": 0}
    )


def test_a_sidecar_is_live_until_it_misses_three_intervals_or_leaves() -> None:
    table = SidecarTable()
    table.apply(presence("a"), 1_000)
    table.apply(presence("b"), 1_500)
    assert [s.presence.sidecar for s in table.live(3_900)] == ["a", "b"]
    assert [s.presence.sidecar for s in table.live(4_000)] == ["b"]  # a silent for three intervals
    table.apply(presence("a"), 4_100)  # back
    table.apply(Tombstone("b"), 4_200)  # b stopped and said so
    assert [(s.presence.sidecar, s.seen_ms) for s in table.live(4_300)] == [("a", 4_100)]


@pytest.mark.parametrize(
    "record", [pytest.param(presence("a/b"), id="presence"), pytest.param(Tombstone("a"), id="left")]
)
def test_presence_records_round_trip(record: SidecarPresence | Tombstone[str]) -> None:
    assert decode_presence(*encode_presence(record)) == record


@pytest.mark.parametrize(
    ("key", "value", "expected"),
    [
        pytest.param(b"fence-c", b"{}", UnknownKey, id="a-fence"),
        pytest.param(b"sidecar-a", b"[]", Malformed, id="not-an-object"),
        pytest.param(b"sidecar-a", b'{"version": "1", "interval_ms": 0}', Malformed, id="no-interval"),
    ],
)
def test_records_that_are_not_presences(key: bytes, value: bytes, expected: type) -> None:
    assert isinstance(decode_presence(key, value), expected)


def test_the_latest_installed_plugins_of_each_worker_until_a_tombstone() -> None:
    table = InstalledTable()
    first = InstalledOnWorker("w:8083", "3.4.1", {"source": {"a.S": ("1.0",)}})
    table.apply(first)
    table.apply(InstalledOnWorker("w:8083", "3.4.1", {"source": {"a.S": ("1.0", "2.0")}}))
    assert table.of("w:8083") != first and table.revision == 2
    table.apply(Tombstone("w:8083"))
    assert table.of("w:8083") is None
