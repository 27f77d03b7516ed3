"""KIP-875 emulated by the sidecar while its broker goes away: a broker of its own
(``broker.DedicatedBroker``) holding a Connect cluster's three internal topics, no Connect worker (the
sidecar is forced to do the work itself), the sidecar in process.

- a stop whose second write fails (the broker is killed right after the STOPPED target state was
  acknowledged) answers 500 saying what was written and that the connector is not fully STOPPED; the view
  then shows the connector STOPPED with its task config still there; repeated after the broker is back,
  the stop completes;
- an offsets alter while the broker is down answers 500 with the cause and writes nothing; repeated
  after the broker is back, it completes and the offset reads back;
- a stop whose second write meets a short outage (the broker restarted right after the target state was
  acknowledged) rides it out: the write is retried with the status-store retry proposal's backoff until
  the broker is back, and the stop answers 204, counted on ``/metrics`` as retries of config writes.

After each outage a second sidecar writes the same connector: the fence the first held through the outage
is given back or expires, and what either acknowledged holds in both views.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import uuid
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from aiokafka import AIOKafkaProducer
from aiokafka.admin import AIOKafkaAdminClient, NewTopic
from prometheus_client.parser import text_string_to_metric_families

from control_plane.codecs import ConnectorConfig, TaskCommit, TaskConfig, encode_config
from control_plane.composition import Runtime
from control_plane.domain.offsets.messages import framework_managed
from control_plane.rest import create_app
from control_plane.rest.request.runtime import RuntimeSlot
from control_plane.settings import load_settings
from control_plane.storage import record_producer
from control_plane.storage.errors import ReadTimeout
from tests.support.broker import DedicatedBroker
from tests.support.harness import serve
from tests.support.ports import closed_url
from tests.support.waiting import eventually

pytestmark = pytest.mark.timeout(180)


async def restart(broker: DedicatedBroker, side: Runtime) -> None:
    """The broker back on its ports and data, and the sidecar's view reading again."""
    broker.start()
    await asyncio.to_thread(broker.wait_ready)
    assert side.view is not None
    view = side.view

    async def reads() -> bool:
        try:
            await view.read_to_end("config", 2)
        except ReadTimeout:
            return False
        return True

    await eventually(reads, bool, timeout_s=60, what="the view reading the config topic again")


@pytest.fixture
async def cluster_topics(live_broker: DedicatedBroker) -> dict[str, str]:
    """A Connect cluster's internal topics with one source connector's config and its one task in them."""
    tag = uuid.uuid4().hex[:8]
    topics = {"config": f"cfg-{tag}", "status": f"status-{tag}", "offsets": f"offsets-{tag}", "connector": f"src-{tag}"}
    admin = AIOKafkaAdminClient(bootstrap_servers=live_broker.bootstrap)
    await admin.start()
    try:
        await admin.create_topics(
            [
                NewTopic(topics[t], n, 1, topic_configs={"cleanup.policy": "compact"})
                for t, n in (("config", 1), ("status", 5), ("offsets", 5))
            ]
        )
    finally:
        await admin.close()
    producer = AIOKafkaProducer(bootstrap_servers=live_broker.bootstrap, acks="all")
    await producer.start()
    try:
        name, config = topics["connector"], {"connector.class": "FileStreamSource", "topic": "t"}
        for record in ConnectorConfig(name, config), TaskConfig(name, 0, config), TaskCommit(name, 1):
            key, value = encode_config(record)
            await producer.send_and_wait(topics["config"], value, key=key)
    finally:
        await producer.stop()
    return topics


