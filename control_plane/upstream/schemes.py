"""The transport to the workers of a cluster (``upstream.transport``): each worker reached by its URL's
scheme, decided once when the transport first meets it. Plain-HTTP workers over the lean HTTP/1.1 pool
(``upstream.wire``: a fraction of a general-purpose client's cost per request), HTTPS workers over aiohttp's
pool (``upstream.aiohttp_transport``: TLS). Each pool has the same limits and is made on first use.
"""

from __future__ import annotations

from collections.abc import Coroutine
from typing import Any

import yarl

from .aiohttp_transport import AiohttpTransport
from .errors import WorkerUnreachable
from .transport import Answer, Limits, Transport, WorkerRequest
from .wire import WirePool


class SchemeTransport:
    def __init__(self, max_connections: int, keepalive_s: float) -> None:
        self._max_connections = max_connections
        self._keepalive_s = keepalive_s
        self._plain: WirePool | None = None
        self._tls: AiohttpTransport | None = None
        self._of: dict[str, Transport] = {}  # per worker, the transport its scheme takes

    def _learn(self, worker: str) -> Transport:
        transport: Transport
        scheme = yarl.URL(worker).scheme
        if scheme == "http":
            if self._plain is None:
                self._plain = WirePool(self._max_connections, self._keepalive_s)
            transport = self._plain
        elif scheme == "https":
            if self._tls is None:
                self._tls = AiohttpTransport(self._max_connections, self._keepalive_s)
            transport = self._tls
        else:
            raise WorkerUnreachable(worker, "not an http or https URL")
        self._of[worker] = transport
        return transport

    def send(
        self, request: WorkerRequest, limits: Limits, deadline: float | None = None
    ) -> Coroutine[Any, Any, Answer]:
        """The worker's transport's ``send`` itself (no coroutine of its own around it: this is the hot path)."""
        transport = self._of.get(request.worker) or self._learn(request.worker)
        return transport.send(request, limits, deadline)

    def _made(self) -> tuple[Transport, ...]:
        return tuple(t for t in (self._plain, self._tls) if t is not None)

    def stop_waiting(self, worker: str, detail: str, *, hung: bool = True) -> None:
        for transport in self._made():
            transport.stop_waiting(worker, detail, hung=hung)

    def exhausted(self) -> bool:
        return any(transport.exhausted() for transport in self._made())

    async def aclose(self) -> None:
        for transport in self._made():
            await transport.aclose()
        self._plain = self._tls = None
        self._of.clear()


__all__ = ["SchemeTransport"]
