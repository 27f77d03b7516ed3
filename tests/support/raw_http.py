"""Raw HTTP/1.1 over loopback for the tests of the HTTP layer: workers that answer from a script and record
what reached them, the sidecar served by a real server (its own, or uvicorn as the reference), and a client
that sends bytes as they are and reads every byte of the answer."""

from __future__ import annotations

import asyncio
import contextlib
import re
from collections.abc import AsyncIterator

import uvicorn

from control_plane.rest import create_app
from control_plane.rest.serving.app import SidecarApp
from control_plane.rest.serving.server import HttpServer
from control_plane.settings import load_settings

from .ports import free_port

ROOT = b'{"version":"4.4.0","commit":"c","kafka_cluster_id":"k"}'
SERVER = b"Jetty(12.0.39)"
DATE = re.compile(rb"\r\ndate: [^\r]*\r\n")


CLOSE = b"Host: sidecar\r\nConnection: close\r\n"


class ScriptedWorker:
    """A worker whose answer depends on the request line's path: ``GET /`` reports Connect 4.4.0,
    ``/s/<status>`` answers that status with a body (none on 204 and 304), ``/chunked`` a chunked answer,
    ``/big`` a large one, any other 200; every request's bytes are kept (but the version probes')."""

    def __init__(self) -> None:
        self.requests: list[bytes] = []
        self.port = 0

    @property
    def lines(self) -> list[bytes]:
        """The request line of every request that reached the worker."""
        return [request.split(b"\r\n", 1)[0] for request in self.requests]

    @staticmethod
    def answer(line: bytes) -> bytes:
        method, target, _ = line.split(b" ", 2)
        if target == b"/":
            return b"HTTP/1.1 200 OK\r\nServer: %s\r\nContent-Length: %d\r\n\r\n%s" % (SERVER, len(ROOT), ROOT)
        if target.startswith(b"/big"):  # a body larger than one write (rest.serving.server.ONE_WRITE)
            body = b'{"x":"' + b"y" * 300_000 + b'"}'
            return b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body)
        if target.startswith(b"/chunked"):
            head = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
            return head + b"2\r\n{}\r\n0\r\n\r\n"
        status = int(target.split(b"/")[2]) if target.startswith(b"/s/") else 200
        body = b"" if status in (204, 304) else b'{"error_code":%d,"message":"m"}' % status
        length = b"" if status in (204, 304) else b"Content-Length: %d\r\n" % len(body)
        extra = b"X-Worker: yes\r\nConnection: keep-alive\r\nKeep-Alive: timeout=5\r\n"
        return b"HTTP/1.1 %d X\r\nContent-Type: application/json\r\n%s%s\r\n%s" % (
            status,
            extra,
            length,
            b"" if method == b"HEAD" else body,
        )

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with contextlib.suppress(asyncio.IncompleteReadError, ConnectionError):
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = next(
                    (int(h.split(b":", 1)[1]) for h in head.split(b"\r\n") if h.lower().startswith(b"content-length:")),
                    0,
                )
                body = await reader.readexactly(length) if length else b""
                line = head.split(b"\r\n", 1)[0]
                if line != b"GET / HTTP/1.1":
                    self.requests.append(head + body)
                writer.write(self.answer(line))
                await writer.drain()
        writer.close()

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[ScriptedWorker]:
        server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
        self.port = server.sockets[0].getsockname()[1]
        async with server:
            yield self


@contextlib.asynccontextmanager
async def served(app: SidecarApp, server: str = "sidecar") -> AsyncIterator[int]:
    """``app`` served on a free loopback port, its port yielded once it listens; stopped after. ``server``:
    ``sidecar``, the sidecar's own server (``rest.serving.server``: what the cli serves with); ``uvicorn``, uvicorn's
    httptools protocol through the app's ASGI side, the reference of what an HTTP/1.1 server answers."""
    if server == "sidecar":
        async with app.lifespan():
            http = HttpServer(app)
            await http.start("127.0.0.1", 0)
            try:
                yield http.port
            finally:
                await http.stop(grace_s=5)
        return
    port = free_port()
    config = uvicorn.Config(
        app,
        host="127.0.0.1",
        port=port,
        http="httptools",
        lifespan="on",
        log_config=None,
        access_log=False,
        server_header=False,  # the sidecar's answers carry the workers' Server and a Date (rest.steps.stamp)
        date_header=False,
    )
    reference = uvicorn.Server(config)
    task = asyncio.create_task(reference.serve())
    try:
        while not reference.started:  # noqa: ASYNC110 - uvicorn sets a flag, it has no event to wait on
            await asyncio.sleep(0.01)
        yield port
    finally:
        reference.should_exit = True
        await task


@contextlib.asynccontextmanager
async def sidecar_in_front_of(worker: ScriptedWorker) -> AsyncIterator[int]:
    app = create_app(load_settings(connect_urls=f"http://127.0.0.1:{worker.port}", view_enabled=False))
    async with served(app) as port:
        yield port


async def send_raw(port: int, request_line: bytes, body: bytes = b"") -> bytes:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    headers = b"host: sidecar\r\nconnection: close\r\n"
    if body:
        headers += b"content-type: application/json\r\ncontent-length: " + str(len(body)).encode() + b"\r\n"
    writer.write(request_line + b"\r\n" + headers + b"\r\n" + body)
    await writer.drain()
    answer = await reader.read()
    writer.close()
    return answer.split(b"\r\n", 1)[0]


async def exchange(port: int, data: bytes) -> bytes:
    """``data`` sent on one connection; everything the server sends back until it closes the connection."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(data)
    await writer.drain()
    try:
        async with asyncio.timeout(10):
            return await reader.read()
    finally:
        writer.close()
