"""The sidecar's request limits, applied to every HTTP request before it is routed (one call site:
``dispatch.SidecarApp.__call__``, so the short path of proxied requests and Starlette's routes both get
them):

- a request head (request line and headers) over ``max_header_bytes``: 431 in Connect's error shape;
- a body over ``max_body_bytes``: 413 in Connect's error shape, at once when ``Content-Length`` says so,
  else as soon as the bytes read pass the limit (a chunked body);
- the request budget: the request's deadline (event-loop time) goes into its scope (``DEADLINE``), and
  every wait for a worker made for the request ends there (``upstream.ConnectUpstream`` reads it from
  ``UpstreamRequest.deadline``, or, for the requests the sidecar composes while serving it, from
  ``upstream.REQUEST_DEADLINE``): the client gets 504 in Connect's shape, or the view's answer where a
  route has one (``outcomes.respond``), instead of waiting for Connect's own 90 s;
- at shutdown, a request still under way when the grace period ends (the server cancels it) gets 503 in
  Connect's error shape rather than the server's plain-text 500.

What Connect's Jetty does for each, and why the sidecar differs, is in the README's Hardening section.
The limits of Jetty the sidecar mirrors on its own routes (414, 431 at 8192 bytes) are ``jaxrs``'s; a
``max_header_bytes`` above them only guards the sidecar itself.
"""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass

import orjson
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ..upstream import REQUEST_DEADLINE

SHUTTING_DOWN = "The sidecar is shutting down: the request did not end within its grace period"
DEADLINE = "sidecar.deadline"  # scope key: the request's deadline on the event loop's clock, or None


@dataclass(frozen=True)
class RequestLimits:
    """``max_*`` of 0: no limit; ``budget_s`` of 0: no budget."""

    max_header_bytes: int
    max_body_bytes: int
    budget_s: float

    def enter(self, scope: Scope, receive: Receive) -> tuple[tuple[int, str] | None, Receive]:
        """The refusal (status, message) of a request over a limit, else None with the ``receive`` to read
        its body with (counted) and its deadline put into the scope (``DEADLINE``). No await: the servers'
        short path (``dispatch.SidecarApp.serve_collected``) and ``__call__`` share it."""
        size, declared, chunked = _head(scope)
        if self.max_header_bytes and size > self.max_header_bytes:
            return (431, f"Request header fields are larger than {self.max_header_bytes} bytes"), receive
        if self.max_body_bytes and (declared or chunked):  # otherwise HTTP/1.1 framing says: no body
            if declared is not None and declared > self.max_body_bytes:
                return (413, body_message(self.max_body_bytes)), receive
            receive = _Counted(receive, self.max_body_bytes)
        scope[DEADLINE] = asyncio.get_running_loop().time() + self.budget_s if self.budget_s else None
        return None, receive

    async def __call__(self, scope: Scope, receive: Receive, send: Send, app: ASGIApp) -> None:
        """Refuse what is over a limit, else call ``app`` with the deadline in the scope and the body counted."""
        refused, receive = self.enter(scope, receive)
        if refused is not None:
            await _refuse(send, *refused)
            return
        token = REQUEST_DEADLINE.set(scope[DEADLINE])  # for the requests to workers the sidecar composes for it
        try:
            await app(scope, receive, send)  # a BodyTooLarge raised by receive: errors.EXCEPTION_HANDLERS' 413
        except asyncio.CancelledError:  # the server's grace period at shutdown ended (cli._serve)
            # refused by the server when the answer has begun (nothing else can be sent then)
            with contextlib.suppress(Exception):
                await _refuse(send, 503, SHUTTING_DOWN)
            raise
        finally:
            REQUEST_DEADLINE.reset(token)


class BodyTooLarge(Exception):
    """The body read so far passed ``max_body_bytes`` (raised by the request's ``receive``)."""

    def __init__(self, limit: int) -> None:
        super().__init__(body_message(limit))


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
                raise BodyTooLarge(self._limit)
        return message


def body_message(limit: int) -> str:
    return f"Request body is larger than {limit} bytes"


def head_size(scope: Scope) -> int:
    """The request head in bytes as the client sent it (request line, ``name: value`` lines, CRLFs)."""
    return _head(scope)[0]


def _head(scope: Scope) -> tuple[int, int | None, bool]:
    """The head's size, the declared ``Content-Length`` (None: none or unreadable), and whether the body
    is chunked: one pass over the headers (this runs for every request)."""
    raw = scope.get("raw_path") or str(scope["path"]).encode()
    query = scope.get("query_string", b"")
    size = len(scope["method"]) + len(raw) + (len(query) + 1 if query and b"?" not in raw else 0) + 14
    declared: int | None = None
    chunked = False
    headers = scope["headers"]
    for name, value in headers:
        size += len(name) + len(value)
        if name == b"content-length":
            declared = int(value) if value.isdigit() else None
        elif name == b"transfer-encoding":
            chunked = True
    return size + 4 * len(headers), declared, chunked


def refusal(status: int, message: str) -> tuple[list[tuple[bytes, bytes]], bytes]:
    """The headers and body of a refusal in Connect's error shape."""
    body = orjson.dumps({"error_code": status, "message": message})
    return [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())], body


async def _refuse(send: Send, status: int, message: str) -> None:
    headers, body = refusal(status, message)
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def deadline(scope: Scope) -> float | None:
    """The request's deadline (``DEADLINE``), None without a budget."""
    value = scope.get(DEADLINE)
    return value if isinstance(value, float) else None


__all__ = ["DEADLINE", "SHUTTING_DOWN", "BodyTooLarge", "RequestLimits", "deadline", "head_size", "refusal"]
