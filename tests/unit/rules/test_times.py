"""Times as the sidecar's answers and the Spark jobs' reports write them (``rules.times.iso``) and as their users
give them (``rules.times.parse_time``): one definition for both."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from control_plane.rules.times import iso, parse_time

FIRST_OF_YEAR_1000_MS = -30_610_224_000_000
LAST_OF_YEAR_9999_MS = 253_402_300_799_999


def strftime_iso(timestamp_ms: int) -> str:
    """The ISO-8601 the sidecar's state endpoints wrote with ``strftime``: the same text for every year from
    1000 (``%Y`` writes no leading zeros before it)."""
    moment = datetime.fromtimestamp(timestamp_ms / 1000, UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


@pytest.mark.parametrize(
    "timestamp_ms",
    [
        pytest.param(0, id="epoch"),
        pytest.param(-1, id="just-before-the-epoch"),
        pytest.param(1, id="one-ms"),
        pytest.param(999, id="last-ms-of-the-first-second"),
        pytest.param(1_700_000_000_123, id="2023"),
        pytest.param(1_709_164_800_000, id="a-leap-day"),
        pytest.param(4_102_444_799_999, id="end-of-2099"),
        pytest.param(FIRST_OF_YEAR_1000_MS, id="year-1000"),
        pytest.param(253_402_214_400_000, id="last-day-of-9999"),
        pytest.param(LAST_OF_YEAR_9999_MS, id="last-ms-of-9999"),
        *(pytest.param(ms, id=f"step-{ms}") for ms in range(0, 253_402_300_000_000, 7_919_999_999_937)),
    ],
)
def test_iso_writes_what_the_sidecar_wrote(timestamp_ms: int) -> None:
    assert iso(timestamp_ms) == strftime_iso(timestamp_ms)


def test_iso_of_no_time_and_of_the_known_ones() -> None:
    assert iso(None) is None
    assert iso(0) == "1970-01-01T00:00:00.000Z"
    assert iso(1_700_000_000_123) == "2023-11-14T22:13:20.123Z"
    assert iso(-1) == "1969-12-31T23:59:59.999Z"


@pytest.mark.parametrize(
    ("text", "ms"),
    [
        pytest.param("1700000000123", 1_700_000_000_123, id="epoch-ms"),
        pytest.param("-5", -5, id="negative-epoch-ms"),
        pytest.param("2023-11-14T22:13:20.123Z", 1_700_000_000_123, id="utc"),
        pytest.param("2023-11-14T22:13:20.123z", 1_700_000_000_123, id="utc-lower-case"),
        pytest.param("2023-11-14T23:13:20.123+01:00", 1_700_000_000_123, id="offset"),
        pytest.param("2023-11-14T22:13:20.123", 1_700_000_000_123, id="naive-is-utc"),
        pytest.param("2023-11-14", 1_699_920_000_000, id="a-date"),
    ],
)
def test_parse_time(text: str, ms: int) -> None:
    assert parse_time(text) == ms


@pytest.mark.parametrize("text", ["yesterday", "", "-", "2023-13-01T00:00:00Z"])
def test_a_text_that_is_no_time_is_a_plain_value_error(text: str) -> None:
    """Each caller words it: the sidecar's 400 (``test_connector_states``), a job's error line
    (``test_job``)."""
    with pytest.raises(ValueError):
        parse_time(text)
