"""The sidecar's app over respx workers, as the unit tests drive it: the router as the transport under
``ConnectUpstream`` (``fake_workers``, from ``tests.support.fake_workers``), an upstream on two fake
workers (``make_upstream``), and the app inside its lifespan with an ``httpx.AsyncClient`` on the ASGI
transport (``serve``). tests/unit/conftest.py hands them out as fixtures."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import httpx
import respx

from control_plane.composition import Runtime
from control_plane.rest import create_app
from control_plane.rest.request.runtime import RuntimeSlot
from control_plane.rest.serving.app import SidecarApp
from control_plane.settings import Settings, load_settings
from control_plane.storage.record_producer import RecordProducer
from control_plane.upstream import ConnectUpstream, Transport

from .fake_workers import fake_workers

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


def make_upstream(
    router: respx.MockRouter,
    workers: tuple[str, ...] = (W1, W2),
    transport: Transport | None = None,
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
async def serve(
    router: respx.MockRouter,
    *,
    version: str | None = None,
    settings: Settings | None = None,
    transport: Transport | None = None,
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