@contextlib.asynccontextmanager
async def emulating(
    broker: DedicatedBroker, topics: dict[str, str], **overrides: Any
) -> AsyncIterator[tuple[Runtime, httpx.AsyncClient]]:
    settings = load_settings(
        **{
            "connect_urls": closed_url(),  # no worker: the sidecar does the work through Kafka
            "bootstrap_servers": broker.bootstrap,
            "config_storage_topic": topics["config"],
            "status_storage_topic": topics["status"],
            "offset_storage_topic": topics["offsets"],
            "feature_stop_and_offsets_read": "emulated",
            "feature_offsets_alter_reset": "emulated",
            "emulation_request_timeout_ms": 1000,
            "emulation_read_back_timeout_s": 5,
            **overrides,
        }
    )
    slot = RuntimeSlot()
    app = create_app(settings, slot=slot)
    async with serve(app) as running:  # once ready: its view read to the end
        assert slot.runtime is not None
        yield slot.runtime, running.client


@pytest.fixture
async def sidecar(
    live_broker: DedicatedBroker, cluster_topics: dict[str, str]
) -> AsyncIterator[tuple[Runtime, httpx.AsyncClient]]:
    async with emulating(live_broker, cluster_topics) as side:
        yield side


async def config_writes(client: httpx.AsyncClient) -> dict[str, float]:
    """The write path's counters of config-topic records on ``/metrics``, as a scraper reads them."""
    found = {}
    for family in text_string_to_metric_families((await client.get("/metrics")).text):
        for sample in family.samples:
            if sample.name.startswith("kafka_write_") and sample.labels.get("topic_kind") == "config":
                found[sample.name] = sample.value
    return found


