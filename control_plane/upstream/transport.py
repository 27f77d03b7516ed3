"""The transport under the upstream client: httpx's one-method seam (``AsyncBaseTransport``) over an
aiohttp connection pool, which sends the request target byte for byte.

httpx normalizes a URL when it parses it (``..`` and ``.`` segments resolved), and aiohttp, given a URL
as text, decodes what it need not encode (``%3B`` becomes ``;``, which the worker's HTTP server reads as
the start of a path parameter). A pass-through must not change what the client asked for: the client's
exact target (path and query, still percent-encoded) travels in the request's ``RAW_TARGET`` extension
and goes on the wire unchanged (``yarl.URL(..., encoded=True)``). aiohttp's own headers are not added.
Foreign errors are translated as httpx-aiohttp translates them (``upstream.errors.classify`` reads the
aiohttp cause of each).
"""

from __future__ import annotations

import aiohttp
import httpx
import yarl
from httpx_aiohttp.transport import AiohttpResponseStream, map_aiohttp_exceptions

from .wire import WirePool

RAW_TARGET = "sidecar_raw_target"  # request extension: the target as the client sent it (bytes)


class PassThroughTransport(httpx.AsyncBaseTransport):
    def __init__(self, max_connections: int, keepalive_s: float) -> None:
        self._max_connections = max_connections
        self._keepalive_s = keepalive_s
        self._session: aiohttp.ClientSession | None = None
        self._wire: WirePool | None = None

    @property
    def wire(self) -> WirePool:
        """The lean HTTP/1.1 pool (``upstream.wire``) for plain-HTTP workers, with the same limits."""
        if self._wire is None:  # made on first use: its semaphore belongs to the running loop
            self._wire = WirePool(self._max_connections, self._keepalive_s)
        return self._wire

    def _client(self) -> aiohttp.ClientSession:
        if self._session is None:  # made on first use: it needs the running loop
            self._session = aiohttp.ClientSession(
                connector=aiohttp.TCPConnector(limit=self._max_connections, keepalive_timeout=self._keepalive_s),
                # aiohttp adds Accept, Accept-Encoding, User-Agent and (on an empty PUT) a Content-Type of
                # its own; a pass-through proxy sends only what the client sent
                skip_auto_headers=("Accept", "Accept-Encoding", "User-Agent", "Content-Type"),
                auto_decompress=False,
            )
        return self._session

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        raw = request.extensions.get(RAW_TARGET)
        target = raw if isinstance(raw, bytes) else request.url.raw_path
        origin = f"{request.url.scheme}://{request.url.netloc.decode('ascii')}"
        url = yarl.URL(origin + target.decode("latin-1"), encoded=True)
        timeout = request.extensions.get("timeout", {})
        with map_aiohttp_exceptions():
            response = (
                await self._client()
                .request(
                    request.method,
                    url,
                    headers=[(name.decode("latin-1"), value.decode("latin-1")) for name, value in request.headers.raw],
                    data=request.content or None,
                    allow_redirects=False,
                    auto_decompress=False,
                    compress=None,
                    timeout=aiohttp.ClientTimeout(
                        sock_connect=timeout.get("connect"), sock_read=timeout.get("read"), connect=timeout.get("pool")
                    ),
                )
                .__aenter__()
            )
        extensions = {"http_version": b"HTTP/1.1"}
        if response.reason:
            extensions["reason_phrase"] = response.reason.encode()
        return httpx.Response(
            status_code=response.status,
            headers=response.raw_headers,
            stream=AiohttpResponseStream(response),
            request=request,
            extensions=extensions,
        )

    async def exchange(
        self,
        method: str,
        url: yarl.URL,
        headers: list[tuple[str, str]],
        body: bytes | None,
        limits: aiohttp.ClientTimeout,
    ) -> tuple[int, list[tuple[bytes, bytes]], bytes]:
        """The same exchange as ``handle_async_request`` without httpx's request and response objects
        (``ConnectUpstream`` calls it on its hot path): status, raw headers, raw body. Errors are httpx's,
        as there, so that ``classify`` reads them the same way."""
        with map_aiohttp_exceptions():
            async with self._client().request(
                method,
                url,
                headers=headers,
                data=body,
                allow_redirects=False,
                auto_decompress=False,
                compress=None,
                timeout=limits,
            ) as response:
                return response.status, list(response.raw_headers), await response.read()

    async def aclose(self) -> None:
        if self._wire is not None:
            await self._wire.aclose()
            self._wire = None
        if self._session is not None:
            await self._session.close()
            self._session = None


__all__ = ["RAW_TARGET", "PassThroughTransport"]
