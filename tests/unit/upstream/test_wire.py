"""The upstream's two transports, the lean HTTP/1.1 pool (plain-HTTP workers) and aiohttp's pool (HTTPS
workers, here over plain HTTP), send and answer exactly the same: the same request head byte for byte (Host
first, the Content-Length where the sidecar puts it), the same answer, the same errors. Raw socket servers
stand in for the worker."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable

import pytest
import uvloop

from control_plane.upstream import UpstreamRequest, UpstreamResponse
from control_plane.upstream.aiohttp_transport import AiohttpTransport
from control_plane.upstream.client import ConnectUpstream
from control_plane.upstream.errors import UpstreamTimeout, WorkerDisconnected, WorkerUnreachable
from control_plane.upstream.transport import Transport
from tests.support.ports import free_port

Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]

# the transport of each path: None is the default one (plain-HTTP workers over the lean pool)
PATHS = pytest.mark.parametrize("path", [pytest.param("lean", id="lean"), pytest.param("aiohttp", id="aiohttp")])


def transport_of(path: str) -> Transport | None:
    return AiohttpTransport(4, 5.0) if path == "aiohttp" else None


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
    # a Content-Length in each of its places
    UpstreamRequest("PATCH", "/connectors/c/config", b"", ((b"X-Z", b"z"),)),
    UpstreamRequest("DELETE", "/connectors/c", b"", ((b"X-Z", b"z"),), b"{}"),
    UpstreamRequest("OPTIONS", "/connectors", b"", ((b"X-Z", b"z"),)),
    UpstreamRequest("DELETE", "/connectors/d", b"", ((b"X-Z", b"z"),)),
]
# what the worker reads of each (its port as PORT)
HEADS = [
    b"GET /connectors/a%3Bb/status?expand=status&x=%3B HTTP/1.1\r\nHost: 127.0.0.1:PORT\r\naccept: */*\r\n\r\n",
    b"PUT /connectors/c/pause HTTP/1.1\r\nHost: 127.0.0.1:PORT\r\nContent-Length: 0\r\n\r\n",
    b"DELETE /connectors/c HTTP/1.1\r\nHost: 127.0.0.1:PORT\r\nContent-Length: 0\r\n\r\n",
    b"POST /connectors HTTP/1.1\r\nHost: 127.0.0.1:PORT\r\nContent-Type: application/json\r\nX-Custom: kept\r\n"
    b"Content-Length: 2\r\n\r\n{}",
    b"HEAD /connectors HTTP/1.1\r\nHost: 127.0.0.1:PORT\r\n\r\n",
    b"PROPFIND /x/../y HTTP/1.1\r\nHost: 127.0.0.1:PORT\r\nContent-Length: 0\r\n\r\n",
    b"GET /length HTTP/1.1\r\nHost: 127.0.0.1:PORT\r\n\r\n",
    b"DELETE /204 HTTP/1.1\r\nHost: 127.0.0.1:PORT\r\nContent-Length: 0\r\n\r\n",
    b"GET /continue HTTP/1.1\r\nHost: 127.0.0.1:PORT\r\n\r\n",
    b"GET /until-close HTTP/1.1\r\nHost: 127.0.0.1:PORT\r\n\r\n",
    b"GET /connectors HTTP/1.1\r\nHost: 127.0.0.1:PORT\r\n\r\n",
    b"PATCH /connectors/c/config HTTP/1.1\r\nHost: 127.0.0.1:PORT\r\nContent-Length: 0\r\nX-Z: z\r\n\r\n",
    b"DELETE /connectors/c HTTP/1.1\r\nHost: 127.0.0.1:PORT\r\nX-Z: z\r\nContent-Length: 2\r\n\r\n{}",
    b"OPTIONS /connectors HTTP/1.1\r\nHost: 127.0.0.1:PORT\r\nX-Z: z\r\n\r\n",
    b"DELETE /connectors/d HTTP/1.1\r\nHost: 127.0.0.1:PORT\r\nX-Z: z\r\nContent-Length: 0\r\n\r\n",
]


async def exchange(upstream: ConnectUpstream, requests: list[UpstreamRequest]) -> list[UpstreamResponse]:
    try:
        return [await upstream.forward(request) for request in requests]
    finally:
        await upstream.aclose()


def test_the_same_on_uvloop_as_the_sidecar_serves() -> None:
    """uvloop's transports are not ``asyncio.Transport`` subclasses: the lean path must not care."""
    uvloop.run(test_the_lean_path_sends_and_answers_what_the_aiohttp_path_does())


