"""The one request pipeline. Every HTTP request, however it arrived (the sidecar's server, ``rest.server``,
or any ASGI server through ``rest.app.SidecarApp``), goes through ``Pipeline.serve``, and meets each step
exactly once, in this order:

1. the request limits (``rest.limits``): a head or body over its limit is refused, the request budget starts;
2. the admission hook (``rest.admission``);
3. access control (``rest.access``): a refusal, or the answer rewritten for the principal, and the audit;
4. the route the table gives it (``rest.router``: the worker's HTTP stack's refusals, then the handler) or,
   for a path the sidecar does not answer, the forward to a worker unchanged (``rest.proxy``); a change of
   connectors that succeeded is answered once every sidecar's reads show it (``Herder.settle_write``);
5. the request metrics, labelled by the route's template;
6. the workers' ``Server`` and a ``Date`` where the answer has none (``rest.stamp``).

Each step is a small method that calls the next (as httpx's ``Client.send``). Errors become answers at
step 4, through the one error mapper (``rest.errors``); the pipeline itself never raises but for
cancellation.
"""

from __future__ import annotations

import time

from starlette.requests import ClientDisconnect, Request
from starlette.responses import Response

from ...domain.herder import changes_connectors
from ...metrics import Metrics
from ...upstream import REQUEST_DEADLINE, NoWorkerAvailable, UpstreamTimeout
from ..errors import answer_for
from ..request.exchange import Exchange, HttpReply
from ..request.proxy import answer_headers, forward, log_level, upstream_request
from ..request.runtime import EXCHANGE, RuntimeSlot, current
from ..routing.router import ROUTER, Router, RouteTarget
from ..steps.access import AccessControl
from ..steps.admission import Admission, framed
from ..steps.limits import SHUTTING_DOWN, RequestLimits, refusal
from ..steps.stamp import stamped
from ..steps.unanswered import known_better, unanswered


class Pipeline:
    def __init__(
        self,
        *,
        slot: RuntimeSlot,
        metrics: Metrics,
        limits: RequestLimits | None = None,
        admission: Admission | None = None,
        router: Router = ROUTER,
    ) -> None:
        self._slot = slot
        self._metrics = metrics
        self._limits = limits
        self._admission = admission or Admission()
        self._access = AccessControl(slot)
        self._router = router

    async def serve(self, exchange: Exchange) -> HttpReply:
        """The answer to one request (steps 1 to 6)."""
        started = time.perf_counter()
        target = self._router.target(exchange)
        reply = await self._limited(exchange, target)
        self._metrics.observe(target.label, exchange.method, reply.status, time.perf_counter() - started)
        reply.headers = self.stamped(reply.headers)
        return reply

    def cut_short(self) -> HttpReply:
        """The answer to a request the server cancels when its shutdown grace period ends."""
        headers, body = refusal(503, SHUTTING_DOWN)
        return HttpReply(503, self.stamped(headers), body)

    def stamped(self, headers: list[tuple[bytes, bytes]]) -> list[tuple[bytes, bytes]]:
        runtime = self._slot.runtime
        return stamped(headers, runtime.upstream.server_header if runtime is not None else None)

    async def _limited(self, exchange: Exchange, target: RouteTarget) -> HttpReply:
        if self._limits is None:
            return await self._admitted(exchange, target)
        refused = self._limits.enter(exchange)
        if refused is not None:
            return HttpReply(refused[0], *refusal(*refused))
        token = REQUEST_DEADLINE.set(exchange.deadline)  # for the requests to workers the sidecar composes for it
        try:
            return await self._admitted(exchange, target)
        finally:
            REQUEST_DEADLINE.reset(token)

    async def _admitted(self, exchange: Exchange, target: RouteTarget) -> HttpReply:
        denied = None if self._admission.admits_everything else self._admission.admit(exchange)
        if denied is not None:
            return HttpReply(denied.status, framed(denied), denied.body)
        return await self._access.serve(exchange, lambda guarded: self._dispatched(guarded, target))

    async def _dispatched(self, exchange: Exchange, target: RouteTarget) -> HttpReply:
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
        the view's answer instead where it knows better or no worker answered (``rest.unanswered``)."""
        runtime = current(self._slot)
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


def changed_connectors(exchange: Exchange) -> bool:
    """A change of connectors (``domain.herder.changes_connectors``); a preview of the sidecar's is none."""
    return changes_connectors(exchange.method, exchange.path)


def _reply_of(response: Response) -> HttpReply:
    body = response.body  # a renderer's kept body (``outcomes.Serialized``) is not copied
    return HttpReply(response.status_code, response.raw_headers, body if isinstance(body, bytes) else bytes(body))


__all__ = ["Pipeline"]
