"""The apply's scheduling (domain/plan/runner.py) with fakes and a clock of its own, no sleeping: steps run
several at once and never more than asked; rebalance answers and unknown outcomes are retried with a
doubling backoff until the deadline; a step whose write landed is not repeated; a failure stops the
starting of new steps unless the apply carries on."""

from __future__ import annotations

import asyncio

import pytest

from control_plane.domain.errors import ConflictError, OutcomeUnknown, WorkerRefused
from control_plane.domain.plan import PlanStep, StepRunner
from control_plane.domain.plan.runner import retry_kind
from control_plane.upstream import NoWorkerAvailable

REBALANCING = WorkerRefused(409, "Cannot complete request momentarily due to stale configuration (typically ...)")
EXPECTED = WorkerRefused(500, "Request cannot be completed because a rebalance is expected")
INVALID = WorkerRefused(400, "Connector configuration is invalid and contains the following 1 error(s)")
TIMED_OUT = OutcomeUnknown("Request timed out: ...", timed_out=True)


def steps(*names: str) -> list[PlanStep]:
    return [PlanStep(n, "create", {"name": n}, None, ()) for n in names]


class Clock:
    """Time that moves only when the runner sleeps."""

    def __init__(self) -> None:
        self.now = 0.0
        self.slept: list[float] = []

    def __call__(self) -> float:
        return self.now

    async def sleep(self, s: float) -> None:
        self.slept.append(s)
        self.now += s
        await asyncio.sleep(0)


class Worker:
    """Answers each step's tries from a script (an error to raise, or None: done); counts the steps in
    flight; ``lands`` the writes whose outcome is unknown but which the config topic holds."""

    def __init__(self, script: dict[str, list[Exception | None]] | None = None) -> None:
        self.script = script or {}
        self.tries: list[str] = []
        self.in_flight = self.most = 0
        self.topic: set[str] = set()
        self.lands: set[str] = set()
        self.asked: list[str] = []

    async def attempt(self, step: PlanStep) -> None:
        self.tries.append(step.name)
        self.in_flight += 1
        self.most = max(self.most, self.in_flight)
        try:
            await asyncio.sleep(0)  # let the others start
            answers = self.script.get(step.name, [])
            answer = answers.pop(0) if answers else None
            if answer is TIMED_OUT and step.name in self.lands:
                self.topic.add(step.name)
            if answer is not None:
                raise answer
            self.topic.add(step.name)
        finally:
            self.in_flight -= 1

    async def landed(self, step: PlanStep) -> bool:
        self.asked.append(step.name)
        return step.name in self.topic


def runner(worker: Worker, clock: Clock, *, concurrency: int = 4, deadline: float = 60.0) -> StepRunner:
    return StepRunner(
        worker.attempt,
        worker.landed,
        concurrency=concurrency,
        deadline=deadline,
        backoff_initial_s=0.2,
        backoff_max_s=1.0,
        clock=clock,
        sleep=clock.sleep,
    )


@pytest.mark.parametrize(
    ("error", "kind"),
    [
        pytest.param(REBALANCING, "busy", id="409-rebalance"),
        pytest.param(EXPECTED, "busy", id="500-rebalance-expected"),
        pytest.param(WorkerRefused(409, "Connector a already exists"), None, id="409-final"),
        pytest.param(WorkerRefused(500, "boom"), None, id="500-other"),
        pytest.param(INVALID, None, id="400"),
        pytest.param(TIMED_OUT, "unknown", id="timeout"),
        pytest.param(
            WorkerRefused(500, "IO Error trying to forward REST request: EOF"), "unknown", id="forward-failed"
        ),
        pytest.param(NoWorkerAvailable([]), "busy", id="no-worker"),
        pytest.param(ConflictError("changed since the plan"), None, id="changed-since"),
    ],
)
def test_which_failures_are_tried_again(error: Exception, kind: str | None) -> None:
    assert retry_kind(error) == kind


async def test_steps_run_together_within_the_bound() -> None:
    worker, clock = Worker(), Clock()
    ran = await runner(worker, clock, concurrency=3).run(steps(*"abcdefgh"), continue_on_error=False)
    assert [s.name for s in ran.applied] == list("abcdefgh") and not ran.failed and not ran.not_tried
    assert worker.most == 3
    assert clock.slept == []


