"""A FileStreamSource connector's whole life through the sidecar, on both Connect versions: the
sidecar's answers equal the worker's own for the same calls, and the records really reach Kafka."""

from __future__ import annotations

from pathlib import Path

import httpx

from control_plane.domain.definitions import newest_validation

from .harness import read_values, same_answer, until_states
from .stack import Cluster, Stack
from .waiting import eventually

FILE_SOURCE = "org.apache.kafka.connect.file.FileStreamSourceConnector"
FILE_SINK = "org.apache.kafka.connect.file.FileStreamSinkConnector"


async def test_source_connector_lifecycle_through_the_sidecar(
    stack: Stack, cluster: Cluster, sidecar: httpx.AsyncClient, worker: httpx.AsyncClient, unique: str, tmp_path: Path
) -> None:
    name = f"source-{cluster.name}-{unique}"
    topic = f"lines-{cluster.name}-{unique}"
    source_file = tmp_path / "in.txt"
    source_file.write_text("first line\nsecond line\n")
    config = {"connector.class": FILE_SOURCE, "tasks.max": "1", "file": str(source_file), "topic": topic}

    created = await sidecar.post("/connectors", json={"name": name, "config": config})
    assert created.status_code == 201, created.text
    assert created.json()["name"] == name
    assert created.headers["location"].endswith(f"/connectors/{name}")

    again = await sidecar.post("/connectors", json={"name": name, "config": config})
    assert again.status_code == 409
    assert again.json() == {"error_code": 409, "message": f"Connector {name} already exists"}

    await until_states(sidecar, name, "RUNNING", ["RUNNING"])
    running = (await sidecar.get(f"/connectors/{name}/status")).json()
    assert running["type"] == "source"
    await same_answer(sidecar, worker, f"/connectors/{name}/status")
    await same_answer(sidecar, worker, f"/connectors/{name}")
    await same_answer(sidecar, worker, f"/connectors/{name}/config")
    await same_answer(sidecar, worker, f"/connectors/{name}/tasks")
    await same_answer(sidecar, worker, f"/connectors/{name}/tasks/0/status")
    listing = await same_answer(sidecar, worker, "/connectors")
    assert name in listing.json()
    expanded = await same_answer(sidecar, worker, "/connectors?expand=status&expand=info")
    assert expanded.json()[name]["info"]["config"]["topic"] == topic

    assert await read_values(stack.bootstrap, topic, 2) == ["first line", "second line"]

    paused = await sidecar.put(f"/connectors/{name}/pause")
    assert paused.status_code == 202
    await until_states(sidecar, name, "PAUSED", ["PAUSED"])
    await same_answer(sidecar, worker, f"/connectors/{name}/status")

    resumed = await sidecar.put(f"/connectors/{name}/resume")
    assert resumed.status_code == 202
    await until_states(sidecar, name, "RUNNING", ["RUNNING"])
    with source_file.open("a") as f:
        f.write("third line\n")
    assert (await read_values(stack.bootstrap, topic, 3))[-1] == "third line"

    restarted = await sidecar.post(f"/connectors/{name}/restart")
    assert restarted.status_code == 204
    restarted_all = await sidecar.post(f"/connectors/{name}/restart", params={"includeTasks": "true"})
    assert restarted_all.status_code == 202
    assert restarted_all.json()["connector"]["state"] in {"RUNNING", "RESTARTING"}
    task_restart = await sidecar.post(f"/connectors/{name}/tasks/0/restart")
    assert task_restart.status_code == 204
    await until_states(sidecar, name, "RUNNING", ["RUNNING"])  # after the restarts

    deleted = await sidecar.delete(f"/connectors/{name}")
    assert deleted.status_code == 204
    gone = await same_answer(sidecar, worker, f"/connectors/{name}")
    assert gone.status_code == 404
    assert gone.json() == {"error_code": 404, "message": f"Connector {name} not found"}


async def test_sink_connector_reads_through_the_sidecar(
    stack: Stack, cluster: Cluster, sidecar: httpx.AsyncClient, worker: httpx.AsyncClient, unique: str, tmp_path: Path
) -> None:
    topic = f"sinkin-{cluster.name}-{unique}"
    source_file, sink_file = tmp_path / "in.txt", tmp_path / "out.txt"
    source_file.write_text("alpha\nbeta\n")
    source = f"src-{cluster.name}-{unique}"
    sink = f"sink-{cluster.name}-{unique}"
    for name, config in (
        (source, {"connector.class": FILE_SOURCE, "tasks.max": "1", "file": str(source_file), "topic": topic}),
        (sink, {"connector.class": FILE_SINK, "tasks.max": "1", "file": str(sink_file), "topics": topic}),
    ):
        put = await sidecar.put(f"/connectors/{name}/config", json=config)
        assert put.status_code == 201, put.text

    async def sink_lines() -> list[str]:
        return sink_file.read_text().splitlines() if sink_file.exists() else []

    assert await eventually(sink_lines, lambda lines: lines == ["alpha", "beta"], what="sink file filled") == [
        "alpha",
        "beta",
    ]
    status = await same_answer(sidecar, worker, f"/connectors/{sink}/status")
    assert status.json()["type"] == "sink"
    for name in (source, sink):
        assert (await sidecar.delete(f"/connectors/{name}")).status_code == 204


async def test_plugins_validation_and_root_pass_through(
    cluster: Cluster, sidecar: httpx.AsyncClient, worker: httpx.AsyncClient
) -> None:
    root, direct_root = (await sidecar.get("/")).json(), (await worker.get("/")).json()
    assert direct_root["version"] == cluster.version
    # the version the sidecar advertises (domain.api_version; test_newer_api): 3.4.1 lacks KIP-891 (4.1)
    assert root == {**direct_root, "version": {"new": "4.3.1", "old": "4.0.0"}[cluster.name]}
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
