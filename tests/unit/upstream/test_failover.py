"""Failover between the workers: a refused connection goes to the next worker (any method) and puts the
worker last for ``worker_down_s``; a broken connection goes on only for safe methods; a timeout never
does. Every failure leaves the sidecar in Connect's error shape ``{"error_code", "message"}``."""

from __future__ import annotations

import asyncio
import collections
import dataclasses
import errno
from collections.abc import Awaitable, Callable
from typing import Any

import aiohttp
import httpx
import pytest
import respx
from aiohttp.client_reqrep import ConnectionKey

from control_plane.upstream.aiohttp_transport import AiohttpTransport, translated
from control_plane.upstream.errors import (
    ConnectionRefused,
    UpstreamError,
    UpstreamTimeout,
    WorkerDisconnected,
    WorkerUnreachable,
)
from control_plane.upstream.transport import Answer, Limits, Transport, WorkerRequest
from control_plane.upstream.wire import WirePool
from tests.support.fake_workers import FakeWorkers, seam_error
from tests.support.ports import free_port
from tests.support.waiting import eventually

W1 = "http://w1:8083"
W2 = "http://w2:8083"

JSON = {"content-type": "application/json"}


class RefusingWorkers:
    """The fake workers, except that requests to ``refused`` hosts meet a refused connection.

    ``kind``: ``wire-transport`` (plain HTTP) and ``aiohttp-transport`` (HTTPS) send them through the
    sidecar's real transport of that name to a closed local port, so the error is exactly what that
    transport raises (named for the worker the request was for); ``respx`` leaves them to the routes the
    test gave ``side_effect=httpx.ConnectError``. ``attempts`` counts the requests per worker host, ``GET /``
    of the capability detector excluded.
    """

    def __init__(self, kind: str, fake: FakeWorkers, refused: set[str]) -> None:
        self.kind = kind
        self.fake = fake
        self.refused = refused
        port = free_port()
        self.real: Transport | None = None
        if kind == "wire-transport":
            self.real, self.closed = WirePool(4, 1.0), f"http://127.0.0.1:{port}"
        elif kind == "aiohttp-transport":
            self.real, self.closed = AiohttpTransport(4, 1.0), f"https://127.0.0.1:{port}"
        self.attempts: collections.Counter[str] = collections.Counter()
        self.order: list[str] = []

    async def send(self, request: WorkerRequest, limits: Limits, deadline: float | None = None) -> Answer:
        host = httpx.URL(request.worker).host
        if request.target != "/":
            self.attempts[host] += 1
            self.order.append(host)
        if self.real is not None and host in self.refused:
            try:
                return await self.real.send(dataclasses.replace(request, worker=self.closed), limits, deadline)
            except UpstreamError as err:
                raise type(err)(request.worker, err.detail) from err
        return await self.fake.send(request, limits, deadline)

    def stop_waiting(self, worker: str, detail: str, *, hung: bool = True) -> None:
        self.fake.stop_waiting(worker, detail, hung=hung)

    def exhausted(self) -> bool:
        return False

    async def aclose(self) -> None:
        if self.real is not None:
            await self.real.aclose()
        await self.fake.aclose()


@pytest.fixture
def refusing(router: respx.MockRouter, fake_transport: FakeWorkers):
    """``refusing(kind, *hosts)``: the transport to give ``serve``; the upstream client closes it."""

    def make(kind: str, *hosts: str) -> RefusingWorkers:
        if kind == "respx":
            for host in hosts:
                router.route(host=host).mock(side_effect=httpx.ConnectError)
        return RefusingWorkers(kind, fake_transport, set(hosts))

    return make


def kinds() -> list[Any]:
    """The three ways a refused connection reaches the upstream client."""
    return [
        pytest.param("wire-transport", id="wire-transport"),
        pytest.param("aiohttp-transport", id="aiohttp-transport"),
        pytest.param("respx", id="respx-ConnectError"),
    ]


def assert_connect_error(response: httpx.Response, status: int) -> dict[str, Any]:
    assert response.status_code == status
    assert response.headers["content-type"] == "application/json"
    body: dict[str, Any] = response.json()
    assert set(body) == {"error_code", "message"}
    assert body["error_code"] == status
    assert isinstance(body["message"], str) and body["message"]
    return body


@pytest.mark.parametrize("kind", kinds())
async def test_refused_get_is_answered_by_next_worker(router: respx.MockRouter, serve, refusing, kind: str) -> None:
    transport = refusing(kind, "w1")
    w2 = router.route(host="w2", path="/connectors").respond(200, json=["from-w2"])
    async with serve(transport=transport) as running:
        response = await running.client.get("/connectors")
    assert response.status_code == 200
    assert response.json() == ["from-w2"]
    assert w2.call_count == 1
    assert transport.order == ["w1", "w2"]


