"""Integration tests run against the real stack: a KRaft broker, Connect 4.4.0, 3.4.1 and 2.8.2. ``make test``
starts it before pytest; a bare ``pytest`` starts it here (the same script) and stops it at the end.

The sidecar under test is never the stack's sidecar process: ``sidecar`` is the session's sidecar of
the cluster, ``in_process(**overrides)`` one with given settings, both built from the code under test and
served in this process over loopback HTTP (``tests.support.harness``)."""

from __future__ import annotations

import contextlib
import os
import uuid
from collections.abc import AsyncIterator, Iterator

import httpx
import pytest

from control_plane.settings import ENV_PREFIX
from tests.support.broker import DedicatedBroker
from tests.support.harness import InProcess, Sidecars, sidecar_with
from tests.support.own_worker import OwnWorkers
from tests.support.stack import Cluster, Stack, cluster_ids, load_stack, stack_command, stack_running


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


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """``cluster`` is parametrized over every Connect cluster of the stack's env, ids such as
    ``connect-4.4.0``, ``connect-3.4.1``, ``connect-2.8.2``. The env is read at collection; before the
    stack is up (a bare ``pytest`` starts it in the ``stack`` fixture) the clusters ``stack.py`` starts."""
    if "cluster" in metafunc.fixturenames:
        ids = cluster_ids()
        metafunc.parametrize("cluster", list(ids), ids=list(ids.values()), indirect=True, scope="session")


@pytest.fixture(scope="session")
def own_workers(stack: Stack, tmp_path_factory: pytest.TempPathFactory) -> Iterator[OwnWorkers]:
    """Workers of the tests' own cluster per release, for tests that suspend or kill a worker."""
    workers = OwnWorkers(stack, tmp_path_factory.mktemp("own-workers"))
    try:
        yield workers
    finally:
        workers.close()


@pytest.fixture(scope="session")
def cluster(request: pytest.FixtureRequest, stack: Stack) -> Cluster:
    return stack.clusters[request.param]


@pytest.fixture(scope="session")
async def sidecars() -> AsyncIterator[Sidecars]:
    """The session's sidecar of each cluster (default settings), started once on first use, ready."""
    running = Sidecars()
    try:
        yield running
    finally:
        await running.aclose()


@pytest.fixture
async def sidecar(cluster: Cluster, sidecars: Sidecars) -> AsyncIterator[httpx.AsyncClient]:
    """A client of the session's sidecar of ``cluster``, built from the code under test."""
    running = await sidecars.of(cluster)
    async with httpx.AsyncClient(base_url=running.url, timeout=60) as client:
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
    """``await in_process(**overrides)``: a sidecar with given settings on the cluster's worker properties
    (its view reads the real topics), served like ``sidecar``, once ready (``wait_ready=False``: at once);
    stopped after the test. ``worker_properties=None`` leaves the properties file out."""
    async with contextlib.AsyncExitStack() as running:

        async def start(*, wait_ready: bool = True, **overrides: object) -> httpx.AsyncClient:
            served = await running.enter_async_context(sidecar_with(cluster, wait_ready=wait_ready, **overrides))
            return served.client

        yield start


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
