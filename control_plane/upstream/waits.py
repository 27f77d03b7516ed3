"""The waits of a transport that cannot see its requests on the wire (aiohttp's pool, the unit tests' fake
workers): each request awaits its worker inside a timeout scope that ends at its deadline, and the liveness
probe's verdict on a hung worker ends every such wait at once, the way it ends at its timeout
(``UpstreamTimeout``). Such a transport cannot tell whether a request has reached the worker yet, so a
worker found gone leaves its requests as they are: one still connecting meets its own refusal and goes to
another worker.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

from .errors import UpstreamTimeout


class Waits:
    def __init__(self) -> None:
        self._scopes: dict[str, set[asyncio.Timeout]] = {}  # per worker, the scopes of the requests awaiting it
        self._stopped: dict[str, str] = {}  # per worker, why the liveness probe ended the waits last

    @contextlib.asynccontextmanager
    async def until(self, worker: str, deadline: float | None) -> AsyncIterator[None]:
        """A wait for ``worker`` that ends at ``deadline`` (None: only at ``stop_waiting``), as
        ``UpstreamTimeout``; the errors of the seam inside pass as they are."""
        try:
            async with asyncio.timeout_at(deadline) as scope:
                waiting = self._scopes.setdefault(worker, set())
                waiting.add(scope)
                try:
                    yield
                finally:
                    waiting.discard(scope)
        except TimeoutError:
            raise UpstreamTimeout(worker, self._stopped.get(worker, "stopped answering")) from None

    def stop_waiting(self, worker: str, detail: str, *, hung: bool = True) -> None:
        self._stopped[worker] = detail
        if not hung:
            return
        now = asyncio.get_running_loop().time()
        for scope in tuple(self._scopes.get(worker, ())):
            if not scope.expired():  # one whose deadline has just passed ends as it is
                scope.reschedule(now)


__all__ = ["Waits"]