async def test_the_lean_path_sends_and_answers_what_the_aiohttp_path_does() -> None:
    lean_heads: list[bytes] = []
    aiohttp_heads: list[bytes] = []
    lean_connections: list[int] = []
    async with (
        worker(recording(lean_heads, lean_connections)) as lean_url,
        worker(recording(aiohttp_heads)) as aiohttp_url,
    ):
        lean = await exchange(ConnectUpstream([lean_url]), REQUESTS)
        through_aiohttp = await exchange(ConnectUpstream([aiohttp_url], transport=AiohttpTransport(4, 5.0)), REQUESTS)
    port_of = {lean_url: lean_url.rsplit(":", 1)[1].encode(), aiohttp_url: aiohttp_url.rsplit(":", 1)[1].encode()}
    assert [h.replace(port_of[lean_url], b"PORT") for h in lean_heads] == HEADS
    assert [h.replace(port_of[aiohttp_url], b"PORT") for h in aiohttp_heads] == HEADS
    for a, b in zip(lean, through_aiohttp, strict=True):
        assert (a.status, a.headers, a.body, a.framing) == (b.status, b.headers, b.body, b.framing)
    assert lean[0].body == b'{"a":1}' and (b"x-worker", b"w") not in [(n.lower(), v) for n, v in lean[0].headers]
    assert [r.status for r in lean[6:11]] == [404, 204, 200, 200, 201]
    assert lean[9].body == b"all of it\n" and lean[6].headers == [(b"X-A", b"1"), (b"x-a", b"2")]
    # kept alive: a new connection only after the HEAD answer and the answer that ended with its connection
    assert len(lean_connections) == 3


@PATHS
async def test_a_refused_connection_is_unreachable(path: str) -> None:
    upstream = ConnectUpstream([f"http://127.0.0.1:{free_port()}"], transport=transport_of(path), worker_down_s=0)
    try:
        with pytest.raises(WorkerUnreachable):
            await upstream._send_once(upstream.workers[0], UpstreamRequest("GET", "/"))
    finally:
        await upstream.aclose()


@PATHS
async def test_a_connection_closed_without_an_answer_is_disconnected(path: str) -> None:
    async def hang_up(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        writer.close()

    async with worker(hang_up) as url:
        upstream = ConnectUpstream([url], transport=transport_of(path))
        try:
            with pytest.raises(WorkerDisconnected):
                await upstream._send_once(url, UpstreamRequest("PUT", "/connectors/c/pause"))
        finally:
            await upstream.aclose()


@PATHS
async def test_a_malformed_answer_is_disconnected(path: str) -> None:
    async def garbled(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        writer.write(b"HTTP/1.1 2OO OK\r\n\r\n")
        await writer.drain()
        await asyncio.sleep(1)
        writer.close()

    async with worker(garbled) as url:
        upstream = ConnectUpstream([url], transport=transport_of(path))
        try:
            with pytest.raises(WorkerDisconnected):
                await upstream._send_once(url, UpstreamRequest("GET", "/connectors"))
        finally:
            await upstream.aclose()


@PATHS
async def test_a_worker_that_does_not_answer_times_out(path: str) -> None:
    async def silent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        await asyncio.sleep(5)
        writer.close()

    async with worker(silent) as url:
        upstream = ConnectUpstream([url], transport=transport_of(path), read_timeout_s=0.2)
        try:
            with pytest.raises(UpstreamTimeout):
                await upstream._send_once(url, UpstreamRequest("GET", "/connectors"))
        finally:
            await upstream.aclose()


@PATHS
async def test_a_worker_not_given_is_reached_by_send_to(path: str) -> None:
    """Another member of the workers' group (``domain.cluster.membership`` asks each one's ``GET /``)."""
    heads: list[bytes] = []
    async with worker(recording(heads)) as given, worker(recording(heads)) as member:
        upstream = ConnectUpstream([given], transport=transport_of(path))
        try:
            answer = await upstream.send_to(member, UpstreamRequest("GET", "/connectors"), 5)
            assert (answer.status, answer.body, answer.worker) == (201, b'{"a":1}', member)
            assert upstream.workers == (given,)  # never one requests are forwarded to
            with pytest.raises(WorkerUnreachable, match="not an http or https URL"):
                await upstream.send_to("w2:8083", UpstreamRequest("GET", "/"), 5)
        finally:
            await upstream.aclose()
    assert heads == [b"GET /connectors HTTP/1.1\r\nHost: " + member.removeprefix("http://").encode() + b"\r\n\r\n"]
