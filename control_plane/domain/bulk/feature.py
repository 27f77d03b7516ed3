"""``BulkActions``: one action on every connector a selector picks (``selector``), each connector's action
the single request it stands for (``request.single_request``), made through the same herder call the
single request's handler makes: fenced and serialized per connector, emulated where the workers lack it
(a stop on 3.4.1), a rebalance 409 retried (``UpstreamRequest.retry_rebalance``, as the sidecar's composed
operations retry it). At most ``concurrency`` connectors are acted on at once, each within a request budget
of its own (a single request's), not the bulk request's.

Access: the caller's ``Gate`` says which connectors the principal may see (the others are not selected, as a
listing leaves them out; one named in ``names`` is answered the single request's 404) and refuses, per
connector, what the access rules refuse the single request. A refusal or a failure is that connector's
result; the others go on.

The connectors come from the view (their states by the status rules of the workers at hand, as the summary
counts them; their active topics, as ``GET /_sidecar/topics/{t}/connectors`` answers): without a ready view
the bulk action is refused as the summary is.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from typing import Protocol

from ...rules.connectors import CONNECTOR_CLASS_KEY
from ...upstream import (
    REQUEST_DEADLINE,
    NoWorkerAvailable,
    UpstreamError,
    UpstreamOverloaded,
    UpstreamRequest,
    UpstreamResponse,
)
from ..auto_restart import AutoRestart
from ..bounded import each_bounded
from ..errors import ControlPlaneError, NotFoundError, ViewNotReady, WorkerRefused
from ..newer import NewerApi, RestartRequest
from ..offsets import StopAndOffsets
from ..outcomes import SIDECAR, Accepted, Answer, Done, Forward, Provenance, Refusal, Relay, Reply, Source
from ..read_rule import ReadRule
from ..reads import Reads
from ..topics import Topics
from .request import AUTO_RESTART_OFF, AUTO_RESTART_ON, RESTART, STOP, BulkRequest, single_request
from .selector import Candidate, Selector, select

VIEW_NEEDED = "Bulk actions need the view (the worker's internal topics are not configured)."
VIEW_NOT_READY = "The view has not read the internal topics to their end yet."
# what may go wrong with one connector's action: its own result, never the whole bulk action's
ItemError = ControlPlaneError | UpstreamError | NoWorkerAvailable | UpstreamOverloaded


class Calls(Protocol):
    """What a single request's handler calls (the herder): the facades, and the forward to a worker."""

    reads: Reads
    topics: Topics
    offsets: StopAndOffsets
    newer: NewerApi
    auto_restart: AutoRestart

    async def forward(self, request: UpstreamRequest) -> UpstreamResponse: ...

    async def settle_write(self) -> None: ...


class Gate(Protocol):
    """The access rules for one principal (``rest.steps.access`` builds it)."""

    def sees(self, connector: str) -> bool:
        """Whether the principal may know of ``connector`` (a listing shows it)."""

    def refusal(self, method: str, path: str) -> ControlPlaneError | None:
        """The refusal of the single request ``method path`` (percent-encoded), or None when admitted."""


class OpenGate:
    """No access rules: every connector seen, every request admitted."""

    def sees(self, connector: str) -> bool:
        return True

    def refusal(self, method: str, path: str) -> ControlPlaneError | None:
        return None


@dataclass(frozen=True)
class ItemResult:
    """One connector's result: ``status`` of a success (the single request's: 202, 204, 200), else
    ``error``; in a dry run neither (it would be acted on) unless refused."""

    connector: str
    status: int | None = None
    error: ItemError | None = None
    refused_by_gate: bool = False  # the access rules refused it: its single request never left the sidecar
    duration_s: float = 0.0  # from its herder call to its outcome


@dataclass(frozen=True)
class BulkResult:
    request: BulkRequest
    items: tuple[ItemResult, ...]