@pytest.mark.parametrize("kind", kinds())
async def test_refused_post_is_sent_to_next_worker(router: respx.MockRouter, serve, refusing, kind: str) -> None:
    transport = refusing(kind, "w1")
    w2 = router.route(host="w2", method="POST", path="/connectors").respond(201, json={"name": "a"})
    async with serve(transport=transport) as running:
        response = await running.client.post("/connectors", json={"name": "a", "config": {}})
    assert response.status_code == 201
    assert w2.call_count == 1
    assert w2.calls.last.request.content == b'{"name":"a","config":{}}'


@pytest.mark.parametrize("kind", kinds())
async def test_refusing_worker_is_tried_last_for_worker_down_s(
    router: respx.MockRouter, serve, refusing, kind: str
) -> None:
    transport = refusing(kind, "w1")
    router.route(host="w2").respond(200, json=[])
    async with serve(transport=transport, worker_down_s=0.2) as running:
        for _ in range(3):
            assert (await running.client.get("/connectors")).status_code == 200
        assert transport.order == ["w1", "w2", "w2", "w2"]  # w1 once, then last
        await asyncio.sleep(0.25)
        assert (await running.client.get("/connectors")).status_code == 200
    assert transport.order == ["w1", "w2", "w2", "w2", "w1", "w2"]  # after worker_down_s, first again


@pytest.mark.parametrize("kind", kinds())
async def test_down_worker_is_still_tried_when_the_others_fail(
    router: respx.MockRouter, serve, refusing, kind: str
) -> None:
    transport = refusing(kind, "w1")
    w2 = router.route(host="w2").respond(200, json=[])
    async with serve(transport=transport, worker_down_s=60) as running:
        assert (await running.client.get("/connectors")).status_code == 200  # w1 now down
        w2.mock(side_effect=httpx.ConnectError)
        response = await running.client.get("/connectors")
    assert_connect_error(response, 503)
    assert transport.order == ["w1", "w2", "w2", "w1"]


@pytest.mark.parametrize(
    ("kind", "method"),
    [
        *(pytest.param(p.values[0], "GET", id=f"GET-{p.id}") for p in kinds()),
        *(pytest.param(p.values[0], "POST", id=f"POST-{p.id}") for p in kinds()),
    ],
)
async def test_all_workers_refuse_gives_503_naming_them(serve, refusing, kind: str, method: str) -> None:
    transport = refusing(kind, "w1", "w2")
    async with serve(transport=transport) as running:
        content = b'{"name":"a","config":{}}' if method == "POST" else b""
        response = await running.client.request(method, "/connectors", content=content, headers=JSON)
    body = assert_connect_error(response, 503)
    assert W1 in body["message"] and W2 in body["message"]
    assert body["message"].startswith("No Kafka Connect worker answered")
    assert transport.attempts == {"w1": 1, "w2": 1}


def _called(route: respx.Route) -> Callable[[], Awaitable[bool]]:
    async def called() -> bool:
        await asyncio.sleep(0.01)
        return route.called

    return called


@pytest.mark.parametrize(
    "method",
    [
        pytest.param("POST", id="POST"),
        pytest.param("PUT", id="PUT"),
        pytest.param("DELETE", id="DELETE"),
        pytest.param("GET", id="GET"),
    ],
)
async def test_read_timeout_is_not_resent_and_gives_504(router: respx.MockRouter, serve, method: str) -> None:
    w1 = router.route(host="w1", path="/connectors/a/pause").mock(side_effect=httpx.ReadTimeout)
    settled = router.route(host="w1", method="GET", path="/connectors/a").respond(200, json={"name": "a"})
    w2 = router.route(host="w2").respond(200, json={})
    async with serve() as running:
        response = await running.client.request(method, "/connectors/a/pause")
        if method != "GET":  # a write whose outcome is unknown: the worker is asked when it settled
            await eventually(_called(settled), bool, timeout_s=5, what="the worker asked whether the write settled")
    body = assert_connect_error(response, 504)
    assert W1 in body["message"]
    assert "did not answer in time" in body["message"]
    assert w1.call_count == 1
    assert w2.call_count == 0


@pytest.mark.parametrize(
    "error",
    [
        pytest.param(httpx.RemoteProtocolError, id="RemoteProtocolError"),
        pytest.param(httpx.ReadError, id="ReadError"),
    ],
)
@pytest.mark.parametrize("method", ["GET", "HEAD", "OPTIONS"])
async def test_broken_connection_on_safe_method_goes_to_next_worker(
    router: respx.MockRouter, serve, error: type[Exception], method: str
) -> None:
    w1 = router.route(host="w1", path="/connectors/a").mock(side_effect=error)
    w2 = router.route(host="w2", path="/connectors/a").respond(200, json={"name": "a"})
    async with serve() as running:  # a path only the workers answer (OPTIONS on /status the sidecar answers)
        response = await running.client.request(method, "/connectors/a")
    assert response.status_code == 200
    assert w1.call_count == 1
    assert w2.call_count == 1


