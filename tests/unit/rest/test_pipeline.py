"""The request pipeline (``rest.serving.pipeline``) answers a Connect route of the sidecar the same bytes whichever
server serves it (the sidecar's own, or uvicorn through the app's ASGI side), refusals and errors included:
every request goes through the one pipeline, and each server only reads the request and writes the answer."""

from __future__ import annotations

from typing import Any

import pytest

from control_plane.domain.reads import Reads
from control_plane.rest import create_app
from control_plane.rest.request.exchange import Exchange
from control_plane.rest.serving.pipeline import Pipeline
from control_plane.rest.steps.dispatch import changed_connectors
from control_plane.settings import load_settings
from tests.support.raw_http import CLOSE, DATE, ScriptedWorker, exchange, served

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


async def answers(
    request_bytes: bytes, worker: ScriptedWorker, monkeypatch: pytest.MonkeyPatch, *, detected: bool = True
) -> dict[str, Any]:
    """The answer and the worker's requests, served by each server (``detected``: once the sidecar has read
    the worker's version, and Server); checks that the pipeline served the request each time."""
    out = {}
    served_by_pipeline: list[str] = []
    original = Pipeline.serve

    async def spy(self: Pipeline, exchange: Any) -> Any:
        served_by_pipeline.append(exchange.path)
        return await original(self, exchange)

    monkeypatch.setattr(Pipeline, "serve", spy)
    for server in ("uvicorn", "sidecar"):
        app = create_app(load_settings(connect_urls=f"http://127.0.0.1:{worker.port}", view_enabled=False))
        worker.requests.clear()
        served_by_pipeline.clear()
        async with served(app, server) as port:
            if detected:
                assert app.slot.runtime is not None
                assert await app.slot.runtime.herder.capabilities.wait_detected(10)
            answer = DATE.sub(b"\r\ndate: DATE\r\n", await exchange(port, request_bytes))
        assert served_by_pipeline, server
        got = [r.replace(b":%d\r\n" % worker.port, b":PORT\r\n") for r in worker.requests]
        out[server] = (answer.replace(b"%d" % worker.port, b"PORT"), got)
    return out


@pytest.mark.parametrize("request_bytes", REQUESTS)
async def test_the_same_bytes_on_both_servers(request_bytes: bytes, monkeypatch: pytest.MonkeyPatch) -> None:
    async with ScriptedWorker().running() as worker:
        got = await answers(request_bytes, worker, monkeypatch)
    assert got["sidecar"] == got["uvicorn"]
    assert got["uvicorn"][0].startswith(b"HTTP/1.")


async def test_no_worker_the_same_503(monkeypatch: pytest.MonkeyPatch) -> None:
    worker = ScriptedWorker()
    async with worker.running():
        pass  # its port is closed now
    request = b"GET /connectors/c/status HTTP/1.1\r\n" + CLOSE + b"\r\n"
    got = await answers(request, worker, monkeypatch, detected=False)
    assert got["sidecar"] == got["uvicorn"]
    assert got["uvicorn"][0].startswith(b"HTTP/1.1 503 ")


async def test_an_unexpected_error_the_same_500_and_logged_once(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def boom(self: Reads, name: str) -> Any:
        raise RuntimeError(f"boom {name}")

    monkeypatch.setattr(Reads, "connector_status", boom)
    async with ScriptedWorker().running() as worker:
        got = await answers(b"GET /connectors/c/status HTTP/1.1\r\n" + CLOSE + b"\r\n", worker, monkeypatch)
    assert got["sidecar"] == got["uvicorn"]
    assert got["uvicorn"][0].startswith(b"HTTP/1.1 500 ")
    assert b"boom c" in got["uvicorn"][0]
    logged = [line for line in capsys.readouterr().out.splitlines() if "unexpected error" in line]
    assert len(logged) == 2  # once per request, with its trace (rest.errors), on either server


@pytest.mark.parametrize(
    ("method", "path", "changes"),
    [
        ("PUT", "/connectors/c/config", True),
        ("POST", "/connectors", True),
        ("DELETE", "/connectors/c", True),
        ("PATCH", "/connectors/c/offsets", True),
        ("GET", "/connectors/c/config", False),
        ("PUT", "/connector-plugins/p/config/validate", False),
        ("PUT", "/admin/loggers/root", False),
        ("POST", "/_sidecar/topic-creation/preview", False),
        ("POST", "/connectorsX", False),
    ],
)
def test_only_a_change_of_connectors_waits_out_the_read_window(method: str, path: str, changes: bool) -> None:
    """With ``VIEW_READ_SYNC=always`` a change is answered a window after it is done (``Herder.settle_write``):
    only what the view shows, the connectors; a validation or a logger's level is answered at once."""

    async def unread() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    assert changed_connectors(Exchange(method, path.encode(), b"", [], unread)) is changes
