"""The view answers what the worker would, field by field, in the edge cases: a connector whose plugin
class the worker does not have (FAILED, ``"type":"unknown"``, and on 4.1+ ``"version": null``), and names
with spaces, slashes, unicode, on both Connect versions."""

from __future__ import annotations

from functools import partial
from urllib.parse import quote

import httpx
from aiokafka import AIOKafkaProducer

from control_plane.codecs import ConnectorConfig, encode_config

from .harness import same_answer
from .stack import Cluster, Stack
from .waiting import eventually


async def write_config(stack: Stack, cluster: Cluster, name: str, config: dict[str, str]) -> None:
    """A connector's config record written straight to the config topic, as a worker writes it (no
    validation on the way: how a connector whose plugin was removed since looks)."""
    key, value = encode_config(ConnectorConfig(name, config))
    producer = AIOKafkaProducer(bootstrap_servers=stack.bootstrap)
    await producer.start()
    try:
        await producer.send_and_wait(cluster.worker_property("config.storage.topic"), value, key=key)
    finally:
        await producer.stop()


async def test_a_connector_whose_class_the_worker_lacks(
    stack: Stack, cluster: Cluster, sidecar: httpx.AsyncClient, worker: httpx.AsyncClient, unique: str
) -> None:
    name = f"ghost-class-{cluster.name}-{unique}"
    await write_config(stack, cluster, name, {"connector.class": "org.example.Missing", "name": name})
    try:
        await eventually(
            lambda: worker.get(f"/connectors/{name}/status"),
            lambda r: r.status_code == 200 and r.json()["connector"]["state"] == "FAILED",
            what="the worker failed to load it",
        )
        status = (await same_answer(sidecar, worker, f"/connectors/{name}/status")).json()
        assert status["type"] == "unknown" and status["connector"]["state"] == "FAILED"
        assert status["connector"]["version"] is None  # 4.1+ writes it: null; the sidecar shows it on 3.4.1
        await same_answer(sidecar, worker, f"/connectors/{name}/config")
        listing = (await same_answer(sidecar, worker, "/connectors?expand=status&expand=info")).json()
        assert listing[name]["info"]["type"] == "unknown"
    finally:
        assert (await sidecar.delete(f"/connectors/{name}")).status_code == 204
    # read-your-writes: the deletion is in the view when the answer comes back (the config topic); the
    # status goes later, on the worker as in the view (its leader deletes it after the rebalance)
    assert (await sidecar.get(f"/connectors/{name}/config")).status_code == 404
    assert (await same_answer(sidecar, worker, f"/connectors/{name}/status")).status_code == 404


async def test_names_with_spaces_slashes_and_unicode(
    cluster: Cluster, sidecar: httpx.AsyncClient, worker: httpx.AsyncClient, unique: str
) -> None:
    for raw in (f"with space {unique}", f"caf\u00e9-\u6f22\u5b57-{unique}", f"semi;colon-{unique}"):
        config = {"connector.class": "FileStreamSource", "topic": f"edge-{unique}", "file": "/dev/null"}
        created = await sidecar.post("/connectors", json={"name": raw, "config": config})
        assert created.status_code == 201, created.text
        path = f"/connectors/{quote(raw, safe='')}"
        try:
            await eventually(
                partial(worker.get, f"{path}/status"),
                lambda r: r.status_code == 200 and r.json()["tasks"],
                what=f"{raw!r} running",
            )
            for suffix in ("", "/status", "/config", "/tasks/0/status", "/topics"):
                await same_answer(sidecar, worker, path + suffix)
        finally:
            assert (await sidecar.delete(path)).status_code == 204
