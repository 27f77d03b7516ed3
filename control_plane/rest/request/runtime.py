"""The typed state the handlers read: the ``Runtime`` of the composition root, put into each routed
request's scope by the pipeline's dispatch (``rest.steps.dispatch``), and the request's ``Exchange`` beside it (what
a handler's forward is built from). ``herder(request)`` is the one place a handler gets the herder from."""

from __future__ import annotations

from starlette.requests import Request

from ...composition import Runtime
from ...domain.herder import Herder
from .exchange import Exchange

EXCHANGE = "sidecar.exchange"  # scope key of the request's Exchange


class RuntimeSlot:
    """Filled by the lifespan once everything started; emptied when it stops."""

    def __init__(self) -> None:
        self.runtime: Runtime | None = None


def runtime(request: Request) -> Runtime:
    return _running(request.state.runtime)


def current(slot: RuntimeSlot) -> Runtime:
    """The runtime of a slot, for a caller outside a handler (``rest.steps.dispatch``)."""
    return _running(slot.runtime)


def _running(value: object) -> Runtime:
    if not isinstance(value, Runtime):
        raise RuntimeError("the sidecar is not running (outside its lifespan)")
    return value


def herder(request: Request) -> Herder:
    return runtime(request).herder


def exchange_of(request: Request) -> Exchange:
    """The request's ``Exchange`` (the pipeline put it in the scope)."""
    found = request.scope[EXCHANGE]
    assert isinstance(found, Exchange)
    return found


__all__ = ["EXCHANGE", "RuntimeSlot", "current", "exchange_of", "herder", "runtime"]
