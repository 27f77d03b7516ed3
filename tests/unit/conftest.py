"""Unit tests: the real app and the real upstream client, with respx standing in for the Connect workers.

Fixtures: ``router`` (the workers, a ``respx.MockRouter``), ``fake_transport`` (that router under
``ConnectUpstream``, handing back answers the way a real transport does: see ``fake_workers`` for why
not ``httpx.MockTransport(router.async_handler)``), ``make_upstream`` and ``serve`` (the app inside its
lifespan, with an ``httpx.AsyncClient`` on the ASGI transport).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
import respx

from control_plane.composition import Runtime
from control_plane.rest import create_app
from control_plane.rest.app import SidecarApp
from control_plane.rest.state import RuntimeSlot
from control_plane.settings import ENV_PREFIX, Settings, load_settings
from control_plane.storage.record_producer import RecordProducer
from control_plane.upstream import ConnectUpstream

W1 = "http://w1:8083"
W2 = "http://w2:8083"
CONNECT_URLS = f"{W1},{W2}"
# the keyword arguments of ConnectUpstream that the settings name otherwise
SETTING_OF = {
    "connect_timeout_s": "upstream_connect_timeout_s",
    "read_timeout_s": "upstream_read_timeout_s",
    "pool_timeout_s": "upstream_pool_timeout_s",
}

# Fast everything: no test waits for a backoff longer than a few milliseconds.
UPSTREAM_DEFAULTS: dict[str, Any] = {
    "connect_timeout_s": 1.0,
    "read_timeout_s": 2.0,
    "pool_timeout_s": 1.0,
    "worker_down_s": 5.0,
    "rebalance_retry_max": 3,
    "rebalance_retry_initial_backoff_ms": 1,
    "rebalance_retry_max_backoff_ms": 4,
}


@pytest.fixture(autouse=True)
def _no_control_plane_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """The developer's own CONTROL_PLANE_* variables must not leak into the settings under test."""
    for name in list(os.environ):
        if name.startswith(ENV_PREFIX):
            monkeypatch.delenv(name)


@pytest.fixture
def router() -> respx.MockRouter:
    """The workers. Its first route, named ``root``, answers ``GET /`` on every worker (the capability
    detector's call) with Connect 4.3.1, ahead of any route a test adds; change it through
    ``serve(version=...)`` or ``router["root"]``."""
    workers = respx.MockRouter(assert_all_called=False)
    workers.get(path="/", name="root").respond(200, json=root_answer("4.3.1"))
    return workers


def fake_workers(router: respx.MockRouter) -> httpx.MockTransport:
    """The respx router as the transport under ``ConnectUpstream``.

    respx (like any ``httpx.Response(content=...)``) returns a response whose body is already read,
    and ``ConnectUpstream`` reads the body raw with ``aiter_raw()``, which then raises
    ``httpx.StreamConsumed``. A real transport returns an unread stream: so does this one, with the
    mocked status, raw headers and raw (still encoded) body bytes.
    """

    async def handler(request: httpx.Request) -> httpx.Response:
        mocked = await router.async_handler(request)
        raw = b"".join([part async for part in mocked.stream])  # type: ignore[union-attr]
        return httpx.Response(
            mocked.status_code,
            headers=mocked.headers.raw,
            stream=httpx.ByteStream(raw),
            extensions=mocked.extensions,
        )

    return httpx.MockTransport(handler)


def _make_upstream(
    router: respx.MockRouter,
    workers: tuple[str, ...] = (W1, W2),
    transport: httpx.AsyncBaseTransport | None = None,
    **overrides: Any,
) -> ConnectUpstream:
    return ConnectUpstream(workers, transport=transport or fake_workers(router), **{**UPSTREAM_DEFAULTS, **overrides})


def root_answer(version: str) -> dict[str, str]:
    """Connect's ``GET /`` (RootResource): the version the capabilities are decided from."""
    return {"version": version, "commit": "0123456789abcdef", "kafka_cluster_id": "cluster-1"}


@dataclass
class Running:
    app: SidecarApp
    client: httpx.AsyncClient
    runtime: Runtime


@contextlib.asynccontextmanager
async def _serve(
    router: respx.MockRouter,
    *,
    version: str | None = None,
    settings: Settings | None = None,
    transport: httpx.AsyncBaseTransport | None = None,
    status_producer: RecordProducer | None = None,
    **upstream_overrides: Any,
) -> AsyncIterator[Running]:
    """The app inside its lifespan, in front of the fake workers; ``version``: what every worker's
    ``GET /`` reports (by default the ``root`` route as it stands)."""
    if version is not None:
        router["root"].respond(200, json=root_answer(version))
    settings = settings or load_settings(connect_urls=CONNECT_URLS)
    upstream = {SETTING_OF.get(k, k): v for k, v in {**UPSTREAM_DEFAULTS, **upstream_overrides}.items()}
    settings = settings.model_copy(update=upstream)
    slot = RuntimeSlot()
    app = create_app(settings, transport=transport or fake_workers(router), status_producer=status_producer, slot=slot)
    async with app.lifespan():
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://sidecar") as client:
            assert slot.runtime is not None
            yield Running(app, client, slot.runtime)


@pytest.fixture
def fake_transport(router: respx.MockRouter) -> httpx.MockTransport:
    return fake_workers(router)


@pytest.fixture
def make_upstream(router: respx.MockRouter) -> Callable[..., ConnectUpstream]:
    """``make_upstream(**overrides)``: a ``ConnectUpstream`` on w1 and w2 over the fake workers; the
    caller closes it (``await upstream.aclose()``)."""

    def make(**overrides: Any) -> ConnectUpstream:
        return _make_upstream(router, **overrides)

    return make


@pytest.fixture
def serve(router: respx.MockRouter) -> Callable[..., contextlib.AbstractAsyncContextManager[Running]]:
    """``async with serve(version=..., settings=..., **upstream_overrides) as running``."""

    def start(**kwargs: Any) -> contextlib.AbstractAsyncContextManager[Running]:
        return _serve(router, **kwargs)

    return start
