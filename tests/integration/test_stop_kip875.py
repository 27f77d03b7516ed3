"""KIP-875's STOPPED state through the sidecar on both Connect versions: native on 4.3.1 (forwarded),
written to the config topic by the sidecar on 3.4.1. The KIP's stopped-state test plan lines that apply:
stop a running, a paused and a stopped connector; no task configuration or status is shown for a stopped
connector; pause and resume a stopped connector; delete a stopped connector; an unknown one is 404."""

from __future__ import annotations

from functools import partial
from pathlib import Path

import httpx

from control_plane.codecs import TargetState, TaskCommit, encode_config
from control_plane.domain.stop import unknown_connector

from .conftest import InProcess
from .harness import read_to_end, read_values, until_states
from .stack import Cluster, Stack
from .test_offsets_kip875 import FILE_SOURCE, create, created  # noqa: F401
from .waiting import eventually


async def test_stop_running_paused_and_stopped_then_pause_resume_and_delete(
    stack: Stack,
    cluster: Cluster,
    worker: httpx.AsyncClient,
    sidecar: httpx.AsyncClient,
    in_process: InProcess,
    created: list[str],  # noqa: F811
    unique: str,
    tmp_path: Path,
) -> None:
    client = sidecar
    upstream_reads = await in_process(read_from="upstream")
    tag = f"{cluster.name}-{unique}"
    running, paused = f"kip875-stop-run-{tag}", f"kip875-stop-paused-{tag}"
    topic = f"kip875-stop-lines-{tag}"
    lines = tmp_path / "in.txt"
    lines.write_text("a\nb\n")
    for name in (running, paused):
        await create(
            client,
            name,
            {"connector.class": FILE_SOURCE, "tasks.max": "1", "file": str(lines), "topic": topic},
            created,
        )
    for name in (running, paused):
        await until_states(client, name, "RUNNING", ["RUNNING"])  # tasks first: a connector paused early has none
    assert (await client.put(f"/connectors/{paused}/pause")).status_code == 202
    await until_states(client, paused, "PAUSED", ["PAUSED"])

    for name in (running, paused, running):  # a running, a paused, then an already stopped connector
        answer = await client.put(f"/connectors/{name}/stop")
        assert (answer.status_code, answer.content) == (204, b"")
        await until_states(client, name, "STOPPED", [])
    for name in (running, paused):
        await until_states(worker, name, "STOPPED" if cluster.newest else "PAUSED", [])  # 3.4.1 paused it
        await until_states(upstream_reads, name, "STOPPED", [])  # the worker's answer would be wrong: the view's
        status = (await client.get(f"/connectors/{name}/status")).json()
        if cluster.newest:
            assert status == (await worker.get(f"/connectors/{name}/status")).json()
        assert status["type"] == "source" and status["tasks"] == []
        assert (await client.get(f"/connectors/{name}/tasks")).json() == []
        assert (await client.get(f"/connectors/{name}")).json()["tasks"] == []
        missing = await client.get(f"/connectors/{name}/tasks/0/status")
        assert (missing.status_code, missing.json()["message"]) == (404, f"No status found for task {name}-0")
    listing = (await client.get("/connectors", params={"expand": "status"})).json()
    assert listing[running]["status"]["connector"]["state"] == "STOPPED"
    if not cluster.newest:  # what the sidecar wrote: the empty task set, then the two-field target state
        config_topic = cluster.worker_property("config.storage.topic")
        commit_key, commit = encode_config(TaskCommit(running, 0))
        target_key, target = encode_config(TargetState.of(running, "STOPPED"))
        assert commit == b'{"tasks":0}' and target == b'{"state":"PAUSED","state.v2":"STOPPED"}'
        config_log = await read_to_end(stack.bootstrap, config_topic)
        assert config_log.with_key(commit_key)[-1] == (0, commit)
        assert config_log.with_key(target_key)[-1] == (0, target)

    # pausing a stopped connector: PAUSED without tasks (as 4.3.1 does); resuming it: RUNNING, lines flow
    assert (await client.put(f"/connectors/{paused}/pause")).status_code == 202
    await until_states(client, paused, "PAUSED", [])
    for name in (paused, running):
        assert (await client.put(f"/connectors/{name}/resume")).status_code == 202
        await until_states(client, name, "RUNNING", ["RUNNING"])
    with lines.open("a") as f:
        f.write("c\n")
    assert sorted(await read_values(stack.bootstrap, topic, 6)) == ["a", "a", "b", "b", "c", "c"]

    # a stopped connector can be deleted
    for name in (running, paused):
        assert (await client.put(f"/connectors/{name}/stop")).status_code == 204
        assert (await client.delete(f"/connectors/{name}")).status_code == 204
        await eventually(partial(client.get, f"/connectors/{name}"), lambda r: r.status_code == 404, what="deleted")
    ghost = f"kip875-stop-ghost-{tag}"
    answer = await client.put(f"/connectors/{ghost}/stop")
    assert (answer.status_code, answer.json()) == (404, {"error_code": 404, "message": unknown_connector(ghost)})
    if cluster.newest:
        direct = await worker.put(f"/connectors/{ghost}/stop")
        assert (direct.status_code, direct.json()) == (404, answer.json())
