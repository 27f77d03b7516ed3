"""The one shape of a step of the request pipeline (``rest.serving.pipeline``), and the chain built from a
list of them, as Starlette builds its middleware stack (``Starlette.build_middleware_stack``).

A step is called with the request (``Exchange``), where the route table sends it (``RouteTarget``) and the
rest of the chain (``then``, an ``Endpoint``); it answers an ``HttpReply``: its own (a refusal), or the one
``then`` gives, read or changed on its way out. The chain ends at an endpoint, which answers without a
``then`` (``steps.dispatch``). ``build`` links the steps once, the first outermost; a request then costs
one call a step.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Protocol

from ..request.exchange import Exchange, HttpReply
from ..routing.router import RouteTarget

Endpoint = Callable[[Exchange, RouteTarget], Awaitable[HttpReply]]


class PipelineStep(Protocol):
    def __call__(self, exchange: Exchange, target: RouteTarget, then: Endpoint) -> Awaitable[HttpReply]:
        """The answer to the request: the step's own, or ``then``'s."""


class _Link:
    """A step with the rest of the chain after it: an endpoint."""

    __slots__ = ("_step", "_then")

    def __init__(self, step: PipelineStep, then: Endpoint) -> None:
        self._step = step
        self._then = then

    def __call__(self, exchange: Exchange, target: RouteTarget) -> Awaitable[HttpReply]:
        return self._step(exchange, target, self._then)


def build(steps: Sequence[PipelineStep], endpoint: Endpoint) -> Endpoint:
    """``steps`` around ``endpoint`` as one callable: the first step sees the request first and its answer
    last."""
    chain = endpoint
    for step in reversed(steps):
        chain = _Link(step, chain)
    return chain


__all__ = ["Endpoint", "PipelineStep", "build"]
