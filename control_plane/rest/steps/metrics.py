"""The request metrics, a step of the request pipeline (``rest.serving.pipeline``): every request counted
and timed once (``metrics.Metrics.observe``), labelled by its route's template (``RouteTarget.label``: never
a name from the path) and its method, with the status of its final answer (a refusal of a later step
included)."""

from __future__ import annotations

import time

from ...metrics import Metrics
from ..request.exchange import Exchange, HttpReply
from ..routing.router import RouteTarget
from .step import Endpoint


class RequestMetrics:
    def __init__(self, metrics: Metrics) -> None:
        self._metrics = metrics

    async def __call__(self, exchange: Exchange, target: RouteTarget, then: Endpoint) -> HttpReply:
        started = time.perf_counter()
        reply = await then(exchange, target)
        self._metrics.observe(target.label, exchange.method, reply.status, time.perf_counter() - started)
        return reply


__all__ = ["RequestMetrics"]
