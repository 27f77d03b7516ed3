"""The pass-through served below ASGI (``rest.server.SidecarProtocol``) answers byte for byte what uvicorn's
own httptools protocol answered through the ASGI app, sends the worker the same bytes, and passes every
request through the admission hook (``rest.admission``) exactly once, whichever way it is served."""

from __future__ import annotations

import asyncio
import contextlib
import re
from collections.abc import AsyncIterator
from typing import Any

import pytest
import uvicorn
from uvicorn.protocols.http.httptools_impl import RequestResponseCycle

from control_plane.rest import create_app
from control_plane.rest.admission import Admission, Arrival, Denied, denied_json
from control_plane.rest.server import HEADER_OPTIONS, SidecarProtocol, available, protocol, sidecar_app
from control_plane.settings import load_settings
from tests.unit.test_pass_through_bytes import served

ROOT = b'{"version":"4.3.1","commit":"c","kafka_cluster_id":"k"}'
SERVER = b"Jetty(12.0.34)"
DATE = re.compile(rb"\r\ndate: [^\r]*\r\n")


class ScriptedWorker:
    """A worker whose answer depends on the request line's path: ``/s/<status>`` answers that status with
    a body (none on 204 and 304), ``/chunked`` a chunked answer, ``/big`` a large one; every request's
    bytes are kept."""

    def __init__(self) -> None:
        self.requests: list[bytes] = []
        self.port = 0

    @staticmethod
    def answer(line: bytes) -> bytes:
        method, target, _ = line.split(b" ", 2)
        if target == b"/":
            return b"HTTP/1.1 200 OK\r\nServer: %s\r\nContent-Length: %d\r\n\r\n%s" % (SERVER, len(ROOT), ROOT)
        if target.startswith(b"/big"):  # a body larger than one write (rest.server.ONE_WRITE)
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
async def sidecar(
    worker: ScriptedWorker, http: Any, admission: Admission | None = None, **settings: Any
) -> AsyncIterator[int]:
    app = create_app(
        load_settings(connect_urls=f"http://127.0.0.1:{worker.port}", view_enabled=False, **settings),
        admission=admission,
    )
    async with served(app, http, **HEADER_OPTIONS) as port:  # as the cli serves
        yield port


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


CLOSE = b"Host: sidecar\r\nConnection: close\r\n"
REQUESTS = [
    pytest.param(b"GET /connectors/c HTTP/1.1\r\n" + CLOSE + b"\r\n", id="get"),
    pytest.param(b"HEAD /s/200 HTTP/1.1\r\n" + CLOSE + b"\r\n", id="head"),
    pytest.param(b"DELETE /s/204 HTTP/1.1\r\n" + CLOSE + b"\r\n", id="204"),
    pytest.param(b"GET /s/304 HTTP/1.1\r\n" + CLOSE + b"\r\n", id="304"),
    pytest.param(b"GET /s/404 HTTP/1.1\r\n" + CLOSE + b"\r\n", id="404"),
    pytest.param(b"GET /chunked HTTP/1.1\r\n" + CLOSE + b"\r\n", id="chunked-answer"),
    pytest.param(b"GET /big HTTP/1.1\r\n" + CLOSE + b"\r\n", id="large-answer"),
    pytest.param(b"GET /s/200 HTTP/1.0\r\nHost: sidecar\r\n\r\n", id="http-1.0"),
    pytest.param(
        b"POST /connectors/c/pause HTTP/1.1\r\n"
        + CLOSE
        + b"Content-Type: application/json\r\nContent-Length: 2\r\n\r\n{}",
        id="post-body",
    ),
    pytest.param(
        b"PUT /connectors/c/pause HTTP/1.1\r\n"
        + CLOSE
        + b"Transfer-Encoding: chunked\r\n\r\n1\r\n{\r\n1\r\n}\r\n0\r\n\r\n",
        id="chunked-request",
    ),
    pytest.param(
        b"POST /connectors/c/restart HTTP/1.1\r\n" + CLOSE + b"Expect: 100-continue\r\nContent-Length: 2\r\n\r\n{}",
        id="expect-100",
    ),
    pytest.param(
        b"GET /s/200 HTTP/1.1\r\nHost: sidecar\r\n\r\nGET /s/404 HTTP/1.1\r\nHost: sidecar\r\n\r\n"
        b"GET /connectors/c/status HTTP/1.1\r\nHost: sidecar\r\n\r\nGET /s/201 HTTP/1.1\r\n" + CLOSE + b"\r\n",
        id="pipelined-keep-alive-mixed-with-a-sidecar-route",
    ),
    pytest.param(b"GET /connectors/c HTTP/1.1\r\n" + CLOSE + b"X-Forwarded-For: 10.0.0.1\r\n\r\n", id="forwarded"),
    pytest.param(b"PROPFIND /connectors/a%2Fb/../x?q=%3B HTTP/1.1\r\n" + CLOSE + b"\r\n", id="odd-method-and-target"),
]


