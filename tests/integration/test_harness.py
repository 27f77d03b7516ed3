"""The harness runs the code under test: the ``control_plane`` this checkout holds, served in this process,
never a sidecar process that ``make stack-up`` started earlier from whatever code existed then."""

from __future__ import annotations

import sys
from pathlib import Path

import httpx

from tests.support.harness import Sidecars
from tests.support.paths import ROOT
from tests.support.stack import Cluster, clusters_of


def test_control_plane_is_imported_from_this_checkout() -> None:
    modules = {
        name: m for name, m in sys.modules.items() if name == "control_plane" or name.startswith("control_plane.")
    }
    assert "control_plane.rest" in modules
    elsewhere = {
        name: m.__file__
        for name, m in modules.items()
        if m.__file__ is not None and not Path(m.__file__).resolve().is_relative_to(ROOT / "control_plane")
    }
    assert elsewhere == {}, f"control_plane imported from outside {ROOT}"


async def test_the_sidecar_fixture_is_served_by_this_process(
    cluster: Cluster, sidecar: httpx.AsyncClient, sidecars: Sidecars
) -> None:
    """A request through the ``sidecar`` fixture is one more request answered by the server this process
    runs for the cluster, on the app ``create_app`` of this checkout built."""
    running = await sidecars.of(cluster)
    assert str(sidecar.base_url).rstrip("/") == running.url
    assert running.server.pipeline is running.app.pipeline
    before = running.requests_served
    info = await sidecar.get("/_sidecar/info")
    assert running.requests_served == before + 1
    assert info.status_code == 200
    assert info.json()["workers"] == [cluster.connect_url]
    assert info.json()["settings"]["group_id"] == cluster.worker_property("group.id")
    assert not hasattr(cluster, "sidecar_url"), "the stack's sidecar process must stay out of the tests' reach"


def test_every_cluster_of_the_stack_env_is_found_newest_first() -> None:
    """The parity suite's ways come from here: a cluster the stack adds (``CONNECT_URL_OLDEST`` and its
    version and properties) is one more way with no change to the suite."""
    env = {
        "KAFKA_BOOTSTRAP": "127.0.0.1:9092",
        "CONNECT_URL_OLD": "http://o",
        "CONNECT_VERSION_OLD": "3.4.1",
        "CONNECT_PROPERTIES_OLD": "/o.properties",
        "CONNECT_URL": "http://n",
        "CONNECT_VERSION": "4.3.1",
        "CONNECT_PROPERTIES": "/n.properties",
        "CONNECT_URL_OLDEST": "http://e",
        "CONNECT_VERSION_OLDEST": "2.8.2",
        "CONNECT_PROPERTIES_OLDEST": "/e.properties",
    }
    clusters = clusters_of(env)
    assert list(clusters) == ["new", "old", "oldest"]
    assert clusters["oldest"] == Cluster("oldest", "2.8.2", "http://e", "/e.properties")
