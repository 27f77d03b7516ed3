"""The forward to a worker, unchanged: for a path no route of the sidecar answers (``rest.steps.dispatch``), and
for a route whose outcome is "forward the request" (``rest.entities.responses``). Both build the upstream
request, log and frame the answer with the functions here.
"""

from __future__ import annotations

import time

import structlog
from starlette.requests import Request
from starlette.responses import Response

from ...domain.herder import Herder
from ...domain.outcomes import Rewrite
from ...settings import Settings
from ...upstream import UpstreamRequest, UpstreamResponse
from .exchange import Exchange, Headers
from .runtime import exchange_of, herder, runtime

log = structlog.get_logger("control_plane.proxy")


def upstream_request(exchange: Exchange, body: bytes) -> UpstreamRequest:
    """The request as the client sent it: its raw target (still percent-encoded), headers and body, with
    its deadline (the request budget, ``rest.steps.limits``). A rebalance 409 comes back as the worker gave
    it: the client's own backoff decides (Strimzi, kcctl and the like retry it)."""
    return UpstreamRequest(
        method=exchange.method,
        path=exchange.raw_path.decode("latin-1"),
        query=exchange.query,
        headers=tuple(exchange.headers),
        body=body,
        deadline=exchange.deadline,
        retry_rebalance=False,
    )


def warning(text: str) -> str:
    """A ``Warning`` header's value (RFC 9111 5.5: 199, miscellaneous warning; a quoted-string on one line)."""
    text = " ".join(text.replace("\\", "\\\\").replace('"', '\\"').split())
    return f'199 - "{text.encode("latin-1", "backslashreplace").decode("latin-1")}"'


def answer_headers(method: str, answer: UpstreamResponse) -> Headers:
    """The worker's headers (hop-by-hop ones removed by the upstream), the sidecar's warnings about the
    answer and its own framing."""
    headers = list(answer.headers)
    headers += [(b"warning", warning(text).encode("latin-1")) for text in answer.warnings]
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
    answer = await forward(herder(request), upstream_request(exchange_of(request), await request.body()), level)
    return relayed(await rewrite(answer) if rewrite else answer, request.method)


def relayed(answer: UpstreamResponse, method: str) -> Response:
    """A worker's answer as the sidecar's, status, headers and body unchanged."""
    response = Response(status_code=answer.status)
    response.body = answer.body
    response.raw_headers = answer_headers(method, answer)
    return response
