"""A KIP-558 topics reset of many topics through the sidecar, on every cluster, both ways: left to the
worker (every cluster of the stack has KIP-558) and emulated by the sidecar (``feature_topic_tracking=
emulated``, the path of a worker without it: the sidecar writes the tombstones, ``StatusWriter.submit_all``).

A FileStreamSource connector has written one record to its topic (so the worker reported it), and 2,000
more topic-status records of the connector are in the status topic, as a worker writes them. After the
reset (202, at once, as the worker answers) the worker and the view list none. The connector keeps
running, and a new line in its file makes the worker report its topic again, which both then list."""

from __future__ import annotations

import time
from pathlib import Path

import httpx
import pytest
from aiokafka import AIOKafkaProducer

from control_plane.codecs import TopicStatus, encode_status
from tests.support.harness import InProcess
from tests.support.stack import Cluster, Stack
from tests.support.waiting import eventually

pytestmark = pytest.mark.timeout(240)

FILE_SOURCE = "org.apache.kafka.connect.file.FileStreamSourceConnector"
MANY = 2000


async def write_topic_records(bootstrap: str, status_topic: str, connector: str, topics: list[str]) -> None:
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, acks="all", linger_ms=5)
    await producer.start()
    try:
        now = int(time.time() * 1000)
        deliveries = []
        for topic in topics:
            key, value = encode_status(TopicStatus(topic, connector, 0, now))
            deliveries.append(await producer.send(status_topic, key=key, value=value))
        for delivery in deliveries:
            await delivery
    finally:
        await producer.stop()


async def listed(client: httpx.AsyncClient, connector: str) -> list[str]:
    answer = await client.get(f"/connectors/{connector}/topics")
    assert answer.status_code == 200, answer.text
    return sorted(answer.json()[connector]["topics"])


async def wait_listed(client: httpx.AsyncClient, connector: str, expected: list[str], who: str) -> None:
    await eventually(
        lambda: listed(client, connector),
        lambda topics: topics == expected,
        timeout_s=90,
        what=f"{who} lists {len(expected)} topics of {connector}",
    )


@pytest.mark.parametrize("mode", ["auto", "emulated"])
async def test_a_reset_of_many_topics_leaves_none_and_the_connector_reports_again(
    cluster: Cluster,
    stack: Stack,
    in_process: InProcess,
    worker: httpx.AsyncClient,
    unique: str,
    tmp_path: Path,
    mode: str,
) -> None:
    sidecar = await in_process(feature_topic_tracking=mode)
    connector, topic = f"reset-many-{mode}-{unique}", f"reset-many-{mode}-{unique}"
    lines = tmp_path / "in.txt"
    lines.write_text("first\n")
    config = {"connector.class": FILE_SOURCE, "file": str(lines), "topic": topic, "tasks.max": "1"}
    assert (await sidecar.put(f"/connectors/{connector}/config", json=config)).status_code in (200, 201)
    try:
        await wait_listed(worker, connector, [topic], "the worker")
        many = [f"{topic}-gone-{i:04d}" for i in range(MANY)]
        await write_topic_records(stack.bootstrap, cluster.worker_property("status.storage.topic"), connector, many)
        everything = sorted([topic, *many])
        await wait_listed(worker, connector, everything, "the worker")
        await wait_listed(sidecar, connector, everything, "the view")

        reset = await sidecar.put(f"/connectors/{connector}/topics/reset")
        assert reset.status_code == 202, reset.text
        await wait_listed(worker, connector, [], "the worker")
        await wait_listed(sidecar, connector, [], "the view")

        status = (await worker.get(f"/connectors/{connector}/status")).json()
        assert status["connector"]["state"] == "RUNNING"
        assert [t["state"] for t in status["tasks"]] == ["RUNNING"]
        with lines.open("a") as f:
            f.write("second\n")
        await wait_listed(worker, connector, [topic], "the worker, after a new record,")
        await wait_listed(sidecar, connector, [topic], "the view, after a new record,")
    finally:
        await sidecar.delete(f"/connectors/{connector}")
