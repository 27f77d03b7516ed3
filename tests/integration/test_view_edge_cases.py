"""The view answers what the worker would, field by field, in the edge cases: a connector whose plugin
class the worker does not have (FAILED, ``"type":"unknown"``, and on 4.1+ ``"version": null``; before 3.4 the
worker answers 500, the sidecar as 4.4.0), and the status rule of the worker's own version. Names with
spaces, slashes, unicode, large configs and hundreds of tasks are parity scenarios (parity/test_parity_edges.py)."""

from __future__ import annotations

import httpx
from aiokafka import AIOKafkaProducer

from control_plane.codecs import ConnectorConfig, TaskStatus, encode_config, encode_status
from control_plane.codecs.status import StatusKey, StatusKind, decode_status
from control_plane.domain.offsets.messages import not_stopped
from tests.support.connect_answers import same_answer, until_states
from tests.support.kafka_topics import read_to_end
from tests.support.stack import Cluster, Stack, version_key
from tests.support.waiting import eventually


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


async def offsets_of_a_class_the_worker_lacks(sidecar: httpx.AsyncClient, name: str) -> None:
    """Connect 4.4.0 cannot tell source from sink either: its offsets answers are Plugins.newConnector's 500
    (after the herder's state check for alter and reset); the list of connectors it names is its own."""
    missing = "Failed to find any class that implements Connector and which name matches org.example.Missing, "
    entries = {"offsets": [{"partition": {"kafka_topic": "t", "kafka_partition": 0}, "offset": None}]}

    def class_missing(answer: httpx.Response) -> None:
        assert answer.status_code == 500 and answer.json()["message"].startswith(missing), answer.text

    class_missing(await sidecar.get(f"/connectors/{name}/offsets"))
    refused = await sidecar.patch(f"/connectors/{name}/offsets", json=entries)
    assert (refused.status_code, refused.json()["message"]) == (400, not_stopped(name))
    assert (await sidecar.put(f"/connectors/{name}/stop")).status_code == 204
    await eventually(
        lambda: sidecar.patch(f"/connectors/{name}/offsets", json=entries),
        lambda r: r.status_code != 400,
        what="the worker applied the stop",
    )
    class_missing(await sidecar.patch(f"/connectors/{name}/offsets", json=entries))
    class_missing(await sidecar.delete(f"/connectors/{name}/offsets"))


async def test_a_connector_whose_class_the_worker_lacks(
    stack: Stack, cluster: Cluster, sidecar: httpx.AsyncClient, worker: httpx.AsyncClient, unique: str
) -> None:
    name = f"ghost-class-{cluster.name}-{unique}"
    await write_config(stack, cluster, name, {"connector.class": "org.example.Missing", "name": name})
    try:
        await eventually(
            lambda: sidecar.get(f"/connectors/{name}/status"),
            lambda r: r.status_code == 200 and r.json()["connector"]["state"] == "FAILED",
            what="the worker failed to load it",
        )
        if not cluster.at_least("3.4"):
            # a worker before 3.4 cannot tell the type of a connector it cannot load: 500 for its status and
            # for every expanded listing; through the sidecar it answers as 4.4.0 does
            assert (await worker.get(f"/connectors/{name}/status")).status_code == 500
            status = (await sidecar.get(f"/connectors/{name}/status")).json()
            assert set(status) == {"name", "connector", "tasks", "type"} and status["tasks"] == []
            assert set(status["connector"]) == {"state", "trace", "worker_id", "version"}
        else:
            status = (await same_answer(sidecar, worker, f"/connectors/{name}/status")).json()
        assert status["type"] == "unknown" and status["connector"]["state"] == "FAILED"
        assert status["connector"]["version"] is None  # 4.1+ writes it: null; the sidecar shows it before
        if cluster.at_least("3.4"):
            await same_answer(sidecar, worker, f"/connectors/{name}/config")
        else:  # 500 from the worker here too
            config = (await sidecar.get(f"/connectors/{name}/config")).json()
            assert config == {"connector.class": "org.example.Missing", "name": name}
        path = "/connectors?expand=status&expand=info"
        listing = (await (same_answer(sidecar, worker, path) if cluster.at_least("3.4") else sidecar.get(path))).json()
        assert listing[name]["info"]["type"] == "unknown"
        await offsets_of_a_class_the_worker_lacks(sidecar, name)
    finally:
        assert (await sidecar.delete(f"/connectors/{name}")).status_code == 204
    # read-your-writes: the deletion is in the view when the answer comes back (the config topic); the
    # status goes later, on the worker as in the view (its leader deletes it after the rebalance)
    assert (await sidecar.get(f"/connectors/{name}/config")).status_code == 404
    await same_answer(sidecar, worker, f"/connectors/{name}/status", until=lambda r: r.status_code == 404)


async def test_a_stale_unassigned_shows_as_the_workers_own_version_shows_it(
    stack: Stack, cluster: Cluster, sidecar: httpx.AsyncClient, worker: httpx.AsyncClient, unique: str
) -> None:
    """A task's UNASSIGNED of the same generation as its RUNNING, written after it (a worker that left
    late): 3.6+ keeps showing RUNNING (KAFKA-12525), 3.4 and 3.5 show the last record, UNASSIGNED; the
    sidecar answers as the worker behind it does."""
    name = f"stale-{cluster.name}-{unique}"
    config = {"connector.class": "FileStreamSource", "topic": f"stale-{unique}", "file": "/dev/null"}
    assert (await sidecar.put(f"/connectors/{name}/config", json=config)).status_code == 201
    try:
        await until_states(worker, name, "RUNNING", ["RUNNING"])
        status_topic = cluster.worker_property("status.storage.topic")
        key = StatusKey(StatusKind.TASK, name, 0).to_bytes()
        running = decode_status(key, (await read_to_end(stack.bootstrap, status_topic)).with_key(key)[-1][1])
        assert isinstance(running, TaskStatus) and running.state == "RUNNING"
        stale = TaskStatus(name, 0, "UNASSIGNED", None, "127.0.0.1:1", running.generation)
        producer = AIOKafkaProducer(bootstrap_servers=stack.bootstrap)  # murmur2: the worker's partition
        await producer.start()
        try:
            await producer.send_and_wait(status_topic, encode_status(stale)[1], key=key)
        finally:
            await producer.stop()
        shown = "RUNNING" if version_key(cluster.version) >= (3, 6) else "UNASSIGNED"
        await until_states(worker, name, "RUNNING", [shown])
        await until_states(sidecar, name, "RUNNING", [shown])
        for path in (f"/connectors/{name}/status", f"/connectors/{name}/tasks/0/status"):
            await same_answer(sidecar, worker, path)
    finally:
        assert (await sidecar.delete(f"/connectors/{name}")).status_code == 204
