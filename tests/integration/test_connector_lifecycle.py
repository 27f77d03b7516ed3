"""What the sidecar passes through, on every Connect version: the root, the plugins and their validation,
malformed bodies and unknown paths answer as the worker behind it does. A connector's whole life is a
parity scenario (parity/test_parity_lifecycle.py)."""

from __future__ import annotations

import httpx

from control_plane.domain.definitions import newest_validation
from tests.support.connect_answers import same_answer
from tests.support.stack import Cluster

FILE_SOURCE = "org.apache.kafka.connect.file.FileStreamSourceConnector"
FILE_SINK = "org.apache.kafka.connect.file.FileStreamSinkConnector"


async def test_plugins_validation_and_root_pass_through(
    cluster: Cluster, sidecar: httpx.AsyncClient, worker: httpx.AsyncClient
) -> None:
    root, direct_root = (await sidecar.get("/")).json(), (await worker.get("/")).json()
    assert direct_root["version"] == cluster.version
    # the version the sidecar advertises (domain.api_version; test_newer_api): 3.4.1 lacks KIP-891 (4.1)
    advertised = (await sidecar.get("/_sidecar/capabilities")).json()["advertised_version"]
    assert root == {**direct_root, "version": direct_root["version"] if cluster.newest else advertised}
    plugins = await same_answer(sidecar, worker, "/connector-plugins")
    assert {p["class"] for p in plugins.json()} >= {FILE_SOURCE, FILE_SINK}
    body = {"connector.class": FILE_SOURCE, "topic": "t"}
    via = await sidecar.put("/connector-plugins/FileStreamSourceConnector/config/validate", json=body)
    direct = await worker.put("/connector-plugins/FileStreamSourceConnector/config/validate", json=body)
    assert via.status_code == direct.status_code == 200
    assert via.json() == newest_validation(direct.json())  # 4.2's order_in_group on every version
    bad = await sidecar.post("/connectors", content=b"{not json", headers={"content-type": "application/json"})
    direct_bad = await worker.post("/connectors", content=b"{not json", headers={"content-type": "application/json"})
    assert (bad.status_code, bad.content) == (direct_bad.status_code, direct_bad.content)
    unknown = await sidecar.get("/no/such/path")
    direct_unknown = await worker.get("/no/such/path")
    assert (unknown.status_code, unknown.content) == (direct_unknown.status_code, direct_unknown.content)
