"""The pass-through handler: any Connect REST path and method, forwarded unchanged."""

from __future__ import annotations

import time
from collections.abc import Callable

import structlog
from starlette.convertors import Convertor, register_url_convertor
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import Receive, Scope, Send

from ..upstream import UpstreamRequest, UpstreamResponse
from .state import herder

log = structlog.get_logger("control_plane.proxy")


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


async def proxy(request: Request, rewrite: Callable[[UpstreamResponse], UpstreamResponse] | None = None) -> Response:
    """The client's request forwarded unchanged; ``rewrite`` reshapes the worker's answer (a newer release's
    shape of it)."""
    scope = request.scope
    path = scope.get("raw_path", b"").decode("latin-1") or scope["path"]
    path = path.split("?", 1)[0]
    started = time.perf_counter()
    answer = await herder(request).forward(
        UpstreamRequest(
            method=request.method,
            path=path,
            query=scope.get("query_string", b""),
            headers=tuple(scope["headers"]),
            body=await request.body(),
        )
    )
    log.info(
        "proxied",
        method=request.method,
        path=path,
        upstream=answer.worker,
        status=answer.status,
        attempts=answer.attempts,
        duration_ms=round((time.perf_counter() - started) * 1000, 2),
    )
    return relayed(rewrite(answer) if rewrite else answer, request.method)


def relayed(answer: UpstreamResponse, method: str) -> Response:
    """A worker's answer as the sidecar's, status, headers and body unchanged."""
    response = Response(status_code=answer.status)
    response.body = answer.body
    response.raw_headers = list(answer.headers)
    if method == "HEAD":
        response.raw_headers += [(b"content-length", v) for n, v in answer.framing if n == b"content-length"]
    elif answer.status >= 200 and answer.status not in (204, 304):  # RFC 9110 8.6: none on 1xx, 204
        response.raw_headers.append((b"content-length", str(len(answer.body)).encode()))
    return response
