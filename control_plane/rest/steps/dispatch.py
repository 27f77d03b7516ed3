"""The dispatch, where the request pipeline (``rest.serving.pipeline``) ends: the request served by the route
the table gives it (``routing.router``: the worker's HTTP stack's refusals, then the handler) or, for a
path the sidecar does not answer, forwarded to a worker unchanged (``request.proxy``; the view's answer
instead where it knows better or no worker answered, ``steps.unanswered``).

Every error raised on the way becomes its answer here, through the one error mapper (``rest.errors``). A
change of connectors that succeeded is answered once every sidecar's reads show it
(``Herder.settle_write``).
"""

from __future__ import annotations

from starlette.requests import ClientDisconnect, Request
from starlette.responses import Response

from ...domain.capabilities import Capabilities
from ...domain.herder import changes_connectors
from ...upstream import NoWorkerAvailable, UpstreamTimeout
from ..errors import answer_for
from ..request.exchange import Exchange, HttpReply
from ..request.proxy import answer_headers, forward, log_level, upstream_request
from ..request.runtime import EXCHANGE, RuntimeSlot, current
from ..routing.jaxrs import JETTY_12_SINCE, jetty_refusal
from ..routing.router import Router, RouteTarget
from .unanswered import known_better, unanswered


class Dispatch:
    """The endpoint of the pipeline's chain (``step.Endpoint``): it answers without a step after it."""

    def __init__(self, slot: RuntimeSlot, router: Router) -> None:
        self._slot = slot
        self._router = router

    async def __call__(self, exchange: Exchange, target: RouteTarget) -> HttpReply:
        try:
            if target.resource is None:
                reply = await self._forwarded(exchange)
            else:
                reply = await self._routed(exchange, target)
        except Exception as exc:  # noqa: BLE001 - every error has an answer (rest.errors)
            return _reply_of(answer_for(exc, exchange.path))
        runtime = self._slot.runtime
        if changed_connectors(exchange) and reply.status < 400 and runtime is not None:
            await runtime.herder.settle_write()
        return reply

    async def _routed(self, exchange: Exchange, target: RouteTarget) -> HttpReply:
        """The route's refusals (the worker's HTTP stack's, for a Connect route), then its handler."""
        assert target.resource is not None
        params = dict(target.params)  # the target is kept for the next request of the path
        refused = target.resource.refusal(exchange, params)
        if refused is None:
            assert target.handler is not None
            scope = exchange.scope(
                path_params=params, state={"runtime": self._slot.runtime}, router=self._router, **{EXCHANGE: exchange}
            )
            refused = await target.handler(Request(scope, exchange.receive))
        return _reply_of(refused)

    async def _forwarded(self, exchange: Exchange) -> HttpReply:
        """The request (its body read whole) forwarded to a worker: the worker's answer, framed for the client;
        the view's answer instead where it knows better or no worker answered (``steps.unanswered``)."""
        runtime = current(self._slot)
        refused = refused_by_every_worker(runtime.herder.capabilities, exchange)
        if refused is not None:
            return _reply_of(refused)
        chunks: list[bytes] = []
        more = True
        while more:
            message = await exchange.receive()
            if message["type"] == "http.disconnect":  # as Request.body(): the client went away
                raise ClientDisconnect()
            chunks.append(message.get("body", b""))
            more = message.get("more_body", False)
        body = chunks[0] if len(chunks) == 1 else b"".join(chunks)
        instead = known_better(runtime.herder, exchange)  # a connector the sidecar stopped
        if instead is None:
            try:
                answer = await forward(runtime.herder, upstream_request(exchange, body), log_level(runtime.settings))
            except (NoWorkerAvailable, UpstreamTimeout):  # a read with a view answer gets it
                instead = unanswered(runtime.herder, exchange)
                if instead is None:
                    raise
            else:
                return HttpReply(answer.status, answer_headers(exchange.method, answer), answer.body)
        return _reply_of(instead)


def refused_by_every_worker(capabilities: Capabilities, exchange: Exchange) -> Response | None:
    """Jetty 12's refusal of the request (``jaxrs.jetty_refusal``) when every live worker runs Jetty 12
    (Connect 4.0 or later) and would answer it so itself: the same answer, without sending the worker a
    request it answers by closing the connection, which under load reads as a connection lost (a write's
    outcome unknown). Older workers' Jetty 9 takes most of these paths (an encoded ``/`` in a name): they go
    through."""
    if not (capabilities.detected and capabilities.worker_has(JETTY_12_SINCE)):
        return None
    return jetty_refusal(exchange)


def changed_connectors(exchange: Exchange) -> bool:
    """A change of connectors (``domain.herder.changes_connectors``); a preview of the sidecar's is none."""
    return changes_connectors(exchange.method, exchange.path)


def _reply_of(response: Response) -> HttpReply:
    body = response.body  # a renderer's kept body (``responses.Serialized``) is not copied
    return HttpReply(response.status_code, response.raw_headers, body if isinstance(body, bytes) else bytes(body))


__all__ = ["Dispatch", "changed_connectors", "refused_by_every_worker"]
