"""The proposal's backoff: base = initial × multiplier^retry, capped at max, plus capped × jitter × U(0,1)."""

from __future__ import annotations

import random

import pytest
from tenacity import Retrying, retry_if_exception_type, stop_after_attempt

from control_plane.backoff import ProposalBackoff
from control_plane.settings import load_settings

SEED = 4242


def expected_ms(initial: float, maximum: float, multiplier: float, jitter: float, retries: range) -> list[float]:
    """The formula written out once more, drawing from a twin of the seeded source."""
    twin = random.Random(SEED)
    out = []
    for retry in retries:
        capped = min(initial * multiplier**retry, maximum)
        out.append(capped + capped * jitter * twin.random())
    return out


@pytest.mark.parametrize(
    ("initial", "maximum", "multiplier", "jitter"),
    [
        pytest.param(300, 10000, 2.0, 0.25, id="defaults"),
        pytest.param(100, 5000, 1.5, 0.1, id="worker-file"),
        pytest.param(50, 50, 3.0, 1.0, id="initial-equals-max"),
        pytest.param(10, 1000, 1.0, 0.5, id="multiplier-1"),
    ],
)
def test_formula_for_several_retry_counts_with_a_seeded_random(
    initial: float, maximum: float, multiplier: float, jitter: float
) -> None:
    backoff = ProposalBackoff(initial, maximum, multiplier, jitter, random.Random(SEED))
    got = [backoff.backoff_ms(retry) for retry in range(10)]
    assert got == pytest.approx(expected_ms(initial, maximum, multiplier, jitter, range(10)))


def test_defaults_without_jitter_double_from_300_ms_up_to_the_cap() -> None:
    backoff = ProposalBackoff(300, 10000, 2.0, 0.0)
    assert [backoff.backoff_ms(retry) for retry in range(8)] == [300, 600, 1200, 2400, 4800, 9600, 10000, 10000]


def test_seeded_values_are_reproducible_and_fixed() -> None:
    def three(seed: int) -> list[float]:
        backoff = ProposalBackoff(300, 10000, 2.0, 0.25, random.Random(seed))
        return [backoff.backoff_ms(retry) for retry in range(3)]

    assert three(7) == three(7)
    # random.Random(7).random() draws 0.3238..., 0.1508..., 0.6509...
    assert three(7) == pytest.approx(
        [
            300 * (1 + 0.25 * 0.32383276483316237),
            600 * (1 + 0.25 * 0.15084917392450192),
            1200 * (1 + 0.25 * 0.6509344730398537),
        ]
    )


@pytest.mark.parametrize("retry", [6, 7, 40, 1100, 2147483646])
def test_capped_at_max_even_where_the_power_overflows(retry: int) -> None:
    backoff = ProposalBackoff(300, 10000, 2.0, 0.25, random.Random(SEED))
    assert backoff.capped_ms(retry) == 10000
    assert 10000 <= backoff.backoff_ms(retry) < 10000 * 1.25


@pytest.mark.parametrize("jitter", [0.0, 0.25, 1.0])
def test_jitter_stays_within_capped_and_capped_times_one_plus_factor(jitter: float) -> None:
    backoff = ProposalBackoff(300, 10000, 2.0, jitter, random.Random(SEED))
    for retry in range(12):
        capped = backoff.capped_ms(retry)
        for _ in range(200):
            value = backoff.backoff_ms(retry)
            assert capped <= value <= capped * (1 + jitter)
            if jitter == 0.0:
                assert value == capped


def test_zero_initial_backoff_never_waits() -> None:
    backoff = ProposalBackoff(0, 0, 2.0, 0.5)
    assert [backoff.backoff_ms(r) for r in (0, 1, 2147483646)] == [0, 0, 0]


def test_as_tenacity_wait_retry_0_is_the_first_retry() -> None:
    """tenacity asks for the wait after attempt n failed; the proposal's retry count is n - 1."""
    sleeps: list[float] = []
    backoff = ProposalBackoff(300, 10000, 2.0, 0.25, random.Random(SEED))
    retrying = Retrying(
        wait=backoff,
        stop=stop_after_attempt(5),
        retry=retry_if_exception_type(ConnectionError),
        sleep=sleeps.append,
        reraise=True,
    )
    with pytest.raises(ConnectionError):
        retrying(_always_fails)
    assert [s * 1000 for s in sleeps] == pytest.approx(expected_ms(300, 10000, 2.0, 0.25, range(4)))


def _always_fails() -> None:
    raise ConnectionError("broker gone")


def test_from_settings_reads_the_five_keys(tmp_path) -> None:
    path = tmp_path / "worker.properties"
    path.write_text(
        "status.storage.retry.initial.backoff.ms=100\nstatus.storage.retry.max.backoff.ms=5000\n"
        "status.storage.retry.backoff.multiplier=1.5\nstatus.storage.retry.jitter.factor=0.1\n"
    )
    backoff = ProposalBackoff.from_settings(load_settings(worker_properties=str(path)), random.Random(SEED))
    assert (backoff.initial_ms, backoff.max_ms, backoff.multiplier, backoff.jitter_factor) == (100, 5000, 1.5, 0.1)
    assert [backoff.backoff_ms(r) for r in range(3)] == pytest.approx(expected_ms(100, 5000, 1.5, 0.1, range(3)))


@pytest.mark.parametrize(
    "args",
    [
        pytest.param((-1, 100, 2.0, 0.1), id="negative-initial"),
        pytest.param((1, -100, 2.0, 0.1), id="negative-max"),
        pytest.param((1, 100, 0.9, 0.1), id="multiplier-below-1"),
        pytest.param((1, 100, 2.0, 1.1), id="jitter-above-1"),
        pytest.param((1, 100, 2.0, -0.1), id="jitter-negative"),
    ],
)
def test_out_of_range_arguments_are_refused(args: tuple[float, float, float, float]) -> None:
    with pytest.raises(ValueError):
        ProposalBackoff(*args)


def test_negative_retry_is_refused() -> None:
    with pytest.raises(ValueError):
        ProposalBackoff(1, 10, 2.0, 0.0).backoff_ms(-1)
