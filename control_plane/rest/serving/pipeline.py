"""The one request pipeline. Every HTTP request, however it arrived (the sidecar's server, ``serving.server``,
or any ASGI server through ``serving.app.SidecarApp``), goes through ``Pipeline.serve``: the route table
says where it goes (``routing.router.RouteTarget``: a route of the sidecar, or a worker), then it meets each
step of ``Pipeline.steps`` exactly once, in this order, each step around the ones after it (the first sees
the request first and its answer last):

1. the stamp (``steps.stamp``): the workers' ``Server`` and a ``Date`` on the answer where it has none;
2. the request metrics (``steps.metrics``), labelled by the route's template, with the final status;
3. the request limits (``steps.limits``): a head or body over its limit is refused, the request budget
   starts;
4. the admission hook (``steps.admission``);
5. access control (``steps.access``): a refusal, or the answer rewritten for the principal, and the audit;
6. the dispatch (``steps.dispatch``), where the chain ends: the route's handler (after the worker's HTTP
   stack's refusals) or, for a path the sidecar does not answer, the forward to a worker unchanged; a
   change of connectors that succeeded is answered once every sidecar's reads show it
   (``Herder.settle_write``).

Every step has one shape (``steps.step.PipelineStep``) and the chain is built once from the list
(``steps.step.build``), as Starlette builds its middleware stack: a new concern is a new step module and an
entry of the list. Errors become answers at the dispatch, through the one error mapper (``rest.errors``);
the pipeline itself never raises but for cancellation.
"""

from __future__ import annotations

from ...metrics import Metrics
from ..request.exchange import Exchange, HttpReply
from ..request.runtime import RuntimeSlot
from ..routing.router import ROUTER, Router
from ..steps.access import AccessControl
from ..steps.admission import Admission
from ..steps.dispatch import Dispatch
from ..steps.limits import SHUTTING_DOWN, RequestLimits, refusal
from ..steps.metrics import RequestMetrics
from ..steps.stamp import Stamp
from ..steps.step import PipelineStep, build


class Pipeline:
    """The steps of every request, built once. ``limits`` None: no request limits (no step)."""

    def __init__(
        self,
        *,
        slot: RuntimeSlot,
        metrics: Metrics,
        limits: RequestLimits | None = None,
        admission: Admission | None = None,
        router: Router = ROUTER,
    ) -> None:
        self._router = router
        self._stamp = Stamp(slot)
        self.steps: tuple[PipelineStep, ...] = (
            self._stamp,
            RequestMetrics(metrics),
            *(() if limits is None else (limits,)),
            admission or Admission(),
            AccessControl(slot),
        )
        self._chain = build(self.steps, Dispatch(slot, router))

    async def serve(self, exchange: Exchange) -> HttpReply:
        """The answer to one request (steps 1 to 6)."""
        return await self._chain(exchange, self._router.target(exchange))

    def cut_short(self) -> HttpReply:
        """The answer to a request the server cancels when its shutdown grace period ends."""
        headers, body = refusal(503, SHUTTING_DOWN)
        return HttpReply(503, self._stamp.stamped(headers), body)


__all__ = ["Pipeline"]
