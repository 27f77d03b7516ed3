"""The endpoints newer Connect releases added, through the sidecar on every worker version, against the
newest worker's own answers (4.4.0, directly): KIP-745's restart options (3.0) and KIP-769's plugin listing
and plugin config (3.2). Forwarded where the worker has them, composed by the sidecar where it does not."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from control_plane.domain.definitions import newest_plugin_config
from tests.support.connect_answers import until_states
from tests.support.stack import NEWEST, Cluster, Stack

FILE_SINK = "org.apache.kafka.connect.file.FileStreamSinkConnector"
BOOLEAN = "org.apache.kafka.connect.converters.BooleanConverter"
CAST = "org.apache.kafka.connect.transforms.Cast$Key"


@pytest.fixture
async def newest(stack: Stack) -> AsyncIterator[httpx.AsyncClient]:
    """The newest worker, directly: the answers to equal."""
    async with httpx.AsyncClient(base_url=stack.clusters[NEWEST].connect_url, timeout=60) as client:
        yield client


@contextlib.asynccontextmanager
async def failing_sink(client: httpx.AsyncClient, name: str, out: Path) -> AsyncIterator[None]:
    """A FileStreamSink whose task fails at start (its file's directory does not exist yet)."""
    config = {"connector.class": FILE_SINK, "tasks.max": "1", "topics": name, "file": str(out)}
    assert (await client.put(f"/connectors/{name}/config", json=config)).status_code == 201
    try:
        await until_states(client, name, "RUNNING", ["FAILED"])
        yield
    finally:
        await client.delete(f"/connectors/{name}")


def normalised(body: dict[str, Any]) -> dict[str, Any]:
    """What must differ between clusters: the name, worker ids, KIP-891 versions (4.1+), traces."""

    def entry(e: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in e.items() if k not in ("worker_id", "version", "trace")}

    return {"connector": entry(body["connector"]), "tasks": [entry(t) for t in body["tasks"]], "type": body["type"]}


async def test_restart_only_failed_tasks_restarts_the_failed_task_as_the_newest_worker(
    cluster: Cluster, sidecar: httpx.AsyncClient, newest: httpx.AsyncClient, unique: str, tmp_path: Path
) -> None:
    via_name, direct_name = f"restart-{cluster.name}-{unique}", f"restart-direct-{cluster.name}-{unique}"
    via_dir, direct_dir = tmp_path / "via", tmp_path / "direct"
    async with (
        failing_sink(sidecar, via_name, via_dir / "out.txt"),
        failing_sink(newest, direct_name, direct_dir / "out.txt"),
    ):
        query = "?includeTasks=true&onlyFailed=true"
        for directory in (via_dir, direct_dir):
            directory.mkdir()  # the restarted task can start now
        via = await sidecar.post(f"/connectors/{via_name}/restart{query}")
        direct = await newest.post(f"/connectors/{direct_name}/restart{query}")
        assert (via.status_code, normalised(via.json())) == (direct.status_code, normalised(direct.json()))
        assert via.status_code == 202 and via.json()["tasks"][0]["state"] == "RESTARTING"
        assert via.json()["name"] == via_name
        # acknowledged means done: the failed task was really restarted, and runs
        await until_states(sidecar, via_name, "RUNNING", ["RUNNING"])
        await until_states(newest, direct_name, "RUNNING", ["RUNNING"])
        # nothing failed: the same answer, nothing restarted; without options the old 204
        via, direct = (
            await sidecar.post(f"/connectors/{via_name}/restart{query}"),
            await newest.post(f"/connectors/{direct_name}/restart{query}"),
        )
        assert (via.status_code, normalised(via.json())) == (direct.status_code, normalised(direct.json()))
        assert normalised(via.json())["tasks"] == [{"id": 0, "state": "RUNNING"}]
        via, direct = (
            await sidecar.post(f"/connectors/{via_name}/restart"),
            await newest.post(f"/connectors/{direct_name}/restart"),
        )
        assert (via.status_code, via.content) == (direct.status_code, direct.content) == (204, b"")
    ghost = f"/connectors/restart-ghost-{unique}/restart?includeTasks=true"
    via, direct = await sidecar.post(ghost), await newest.post(ghost)
    assert (
        (via.status_code, via.json())
        == (direct.status_code, direct.json())
        == (
            404,
            {"error_code": 404, "message": f"Unknown connector: restart-ghost-{unique}"},
        )
    )


async def test_plugin_listing_as_the_newest_worker_lists_them(
    cluster: Cluster, sidecar: httpx.AsyncClient, worker: httpx.AsyncClient, newest: httpx.AsyncClient
) -> None:
    via = await sidecar.get("/connector-plugins?connectorsOnly=false")
    direct = (await newest.get("/connector-plugins?connectorsOnly=false")).json()
    assert via.status_code == 200
    listed = via.json()
    if cluster.at_least("3.2"):  # the worker's own
        assert listed == (await worker.get("/connector-plugins?connectorsOnly=false")).json()
    else:  # composed: as the newest worker lists them, but what the worker cannot tell is missing, said so
        types = [p["type"] for p in listed]
        assert types == sorted(types, key=[p["type"] for p in direct].index)  # the newest worker's order of types
        by_type = {kind: [p["class"] for p in listed if p["type"] == kind] for kind in set(types)}
        assert set(by_type) == {"sink", "source", "transformation", "predicate", "converter", "header_converter"}
        for kind, names in by_type.items():
            assert names == sorted(names)
            assert set(names) <= {p["class"] for p in direct if p["type"] == kind}  # older workers have fewer
        own = (await worker.get("/connector-plugins")).json()
        assert [p for p in listed if p["type"] in ("sink", "source")] == sorted(
            own, key=lambda p: p["type"] == "source"
        )
        assert CAST in by_type["transformation"]
        assert all("version" not in p for p in listed if p["type"] not in ("sink", "source"))  # undefined: left out
        # Kafka's own converters and the plugin.path's (the versioned test plugins' converter), as 4.4.0 lists
        # them (once each: the versions are not known), BooleanConverter (3.3+) aside
        for kind in ("converter", "header_converter"):
            assert set(by_type[kind]) == {p["class"] for p in direct if p["type"] == kind} - {BOOLEAN}
        assert "warning" not in via.headers
    # connectorsOnly=true (the default) is the worker's own list on every version
    assert (await sidecar.get("/connector-plugins")).json() == (await worker.get("/connector-plugins")).json()


async def test_plugin_config_as_the_newest_worker_describes_it(
    cluster: Cluster, sidecar: httpx.AsyncClient, worker: httpx.AsyncClient, newest: httpx.AsyncClient, unique: str
) -> None:
    for alias in ("FileStreamSink", FILE_SINK):
        via = await sidecar.get(f"/connector-plugins/{alias}/config")
        direct = await newest.get(f"/connector-plugins/{alias}/config")
        assert via.status_code == direct.status_code == 200, via.text
        if cluster.at_least("3.2"):  # the worker's own, in 4.2's shape ("order_in_group", not "order")
            own = (await worker.get(f"/connector-plugins/{alias}/config")).json()
            assert via.json() == newest_plugin_config(own)
            continue
        keys, newest_keys = via.json(), direct.json()
        assert [list(k) for k in keys] == [list(newest_keys[0])] * len(keys)  # the newest shape, field order
        assert keys[0] == newest_keys[0]  # the plugin's own key first: "file", as 4.4.0 defines it
        framework = [k["name"] for k in keys[1:]]
        assert framework[:3] == ["name", "connector.class", "tasks.max"]
        assert set(framework) <= {k["name"] for k in newest_keys}  # the worker's version's framework keys
    unknown = f"/connector-plugins/Nope{unique}/config"
    via, direct = await sidecar.get(unknown), await newest.get(unknown)
    assert (via.status_code, via.json()) == (direct.status_code, direct.json())
    converter = await sidecar.get("/connector-plugins/JsonConverter/config")
    assert converter.status_code == (200 if cluster.at_least("3.2") else 501), converter.text
    transform = await sidecar.get(f"/connector-plugins/{CAST}/config")
    if cluster.at_least("3.2"):
        assert transform.status_code == 200
    else:  # not composable from 2.8's API: said, not guessed
        assert transform.status_code == 501
        assert "transformation plugins" in transform.json()["message"]