@pytest.mark.parametrize("method", ["POST", "PUT", "PATCH", "DELETE"])
async def test_broken_connection_on_unsafe_method_is_not_resent_and_gives_502(
    router: respx.MockRouter, serve, method: str
) -> None:
    w1 = router.route(host="w1", method=method, path="/connectors/a").mock(side_effect=httpx.RemoteProtocolError)
    settled = router.route(host="w1", method="GET", path="/connectors/a").respond(200, json={"name": "a"})
    w2 = router.route(host="w2").respond(200, json={})
    async with serve() as running:  # a path only the workers answer, whatever the method
        response = await running.client.request(method, "/connectors/a", content=b"{}")
        await eventually(
            _called(settled), bool, timeout_s=5, what="the worker asked whether the write settled"
        )  # the outcome is unknown: the worker is asked when it settled
    body = assert_connect_error(response, 502)
    assert W1 in body["message"]
    assert w1.call_count == 1
    assert w2.call_count == 0


async def test_broken_connection_does_not_put_the_worker_last(router: respx.MockRouter, serve) -> None:
    w1 = router.route(host="w1", path="/connectors").mock(
        side_effect=[httpx.RemoteProtocolError("peer closed"), httpx.Response(200, json=["w1"])]
    )
    router.route(host="w2", path="/connectors").respond(200, json=["w2"])
    async with serve() as running:
        assert (await running.client.get("/connectors")).json() == ["w2"]
        assert (await running.client.get("/connectors")).json() == ["w1"]
    assert w1.call_count == 2


# -- which library error is which kind of failure: aiohttp's (the HTTPS transport), httpx's (the fake workers')


def _key() -> ConnectionKey:
    return ConnectionKey("w1", 8083, False, True, None, None, None)


@pytest.mark.parametrize(
    ("error", "expected"),
    [
        pytest.param(
            aiohttp.ClientConnectorError(_key(), ConnectionRefusedError(111, "Connect call failed")),
            ConnectionRefused,  # a WorkerUnreachable that also says no process listens
            id="refused",
        ),
        pytest.param(
            aiohttp.ClientConnectorCertificateError(_key(), ValueError("certificate verify failed")),
            WorkerUnreachable,
            id="certificate",
        ),
        pytest.param(aiohttp.ConnectionTimeoutError("connect timeout"), WorkerUnreachable, id="connect-timeout"),
        pytest.param(aiohttp.ServerDisconnectedError(), WorkerDisconnected, id="server-disconnected"),
        pytest.param(aiohttp.ClientOSError(errno.ECONNRESET, "reset"), WorkerDisconnected, id="reset"),
        pytest.param(aiohttp.ClientPayloadError("incomplete body"), WorkerDisconnected, id="payload"),
        pytest.param(aiohttp.SocketTimeoutError("read timeout"), UpstreamTimeout, id="read-timeout"),
    ],
)
def test_aiohttp_errors(error: aiohttp.ClientError, expected: type[Exception]) -> None:
    classified = translated(W1, error)
    assert type(classified) is expected
    assert classified.worker == W1


@pytest.mark.parametrize(
    ("error", "expected"),
    [
        pytest.param(httpx.ConnectError("refused"), WorkerUnreachable, id="ConnectError"),
        pytest.param(httpx.ConnectTimeout("timed out"), WorkerUnreachable, id="ConnectTimeout"),
        pytest.param(httpx.PoolTimeout("pool"), WorkerUnreachable, id="PoolTimeout"),
        pytest.param(httpx.ReadTimeout("slow"), UpstreamTimeout, id="ReadTimeout"),
        pytest.param(httpx.RemoteProtocolError("eof"), WorkerDisconnected, id="RemoteProtocolError"),
        pytest.param(httpx.ReadError("reset"), WorkerDisconnected, id="ReadError"),
    ],
)
def test_the_fake_workers_errors(error: httpx.HTTPError, expected: type[Exception]) -> None:
    classified = seam_error(W1, error)
    assert type(classified) is expected
    assert classified.worker == W1


# -- anything else


async def test_unexpected_error_gives_500_in_connect_shape(serve) -> None:
    async def broken(request: httpx.Request) -> httpx.Response:
        raise RuntimeError("boom")

    async with serve(transport=FakeWorkers(broken)) as running:
        transport = httpx.ASGITransport(app=running.app, raise_app_exceptions=False)
        async with httpx.AsyncClient(transport=transport, base_url="http://sidecar") as client:
            response = await client.get("/connectors")
    assert assert_connect_error(response, 500) == {"error_code": 500, "message": "boom"}
