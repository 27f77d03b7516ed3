"""The one seam under the upstream client: a transport takes one request to one worker and returns the
worker's answer as it came (status, raw headers, raw body). Modelled on httpx's ``AsyncBaseTransport``: one
main method (``send``), nothing above it knows how the bytes travel, and every failure is an error of the
seam's own tree (``upstream.errors``), translated where it enters. So ``ConnectUpstream`` sends through
the lean HTTP/1.1 pool (``upstream.wire``), aiohttp's pool (``upstream.aiohttp_transport``) or the unit
tests' fake workers the same way, and decides failover, retries and budgets on the same errors.

The request is given as it goes on the wire: the target byte for byte as the client sent it (still
percent-encoded), the headers in order with the Host and Content-Length the upstream client put where they
go; a transport adds none of its own. The liveness probe speaks to the transport too: ``stop_waiting``
(a worker it found hung or gone: the requests awaiting it end as at their timeout, as far as the transport
can tell which ones have reached the worker) and ``exhausted`` (every pooled connection in use: a probe that
timed out may never have reached its worker).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

Headers = list[tuple[bytes, bytes]]
Answer = tuple[int, Headers, bytes]  # the worker's status, raw headers (in order) and raw body


@dataclass(frozen=True)
class Limits:
    """How long each wait of one request may take: connecting, the answer (from the request's end to the
    answer's), a free pooled connection."""

    connect_s: float
    read_s: float
    pool_s: float

    def within(self, left_s: float) -> Limits:
        """These limits, none longer than ``left_s`` (what is left of a request's budget); the read timeout
        as it is when only it is longer (the lean pool, ``upstream.wire``, takes the shorter of the two as
        its read timeout): no new object for a request with a usual budget."""
        if left_s >= max(self.connect_s, self.pool_s):
            return self
        left_s = max(left_s, 0.0)
        return Limits(min(self.connect_s, left_s), min(self.read_s, left_s), min(self.pool_s, left_s))


@dataclass(slots=True)
class WorkerRequest:
    """One request to one worker, as it goes on the wire. Made for every request and read only (not frozen:
    a frozen dataclass's ``__init__`` costs five times as much)."""

    worker: str  # the worker's URL (scheme, host, port): where the request goes, and its name in errors
    method: str
    target: str  # path and query, percent-encoded, sent byte for byte
    headers: Headers  # in order, Host first, Content-Length where it goes: sent as they are
    body: bytes = b""


class Transport(Protocol):
    async def send(self, request: WorkerRequest, limits: Limits, deadline: float | None = None) -> Answer:
        """``request``'s answer. Every wait ends within ``limits``, and at ``deadline`` (the event loop's
        time; None: at the limits only). Raises ``WorkerUnreachable`` when the request never reached the
        worker, ``WorkerDisconnected`` when the connection broke once it may have been sent,
        ``UpstreamTimeout`` when no answer came in time (or ``stop_waiting`` ended the wait)."""
        ...

    def stop_waiting(self, worker: str, detail: str, *, hung: bool = True) -> None:
        """The liveness probe found ``worker`` hung (``hung``) or gone: requests awaiting its answer end now
        with ``UpstreamTimeout(worker, detail)``. A transport that cannot tell whether a request has reached
        the worker yet leaves them as they are when it is gone (one still connecting meets its own refusal)."""
        ...

    def exhausted(self) -> bool:
        """Every pooled connection is in use: a request now waits for one before it reaches any worker."""
        ...

    async def aclose(self) -> None: ...


__all__ = ["Answer", "Headers", "Limits", "Transport", "WorkerRequest"]