class BulkActions:
    def __init__(self, herder: Calls, rule: ReadRule, concurrency: int, budget_s: float = 0.0) -> None:
        """``budget_s``: each connector's action's, as its single request's (``request_budget_s``; 0: none)."""
        self._herder = herder
        self._rule = rule
        self._concurrency = concurrency
        self._budget_s = budget_s

    async def run(self, request: BulkRequest, gate: Gate) -> Answer[BulkResult] | Refusal:
        view = self._rule.view
        if view is None:
            return Refusal(NotFoundError(VIEW_NEEDED), Provenance(Source.VIEW))
        if not view.ready:
            return Refusal(ViewNotReady(VIEW_NOT_READY), Provenance(Source.VIEW))
        await self._rule.synced(("config", "status"))
        candidates = self._candidates(request.selector, gate)
        if isinstance(candidates, Refusal):
            return candidates
        selection = select(request.selector, candidates)
        missing = {n: ItemResult(n, error=NotFoundError(f"Connector {n} not found")) for n in selection.missing}

        async def one(name: str) -> ItemResult:
            if name in missing:
                return missing[name]
            single = single_request(request, name)
            refused = gate.refusal(single.method, single.path)
            if refused is not None:
                return ItemResult(name, error=refused, refused_by_gate=True)
            if request.dry_run:
                return ItemResult(name)
            if self._budget_s:  # this connector's own (each item is a task: its own context)
                REQUEST_DEADLINE.set(asyncio.get_running_loop().time() + self._budget_s)
            started = time.perf_counter()
            done = await self._act(request, name)
            return replace(done, duration_s=time.perf_counter() - started)

        names = request.selector.names if request.selector.names is not None else selection.picked
        picked = set(selection.picked) | set(missing)
        chosen = [n for n in names if n in picked]
        items = [i for i in await each_bounded(chosen, self._concurrency, one) if i is not None]
        if any(i.status is not None for i in items):
            await self._herder.settle_write()
        return Answer(BulkResult(request, tuple(items)), SIDECAR)

    def _candidates(self, selector: Selector, gate: Gate) -> list[Candidate] | Refusal:
        view = self._rule.view
        assert view is not None
        state = view.state
        gauges = self._herder.reads.state_gauges()
        users: frozenset[str] = frozenset()
        if selector.topic is not None:
            using = self._herder.topics.connectors_using(selector.topic)
            if isinstance(using, Refusal):
                return using
            users = frozenset(using.value.connectors)
        candidates = []
        for name, config in state.connector_configs.items():
            if not gate.sees(name):
                continue
            gauge = gauges.connectors.get(name) if gauges is not None else None
            candidates.append(
                Candidate(
                    name,
                    gauge.state if gauge is not None else None,
                    frozenset(gauge.tasks) if gauge is not None else frozenset(),
                    (config.get(CONNECTOR_CLASS_KEY) or "").strip(),
                    state.connector_type(name),
                    frozenset({selector.topic}) if selector.topic is not None and name in users else frozenset(),
                )
            )
        return candidates

    async def _act(self, request: BulkRequest, name: str) -> ItemResult:
        """The single request's herder call, and the forward where its outcome is "forward"."""
        single = single_request(request, name)
        try:
            outcome = await self._outcome(request, name)
            if isinstance(outcome, Forward):
                upstream = UpstreamRequest(single.method, single.path, single.query, retry_rebalance=True)
                answer = await self._herder.forward(upstream)
                if outcome.rewrite is not None:
                    answer = await outcome.rewrite(answer)
                if 200 <= answer.status < 300:
                    return ItemResult(name, answer.status)
                return ItemResult(name, error=WorkerRefused.of(answer.status, answer.body))
            return _result(name, outcome)
        except (ControlPlaneError, UpstreamError, NoWorkerAvailable, UpstreamOverloaded) as err:
            return ItemResult(name, error=err)

    def _outcome(self, request: BulkRequest, name: str) -> Awaitable[object]:
        herder, action = self._herder, request.action
        calls: dict[str, Callable[[], Awaitable[object]]] = {
            STOP: lambda: herder.offsets.stop(name),
            RESTART: lambda: herder.newer.restart(
                RestartRequest(name, only_failed=request.only_failed, include_tasks=request.include_tasks)
            ),
            AUTO_RESTART_ON: lambda: herder.auto_restart.choose(name, True),
            AUTO_RESTART_OFF: lambda: herder.auto_restart.choose(name, False),
        }
        call = calls.get(action)
        return call() if call is not None else _forward()  # pause, resume, delete: the workers' own


async def _forward() -> Forward[None]:
    return Forward()


def _result(name: str, outcome: object) -> ItemResult:
    """A domain outcome other than "forward" as the single request's status (``rest.entities.responses``)."""
    if isinstance(outcome, Refusal):
        return ItemResult(name, error=outcome.error)
    if isinstance(outcome, Relay):
        answer = outcome.response
        if 200 <= answer.status < 300:
            return ItemResult(name, answer.status)
        return ItemResult(name, error=WorkerRefused.of(answer.status, answer.body))
    if isinstance(outcome, Reply):
        return ItemResult(name, outcome.status)
    status = {Accepted: 202, Done: 204, Answer: 200}.get(type(outcome))
    if status is None:
        raise TypeError(f"unexpected outcome {outcome!r}")
    return ItemResult(name, status)


__all__ = ["VIEW_NEEDED", "BulkActions", "BulkResult", "Calls", "Gate", "ItemError", "ItemResult", "OpenGate"]
