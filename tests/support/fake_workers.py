"""The Connect workers of the unit tests, as a transport under ``ConnectUpstream`` (``upstream.transport``):
the interface production's transports implement, with a respx router as the table of answers.

Each request goes to the router as the ``httpx.Request`` the worker would read (method, the worker's URL
and the target, the headers as they go on the wire, the body); the route's answer comes back as a real
transport returns one: status, raw headers, raw (still encoded) body. A route's ``side_effect`` exception
becomes the seam's error a real transport raises for that failure (``httpx.ConnectError``: the worker was
never reached, ``httpx.ReadTimeout``: no answer in time, ``httpx.RemoteProtocolError``: the connection broke).
A request waits the way it waits in aiohttp's pool (``upstream.waits``): until its deadline, or the liveness
probe's verdict on a hung worker.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import httpx
import respx

from control_plane.upstream.errors import UpstreamError, UpstreamTimeout, WorkerDisconnected, WorkerUnreachable
from control_plane.upstream.transport import Answer, Limits, WorkerRequest
from control_plane.upstream.waits import Waits

Handler = Callable[[httpx.Request], Awaitable[httpx.Response]]


def seam_error(worker: str, exc: httpx.HTTPError) -> UpstreamError:
    """The upstream seam's error for a failure an httpx exception names."""
    detail = str(exc) or type(exc).__name__
    if isinstance(exc, httpx.ConnectError | httpx.ConnectTimeout):
        return WorkerUnreachable(worker, f"cannot connect ({detail})")
    if isinstance(exc, httpx.PoolTimeout):
        return WorkerUnreachable(worker, f"no free connection in the pool ({detail})")
    if isinstance(exc, httpx.TimeoutException):
        return UpstreamTimeout(worker, f"no answer in time ({detail})")
    return WorkerDisconnected(worker, f"connection lost ({detail})")


class FakeWorkers:
    """Every worker answered by ``handler`` (a respx router's ``async_handler``, or any function of the
    request); ``answer`` is the hook a test's workers override (a worker that hangs, one that refuses)."""

    def __init__(self, handler: Handler) -> None:
        self.handler = handler
        self._waits = Waits()

    async def answer(self, request: httpx.Request) -> httpx.Response:
        return await self.handler(request)

    async def send(self, request: WorkerRequest, limits: Limits, deadline: float | None = None) -> Answer:
        worker = request.worker
        asked = httpx.Request(request.method, worker + request.target, headers=request.headers, content=request.body)
        async with self._waits.until(worker, deadline):
            try:
                answered = await self.answer(asked)
            except httpx.HTTPError as exc:
                raise seam_error(worker, exc) from exc
        # respx's answer is already read; a real transport hands back the bytes as they came
        body = b"".join([part async for part in answered.stream])  # type: ignore[union-attr]
        return answered.status_code, list(answered.headers.raw), body

    def stop_waiting(self, worker: str, detail: str, *, hung: bool = True) -> None:
        self._waits.stop_waiting(worker, detail, hung=hung)

    def exhausted(self) -> bool:
        return False

    async def aclose(self) -> None:
        return None


def fake_workers(router: respx.MockRouter) -> FakeWorkers:
    """The respx router as the workers."""
    return FakeWorkers(router.async_handler)


__all__ = ["FakeWorkers", "Handler", "fake_workers", "seam_error"]
