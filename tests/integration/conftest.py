"""Integration tests run against the real stack: a KRaft broker, Connect 4.3.1 and 3.4.1, and a
sidecar process in front of each. ``make test`` starts it before pytest; a bare ``pytest`` starts it
here (the same script) and stops it at the end."""

from __future__ import annotations

import os
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from typing import Any

import httpx
import pytest

from control_plane.rest import create_app
from control_plane.settings import ENV_PREFIX, load_settings

from .broker import DedicatedBroker
from .stack import Cluster, Stack, load_stack, stack_command, stack_running
from .waiting import eventually

InProcess = Callable[..., Awaitable[httpx.AsyncClient]]


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "/integration/" in str(item.path):
            item.add_marker(pytest.mark.integration)


@pytest.fixture(scope="session")
def stack() -> Iterator[Stack]:
    started = False
    if not stack_running():
        stack_command("up")
        started = True
    try:
        yield load_stack()
    finally:
        if started:
            stack_command("down")


@pytest.fixture(scope="session", params=["new", "old"], ids=["connect-4.3.1", "connect-3.4.1"])
def cluster(request: pytest.FixtureRequest, stack: Stack) -> Cluster:
    return stack.clusters[request.param]


@pytest.fixture
async def sidecar(cluster: Cluster) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=cluster.sidecar_url, timeout=60) as client:
        yield client


@pytest.fixture
async def worker(cluster: Cluster) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=cluster.connect_url, timeout=60) as client:
        yield client


@pytest.fixture
def unique() -> str:
    return uuid.uuid4().hex[:8]


@pytest.fixture(autouse=True)
def _no_control_plane_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """The developer's own CONTROL_PLANE_* variables must not change the settings under test."""
    for name in list(os.environ):
        if name.startswith(ENV_PREFIX):
            monkeypatch.delenv(name)


@pytest.fixture
async def in_process(cluster: Cluster) -> AsyncIterator[InProcess]:
    """``await in_process(**overrides)``: a sidecar app in this process on the cluster's worker properties
    (its view reads the real topics), once ready; stopped after the test."""
    running: list[tuple[httpx.AsyncClient, Any]] = []

    async def start(**overrides: object) -> httpx.AsyncClient:
        app = create_app(load_settings(worker_properties=cluster.properties, **overrides))
        lifespan = app.router.lifespan_context(app)
        await lifespan.__aenter__()
        client = httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://sidecar", timeout=60)
        running.append((client, lifespan))
        await eventually(lambda: client.get("/readyz"), lambda r: r.status_code == 200, what="in-process view ready")
        return client

    yield start
    for client, lifespan in reversed(running):
        await client.aclose()
        await lifespan.__aexit__(None, None, None)


@pytest.fixture(scope="module")
def broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DedicatedBroker]:
    """A broker of the module's own, which its tests may stop and start (never the stack's)."""
    broker = DedicatedBroker(tmp_path_factory.mktemp("dedicated-broker"))
    broker.start()
    try:
        broker.wait_ready()
        yield broker
    finally:
        broker.stop()


@pytest.fixture
def live_broker(broker: DedicatedBroker) -> DedicatedBroker:
    """The module's broker, started again if a test before left it down."""
    if not broker.running():
        broker.start()
        broker.wait_ready()
    return broker