@pytest.mark.parametrize("request_bytes", REQUESTS)
async def test_the_same_bytes_as_uvicorns_own_protocol(request_bytes: bytes) -> None:
    answers: dict[str, tuple[bytes, list[bytes]]] = {}
    for name, http in (("asgi", "httptools"), ("below-asgi", SidecarProtocol)):
        async with ScriptedWorker().running() as worker, sidecar(worker, http) as port:
            got = [r.replace(b":%d\r\n" % worker.port, b":PORT\r\n") for r in worker.requests]
            answers[name] = (DATE.sub(b"\r\ndate: DATE\r\n", await exchange(port, request_bytes)), got)
    assert answers["below-asgi"] == answers["asgi"]
    assert answers["asgi"][0].startswith(b"HTTP/1.")


async def test_a_worker_that_refuses_connections_is_the_same_503() -> None:
    answers = []
    for http in ("httptools", SidecarProtocol):
        worker = ScriptedWorker()
        async with worker.running():
            pass  # its port is closed now
        async with sidecar(worker, http) as port:
            answer = await exchange(port, b"GET /connectors/c HTTP/1.1\r\n" + CLOSE + b"\r\n")
            answers.append(DATE.sub(b"\r\ndate: DATE\r\n", answer.replace(b"%d" % worker.port, b"PORT")))
    assert answers[0] == answers[1]
    assert answers[0].startswith(b"HTTP/1.1 503 ")


async def test_the_pass_through_and_the_connect_routes_do_not_go_through_asgi(monkeypatch: pytest.MonkeyPatch) -> None:
    """uvicorn's ASGI cycle (``RequestResponseCycle.run_asgi``) is skipped for a pass-through and for a Connect
    route of the sidecar; the app's own chain (limits, admission, access control) still runs for them
    (``SidecarApp.serve_collected``). The sidecar's own paths and forwarded requests go through ASGI."""
    seen: list[str] = []
    original = RequestResponseCycle.run_asgi

    async def spy(self: RequestResponseCycle, app: Any) -> None:
        seen.append(self.scope["path"])
        await original(self, app)

    monkeypatch.setattr(RequestResponseCycle, "run_asgi", spy)
    async with ScriptedWorker().running() as worker, sidecar(worker, SidecarProtocol) as port:
        await exchange(port, b"GET /connectors/c HTTP/1.1\r\n" + CLOSE + b"\r\n")
        await exchange(port, b"GET /connectors/c/status HTTP/1.1\r\n" + CLOSE + b"\r\n")
        await exchange(port, b"POST /connectors/c/status HTTP/1.1\r\n" + CLOSE + b"\r\n")  # the route's 405
        await exchange(port, b"GET /healthz HTTP/1.1\r\n" + CLOSE + b"\r\n")
        await exchange(port, b"GET /connectors/c HTTP/1.1\r\n" + CLOSE + b"X-Forwarded-Proto: https\r\n\r\n")
    assert seen == ["/healthz", "/connectors/c"]  # the sidecar's own path, and a forwarded request
    assert len(worker.requests) == 3  # (no view here: the sidecar forwards the status read too)


