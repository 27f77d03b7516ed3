"""The pass-through handler: any Connect REST path and method, forwarded unchanged.

Two ways in, one behaviour: ``PassThrough`` is the catch-all route's endpoint (requests that reach
Starlette's router), and ``dispatch.SidecarApp`` calls ``forward`` directly for paths no route of the
sidecar answers. Both build the upstream request, log and frame the answer with the functions here.
"""

from __future__ import annotations

import time

import structlog
from starlette.convertors import Convertor, register_url_convertor
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import Receive, Scope, Send

from ..domain.herder import Herder
from ..domain.outcomes import Rewrite
from ..settings import Settings
from ..upstream import UpstreamRequest, UpstreamResponse
from .limits import deadline
from .state import herder, runtime

log = structlog.get_logger("control_plane.proxy")

Headers = list[tuple[bytes, bytes]]


class AnyTarget(Convertor[str]):
    """The catch-all route's parameter: every decoded path, line breaks included. Starlette's own ``path``
    convertor is ``.*``, which stops at a decoded ``%0A``: such a request matched no route (Starlette's
    404) or only a sidecar route of another method (405) instead of reaching the worker."""

    regex = "(?s:.*)"

    def convert(self, value: str) -> str:
        return value

    def to_string(self, value: str) -> str:
        return value


register_url_convertor(ANY_TARGET := "any_target", AnyTarget())


class PassThrough:
    """The catch-all route's endpoint as an ASGI app, so that every method reaches it, including ones
    neither the sidecar nor Starlette knows (a function endpoint would answer those 405)."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        response = await proxy(Request(scope, receive))
        await response(scope, receive, send)


def upstream_request(scope: Scope, body: bytes) -> UpstreamRequest:
    """The request as the client sent it: its raw target (still percent-encoded), headers and body."""
    path = scope.get("raw_path", b"").decode("latin-1") or scope["path"]
    return UpstreamRequest(
        method=scope["method"],
        path=path.split("?", 1)[0],
        query=scope.get("query_string", b""),
        headers=tuple(scope["headers"]),
        body=body,
        deadline=deadline(scope),  # the request budget (rest.limits)
    )


def answer_headers(method: str, answer: UpstreamResponse) -> Headers:
    """The worker's headers (hop-by-hop ones removed by the upstream) and the sidecar's own framing."""
    headers = list(answer.headers)
    if method == "HEAD":
        headers += [(b"content-length", v) for n, v in answer.framing if n == b"content-length"]
    elif answer.status >= 200 and answer.status not in (204, 304):  # RFC 9110 8.6: none on 1xx, 204
        headers.append((b"content-length", str(len(answer.body)).encode()))
    return headers


def log_level(settings: Settings) -> str | None:
    """The level of the line per proxied request: info with ``log_requests``, else debug (none at all when
    debug lines are not shown: even a filtered structlog call costs a bound logger per request)."""
    return "info" if settings.log_requests else "debug" if settings.log_level == "debug" else None


async def forward(herder: Herder, request: UpstreamRequest, level: str | None) -> UpstreamResponse:
    """The herder's forward, and its log line at ``level`` (``log_level``)."""
    started = time.perf_counter()
    answer = await herder.forward(request)
    if level is None:
        return answer
    getattr(log, level)(
        "proxied",
        method=request.method,
        path=request.path,
        upstream=answer.worker,
        status=answer.status,
        attempts=answer.attempts,
        duration_ms=round((time.perf_counter() - started) * 1000, 2),
    )
    return answer


async def proxy(request: Request, rewrite: Rewrite | None = None) -> Response:
    """The client's request forwarded unchanged; ``rewrite`` reshapes the worker's answer (a newer release's
    shape of it, ``domain.outcomes``)."""
    level = log_level(runtime(request).settings)
    answer = await forward(herder(request), upstream_request(request.scope, await request.body()), level)
    return relayed(await rewrite(answer) if rewrite else answer, request.method)


def relayed(answer: UpstreamResponse, method: str) -> Response:
    """A worker's answer as the sidecar's, status, headers and body unchanged."""
    response = Response(status_code=answer.status)
    response.body = answer.body
    response.raw_headers = answer_headers(method, answer)
    return response