async def test_a_stop_cut_short_by_the_broker_says_so_and_completes_when_repeated(
    live_broker: DedicatedBroker,
    cluster_topics: dict[str, str],
    sidecar: tuple[Runtime, httpx.AsyncClient],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    side, client = sidecar
    name = cluster_topics["connector"]
    send = record_producer.AiokafkaRecordProducer.send
    killed: list[float] = []

    async def send_then_kill(self: Any, topic: str, key: bytes, value: bytes | None) -> None:
        await send(self, topic, key, value)
        if key.startswith(b"target-state-") and not killed:  # acknowledged: now the broker goes
            killed.append(await asyncio.to_thread(live_broker.kill, signal.SIGKILL))

    monkeypatch.setattr(record_producer.AiokafkaRecordProducer, "send", send_then_kill)
    answer = await client.put(f"/connectors/{name}/stop")
    assert killed, "the broker was not killed between the two writes"
    assert answer.status_code == 500
    message = answer.json()["message"]
    assert answer.json()["error_code"] == 500
    assert message.startswith(
        f"Failed to stop connector {name}: its STOPPED target state (target-state-{name}) was written, but "
        f"writing its empty set of tasks (commit-{name}) failed: "
    ), message
    assert "The connector is not fully STOPPED" in message and "Repeat the request" in message
    print(f"half-way stop: {message}")

    monkeypatch.setattr(record_producer.AiokafkaRecordProducer, "send", send)
    await restart(live_broker, side)
    assert side.view is not None
    assert (side.view.state.target_state(name), side.view.state.task_counts.get(name)) == ("STOPPED", 1)
    # repeated through another sidecar: the fence the first held when the broker went is no obstacle (given
    # back or expired), and the first then sees the stop and can repeat it too
    async with emulating(live_broker, cluster_topics) as (other, through_other):
        again = await through_other.put(f"/connectors/{name}/stop")
        assert (again.status_code, again.content) == (204, b""), again.text
        assert other.view is not None
        assert (other.view.state.target_state(name), other.view.state.task_counts.get(name)) == ("STOPPED", 0)
        await side.view.read_to_end("config", 5)  # no worker writes statuses here: the view itself is read
        assert (side.view.state.target_state(name), side.view.state.task_counts.get(name)) == ("STOPPED", 0)
        again = await client.put(f"/connectors/{name}/stop")
        assert (again.status_code, again.content) == (204, b"")
    assert (side.view.state.target_state(name), side.view.state.task_counts.get(name)) == ("STOPPED", 0)


async def test_an_alter_while_the_broker_is_down_fails_with_the_cause_and_completes_when_repeated(
    live_broker: DedicatedBroker, cluster_topics: dict[str, str], sidecar: tuple[Runtime, httpx.AsyncClient]
) -> None:
    side, client = sidecar
    name = cluster_topics["connector"]
    assert (await client.put(f"/connectors/{name}/stop")).status_code == 204
    body = {"offsets": [{"partition": {"filename": "/data/in.txt"}, "offset": {"position": 42}}]}

    await asyncio.to_thread(live_broker.kill, signal.SIGKILL)
    answer = await client.patch(f"/connectors/{name}/offsets", json=body)
    assert answer.status_code == 500
    message = answer.json()["message"]
    assert message.startswith("Failed to read to end of config topic before modifying connector offsets: "), message
    assert "did not read" in message and "KafkaConnectionError" in message, message  # the cause
    print(f"alter with the broker down: {message}")
    assert side.view is not None and side.view.state.offsets.get(name) is None  # nothing written

    await restart(live_broker, side)
    done = await client.patch(f"/connectors/{name}/offsets", json=body)
    assert (done.status_code, done.json()) == (200, {"message": framework_managed("altered")})
    read = await client.get(f"/connectors/{name}/offsets")
    assert read.json() == {"offsets": [{"partition": {"filename": "/data/in.txt"}, "offset": {"position": 42}}]}


async def test_a_stop_whose_write_meets_a_short_outage_is_retried_and_completes(
    live_broker: DedicatedBroker, cluster_topics: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    retry = {
        "status_storage_retry_max_retries": 20,
        "status_storage_retry_initial_backoff_ms": 200,
        "status_storage_retry_max_backoff_ms": 1000,
        "emulation_read_back_timeout_s": 60,  # the view reconnects after the restart before it reads back
    }
    name = cluster_topics["connector"]
    send = record_producer.AiokafkaRecordProducer.send
    restarted: list[float] = []

    async def send_then_restart(self: Any, topic: str, key: bytes, value: bytes | None) -> None:
        await send(self, topic, key, value)
        if key.startswith(b"target-state-") and not restarted:  # acknowledged: now the broker restarts
            restarted.append(await asyncio.to_thread(live_broker.kill, signal.SIGTERM))
            live_broker.start()  # back in a few seconds; the empty task set's write meets the outage

    async with emulating(live_broker, cluster_topics, **retry) as (side, client):
        before = await config_writes(client)
        monkeypatch.setattr(record_producer.AiokafkaRecordProducer, "send", send_then_restart)
        answer = await client.put(f"/connectors/{name}/stop")
        assert restarted, "the broker was not restarted between the two writes"
        assert (answer.status_code, answer.content) == (204, b""), answer.text
        assert side.view is not None
        assert (side.view.state.target_state(name), side.view.state.task_counts.get(name)) == ("STOPPED", 0)
        after = await config_writes(client)
        # another sidecar's write of the connector after the outage: the fence is free, the stop holds
        body = {"offsets": [{"partition": {"filename": "/data/in.txt"}, "offset": {"position": 7}}]}
        async with emulating(live_broker, cluster_topics, **retry) as (_, through_other):
            altered = await through_other.patch(f"/connectors/{name}/offsets", json=body)
            assert (altered.status_code, altered.json()) == (200, {"message": framework_managed("altered")})
        read = await client.get(f"/connectors/{name}/offsets")
        assert read.json() == {"offsets": body["offsets"]}, read.text
        assert (side.view.state.target_state(name), side.view.state.task_counts.get(name)) == ("STOPPED", 0)
    retries = after["kafka_write_retries_total"] - before["kafka_write_retries_total"]
    assert retries >= 1, (before, after)
    assert after["kafka_write_acknowledged_total"] - before["kafka_write_acknowledged_total"] == 2
    assert after["kafka_write_failures_total"] == before["kafka_write_failures_total"]
    print(f"stop through a broker restart: {retries:.0f} retries of the empty task set's write")
