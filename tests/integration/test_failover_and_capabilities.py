"""Failover between workers and capability detection against the real Connect workers."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.support.harness import InProcess, sidecar_with
from tests.support.ports import closed_url
from tests.support.stack import Cluster
from tests.support.waiting import eventually


# The sidecars with given workers have no worker properties file (worker_properties=None): no internal
# topics named, so no view; every request goes to the workers given, through the failover.
async def test_a_refusing_worker_is_skipped(cluster: Cluster, in_process: InProcess) -> None:
    dead = closed_url()
    client = await in_process(
        worker_properties=None,
        connect_urls=f"{dead},{cluster.connect_url}",
        worker_down_s=30,
        wait_ready=False,
        advertised_version="worker",  # the worker's own GET / (not the version the sidecar advertises)
    )
    for _ in range(3):
        answer = await client.get("/connectors")
        assert answer.status_code == 200
    root = await client.get("/")
    assert root.json()["version"] == cluster.version
    metrics = (await client.get("/metrics")).text
    assert 'http_requests_total{method="GET",route="/connectors",status="200"} 3.0' in metrics


async def test_no_worker_answers_503_in_connect_error_shape() -> None:
    first, second = closed_url(), closed_url()
    async with sidecar_with(None, connect_urls=f"{first},{second}", wait_ready=False) as running:
        client = running.client
        answer = await client.get("/connectors")
        assert answer.status_code == 503
        body = answer.json()
        assert body["error_code"] == 503
        assert first in body["message"] and second in body["message"]
        assert (await client.get("/readyz")).status_code == 503


@pytest.mark.parametrize(
    ("feature", "native_since", "before"),
    [
        # the view serves topic tracking on every version (its reads, and the reset's tombstones)
        pytest.param("topic_tracking", None, "emulated", id="kip-558"),
        pytest.param("restart_options", "3.0", "emulated", id="kip-745"),
        pytest.param("plugin_listing", "3.2", "emulated", id="kip-769"),
        pytest.param("stop_and_offsets_read", "3.5", "emulated", id="kip-875-stop"),
        pytest.param("offsets_alter_reset", "3.6", "emulated", id="kip-875-alter"),
        # before 4.1 the sidecar checks pins against the installed versions (no side-by-side versions there)
        pytest.param("plugin_versions", "4.1", "emulated", id="kip-891"),
        pytest.param("status_store_retries", None, "emulated", id="status-retries"),
    ],
)
async def test_capabilities_follow_the_worker_version(
    cluster: Cluster, sidecar: httpx.AsyncClient, feature: str, native_since: str | None, before: str
) -> None:
    answer = await sidecar.get("/_sidecar/capabilities")
    assert answer.status_code == 200
    data = answer.json()
    assert data["worker_version"] == cluster.version
    native = native_since is not None and cluster.at_least(native_since)
    assert data["features"][feature]["mode"] == ("native" if native else before)


async def test_forced_mode_overrides_detection(cluster: Cluster, in_process: InProcess) -> None:
    client = await in_process(
        worker_properties=None,
        connect_urls=cluster.connect_url,
        feature_stop_and_offsets_read="emulated",
        wait_ready=False,
    )

    async def capabilities() -> dict[str, Any]:
        return (await client.get("/_sidecar/capabilities")).json()  # type: ignore[no-any-return]

    data = await eventually(capabilities, lambda d: bool(d["worker_version"]), what="the worker's version detected")
    assert data["worker_version"] == cluster.version
    assert data["features"]["stop_and_offsets_read"]["mode"] == "emulated"
    assert data["features"]["stop_and_offsets_read"]["reason"] == "forced emulated by setting"
    # without the worker's properties the sidecar has no view and cannot know the tracking switches
    assert data["features"]["topic_tracking"]["mode"] == "native"


async def test_sidecar_learned_from_the_worker_properties(cluster: Cluster, sidecar: httpx.AsyncClient) -> None:
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
