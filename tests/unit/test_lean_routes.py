"""A Connect route of the sidecar served on the short path (``dispatch.SidecarApp.answer``: below ASGI
under the cli's server, or from the dispatch layer under any ASGI server) answers byte for byte what
Starlette's middleware and routing answer for it, refusals and errors included; the short path stands
aside when the app has a middleware whose effect it does not have."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from starlette.types import Receive, Scope, Send

from control_plane.domain.reads import Reads
from control_plane.rest import create_app
from control_plane.rest.dispatch import SidecarApp
from control_plane.rest.jaxrs import JerseyRoute
from control_plane.rest.server import SidecarProtocol
from control_plane.settings import load_settings
from tests.unit.test_pass_through_bytes import served
from tests.unit.test_server_protocol import CLOSE, DATE, ScriptedWorker, exchange

JSON_BODY = b"Content-Type: application/json\r\nContent-Length: 31\r\n\r\n" + b'{"connector.class":"x","a":"b"}'
REQUESTS = [
    pytest.param(b"GET /connectors/c/status HTTP/1.1\r\n" + CLOSE + b"\r\n", id="status"),
    pytest.param(b"GET /connectors/c/status/ HTTP/1.1\r\n" + CLOSE + b"\r\n", id="trailing-slash"),
    pytest.param(b"GET /connectors/c;v=1/status;x HTTP/1.1\r\n" + CLOSE + b"\r\n", id="matrix-parameters"),
    pytest.param(b"GET /connectors/a%2Fb/status HTTP/1.1\r\n" + CLOSE + b"\r\n", id="jetty-400"),
    pytest.param(b"GET /connectors//status HTTP/1.1\r\n" + CLOSE + b"\r\n", id="empty-segment"),
    pytest.param(b"HEAD /connectors/c/status HTTP/1.1\r\n" + CLOSE + b"\r\n", id="head"),
    pytest.param(b"POST /connectors/c/status HTTP/1.1\r\n" + CLOSE + b"\r\n", id="405"),
    pytest.param(b"OPTIONS /connectors/c/config HTTP/1.1\r\n" + CLOSE + b"\r\n", id="options"),
    pytest.param(b"GET /connectors/c/status HTTP/1.1\r\n" + CLOSE + b"Accept: text/html\r\n\r\n", id="406"),
    pytest.param(b"GET /connectors/c/status HTTP/1.1\r\n" + CLOSE + b"Accept: */*;q=x\r\n\r\n", id="bad-q"),
    pytest.param(b"GET /connectors/c/tasks/0_0/status HTTP/1.1\r\n" + CLOSE + b"\r\n", id="not-an-int"),
    pytest.param(b"GET /connectors/c/tasks/1/status HTTP/1.1\r\n" + CLOSE + b"\r\n", id="task-status"),
    pytest.param(b"GET /connectors?expand=status&expand=info HTTP/1.1\r\n" + CLOSE + b"\r\n", id="listing"),
    pytest.param(b"GET /connectors/c/topics HTTP/1.1\r\n" + CLOSE + b"\r\n", id="topics"),
    pytest.param(b"GET /connectors/c/offsets HTTP/1.1\r\n" + CLOSE + b"\r\n", id="offsets"),
    pytest.param(b"PUT /connectors/c/config HTTP/1.1\r\n" + CLOSE + JSON_BODY, id="put-config"),
    pytest.param(
        b"PUT /connectors/c/config HTTP/1.1\r\n" + CLOSE + b"Content-Type: text/plain\r\nContent-Length: 2\r\n\r\n{}",
        id="415",
    ),
    pytest.param(b"PUT /connectors/c/config HTTP/1.1\r\n" + CLOSE + b"Content-Length: 2\r\n\r\n{}", id="no-type"),
    pytest.param(
        b"POST /connectors HTTP/1.1\r\n" + CLOSE + b"Content-Type: application/json\r\nContent-Length: 4\r\n\r\nnull",
        id="create-null",
    ),
    pytest.param(b"GET / HTTP/1.1\r\n" + CLOSE + b"\r\n", id="root"),
    pytest.param(
        b"GET /connectors/c/status HTTP/1.1\r\nHost: s\r\n\r\nGET /healthz HTTP/1.1\r\nHost: s\r\n\r\n"
        b"GET /connectors/c/config HTTP/1.1\r\n" + CLOSE + b"\r\n",
        id="pipelined",
    ),
]


class Aside:
    """A middleware the short path does not know: with it, every request goes through Starlette."""

    def __init__(self, app: Callable[[Scope, Receive, Send], Awaitable[None]]) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self.app(scope, receive, send)


async def answers(
    request_bytes: bytes, worker: ScriptedWorker, monkeypatch: pytest.MonkeyPatch
) -> dict[str, tuple[bytes, list[bytes]]]:
    """The answer and the worker's requests, served three ways: Starlette's (the short path aside), the
    short path from the dispatch layer (uvicorn's own protocol), the short path below ASGI. Checks that
    Starlette's router handled the Connect routes' requests only the first way."""
    out = {}
    handled: list[str] = []
    original = JerseyRoute.handle

    async def spy(self: JerseyRoute, scope: Scope, receive: Receive, send: Send) -> None:
        handled.append(scope["path"])
        await original(self, scope, receive, send)

    monkeypatch.setattr(JerseyRoute, "handle", spy)
    for name, http, aside in (
        ("starlette", "httptools", True),
        ("dispatch", "httptools", False),
        ("below-asgi", SidecarProtocol, False),
    ):
        app = create_app(load_settings(connect_urls=f"http://127.0.0.1:{worker.port}", view_enabled=False))
        if aside:
            app.add_middleware(Aside)
        worker.requests.clear()
        handled.clear()
        async with served(app, http) as port:
            answer = DATE.sub(b"\r\ndate: DATE\r\n", await exchange(port, request_bytes))
        assert bool(handled) == aside, (name, handled)
        got = [r.replace(b":%d\r\n" % worker.port, b":PORT\r\n") for r in worker.requests]
        out[name] = (answer.replace(b"%d" % worker.port, b"PORT"), got)
    return out


@pytest.mark.parametrize("request_bytes", REQUESTS)
async def test_the_same_bytes_as_starlette(request_bytes: bytes, monkeypatch: pytest.MonkeyPatch) -> None:
    async with ScriptedWorker().running() as worker:
        got = await answers(request_bytes, worker, monkeypatch)
    assert got["dispatch"] == got["starlette"]
    assert got["below-asgi"] == got["starlette"]
    assert got["starlette"][0].startswith(b"HTTP/1.")


async def test_no_worker_the_same_503(monkeypatch: pytest.MonkeyPatch) -> None:
    worker = ScriptedWorker()
    async with worker.running():
        pass  # its port is closed now
    got = await answers(b"GET /connectors/c/status HTTP/1.1\r\n" + CLOSE + b"\r\n", worker, monkeypatch)
    assert got["dispatch"] == got["below-asgi"] == got["starlette"]
    assert got["starlette"][0].startswith(b"HTTP/1.1 503 ")


async def test_an_unexpected_error_the_same_500_and_logged(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    def boom(self: Reads, name: str) -> Any:
        raise RuntimeError(f"boom {name}")

    monkeypatch.setattr(Reads, "connector_status", boom)
    async with ScriptedWorker().running() as worker:
        got = await answers(b"GET /connectors/c/status HTTP/1.1\r\n" + CLOSE + b"\r\n", worker, monkeypatch)
    assert got["dispatch"] == got["below-asgi"] == got["starlette"]
    assert got["starlette"][0].startswith(b"HTTP/1.1 500 ")
    assert b"boom c" in got["starlette"][0]
    logged = [r for r in caplog.records if r.name.startswith("uvicorn") and r.exc_info]
    assert len(logged) == 3  # raised to the server once the answer is sent, on every way (as uvicorn logs it)


def scope_of(method: str, path: bytes, **extra: Any) -> dict[str, Any]:
    return {"type": "http", "method": method, "path": path.decode(), "raw_path": path, "headers": [], **extra}


def test_which_requests_take_the_short_path() -> None:
    app = create_app(load_settings(connect_urls="http://127.0.0.1:9", view_enabled=False))
    assert isinstance(app, SidecarApp)
    found = app.lean_route(scope_of("GET", b"/connectors/c/status"))
    assert found is not None and found[0].path == "/connectors/{connector}/status"
    assert found[1]["path_params"] == {"connector": "c"}
    assert app.lean_route(scope_of("DELETE", b"/connectors/c/offsets")) is not None
    assert app.lean_route(scope_of("GET", b"/connectors/c")) is None  # passes through
    assert app.lean_route(scope_of("GET", b"/_sidecar/info")) is None  # the sidecar's own: Starlette
    assert app.lean_route(scope_of("GET", b"/connectors/c/status", root_path="/x")) is None
    app.debug = True  # Starlette's debug pages
    assert app.lean_route(scope_of("GET", b"/connectors/c/status")) is None
