"""The carrying out of an apply's steps: several at once, each retried while Connect is only busy, within
the apply's deadline (pure scheduling: the step's write, the check of its result and the clock are given).

- **Independent steps**: a plan names each connector once, and a step changes only its own connector (a
  config write or a delete), so any number of them may run together; ``concurrency`` bounds how many.
- **Retried**: Connect's answers while its group rebalances (a 409 of ``HerderRequestHandler``, a 500 of
  ``DistributedHerder.checkRebalanceNeeded``'s ``RebalanceNeededException``, which
  ``ConnectExceptionMapper`` answers 500), a write whose outcome is unknown (the worker did not answer in
  time: ``OutcomeUnknown``; or a follower could not forward it to its leader, ``RestClient``'s 500 "IO Error
  trying to forward REST request", as when the leader leaves the group), no worker answering, the
  sidecars' coordination down: tried again after a backoff that doubles, while the next try can start
  before the deadline.
- **Unknown outcomes**: before a step whose write may have landed is tried again, and when its retry is
  refused, the config topic (the sidecar's view, read to its end) is asked whether it already holds the
  step's result: then the step is done, not repeated.
- **A failure** stops the starting of new steps (those in flight end), unless ``continue_on_error``: then
  every other step is still carried out. Either way the result says what was applied, what failed (with
  its error) and what was not tried.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field

import structlog

from ...upstream import NoWorkerAvailable, UpstreamError, is_forward_failure, is_rebalance_answer
from ..bounded import each_bounded
from ..errors import ControlPlaneError, CoordinationUnavailable, OutcomeUnknown, WorkerRefused
from .steps import PlanStep

log = structlog.get_logger(__name__)

Attempt = Callable[[PlanStep], Awaitable[None]]  # the step's write or delete; raises on failure
Landed = Callable[[PlanStep], Awaitable[bool]]  # whether the config topic holds the step's result


@dataclass(frozen=True)
class StepFailure:
    name: str
    action: str
    error: Exception  # a domain error, the upstream's (no worker answered), or one not expected
    attempts: int


@dataclass
class RunOutcome:
    """Each step in the plan's order: applied, failed (with the error of its last try) or not tried."""

    applied: list[PlanStep] = field(default_factory=list)
    failed: list[StepFailure] = field(default_factory=list)
    not_tried: list[PlanStep] = field(default_factory=list)
    retries: int = 0


def retry_kind(err: BaseException) -> str | None:
    """``"unknown"`` when the step's write may have landed, ``"busy"`` when Connect or the sidecars could not
    take it now, None when the failure is final (an invalid config, a connector changed since the plan)."""
    if isinstance(err, OutcomeUnknown) or (
        isinstance(err, WorkerRefused) and is_forward_failure(err.status, err.message)
    ):
        return "unknown"
    if isinstance(err, WorkerRefused) and is_rebalance_answer(err.status, err.message):
        return "busy"
    if isinstance(err, CoordinationUnavailable | UpstreamError | NoWorkerAvailable):  # no worker answered in time
        return "busy"
    return None


class StepRunner:
    def __init__(
        self,
        attempt: Attempt,
        landed: Landed,
        *,
        concurrency: int,
        deadline: float,
        backoff_initial_s: float,
        backoff_max_s: float,
        clock: Callable[[], float],
        sleep: Callable[[float], Awaitable[object]] = asyncio.sleep,
        on_done: Callable[[PlanStep, str], None] | None = None,
    ) -> None:
        """``deadline``: in ``clock``'s time, after which no step is started or tried again."""
        self._attempt = attempt
        self._landed = landed
        self._concurrency = max(1, concurrency)
        self._deadline = deadline
        self._initial_s = backoff_initial_s
        self._max_s = max(backoff_initial_s, backoff_max_s)
        self._clock = clock
        self._sleep = sleep
        self._on_done = on_done

    async def run(self, steps: Sequence[PlanStep], *, continue_on_error: bool) -> RunOutcome:
        stopped = False

        async def carry_out(step: PlanStep) -> tuple[StepFailure | None, int]:
            nonlocal stopped
            failure, tries = await self._one(step)
            if self._on_done is not None:
                self._on_done(step, "failed" if failure else "applied")
            if failure is not None and not continue_on_error:
                stopped = True
            return failure, tries

        def go_on() -> bool:
            return not stopped and self._clock() < self._deadline

        results = await each_bounded(steps, self._concurrency, carry_out, go_on=go_on)
        outcome = RunOutcome()
        for step, result in zip(steps, results, strict=True):
            if result is None:
                outcome.not_tried.append(step)
                continue
            failure, tries = result
            outcome.retries += tries - 1
            if failure is not None:
                outcome.failed.append(failure)
            else:
                outcome.applied.append(step)
        return outcome

    async def _one(self, step: PlanStep) -> tuple[StepFailure | None, int]:
        """The step tried until it is done, fails for good, or the deadline leaves no room for another try."""
        backoff = self._initial_s
        maybe_landed = False
        tries = 0
        while True:
            tries += 1
            try:
                if maybe_landed and await self._holds(step):
                    return None, tries
                await self._attempt(step)
                return None, tries
            except (ControlPlaneError, UpstreamError, NoWorkerAvailable) as err:
                if maybe_landed and await self._holds(step):  # its retry refused: the first write had landed
                    return None, tries
                kind = retry_kind(err)
                if kind is None or self._clock() + backoff >= self._deadline:
                    return StepFailure(step.name, step.action, err, tries), tries
                maybe_landed = maybe_landed or kind == "unknown"
                log.info("an apply's step is tried again", connector=step.name, why=str(err), after_s=backoff)
            except Exception as err:
                log.error("an apply's step failed unexpectedly", connector=step.name, exc_info=err)
                return StepFailure(step.name, step.action, err, tries), tries
            await self._sleep(backoff)
            backoff = min(backoff * 2, self._max_s)

    async def _holds(self, step: PlanStep) -> bool:
        try:
            return await self._landed(step)
        except (ControlPlaneError, UpstreamError, NoWorkerAvailable):
            return False  # not known now: the step's own precondition still guards its retry


__all__ = ["RunOutcome", "StepFailure", "StepRunner", "retry_kind"]
