"""The typed state the handlers read: the ``Runtime`` of the composition root, put into every request's
scope by ``RuntimeScope`` (so it reaches handlers the same way under uvicorn and under an in-process ASGI
transport). ``herder(request)`` is the one place a handler gets it from."""

from __future__ import annotations

from starlette.requests import Request
from starlette.types import ASGIApp, Receive, Scope, Send

from ..composition import Runtime
from ..domain.herder import Herder


class RuntimeSlot:
    """Filled by the lifespan once everything started; emptied when it stops."""

    def __init__(self) -> None:
        self.runtime: Runtime | None = None


class RuntimeScope:
    """ASGI middleware: ``scope["state"]["runtime"]`` for every request."""

    def __init__(self, app: ASGIApp, slot: RuntimeSlot) -> None:
        self.app = app
        self.slot = slot

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            scope.setdefault("state", {})["runtime"] = self.slot.runtime
        await self.app(scope, receive, send)


def runtime(request: Request) -> Runtime:
    return _running(request.state.runtime)


def current(slot: RuntimeSlot) -> Runtime:
    """The runtime of a slot, for a caller outside Starlette's middleware (``dispatch.SidecarApp``)."""
    return _running(slot.runtime)


def _running(value: object) -> Runtime:
    if not isinstance(value, Runtime):
        raise RuntimeError("the sidecar is not running (outside its lifespan)")
    return value


def herder(request: Request) -> Herder:
    return runtime(request).herder


__all__ = ["RuntimeScope", "RuntimeSlot", "current", "herder", "runtime"]
