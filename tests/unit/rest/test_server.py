"""The sidecar's own server (``rest.serving.server``) answers byte for byte what uvicorn's httptools protocol answers
for the same app through its ASGI side, sends the worker the same bytes, and passes every request through the
pipeline's steps (``rest.serving.pipeline``: the limits, the admission hook, the stamp) exactly once, whichever
server serves it."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

import pytest

from control_plane.rest import create_app
from control_plane.rest.request.exchange import Exchange
from control_plane.rest.serving.app import SidecarApp
from control_plane.rest.serving.server import serve
from control_plane.rest.steps.admission import Admission, Denied, denied_json
from control_plane.settings import load_settings
from tests.support.ports import free_port
from tests.support.raw_http import CLOSE, DATE, SERVER, ScriptedWorker, exchange, served


@contextlib.asynccontextmanager
async def sidecar(
    worker: ScriptedWorker, server: str, admission: Admission | None = None, *, detected: bool = False, **settings: Any
) -> AsyncIterator[int]:
    """The sidecar in front of ``worker``; ``detected``: once it has read the worker's version (and Server)."""
    app = create_app(
        load_settings(connect_urls=f"http://127.0.0.1:{worker.port}", view_enabled=False, **settings),
        admission=admission,
    )
    async with served(app, server) as port:
        if detected:
            assert app.slot.runtime is not None
            assert await app.slot.runtime.herder.capabilities.wait_detected(10)
        yield port


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
    pytest.param(b"PROPFIND /connectors/a%20b;x=1?q=%3B HTTP/1.1\r\n" + CLOSE + b"\r\n", id="odd-method-and-target"),
    # a target Jetty 12 refuses: the 4.4.0 worker's answer, given without sending it the request
    pytest.param(b"PROPFIND /connectors/a%2Fb/../x?q=%3B HTTP/1.1\r\n" + CLOSE + b"\r\n", id="jetty-12-refusal"),
]


SERVERS = pytest.mark.parametrize("server", ["uvicorn", "sidecar"])


@pytest.mark.parametrize("request_bytes", REQUESTS)
async def test_the_same_bytes_as_uvicorn(request_bytes: bytes) -> None:
    answers: dict[str, tuple[bytes, list[bytes]]] = {}
    for server in ("uvicorn", "sidecar"):
        async with ScriptedWorker().running() as worker, sidecar(worker, server, detected=True) as port:
            got = [r.replace(b":%d\r\n" % worker.port, b":PORT\r\n") for r in worker.requests]
            answers[server] = (DATE.sub(b"\r\ndate: DATE\r\n", await exchange(port, request_bytes)), got)
    assert answers["sidecar"] == answers["uvicorn"]
    assert answers["uvicorn"][0].startswith(b"HTTP/1.")


async def test_a_worker_that_refuses_connections_is_the_same_503() -> None:
    answers = []
    for server in ("uvicorn", "sidecar"):
        worker = ScriptedWorker()
        async with worker.running():
            pass  # its port is closed now
        async with sidecar(worker, server) as port:
            answer = await exchange(port, b"GET /connectors/c HTTP/1.1\r\n" + CLOSE + b"\r\n")
            answers.append(DATE.sub(b"\r\ndate: DATE\r\n", answer.replace(b"%d" % worker.port, b"PORT")))
    assert answers[0] == answers[1]
    assert answers[0].startswith(b"HTTP/1.1 503 ")


async def test_the_server_calls_the_pipeline_not_the_asgi_side(monkeypatch: pytest.MonkeyPatch) -> None:
    """The sidecar's server hands each request to the pipeline directly: the app's ASGI side (for other
    servers) is never called, whatever the request (a pass-through, a Connect route, the sidecar's own path,
    a forwarded request)."""
    called: list[str] = []
    original = SidecarApp.__call__

    async def spy(self: SidecarApp, scope: Any, receive: Any, send: Any) -> None:
        called.append(scope["type"])
        await original(self, scope, receive, send)

    monkeypatch.setattr(SidecarApp, "__call__", spy)
    async with ScriptedWorker().running() as worker, sidecar(worker, "sidecar") as port:
        await exchange(port, b"GET /connectors/c HTTP/1.1\r\n" + CLOSE + b"\r\n")
        await exchange(port, b"GET /connectors/c/status HTTP/1.1\r\n" + CLOSE + b"\r\n")
        await exchange(port, b"POST /connectors/c/status HTTP/1.1\r\n" + CLOSE + b"\r\n")  # the route's 405
        await exchange(port, b"GET /healthz HTTP/1.1\r\n" + CLOSE + b"\r\n")
        await exchange(port, b"GET /connectors/c HTTP/1.1\r\n" + CLOSE + b"X-Forwarded-Proto: https\r\n\r\n")
    assert called == []
    assert len(worker.requests) == 3  # (no view here: the sidecar forwards the status read too)


