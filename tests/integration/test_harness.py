"""The harness runs the code under test: the ``control_plane`` this checkout holds, served in this process,
never a sidecar process that ``make stack-up`` started earlier from whatever code existed then."""

from __future__ import annotations

import sys
from pathlib import Path

import httpx

from .harness import Sidecars
from .stack import ROOT, Cluster


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
    assert running.server.config.app is running.app
    before = running.requests_served
    info = await sidecar.get("/_sidecar/info")
    assert running.requests_served == before + 1
    assert info.status_code == 200
    assert info.json()["workers"] == [cluster.connect_url]
    assert info.json()["settings"]["group_id"] == cluster.worker_property("group.id")
    assert not hasattr(cluster, "sidecar_url"), "the stack's sidecar process must stay out of the tests' reach"
