"""The upstream's lean path (straight to the aiohttp pool, no httpx objects) sends and answers exactly what
its httpx path sends and answers through the same transport: same request head byte for byte (Host first,
httpx's Content-Length), same answer, same errors. Raw socket servers stand in for the worker."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable

import httpx
import pytest
import uvloop

from control_plane.upstream import UpstreamRequest, UpstreamResponse
from control_plane.upstream.client import ConnectUpstream
from control_plane.upstream.errors import UpstreamTimeout, WorkerDisconnected, WorkerUnreachable
from control_plane.upstream.transport import PassThroughTransport
from tests.support.ports import free_port

Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


class ThroughHttpx(httpx.AsyncBaseTransport):
    """The same aiohttp transport, reached the way any other transport is: through httpx's objects."""

    def __init__(self) -> None:
        self.inner = PassThroughTransport(4, 5.0)

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        return await self.inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self.inner.aclose()


@contextlib.asynccontextmanager
async def worker(handler: Handler) -> AsyncIterator[str]:
    server = await asyncio.start_server(handler, "127.0.0.1", 0)
    async with server:
        yield f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}"


def recording(heads: list[bytes], connections: list[int] | None = None) -> Handler:
    """Keeps each request's head and body; answers with a chunked body and a few headers, or as the path
    says: ``/length`` a Content-Length, ``/204`` no content, ``/until-close`` a body that ends with the
    connection (no framing), ``/continue`` a 100 Continue first."""

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if connections is not None:
            connections.append(1)
        with contextlib.suppress(asyncio.IncompleteReadError, ConnectionError):
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = next(
                    (int(h.split(b":", 1)[1]) for h in head.split(b"\r\n") if h.lower().startswith(b"content-length:")),
                    0,
                )
                heads.append(head + (await reader.readexactly(length) if length else b""))
                line = head.split(b"\r\n", 1)[0]
                if b"/length" in line:
                    writer.write(b"HTTP/1.1 404 Not Found\r\nContent-Length: 5\r\nX-A: 1\r\nx-a: 2\r\n\r\nnope!")
                elif b"/204" in line:
                    writer.write(b"HTTP/1.1 204 No Content\r\nX-B: b\r\n\r\n")
                elif b"/continue" in line:
                    writer.write(b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
                elif b"/until-close" in line:
                    writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nall of it\n")
                    await writer.drain()
                    break
                elif head.startswith(b"HEAD "):
                    writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 7\r\n\r\n")
                else:
                    writer.write(
                        b"HTTP/1.1 201 Created\r\nContent-Type: application/json\r\nX-Worker: w\r\n"
                        b"Connection: keep-alive, X-Worker\r\nTransfer-Encoding: chunked\r\n\r\n"
                        b'3\r\n{"a\r\n4\r\n":1}\r\n0\r\n\r\n'
                    )
                await writer.drain()
        writer.close()

    return handle


REQUESTS = [
    UpstreamRequest("GET", "/connectors/a%3Bb/status", b"expand=status&x=%3B", ((b"accept", b"*/*"),)),
    UpstreamRequest("PUT", "/connectors/c/pause"),
    UpstreamRequest("DELETE", "/connectors/c"),
    UpstreamRequest(
        "POST",
        "/connectors",
        b"",
        (
            (b"Content-Type", b"application/json"),
            (b"content-length", b"2"),
            (b"connection", b"keep-alive, x-hop"),
            (b"x-hop", b"1"),
            (b"host", b"sidecar:8084"),
            (b"X-Custom", b"kept"),
        ),
        b"{}",
    ),
    UpstreamRequest("HEAD", "/connectors"),
    UpstreamRequest("PROPFIND", "/x/../y"),
    UpstreamRequest("GET", "/length"),
    UpstreamRequest("DELETE", "/204"),
    UpstreamRequest("GET", "/continue"),
    UpstreamRequest("GET", "/until-close"),
    UpstreamRequest("GET", "/connectors"),
]


async def exchange(upstream: ConnectUpstream, requests: list[UpstreamRequest]) -> list[UpstreamResponse]:
    try:
        return [await upstream.forward(request) for request in requests]
    finally:
        await upstream.aclose()


def test_the_same_on_uvloop_as_the_sidecar_serves() -> None:
    """uvloop's transports are not ``asyncio.Transport`` subclasses: the lean path must not care."""
    uvloop.run(test_the_lean_path_sends_and_answers_what_the_httpx_path_does())


async def test_the_lean_path_sends_and_answers_what_the_httpx_path_does() -> None:
    lean_heads: list[bytes] = []
    httpx_heads: list[bytes] = []
    lean_connections: list[int] = []
    async with worker(recording(lean_heads, lean_connections)) as lean_url, worker(recording(httpx_heads)) as httpx_url:
        lean = await exchange(ConnectUpstream([lean_url]), REQUESTS)
        through_httpx = await exchange(ConnectUpstream([httpx_url], transport=ThroughHttpx()), REQUESTS)
    port_of = {lean_url: lean_url.rsplit(":", 1)[1].encode(), httpx_url: httpx_url.rsplit(":", 1)[1].encode()}
    assert [h.replace(port_of[lean_url], b"PORT") for h in lean_heads] == [
        h.replace(port_of[httpx_url], b"PORT") for h in httpx_heads
    ]
    assert lean_heads[0].startswith(b"GET /connectors/a%3Bb/status?expand=status&x=%3B HTTP/1.1\r\nHost: 127.0.0.1:")
    for a, b in zip(lean, through_httpx, strict=True):
        assert (a.status, a.headers, a.body, a.framing) == (b.status, b.headers, b.body, b.framing)
    assert lean[0].body == b'{"a":1}' and (b"x-worker", b"w") not in [(n.lower(), v) for n, v in lean[0].headers]
    assert [r.status for r in lean[6:]] == [404, 204, 200, 200, 201]
    assert lean[9].body == b"all of it\n" and lean[6].headers == [(b"X-A", b"1"), (b"x-a", b"2")]
    # kept alive: a new connection only after the HEAD answer and the answer that ended with its connection
    assert len(lean_connections) == 3


async def test_a_refused_connection_is_unreachable() -> None:
    upstream = ConnectUpstream([f"http://127.0.0.1:{free_port()}"], worker_down_s=0)
    try:
        with pytest.raises(WorkerUnreachable):
            await upstream._send_once(upstream.workers[0], UpstreamRequest("GET", "/"))
    finally:
        await upstream.aclose()


async def test_a_connection_closed_without_an_answer_is_disconnected() -> None:
    async def hang_up(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        writer.close()

    async with worker(hang_up) as url:
        upstream = ConnectUpstream([url])
        try:
            with pytest.raises(WorkerDisconnected):
                await upstream._send_once(url, UpstreamRequest("PUT", "/connectors/c/pause"))
        finally:
            await upstream.aclose()


async def test_a_worker_that_does_not_answer_times_out() -> None:
    async def silent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        await asyncio.sleep(5)
        writer.close()

    async with worker(silent) as url:
        upstream = ConnectUpstream([url], read_timeout_s=0.2)
        try:
            with pytest.raises(UpstreamTimeout):
                await upstream._send_once(url, UpstreamRequest("GET", "/connectors"))
        finally:
            await upstream.aclose()


@pytest.mark.parametrize("through_httpx", [pytest.param(False, id="lean"), pytest.param(True, id="httpx")])
async def test_a_worker_not_given_is_reached_by_send_to(through_httpx: bool) -> None:
    """Another member of the workers' group (``domain.cluster.membership`` asks each one's ``GET /``)."""
    heads: list[bytes] = []
    async with worker(recording(heads)) as given, worker(recording(heads)) as member:
        upstream = ConnectUpstream([given], transport=ThroughHttpx() if through_httpx else None)
        try:
            answer = await upstream.send_to(member, UpstreamRequest("GET", "/connectors"), 5)
            assert (answer.status, answer.body, answer.worker) == (201, b'{"a":1}', member)
            assert upstream.workers == (given,)  # never one requests are forwarded to
            with pytest.raises(WorkerUnreachable, match="not an http or https URL"):
                await upstream.send_to("w2:8083", UpstreamRequest("GET", "/"), 5)
        finally:
            await upstream.aclose()
    assert heads == [b"GET /connectors HTTP/1.1\r\nHost: " + member.removeprefix("http://").encode() + b"\r\n\r\n"]