@SERVERS
async def test_every_request_meets_the_admission_hook_once(server: str) -> None:
    arrivals: list[Exchange] = []

    def check(exchange: Exchange) -> Denied | None:
        arrivals.append(exchange)
        return denied_json(401, "no") if exchange.raw_path.endswith(b"/deny") else None

    async with ScriptedWorker().running() as worker, sidecar(worker, server, Admission((check,))) as port:
        forwarded = await exchange(port, b"GET /connectors/c%20x?a=1 HTTP/1.1\r\n" + CLOSE + b"\r\n")
        own = await exchange(port, b"GET /healthz HTTP/1.1\r\n" + CLOSE + b"\r\n")
        refused = await exchange(port, b"PUT /connectors/c/deny HTTP/1.1\r\n" + CLOSE + b"Content-Length: 0\r\n\r\n")
        refused_own = await exchange(port, b"GET /connectors/deny HTTP/1.1\r\n" + CLOSE + b"\r\n")
    assert [(a.method, a.raw_path, a.query) for a in arrivals] == [
        ("GET", b"/connectors/c%20x", b"a=1"),
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


async def test_a_trusted_proxys_forwarded_client_and_scheme_are_the_requests() -> None:
    """As uvicorn's proxy headers: X-Forwarded-For and X-Forwarded-Proto from a proxy on 127.0.0.1 name the
    client and the scheme the pipeline sees (what the audit records)."""
    seen: list[Exchange] = []

    def check(exchange: Exchange) -> Denied | None:
        seen.append(exchange)
        return None

    async with ScriptedWorker().running() as worker, sidecar(worker, "sidecar", Admission((check,))) as port:
        headers = b"X-Forwarded-For: 10.0.0.9, 10.0.0.1, 127.0.0.1\r\nX-Forwarded-Proto: https\r\n"
        await exchange(port, b"GET /connectors/c HTTP/1.1\r\n" + CLOSE + headers + b"\r\n")
    assert seen[0].client == ("10.0.0.1", 0)
    assert seen[0].scheme == "https"


async def test_serve_runs_the_lifespan_around_the_server_until_stopped() -> None:
    """``control-plane serve`` (``rest.serving.server.serve``): the composition root starts, the server answers, and on
    stop the server ends before the lifespan stops."""
    stop = asyncio.Event()
    async with ScriptedWorker().running() as worker:
        app = create_app(load_settings(connect_urls=f"http://127.0.0.1:{worker.port}", view_enabled=False))
        port = free_port()
        serving = asyncio.create_task(serve(app, host="127.0.0.1", port=port, grace_s=5, stop=stop))
        answer = await eventually_answered(port)
        assert answer.startswith(b"HTTP/1.1 200 ")
        assert app.slot.runtime is not None
        stop.set()
        await asyncio.wait_for(serving, 10)
    assert app.slot.runtime is None


async def eventually_answered(port: int) -> bytes:
    """``GET /healthz`` answered, once the server listens (connections refused until then)."""
    async with asyncio.timeout(10):
        while True:
            try:
                return await exchange(port, b"GET /healthz HTTP/1.1\r\n" + CLOSE + b"\r\n")
            except ConnectionRefusedError:
                await asyncio.sleep(0.01)


@SERVERS
async def test_the_request_limits_hold_on_both_servers(server: str) -> None:
    """The pipeline's limits, whichever server: a body over ``max_body_bytes`` is refused with Connect's 413,
    the same bytes either way, and never reaches the worker."""
    async with ScriptedWorker().running() as worker, sidecar(worker, server, max_body_bytes=8) as port:
        answer = await exchange(
            port, b"PUT /connectors/c/pause HTTP/1.1\r\n" + CLOSE + b"content-length: 9\r\n\r\n123456789"
        )
    assert answer.startswith(b"HTTP/1.1 413 "), answer
    assert b'"error_code":413' in answer
    assert worker.requests == []


@SERVERS
async def test_the_sidecars_own_answers_carry_the_workers_server_and_a_date(server: str) -> None:
    """A worker's Jetty puts ``Server`` and ``Date`` on every answer; the sidecar's own answers (here a Connect
    route's 405, and its own path) carry the workers' ``Server`` (from their liveness probe) and a ``Date``
    too, whichever server serves them (``rest.steps.stamp``)."""
    async with ScriptedWorker().running() as worker, sidecar(worker, server, detected=True) as port:
        refused = await exchange(port, b"POST /connectors/c/status HTTP/1.1\r\n" + CLOSE + b"\r\n")
        own = await exchange(port, b"GET /healthz HTTP/1.1\r\n" + CLOSE + b"\r\n")
        forwarded = await exchange(port, b"GET /s/404 HTTP/1.1\r\n" + CLOSE + b"\r\n")
    for answer in (refused, own, forwarded):
        head = answer.split(b"\r\n\r\n", 1)[0].split(b"\r\n")
        assert head[1] == b"server: " + SERVER, answer
        assert head[2].startswith(b"date: ") and head[2].endswith(b" GMT"), answer
        assert sum(line.lower().startswith((b"server:", b"date:")) for line in head) == 2, answer
    assert refused.startswith(b"HTTP/1.1 405 ")
