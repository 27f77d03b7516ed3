"""Domain outcomes (``domain.outcomes``) as HTTP responses: an answer rendered in Connect's shape with
headers that say where it came from, a refusal through the one error mapper, a forward through the
pass-through proxy (and its fallback when no worker answers), 202 and 204 as Connect answers them."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import orjson
from starlette.requests import Request
from starlette.responses import Response

from ...domain.outcomes import Accepted, Answer, Done, Forward, Provenance, Refusal, Relay, Reply, Source
from ...upstream import NoWorkerAvailable, UpstreamTimeout
from ..errors import error_response
from ..request.proxy import proxy, relayed, warning

T = TypeVar("T")

SOURCE_HEADER = "x-sidecar-source"
STALE_HEADER = "x-sidecar-stale"
AGE_HEADER = "x-sidecar-view-age-seconds"


class Serialized(bytes):
    """A JSON body serialized already (kept by a renderer while the answer does not change): sent as it is."""


def json_response(data: object, status: int = 200) -> Response:
    body = data if isinstance(data, Serialized) else orjson.dumps(data)
    return Response(body, status_code=status, media_type="application/json")


def _mark(response: Response, provenance: Provenance) -> Response:
    if provenance.source is Source.VIEW:
        response.headers[SOURCE_HEADER] = "view"
    if provenance.stale:
        age = provenance.age_s
        response.headers[STALE_HEADER] = "true"
        response.headers[AGE_HEADER] = f"{age:.3f}" if age is not None else "unknown"
        response.headers["warning"] = '110 - "Response is Stale"'
    return response


def _warn(response: Response, warnings: tuple[str, ...]) -> Response:
    for text in warnings:
        response.headers.append("warning", warning(text))
    return response


def answered(outcome: Answer[T] | Refusal, render: Callable[[T], Any]) -> Response:
    """The sidecar's own answer (``render`` gives the JSON body) or refusal, marked with its provenance."""
    if isinstance(outcome, Refusal):
        return _mark(error_response(outcome.error), outcome.provenance)
    return _warn(_mark(json_response(render(outcome.value)), outcome.provenance), outcome.warnings)


async def respond(
    request: Request,
    outcome: Answer[T] | Refusal | Forward[T] | Accepted[T] | Done | Relay | Reply,
    render: Callable[[T], Any] = lambda value: value,
) -> Response:
    if isinstance(outcome, Forward):
        try:
            return _warn(await proxy(request, outcome.rewrite), outcome.warnings)
        except (NoWorkerAvailable, UpstreamTimeout):  # no worker answered (in time: the request budget)
            fallback = outcome.fallback() if outcome.fallback else None
            if fallback is None:
                raise
            return answered(fallback, render)
    if isinstance(outcome, Accepted):
        if outcome.value is None:
            return Response(status_code=202)
        return json_response(render(outcome.value), 202)
    if isinstance(outcome, Done):
        return Response(status_code=204)
    if isinstance(outcome, Relay):
        return _warn(relayed(outcome.response, request.method), outcome.warnings)
    if isinstance(outcome, Reply):
        if outcome.body is None:
            return Response(status_code=outcome.status)
        return json_response(outcome.body, outcome.status)
    return answered(outcome, render)


__all__ = ["AGE_HEADER", "SOURCE_HEADER", "STALE_HEADER", "Serialized", "answered", "json_response", "respond"]
