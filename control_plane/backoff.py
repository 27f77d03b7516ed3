"""The backoff of the status-store retry proposal (docs/features/status-writes.md), as a tenacity wait.

The proposal's formula, for the ``retry``-th retry (0 is the first retry)::

    baseBackoff   = initialBackoffMs × multiplier ^ retry
    cappedBackoff = min(baseBackoff, maxBackoffMs)
    jitter        = cappedBackoff × jitterFactor × random(0, 1)
    finalBackoff  = cappedBackoff + jitter

The jitter is added on top of the cap, so a wait may reach ``max × (1 + jitterFactor)``, as written.
tenacity's built-ins do not give this exactly (``wait_exponential_jitter`` adds jitter of a fixed size,
``wait_random_exponential`` draws from the whole range), hence a wait strategy of its own.
"""

from __future__ import annotations

import random
from typing import TYPE_CHECKING

from tenacity.wait import wait_base

if TYPE_CHECKING:
    from tenacity import RetryCallState

    from .settings import Settings


class ProposalBackoff(wait_base):
    """``finalBackoff`` of the proposal, in seconds for tenacity; ``rng`` makes the jitter reproducible."""

    def __init__(
        self,
        initial_ms: float,
        max_ms: float,
        multiplier: float,
        jitter_factor: float,
        rng: random.Random | None = None,
    ) -> None:
        if initial_ms < 0 or max_ms < 0:
            raise ValueError("backoffs must not be negative")
        if multiplier < 1.0:
            raise ValueError("the multiplier must be at least 1.0")
        if not 0.0 <= jitter_factor <= 1.0:
            raise ValueError("the jitter factor must be between 0.0 and 1.0")
        self.initial_ms = float(initial_ms)
        self.max_ms = float(max_ms)
        self.multiplier = float(multiplier)  # a float: an int would grow without bound, never overflow
        self.jitter_factor = float(jitter_factor)
        self.rng = rng or random.Random()

    @classmethod
    def from_settings(cls, settings: Settings, rng: random.Random | None = None) -> ProposalBackoff:
        return cls(
            settings.status_storage_retry_initial_backoff_ms,
            settings.status_storage_retry_max_backoff_ms,
            settings.status_storage_retry_backoff_multiplier,
            settings.status_storage_retry_jitter_factor,
            rng,
        )

    def capped_ms(self, retry: int) -> float:
        """``cappedBackoff`` for the ``retry``-th retry (0 is the first): no jitter."""
        if retry < 0:
            raise ValueError("retry counts from 0")
        if self.initial_ms == 0.0:
            return 0.0
        try:
            base = self.initial_ms * self.multiplier**retry
        except OverflowError:  # multiplier ** 2147483647: far past any cap
            base = float("inf")
        return min(base, self.max_ms)

    def backoff_ms(self, retry: int) -> float:
        """``finalBackoff`` for the ``retry``-th retry; draws one number from ``rng``."""
        capped = self.capped_ms(retry)
        return capped + capped * self.jitter_factor * self.rng.random()

    def __call__(self, retry_state: RetryCallState) -> float:
        # tenacity asks after attempt n (from 1) failed: the wait before retry n - 1.
        return self.backoff_ms(retry_state.attempt_number - 1) / 1000.0


__all__ = ["ProposalBackoff"]
