"""Integration tests run against the real stack: a KRaft broker, Connect 4.3.1 and 3.4.1, and a
sidecar process in front of each. ``make test`` starts it before pytest; a bare ``pytest`` starts it
here (the same script) and stops it at the end."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Iterator

import httpx
import pytest

from .stack import Cluster, Stack, load_stack, stack_command, stack_running


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
