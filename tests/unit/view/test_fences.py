"""The fence rule: every sidecar names the same holder from the same records."""

from __future__ import annotations

import pytest

from control_plane.codecs import Malformed, UnknownKey
from control_plane.codecs.fence import FenceClaim, FenceRelease, decode_fence, encode_fence
from control_plane.view.fences import FenceTable


def claim(token: str, lease_ms: int = 1000, connector: str = "c") -> FenceClaim:
    return FenceClaim(connector, token, f"sidecar-{token}", lease_ms)


def test_the_first_claim_takes_a_free_fence_and_later_ones_are_ignored() -> None:
    table = FenceTable()
    table.apply(claim("a"), 100)
    table.apply(claim("b"), 200)
    holder = table.holder("c")
    assert holder is not None and (holder.token, holder.since_ms, holder.expires_ms) == ("a", 100, 1100)


def test_the_holder_renews_its_lease_with_the_same_token() -> None:
    table = FenceTable()
    table.apply(claim("a"), 100)
    table.apply(claim("a"), 900)
    table.apply(claim("b"), 1500)  # the renewed lease runs until 1900
    holder = table.holder("c")
    assert holder is not None and (holder.token, holder.since_ms, holder.expires_ms) == ("a", 100, 1900)


def test_a_claim_after_the_lease_ended_takes_the_fence() -> None:
    table = FenceTable()
    table.apply(claim("a"), 100)
    table.apply(claim("b"), 1100)
    holder = table.holder("c")
    assert holder is not None and holder.token == "b"
    assert table.live(1200) == [holder] and table.live(2100) == []


def test_only_the_holder_releases() -> None:
    table = FenceTable()
    table.apply(claim("a"), 100)
    table.apply(FenceRelease("c", "b"), 150)
    assert table.holder("c") is not None
    table.apply(FenceRelease("c", "a"), 160)
    assert table.holder("c") is None
    table.apply(claim("b"), 170)
    assert table.holder("c") is not None and table.holder("c").token == "b"  # type: ignore[union-attr]


def test_connectors_have_fences_of_their_own() -> None:
    table = FenceTable()
    table.apply(claim("a", connector="one"), 100)
    table.apply(claim("b", connector="two"), 100)
    assert [h.connector for h in table.live(200)] == ["one", "two"]


@pytest.mark.parametrize(
    "record", [pytest.param(claim("a"), id="claim"), pytest.param(FenceRelease("a/b c", "t"), id="release")]
)
def test_fence_records_round_trip(record: FenceClaim | FenceRelease) -> None:
    assert decode_fence(*encode_fence(record)) == record


@pytest.mark.parametrize(
    ("key", "value", "expected"),
    [
        pytest.param(b"sidecar-x", b"{}", UnknownKey, id="another-kind"),
        pytest.param(b"fence-c", b"not json", Malformed, id="not-json"),
        pytest.param(b"fence-c", b'{"claim": {"token": "t", "sidecar": "s", "lease_ms": 0}}', Malformed, id="no-lease"),
        pytest.param(b"fence-c", b'{"take": {"token": "t"}}', Malformed, id="unknown-kind"),
        pytest.param(b"fence-c", None, Malformed, id="tombstone"),
    ],
)
def test_records_that_are_not_fences(key: bytes, value: bytes | None, expected: type) -> None:
    assert isinstance(decode_fence(key, value), expected)
