"""The request limits (rest.steps.limits) on every request, forwarded or answered by a route of the sidecar:
431 and 413 in Connect's error shape, the request budget's 504, the cap on concurrent upstream
requests (503), and a worker that hangs: the liveness probe's own timeout puts it last."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import Counter
from collections.abc import AsyncIterator, Callable
from typing import Any

import httpx
import pytest
import respx

from control_plane.settings import load_settings
from control_plane.upstream import BudgetExhausted, ConnectUpstream, UpstreamRequest, UpstreamTimeout
from tests.support.asgi_app import CONNECT_URLS, Running
from tests.support.fake_workers import FakeWorkers

Serve = Callable[..., contextlib.AbstractAsyncContextManager[Running]]

PROXIED = "/connectors/a"  # a path no route of the sidecar answers: forwarded to a worker
OWN = "/connectors"  # a route of the sidecar (a Connect resource it answers)


def assert_connect_error(response: httpx.Response, status: int) -> str:
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == "application/json"
    body = response.json()
    assert set(body) == {"error_code", "message"} and body["error_code"] == status
    message = body["message"]
    assert isinstance(message, str)
    return message


class HangingWorkers(FakeWorkers):
    """The fake workers, except that requests to ``hung`` hosts are taken and never answered (``GET /``
    too, unless ``root_answers``); ``taken`` counts those requests, ``taken_by_method`` by method."""

    def __init__(self, fake: FakeWorkers, hung: set[str], *, root_answers: bool = False) -> None:
        super().__init__(fake.answer)
        self.hung = hung
        self.root_answers = root_answers
        self.taken = 0
        self.taken_by_method: Counter[str] = Counter()
        self.took_one = asyncio.Event()

    async def answer(self, request: httpx.Request) -> httpx.Response:
        if request.url.host in self.hung and not (self.root_answers and request.url.raw_path == b"/"):
            self.taken += 1
            self.taken_by_method[request.method] += 1
            self.took_one.set()
            await asyncio.Event().wait()  # a worker that hangs
        return await super().answer(request)


def limited(**settings: Any) -> Any:
    return load_settings(connect_urls=CONNECT_URLS, **settings)


@pytest.mark.parametrize("path", [PROXIED, OWN])
async def test_a_head_over_the_limit_is_431(router: respx.MockRouter, serve: Serve, path: str) -> None:
    worker = router.route(host="w1").respond(200, json={})
    async with serve(settings=limited(max_header_bytes=4096)) as running:
        response = await running.client.get(path, headers={"x-big": "a" * 5000})
        under = await running.client.get(path, headers={"x-big": "a" * 3000})
    assert "4096 bytes" in assert_connect_error(response, 431)
    assert under.status_code == 200
    assert worker.call_count == 1  # the refused request never reached a worker


@pytest.mark.parametrize("path", [PROXIED, OWN])
async def test_a_declared_body_over_the_limit_is_413(router: respx.MockRouter, serve: Serve, path: str) -> None:
    worker = router.route(host="w1").respond(201, json={})
    async with serve(settings=limited(max_body_bytes=100)) as running:
        response = await running.client.post(path, content=b"{" + b" " * 200 + b"}", headers=JSON)
        under = await running.client.post(path, content=b'{"name": "a", "config": {}}', headers=JSON)
    assert assert_connect_error(response, 413) == "Request body is larger than 100 bytes"
    assert under.status_code == 201
    assert worker.call_count == 1


JSON = {"content-type": "application/json"}


@pytest.mark.parametrize("path", [PROXIED, OWN])
async def test_a_chunked_body_over_the_limit_is_413(router: respx.MockRouter, serve: Serve, path: str) -> None:
    worker = router.route(host="w1").respond(201, json={})

    async def chunks() -> AsyncIterator[bytes]:
        for _ in range(5):
            yield b" " * 40

    async with serve(settings=limited(max_body_bytes=100)) as running:
        response = await running.client.post(path, content=chunks(), headers=JSON)
    assert "content-length" not in response.request.headers
    assert assert_connect_error(response, 413) == "Request body is larger than 100 bytes"
    assert worker.call_count == 0


async def test_no_limit_when_zero(router: respx.MockRouter, serve: Serve) -> None:
    router.route(host="w1").respond(200, json={})
    async with serve(settings=limited(max_body_bytes=0, max_header_bytes=0)) as running:
        response = await running.client.put(PROXIED + "/x", content=b" " * 100_000, headers={"x-big": "a" * 70_000})
    assert response.status_code == 200


@pytest.mark.parametrize("path", [PROXIED, OWN + "/a/restart"])
async def test_a_hung_worker_gives_504_within_the_budget(
    router: respx.MockRouter, serve: Serve, fake_transport: FakeWorkers, path: str
) -> None:
    transport = HangingWorkers(fake_transport, {"w1", "w2"}, root_answers=True)
    async with serve(settings=limited(request_budget_s=0.3), transport=transport, read_timeout_s=60) as running:
        started = time.monotonic()
        response = await running.client.post(path)
        took = time.monotonic() - started
    message = assert_connect_error(response, 504)
    assert "request budget" in message and "w1" in message
    assert 0.3 <= took < 1.5
    # a POST that the worker took is never sent to another (the worker is asked again only with reads, to
    # know when its outcome is settled)
    assert transport.taken_by_method["POST"] == 1


async def test_the_hung_worker_is_tried_last_afterwards(
    router: respx.MockRouter, serve: Serve, fake_transport: FakeWorkers
) -> None:
    router.route(host="w2", path=PROXIED).respond(200, json={"name": "a"})
    transport = HangingWorkers(fake_transport, {"w1"}, root_answers=True)
    async with serve(settings=limited(request_budget_s=0.3), transport=transport, read_timeout_s=60) as running:
        assert (await running.client.get(PROXIED)).status_code == 504
        started = time.monotonic()
        response = await running.client.get(PROXIED)
        assert time.monotonic() - started < 0.3
    assert response.json() == {"name": "a"}


async def test_the_liveness_probe_has_its_own_timeout(
    router: respx.MockRouter, make_upstream: Callable[..., ConnectUpstream], fake_transport: FakeWorkers
) -> None:
    router.route(host="w1", path=PROXIED).respond(200, json={"from": "w1"})
    router.route(host="w2", path=PROXIED).respond(200, json={"from": "w2"})
    upstream = make_upstream(transport=HangingWorkers(fake_transport, {"w1"}), probe_timeout_s=0.2)
    try:
        started = time.monotonic()
        versions = await upstream.worker_versions()
        assert time.monotonic() - started < 1.0
        assert versions == {"http://w1:8083": None, "http://w2:8083": "4.3.1"}
        # like a worker that refuses, the hung one is tried last now
        answer = await upstream.forward(UpstreamRequest("GET", PROXIED))
        assert answer.json() == {"from": "w2"}
    finally:
        await upstream.aclose()


async def test_concurrent_upstream_requests_are_capped(
    router: respx.MockRouter, serve: Serve, fake_transport: FakeWorkers
) -> None:
    transport = HangingWorkers(fake_transport, {"w1", "w2"}, root_answers=True)
    settings = limited(request_budget_s=5, upstream_max_concurrent_requests=1)
    async with serve(settings=settings, transport=transport, read_timeout_s=60, pool_timeout_s=0.2) as running:
        first = asyncio.create_task(running.client.get(PROXIED))
        await asyncio.wait_for(transport.took_one.wait(), 5)
        started = time.monotonic()
        second = await running.client.get(PROXIED)
        assert time.monotonic() - started < 1.0
        first.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await first
    assert "at most 1" in assert_connect_error(second, 503)
    assert second.headers["retry-after"] == "1"


@contextlib.asynccontextmanager
async def silent_worker() -> AsyncIterator[str]:
    """A real listener that takes connections and requests and never answers (a worker that hangs)."""
    taken: list[asyncio.StreamWriter] = []

    def take(_: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        taken.append(writer)

    server = await asyncio.start_server(take, "127.0.0.1", 0)
    try:
        yield f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}"
    finally:
        for writer in taken:
            writer.close()
        server.close()
        await server.wait_closed()


@pytest.mark.parametrize(
    ("read_timeout_s", "budget_s", "expected"),
    [
        pytest.param(60.0, 0.3, BudgetExhausted, id="the-budget-ends-first"),
        pytest.param(0.2, 30.0, UpstreamTimeout, id="the-read-timeout-ends-first"),
    ],
)
async def test_the_lean_path_ends_at_the_deadline(read_timeout_s: float, budget_s: float, expected: type) -> None:
    async with silent_worker() as url:
        upstream = ConnectUpstream([url], read_timeout_s=read_timeout_s)
        try:
            deadline = asyncio.get_running_loop().time() + budget_s
            started = time.monotonic()
            with pytest.raises(UpstreamTimeout) as caught:
                await upstream.forward(UpstreamRequest("GET", "/connectors", deadline=deadline))
            assert time.monotonic() - started < min(read_timeout_s, budget_s) + 0.5
            assert type(caught.value) is expected
        finally:
            await upstream.aclose()


async def test_requests_the_sidecar_composes_end_at_the_budget_too(
    router: respx.MockRouter, serve: Serve, fake_transport: FakeWorkers
) -> None:
    """``PATCH .../config`` on a 3.4 worker is the sidecar's GET and PUT of the config: on a worker that
    hangs, the client's budget ends them."""
    transport = HangingWorkers(fake_transport, {"w1", "w2"}, root_answers=True)
    settings = limited(request_budget_s=0.3)
    async with serve(settings=settings, transport=transport, read_timeout_s=60, version="3.4.1") as running:
        started = time.monotonic()
        response = await running.client.patch("/connectors/a/config", json={"tasks.max": "2"})
        took = time.monotonic() - started
    assert "request budget" in assert_connect_error(response, 504)
    assert took < 1.5
