"""The two headers a Connect worker's Jetty puts on every answer, ``Server`` and ``Date``, on the answers the
sidecar gives itself (a view's answer, a refusal, an emulated call): by them a client tells no answer of the
sidecar from a worker's. A worker's own answer keeps its own (passed through unchanged).

``Server`` is the value the workers last answered their liveness probe with (``ConnectUpstream.server_header``:
``Jetty(12.0.39)`` on 4.4.0, ``Jetty(9.4.x)`` on 3.4.1), none before any answered; ``Date`` is the time of the
answer in RFC 9110's IMF-fixdate, as Jetty writes it, made once a second.

``Stamp`` is the first step of the request pipeline (``rest.serving.pipeline``): it sees every answer last,
whoever gave it; ``Pipeline.cut_short`` stamps the answer to a request the shutdown cuts short with it."""

from __future__ import annotations

import time
from email.utils import formatdate

from ..request.exchange import Exchange, Headers, HttpReply
from ..request.runtime import RuntimeSlot
from ..routing.router import RouteTarget
from .step import Endpoint

_date: tuple[int, bytes] = (-1, b"")


def http_date() -> bytes:
    """The current time as an HTTP date (``Thu, 26 Nov 2026 03:29:10 GMT``), made once a second."""
    global _date
    second = int(time.time())
    if _date[0] != second:
        _date = (second, formatdate(second, usegmt=True).encode("ascii"))
    return _date[1]


def stamped(headers: Headers, server: bytes | None) -> Headers:
    """``headers`` with ``server`` and ``date`` first when they hold none (as Jetty puts them first)."""
    has_server = has_date = False
    for name, _ in headers:
        if len(name) in (4, 6):  # most names are neither: no lower() for them
            lowered = name.lower()
            has_server = has_server or lowered == b"server"
            has_date = has_date or lowered == b"date"
    added = [] if has_server or server is None else [(b"server", server)]
    if not has_date:
        added.append((b"date", http_date()))
    return added + headers if added else headers


class Stamp:
    """The step: ``stamped`` with the ``Server`` of the running sidecar's workers (none outside its lifespan)."""

    def __init__(self, slot: RuntimeSlot) -> None:
        self._slot = slot

    async def __call__(self, exchange: Exchange, target: RouteTarget, then: Endpoint) -> HttpReply:
        reply = await then(exchange, target)
        reply.headers = self.stamped(reply.headers)
        return reply

    def stamped(self, headers: Headers) -> Headers:
        runtime = self._slot.runtime
        return stamped(headers, runtime.upstream.server_header if runtime is not None else None)


__all__ = ["Stamp", "http_date", "stamped"]