async def test_rebalance_answers_are_retried_with_a_doubling_backoff() -> None:
    worker, clock = Worker({"b": [REBALANCING, EXPECTED, REBALANCING, REBALANCING]}), Clock()
    ran = await runner(worker, clock).run(steps("a", "b"), continue_on_error=False)
    assert [s.name for s in ran.applied] == ["a", "b"] and ran.retries == 4
    assert clock.slept == [0.2, 0.4, 0.8, 1.0]  # doubled up to the max
    assert worker.tries.count("b") == 5


async def test_a_retry_that_would_pass_the_deadline_is_not_made() -> None:
    worker, clock = Worker({"a": [REBALANCING] * 10}), Clock()
    ran = await runner(worker, clock, deadline=1.0).run(steps("a", "b"), continue_on_error=True)
    (failure,) = ran.failed
    assert (failure.name, failure.error, failure.attempts) == ("a", REBALANCING, 3)
    assert clock.slept == [0.2, 0.4] and clock.now < 1.0
    assert [s.name for s in ran.applied] == ["b"]


async def test_a_step_whose_write_landed_is_not_repeated() -> None:
    worker, clock = Worker({"a": [TIMED_OUT], "b": [TIMED_OUT]}), Clock()
    worker.lands = {"a"}  # a's write landed though the worker did not answer; b's did not
    ran = await runner(worker, clock).run(steps("a", "b"), continue_on_error=False)
    assert [s.name for s in ran.applied] == ["a", "b"] and not ran.failed
    assert worker.tries.count("a") == 1 and worker.tries.count("b") == 2  # b tried again, a only checked
    assert worker.asked == ["a", "b"]


async def test_a_retry_refused_because_the_first_write_landed_is_done() -> None:
    # the first write lands only after the check (the worker was still holding it): its retry is refused
    # as the connector changed since the plan, and the config topic then holds the step's result
    worker, clock = Worker({"a": [TIMED_OUT, ConflictError("changed since the plan")]}), Clock()
    real = worker.landed
    checks = []

    async def late(step: PlanStep) -> bool:
        checks.append(step.name)
        if len(checks) == 2:
            worker.topic.add("a")
        return await real(step)

    worker.landed = late  # type: ignore[method-assign]
    ran = await runner(worker, clock).run(steps("a"), continue_on_error=False)
    assert [s.name for s in ran.applied] == ["a"] and not ran.failed and checks == ["a", "a"]


async def test_a_failure_stops_new_steps_unless_the_apply_carries_on() -> None:
    clock = Clock()
    stopped = await runner(Worker({"b": [INVALID]}), clock, concurrency=1).run(steps(*"abcd"), continue_on_error=False)
    assert [s.name for s in stopped.applied] == ["a"]
    assert [(f.name, f.error) for f in stopped.failed] == [("b", INVALID)]
    assert [s.name for s in stopped.not_tried] == ["c", "d"]
    on = await runner(Worker({"b": [INVALID]}), clock, concurrency=1).run(steps(*"abcd"), continue_on_error=True)
    assert [s.name for s in on.applied] == ["a", "c", "d"] and [f.name for f in on.failed] == ["b"]
    assert on.not_tried == []


async def test_steps_in_flight_end_when_one_fails() -> None:
    worker, clock = Worker({"a": [INVALID], "b": [REBALANCING]}), Clock()
    ran = await runner(worker, clock, concurrency=2).run(steps(*"abcd"), continue_on_error=False)
    assert [f.name for f in ran.failed] == ["a"]
    assert [s.name for s in ran.applied] == ["b"]  # started before a failed: carried to its end
    assert [s.name for s in ran.not_tried] == ["c", "d"]


async def test_no_step_starts_after_the_deadline() -> None:
    clock = Clock()
    tried = []

    async def slow(step: PlanStep) -> None:  # each step takes 0.3 s of the clock
        tried.append(step.name)
        clock.now += 0.3

    async def never(step: PlanStep) -> bool:
        return False

    ran = await StepRunner(
        slow, never, concurrency=1, deadline=0.5, backoff_initial_s=0.2, backoff_max_s=1.0, clock=clock
    ).run(steps("a", "b", "c"), continue_on_error=True)
    assert [s.name for s in ran.applied] == ["a", "b"] and [s.name for s in ran.not_tried] == ["c"]
    assert tried == ["a", "b"]


async def test_an_unexpected_error_fails_its_step_only() -> None:
    worker, clock = Worker({"a": [RuntimeError("bug")]}), Clock()
    ran = await runner(worker, clock).run(steps("a", "b"), continue_on_error=True)
    assert [(f.name, str(f.error)) for f in ran.failed] == [("a", "bug")] and [s.name for s in ran.applied] == ["b"]
