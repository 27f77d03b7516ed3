"""Failover between workers and capability detection against the real Connect workers."""

from __future__ import annotations

import socket
from collections.abc import AsyncIterator

import httpx
import pytest
from starlette.applications import Starlette

from control_plane.rest import create_app
from control_plane.settings import load_settings

from .stack import Cluster


def refused_url() -> str:
    """A loopback port nobody listens on: connections to it are refused."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}"


@pytest.fixture
async def in_process() -> AsyncIterator[object]:
    """Start a sidecar app in this process (real aiohttp upstream), with its lifespan."""
    apps: list[tuple[Starlette, httpx.AsyncClient, object]] = []

    async def start(**settings: object) -> httpx.AsyncClient:
        app = create_app(load_settings(**settings))
        lifespan = app.router.lifespan_context(app)
        await lifespan.__aenter__()
        client = httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://sidecar", timeout=30)
        apps.append((app, client, lifespan))
        return client

    yield start
    for _, client, lifespan in reversed(apps):
        await client.aclose()
        await lifespan.__aexit__(None, None, None)  # type: ignore[attr-defined]


async def test_a_refusing_worker_is_skipped(cluster: Cluster, in_process) -> None:  # type: ignore[no-untyped-def]
    dead = refused_url()
    client = await in_process(connect_urls=f"{dead},{cluster.connect_url}", worker_down_s=30)
    for _ in range(3):
        answer = await client.get("/connectors")
        assert answer.status_code == 200
    root = await client.get("/")
    assert root.json()["version"] == cluster.version
    metrics = (await client.get("/metrics")).text
    assert 'http_requests_total{method="GET",route="/connectors",status="200"} 3.0' in metrics


async def test_no_worker_answers_503_in_connect_error_shape(in_process) -> None:  # type: ignore[no-untyped-def]
    first, second = refused_url(), refused_url()
    client = await in_process(connect_urls=f"{first},{second}")
    answer = await client.get("/connectors")
    assert answer.status_code == 503
    body = answer.json()
    assert body["error_code"] == 503
    assert first in body["message"] and second in body["message"]
    assert (await client.get("/readyz")).status_code == 503


@pytest.mark.parametrize(
    ("feature", "native_on_new", "native_on_old"),
    [
        pytest.param("topic_tracking", True, True, id="kip-558"),
        pytest.param("stop_and_offsets_read", True, False, id="kip-875-stop"),
        pytest.param("offsets_alter_reset", True, False, id="kip-875-alter"),
        pytest.param("plugin_versions", True, False, id="kip-891"),
        pytest.param("status_store_retries", False, False, id="status-retries"),
    ],
)
async def test_capabilities_follow_the_worker_version(
    cluster: Cluster, sidecar: httpx.AsyncClient, feature: str, native_on_new: bool, native_on_old: bool
) -> None:
    answer = await sidecar.get("/_sidecar/capabilities")
    assert answer.status_code == 200
    data = answer.json()
    assert data["worker_version"] == cluster.version
    expected = native_on_new if cluster.name == "new" else native_on_old
    assert data["features"][feature]["mode"] == ("native" if expected else "emulated")


async def test_forced_mode_overrides_detection(cluster: Cluster, in_process) -> None:  # type: ignore[no-untyped-def]
    client = await in_process(connect_urls=cluster.connect_url, feature_stop_and_offsets_read="emulated")
    for _ in range(50):
        data = (await client.get("/_sidecar/capabilities")).json()
        if data["worker_version"]:
            break
        import asyncio

        await asyncio.sleep(0.1)
    assert data["worker_version"] == cluster.version
    assert data["features"]["stop_and_offsets_read"]["mode"] == "emulated"
    assert data["features"]["stop_and_offsets_read"]["reason"] == "forced emulated by setting"


async def test_sidecar_process_learned_from_the_worker_properties(cluster: Cluster, sidecar: httpx.AsyncClient) -> None:
    info = (await sidecar.get("/_sidecar/info")).json()
    settings = info["settings"]
    assert info["workers"] == [cluster.connect_url]
    assert settings["group_id"] == cluster.worker_property("group.id")
    assert settings["bootstrap_servers"] == cluster.worker_property("bootstrap.servers")
    assert settings["status_storage_topic"] == cluster.worker_property("status.storage.topic")
    assert settings["config_storage_topic"] == cluster.worker_property("config.storage.topic")
    assert settings["offset_storage_topic"] == cluster.worker_property("offset.storage.topic")
    assert (await sidecar.get("/readyz")).status_code == 200
    assert (await sidecar.get("/healthz")).json() == {"status": "ok"}
