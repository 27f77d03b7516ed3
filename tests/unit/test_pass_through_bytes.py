"""The request target reaches the worker byte for byte, whatever the client put in it: the sidecar runs
on its own HTTP server (loopback, as the cli serves it), a raw socket sends the bytes, and a raw socket
server stands in for the worker and records the request line it got."""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import AsyncIterator
from typing import Any

import pytest
import uvicorn

from control_plane.rest import create_app
from control_plane.rest.app import SidecarApp
from control_plane.rest.exchange import Exchange
from control_plane.rest.router import ROUTER
from control_plane.rest.server import HttpServer
from control_plane.settings import load_settings


class RecordingWorker:
    """Answers every request ``{}`` and keeps its request line; ``GET /`` reports Connect 4.3.1."""

    def __init__(self) -> None:
        self.lines: list[bytes] = []
        self.port = 0

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with contextlib.suppress(asyncio.IncompleteReadError, ConnectionError):
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                line = head.split(b"\r\n", 1)[0]
                length = next(
                    (int(h.split(b":", 1)[1]) for h in head.split(b"\r\n") if h.lower().startswith(b"content-length:")),
                    0,
                )
                if length:
                    await reader.readexactly(length)
                body = (
                    b'{"version":"4.3.1","commit":"c","kafka_cluster_id":"k"}' if line == b"GET / HTTP/1.1" else b"{}"
                )
                if line != b"GET / HTTP/1.1":
                    self.lines.append(line)
                writer.write(
                    b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: "
                    + str(len(body)).encode()
                    + b"\r\n\r\n"
                    + body
                )
                await writer.drain()
        writer.close()

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[RecordingWorker]:
        server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
        self.port = server.sockets[0].getsockname()[1]
        async with server:
            yield self


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.asynccontextmanager
async def served(app: SidecarApp, server: str = "sidecar") -> AsyncIterator[int]:
    """``app`` served on a free loopback port, its port yielded once it listens; stopped after. ``server``:
    ``sidecar``, the sidecar's own server (``rest.server``: what the cli serves with); ``uvicorn``, uvicorn's
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
        server_header=False,  # the sidecar's answers carry the workers' Server and a Date (rest.stamp)
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
async def sidecar_in_front_of(worker: RecordingWorker) -> AsyncIterator[int]:
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


@pytest.mark.parametrize(
    "target",
    [
        pytest.param(b"/connectors/prod%3Bx/pause", id="encoded-semicolon"),
        pytest.param(b"/connectors/x/../../admin/loggers", id="dot-segments"),
        pytest.param(b"/connectors/x/%2E%2E/%2e%2e/admin/loggers", id="encoded-dot-segments"),
        pytest.param(b"/connectors/a%2Fb/pause?includeTasks=true&x=%3B", id="encoded-slash-and-query"),
        pytest.param(b"/connectors/caf%C3%A9/restart", id="utf-8"),
        pytest.param(b"/connectors/sp%20ace/restart", id="space"),
        pytest.param(b"/connectors//pause", id="empty-segment"),
        # a decoded %0A once matched no route (Starlette's `path` convertor is `.*`): 404 or 405 from the sidecar
        # (POST on the sidecar's own routes is Jersey's 405, answered by the sidecar: test_http_conformance)
        pytest.param(b"/connector-plugins/a%0Ab", id="encoded-newline"),
        pytest.param(b"/connectors/a%0Ab/tasks", id="encoded-newline-beside-a-sidecar-route"),
        pytest.param(b"/connectors/a/restart%0A", id="encoded-newline-at-the-end"),
    ],
)
async def test_the_target_reaches_the_worker_unchanged(target: bytes) -> None:
    async with RecordingWorker().running() as worker, sidecar_in_front_of(worker) as port:
        status = await send_raw(port, b"POST " + target + b" HTTP/1.1", b"{}")
    assert status == b"HTTP/1.1 200 OK"
    assert worker.lines == [b"POST " + target + b" HTTP/1.1"]


@pytest.mark.parametrize("method", [b"PROPFIND", b"PURGE", b"TRACE"])
async def test_methods_the_sidecar_does_not_know_go_through(method: bytes) -> None:
    async with RecordingWorker().running() as worker, sidecar_in_front_of(worker) as port:
        status = await send_raw(port, method + b" /connectors/c HTTP/1.1")
    assert status == b"HTTP/1.1 200 OK"
    assert worker.lines == [method + b" /connectors/c HTTP/1.1"]


@pytest.mark.parametrize(
    ("path", "method", "handler"),
    [
        pytest.param("/connectors/c/status/", "GET", "connector_status", id="status-slash"),
        pytest.param("/connectors/", "GET", "list_connectors", id="list-slash"),
        pytest.param("/connectors/c/tasks/0/status/", "GET", "task_status", id="task-status-slash"),
        pytest.param("/connectors/c/offsets/", "PATCH", "connector_offsets", id="offsets-slash"),
        pytest.param("/connectors/c/stop/", "PUT", "stop_connector", id="stop-slash"),
        pytest.param("/connectors/c/status/x", "GET", None, id="deeper-goes-through"),
        pytest.param("/connectors/c/config/", "PUT", "put_or_patch_config", id="config-put-slash"),
        pytest.param("/connectors/c/status", "DELETE", "405", id="no-such-method-answered-405-here"),
        pytest.param("/connectors/c/stat%75s", "GET", None, id="encoded-literal-is-not-the-route"),
    ],
)
def test_the_sidecars_own_routes_match_with_a_trailing_slash_as_the_workers_resources_do(
    path: str, method: str, handler: str | None
) -> None:
    """Jersey matches ``/connectors/{c}/status/`` to the same resource as ``/status`` (checked on 3.4.1
    and 4.3.1): the sidecar must answer both the same way. None: the request goes through to the worker;
    ``405``: the resource's own refusal answers (the resource lacks the method)."""

    async def nothing() -> Any:
        raise AssertionError("not read")

    target = ROUTER.target(Exchange(method, path.encode(), b"", [], nothing))
    if handler is None:
        assert target.resource is None
    elif handler == "405":
        assert target.resource is not None and target.handler is None
    else:
        assert target.handler is not None and target.handler.__name__ == handler
