"""The transport to HTTPS workers (``upstream.transport``): aiohttp's connection pool, which speaks TLS, made
to pass a request through unchanged.

aiohttp, given a URL as text, decodes what it need not encode (``%3B`` becomes ``;``, which the worker's
HTTP server reads as the start of a path parameter): the target goes in as ``yarl.URL(..., encoded=True)``,
byte for byte. aiohttp adds headers of its own (Accept, Accept-Encoding, User-Agent, a Content-Type for a
body, a Content-Length where none is given): the first four are skipped, and the upstream client gives the
Content-Length wherever one goes, so aiohttp adds none. The answer's body comes back as it was sent (no
decompression). The deadline and the liveness probe's verdicts are a timeout scope per request
(``upstream.waits``).

aiohttp's errors are translated where they enter, by what they say of the request::

    aiohttp.ClientConnectorError (refused, DNS), ConnectionTimeoutError    WorkerUnreachable
    (connect timeout, or no free connection in time)
    SocketTimeoutError (no answer within the read timeout)                  UpstreamTimeout
    any other ClientError (ServerDisconnectedError, ClientOSError,          WorkerDisconnected
    ClientPayloadError, a malformed answer): the request may have been sent
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import aiohttp
import yarl

from .errors import ConnectionRefused, UpstreamError, UpstreamTimeout, WorkerDisconnected, WorkerUnreachable
from .transport import Answer, Limits, WorkerRequest
from .waits import Waits


def translated(worker: str, exc: aiohttp.ClientError) -> UpstreamError:
    """What ``exc``, met while sending a request to ``worker``, says of the request (see above)."""
    detail = str(exc) or type(exc).__name__
    if isinstance(exc, aiohttp.ClientConnectorError) and isinstance(exc.os_error, ConnectionRefusedError):
        return ConnectionRefused(worker, f"cannot connect ({detail})")
    if isinstance(exc, aiohttp.ClientConnectorError | aiohttp.ConnectionTimeoutError):
        return WorkerUnreachable(worker, f"cannot connect ({detail})")
    if isinstance(exc, aiohttp.SocketTimeoutError):
        return UpstreamTimeout(worker, f"no answer in time ({detail})")
    return WorkerDisconnected(worker, f"connection lost ({detail})")


@contextlib.contextmanager
def translating(worker: str) -> Iterator[None]:
    try:
        yield
    except aiohttp.ClientError as exc:
        raise translated(worker, exc) from exc


class AiohttpTransport:
    def __init__(self, max_connections: int, keepalive_s: float) -> None:
        self._max_connections = max_connections
        self._keepalive_s = keepalive_s
        self._session: aiohttp.ClientSession | None = None
        self._origins: dict[str, str] = {}  # per worker, its scheme and authority (derived once)
        self._timeouts: tuple[Limits, aiohttp.ClientTimeout] | None = None  # the last limits, as aiohttp's
        self._waits = Waits()

    def _client(self) -> aiohttp.ClientSession:
        if self._session is None:  # made on first use: it needs the running loop
            self._session = aiohttp.ClientSession(
                connector=aiohttp.TCPConnector(limit=self._max_connections, keepalive_timeout=self._keepalive_s),
                # aiohttp adds Accept, Accept-Encoding, User-Agent and (for a body) a Content-Type of its own; a
                # pass-through proxy sends only what the client sent
                skip_auto_headers=("Accept", "Accept-Encoding", "User-Agent", "Content-Type"),
                auto_decompress=False,
            )
        return self._session

    def _origin(self, worker: str) -> str:
        origin = self._origins.get(worker)
        if origin is None:
            url = yarl.URL(worker)
            origin = self._origins[worker] = f"{url.scheme}://{url.host_port_subcomponent}"
        return origin

    def _timeout(self, limits: Limits) -> aiohttp.ClientTimeout:
        if self._timeouts is None or self._timeouts[0] is not limits:
            timeout = aiohttp.ClientTimeout(
                sock_connect=limits.connect_s, sock_read=limits.read_s, connect=limits.pool_s
            )
            self._timeouts = (limits, timeout)
        return self._timeouts[1]

    async def send(self, request: WorkerRequest, limits: Limits, deadline: float | None = None) -> Answer:
        worker = request.worker
        url = yarl.URL(self._origin(worker) + request.target, encoded=True)
        headers = [(name.decode("latin-1"), value.decode("latin-1")) for name, value in request.headers]
        async with self._waits.until(worker, deadline):
            with translating(worker):
                async with self._client().request(
                    request.method,
                    url,
                    headers=headers,
                    data=request.body or None,
                    allow_redirects=False,
                    auto_decompress=False,
                    compress=None,
                    timeout=self._timeout(limits),
                ) as response:
                    return response.status, list(response.raw_headers), await response.read()

    def stop_waiting(self, worker: str, detail: str, *, hung: bool = True) -> None:
        self._waits.stop_waiting(worker, detail, hung=hung)

    def exhausted(self) -> bool:
        """Never said: aiohttp's pool does not tell, so a probe's timeout is taken as the worker's."""
        return False

    async def aclose(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None


__all__ = ["AiohttpTransport", "translated"]