@pytest.mark.parametrize("http", ["httptools", SidecarProtocol], ids=["asgi", "below-asgi"])
async def test_every_request_meets_the_admission_hook_once(http: Any) -> None:
    arrivals: list[Arrival] = []

    def check(arrival: Arrival) -> Denied | None:
        arrivals.append(arrival)
        return denied_json(401, "no") if arrival.raw_path.endswith(b"/deny") else None

    async with ScriptedWorker().running() as worker, sidecar(worker, http, Admission((check,))) as port:
        forwarded = await exchange(port, b"GET /connectors/c%2Fx?a=1 HTTP/1.1\r\n" + CLOSE + b"\r\n")
        own = await exchange(port, b"GET /healthz HTTP/1.1\r\n" + CLOSE + b"\r\n")
        refused = await exchange(port, b"PUT /connectors/c/deny HTTP/1.1\r\n" + CLOSE + b"Content-Length: 0\r\n\r\n")
        refused_own = await exchange(port, b"GET /connectors/deny HTTP/1.1\r\n" + CLOSE + b"\r\n")
    assert [(a.method, a.raw_path, a.query) for a in arrivals] == [
        ("GET", b"/connectors/c%2Fx", b"a=1"),
        ("GET", b"/healthz", b""),
        ("PUT", b"/connectors/c/deny", b""),
        ("GET", b"/connectors/deny", b""),
    ]
    assert all(a.client is not None and a.client[0] == "127.0.0.1" for a in arrivals)
    assert (b"host", b"sidecar") in arrivals[0].headers
    assert forwarded.startswith(b"HTTP/1.1 200 ") and own.startswith(b"HTTP/1.1 200 ")
    for answer in (refused, refused_own):
        assert answer.startswith(b"HTTP/1.1 401 ")
        assert answer.endswith(b'\r\n\r\n{"error_code":401,"message":"no"}')
    assert len(worker.requests) == 1  # the refused ones never reached the worker


def test_the_cli_serves_with_it() -> None:
    assert available()
    assert protocol() is SidecarProtocol
    app = create_app(load_settings(connect_urls="http://w:8083", view_enabled=False))
    assert sidecar_app(app) is app
    assert sidecar_app(uvicorn.middleware.proxy_headers.ProxyHeadersMiddleware(app)) is app  # type: ignore[attr-defined]
    assert sidecar_app(object()) is None


@pytest.mark.parametrize("http", ["httptools", SidecarProtocol], ids=["asgi", "below-asgi"])
async def test_the_request_limits_hold_below_asgi_too(http: Any) -> None:
    """The pass-through below ASGI runs the app's chain: a body over ``max_body_bytes`` is refused with
    Connect's 413, the same bytes as through ASGI, and never reaches the worker."""
    async with ScriptedWorker().running() as worker, sidecar(worker, http, max_body_bytes=8) as port:
        answer = await exchange(
            port, b"PUT /connectors/c/pause HTTP/1.1\r\n" + CLOSE + b"content-length: 9\r\n\r\n123456789"
        )
    assert answer.startswith(b"HTTP/1.1 413 "), answer
    assert b'"error_code":413' in answer
    assert worker.requests == []


@pytest.mark.parametrize("http", ["httptools", SidecarProtocol], ids=["asgi", "below-asgi"])
async def test_the_sidecars_own_answers_carry_the_workers_server_and_a_date(http: Any) -> None:
    """A worker's Jetty puts ``Server`` and ``Date`` on every answer; the sidecar's own answers (here a Connect
    route's 405, and its own path) carry the workers' ``Server`` (from their liveness probe) and a ``Date``
    too, on both ways of serving (``rest.stamp``)."""
    async with ScriptedWorker().running() as worker, sidecar(worker, http) as port:
        refused = await exchange(port, b"POST /connectors/c/status HTTP/1.1\r\n" + CLOSE + b"\r\n")
        own = await exchange(port, b"GET /healthz HTTP/1.1\r\n" + CLOSE + b"\r\n")
        forwarded = await exchange(port, b"GET /s/404 HTTP/1.1\r\n" + CLOSE + b"\r\n")
    for answer in (refused, own, forwarded):
        head = answer.split(b"\r\n\r\n", 1)[0].split(b"\r\n")
        assert head[1] == b"server: " + SERVER, answer
        assert head[2].startswith(b"date: ") and head[2].endswith(b" GMT"), answer
        assert sum(line.lower().startswith((b"server:", b"date:")) for line in head) == 2, answer
    assert refused.startswith(b"HTTP/1.1 405 ")
