"""The sidecar's request limits, a step of the request pipeline (``rest.serving.pipeline``), before the
admission hook and access control (``RequestLimits`` is the step):

- a request head (request line and headers) over ``max_header_bytes``: 431 in Connect's error shape;
- a body over ``max_body_bytes``: 413 in Connect's error shape, at once when ``Content-Length`` says so,
  else as soon as the bytes read pass the limit (a chunked body);
- the request budget: the request's deadline (event-loop time) goes into its ``Exchange``, and every wait
  for a worker made for the request ends there (``upstream.ConnectUpstream`` reads it from
  ``UpstreamRequest.deadline``, or, for the requests the sidecar composes while serving it, from
  ``upstream.REQUEST_DEADLINE``): the client gets 504 in Connect's shape, or the view's answer where a
  route has one (``entities.responses.respond``), instead of waiting for Connect's own 90 s;
- at shutdown, a request still under way when the grace period ends (the server cancels it) gets 503 in
  Connect's error shape (``SHUTTING_DOWN``) rather than a plain-text 500.

Connect's Jetty has no body limit and a fixed head limit; the sidecar guards itself with both (the docs'
page on hardening says why). The limits of Jetty the sidecar mirrors on its own routes (414, 431 at 8192
bytes) are ``routing.jaxrs``'s; a ``max_header_bytes`` above them only guards the sidecar itself.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from starlette.types import Message, Receive

from ...upstream import REQUEST_DEADLINE
from ..errors import BodyTooLarge, error_body
from ..request.exchange import Exchange, HttpReply
from ..routing.router import RouteTarget
from .step import Endpoint

SHUTTING_DOWN = "The sidecar is shutting down: the request did not end within its grace period"


@dataclass(frozen=True)
class RequestLimits:
    """``max_*`` of 0: no limit; ``budget_s`` of 0: no budget."""

    max_header_bytes: int
    max_body_bytes: int
    budget_s: float

    def enter(self, exchange: Exchange) -> tuple[int, str] | None:
        """The refusal (status, message) of a request over a limit, else None, its body read through
        ``receive`` counted from now on and its deadline set."""
        size, declared, chunked = _head(exchange)
        if self.max_header_bytes and size > self.max_header_bytes:
            return 431, f"Request header fields are larger than {self.max_header_bytes} bytes"
        if self.max_body_bytes and (declared or chunked):  # otherwise HTTP/1.1 framing says: no body
            if declared is not None and declared > self.max_body_bytes:
                return 413, body_message(self.max_body_bytes)
            exchange.receive = _Counted(exchange.receive, self.max_body_bytes)
        exchange.deadline = asyncio.get_running_loop().time() + self.budget_s if self.budget_s else None
        return None

    async def __call__(self, exchange: Exchange, target: RouteTarget, then: Endpoint) -> HttpReply:
        """The step: a request over a limit refused; else served within its budget (its deadline also in
        ``REQUEST_DEADLINE``, for the requests to workers the sidecar composes for it)."""
        refused = self.enter(exchange)
        if refused is not None:
            return HttpReply(refused[0], *refusal(*refused))
        token = REQUEST_DEADLINE.set(exchange.deadline)
        try:
            return await then(exchange, target)
        finally:
            REQUEST_DEADLINE.reset(token)


class _Counted:
    """``receive`` that raises ``BodyTooLarge`` once the body passes ``limit`` bytes."""

    def __init__(self, receive: Receive, limit: int) -> None:
        self._receive = receive
        self._limit = self._left = limit

    async def __call__(self) -> Message:
        message = await self._receive()
        if message["type"] == "http.request":
            self._left -= len(message.get("body", b""))
            if self._left < 0:
                raise BodyTooLarge(body_message(self._limit))
        return message


def body_message(limit: int) -> str:
    return f"Request body is larger than {limit} bytes"


def _head(exchange: Exchange) -> tuple[int, int | None, bool]:
    """The head's size as the client sent it (request line, ``name: value`` lines, CRLFs), the declared
    ``Content-Length`` (None: none or unreadable), and whether the body is chunked: one pass over the
    headers (this runs for every request)."""
    query = exchange.query
    size = len(exchange.method) + len(exchange.raw_path) + (len(query) + 1 if query else 0) + 14
    declared: int | None = None
    chunked = False
    headers = exchange.headers
    for name, value in headers:
        size += len(name) + len(value)
        if name == b"content-length":
            declared = int(value) if value.isdigit() else None
        elif name == b"transfer-encoding":
            chunked = True
    return size + 4 * len(headers), declared, chunked


def refusal(status: int, message: str) -> tuple[list[tuple[bytes, bytes]], bytes]:
    """The headers and body of a refusal in Connect's error shape."""
    body = error_body(status, message)
    return [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())], body


__all__ = ["SHUTTING_DOWN", "RequestLimits", "body_message", "refusal"]
