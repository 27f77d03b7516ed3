"""The sidecar container of deploy/kubernetes/base, run as its manifest runs it: ``control-plane serve``
with the container's environment, reading a worker properties file made as the pod's init container makes
it (the worker's file, then ``rest.advertised.host.name``), here the stack's newest worker's. Its probes
answer on the container's port, and the port the Service targets answers the Connect API as the worker."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from control_plane.settings import ENV_PREFIX
from tests.support import sidecar_process
from tests.support.kubernetes import BASE, render
from tests.support.ports import free_port
from tests.support.stack import Stack
from tests.support.waiting import eventually


@pytest.fixture
def pod_sidecar(stack: Stack, tmp_path: Path) -> Iterator[tuple[dict[str, Any], str]]:
    objects = render(BASE)
    (deployment,) = [o for o in objects if o["kind"] == "Deployment"]
    (container,) = [c for c in deployment["spec"]["template"]["spec"]["containers"] if c["name"] == "control-plane"]
    properties = tmp_path / "connect-distributed.properties"
    properties.write_text(Path(stack.newest.properties).read_text() + "\nrest.advertised.host.name=127.0.0.1\n")
    port = free_port()
    # the container's environment over the test's (which holds no CONTROL_PLANE_* variable: conftest.py),
    # its Secret's keys as an operator's Secret would give them
    secrets = {("control-plane-history", "history-secret-key"): "a-key-from-the-operators-secret"}
    env = {
        e["name"]: e["value"]
        if "value" in e
        else secrets[(e["valueFrom"]["secretKeyRef"]["name"], e["valueFrom"]["secretKeyRef"]["key"])]
        for e in container["env"]
    }
    env |= {f"{ENV_PREFIX}WORKER_PROPERTIES": str(properties), f"{ENV_PREFIX}PORT": str(port)}
    # the image's entry point (deploy/kubernetes/Containerfile) with the container's args
    sidecar = sidecar_process.start(container["args"], tmp_path / "sidecar.log", port, env=env, cwd=tmp_path)
    try:
        yield container, sidecar.url
    finally:
        sidecar.stop()


async def test_the_pod_sidecar_serves_its_probes_and_the_connect_api(
    stack: Stack, pod_sidecar: tuple[dict[str, Any], str]
) -> None:
    container, url = pod_sidecar
    probes = {name: container[name]["httpGet"]["path"] for name in ("livenessProbe", "readinessProbe")}
    async with httpx.AsyncClient(base_url=url, timeout=10) as client:

        async def get(path: str) -> httpx.Response | None:
            try:
                return await client.get(path)
            except httpx.TransportError:
                return None  # not listening yet

        alive = await eventually(lambda: get(probes["livenessProbe"]), lambda r: r is not None, what="liveness")
        assert alive is not None and alive.status_code == 200
        ready = await eventually(
            lambda: get(probes["readinessProbe"]), lambda r: r is not None and r.status_code == 200, what="readiness"
        )
        assert ready is not None and ready.json()["ready"] is True
        info = (await client.get("/_sidecar/info")).json()
        assert info["workers"] == [stack.newest.connect_url]  # learned from the worker's listeners
        async with httpx.AsyncClient(base_url=stack.newest.connect_url, timeout=10) as worker:
            direct = await worker.get("/connector-plugins", params={"connectorsOnly": "true"})
        through = await client.get("/connector-plugins", params={"connectorsOnly": "true"})
        assert (through.status_code, through.json()) == (direct.status_code, direct.json())
