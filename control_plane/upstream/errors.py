"""Errors of the upstream seam, translated where they enter (``classify``).

UpstreamError
 ├── WorkerUnreachable   the request never reached the worker (refused, DNS, connect timeout):
 │                        safe to send to another worker            retriable = True
 ├── WorkerDisconnected  the connection broke after the request may have been sent: only safe
 │                        methods go to another worker              retriable = False
 ├── UpstreamTimeout     the worker took the request but did not answer in time
 └── NoWorkerAvailable   every worker failed; carries each worker's error
"""

from __future__ import annotations

import httpx

try:  # the aiohttp transport wraps aiohttp's errors in httpx's, keeping the original as __cause__
    import aiohttp
except ImportError:  # pragma: no cover
    aiohttp = None  # type: ignore[assignment]


class UpstreamError(Exception):
    retriable = False

    def __init__(self, worker: str, detail: str) -> None:
        super().__init__(f"{worker}: {detail}")
        self.worker = worker
        self.detail = detail


class WorkerUnreachable(UpstreamError):
    retriable = True


class WorkerDisconnected(UpstreamError):
    pass


class UpstreamTimeout(UpstreamError):
    pass


class NoWorkerAvailable(Exception):
    def __init__(self, errors: list[UpstreamError]) -> None:
        self.errors = errors
        detail = "; ".join(str(e) for e in errors) or "no worker configured"
        super().__init__(f"No Kafka Connect worker answered: {detail}")


def classify(worker: str, exc: httpx.HTTPError) -> UpstreamError:
    cause = exc.__cause__
    detail = str(exc) or type(exc).__name__
    if isinstance(exc, httpx.ConnectError | httpx.ConnectTimeout):
        # httpx-aiohttp maps every aiohttp.ClientConnectionError to ConnectTimeout, a broken
        # keep-alive connection included: then the request may have been sent.
        if (
            aiohttp is not None
            and isinstance(cause, aiohttp.ClientConnectionError)
            and not isinstance(cause, aiohttp.ClientConnectorError | aiohttp.ConnectionTimeoutError)
        ):
            return WorkerDisconnected(worker, f"connection lost ({detail})")
        return WorkerUnreachable(worker, f"cannot connect ({detail})")
    if isinstance(exc, httpx.PoolTimeout):
        return WorkerUnreachable(worker, f"no free connection in the pool ({detail})")
    if isinstance(exc, httpx.TimeoutException):
        if aiohttp is not None and isinstance(cause, aiohttp.ConnectionTimeoutError):
            return WorkerUnreachable(worker, f"connect timed out ({detail})")
        return UpstreamTimeout(worker, f"no answer in time ({detail})")
    return WorkerDisconnected(worker, f"connection lost ({detail})")
