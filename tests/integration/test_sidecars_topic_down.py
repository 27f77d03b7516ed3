"""The sidecars' own topic unwritable, against the real broker and the stack's 4.4.0 and 3.4.1 workers: a
topic of this module's own (the stack's broker and workers are never touched), whose every write the
broker refuses (its ``max.message.bytes`` below any record's size), while the workers' own topics stay
writable, as with the sidecars' topic's only replica down on a cluster of several brokers. (The stack has
one broker: its only replica cannot go down alone, and ``min.insync.replicas`` above the replication
factor no longer refuses writes on 4.x brokers. A write that hangs instead is bounded in the unit tests.)

- a pause on 4.4.0 (the worker does it natively) goes through without the fence: 202 from the worker well
  under the request budget, with a ``Warning`` header, counted on ``/metrics``;
- a stop on 3.4.1 (the sidecar emulates it: it needs the fence) answers 503 in Connect's shape, naming the
  sidecars' topic and the broker's error, within the budget;
- ``/readyz`` stays 200 and shows the degradation;
- the topic is created with the checked settings, and an existing topic that is not compacted is refused
  at start (said on ``/readyz``), native writes still passing through;
- a sidecar told not to create it (the worker's ``internal.topics.automatic.creation.enable=false``,
  KIP-1209) leaves a missing topic missing and says so on ``/readyz`` until ``control-plane
  create-sidecars-topic`` creates it, then uses it.
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
import uuid
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from aiokafka import AIOKafkaProducer
from aiokafka.admin import AIOKafkaAdminClient, NewTopic
from aiokafka.admin.config_resource import ConfigResource, ConfigResourceType
from aiokafka.errors import MessageSizeTooLargeError
from prometheus_client.parser import text_string_to_metric_families

from control_plane.storage.sidecar_topic import TOPIC_CONFIGS
from control_plane.storage.topic_admin import TopicAdmin
from tests.support.harness import sidecar_with
from tests.support.stack import Stack
from tests.support.waiting import eventually

pytestmark = pytest.mark.timeout(240)

SOURCE = "org.apache.kafka.connect.file.FileStreamSourceConnector"
BOUND_S = 2.0  # sidecars_topic_write_timeout_s
BUDGET_S = 30.0  # the request budget (the default)
NATIVE_S = 5.0  # a native write with the topic down: answered by the worker well under the budget


@pytest.fixture
async def admin(stack: Stack) -> AsyncIterator[AIOKafkaAdminClient]:
    client = AIOKafkaAdminClient(bootstrap_servers=stack.bootstrap)
    await client.start()
    try:
        yield client
    finally:
        await client.close()


async def unwritable(admin: AIOKafkaAdminClient, bootstrap: str, topic: str) -> None:
    """Every write refused by the broker: no record fits (AlterConfigs sets the whole set: the topic's own
    configs are given again). The broker applies a topic's new config after it answers AlterConfigs: this
    returns once a write is refused (a tombstone of a key no sidecar reads, harmless if it lands)."""
    configs = {**TOPIC_CONFIGS, "min.insync.replicas": "1", "max.message.bytes": "16"}
    await admin.alter_configs([ConfigResource(ConfigResourceType.TOPIC, topic, configs=configs)])
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, acks="all", request_timeout_ms=5000)
    await producer.start()
    try:

        async def refused() -> bool:
            try:
                await producer.send_and_wait(topic, key=f"probe-{uuid.uuid4().hex}".encode(), value=None)
            except MessageSizeTooLargeError:
                return True
            return False

        await eventually(refused, bool, timeout_s=30, what=f"a write to {topic} refused as too large")
    finally:
        await producer.stop()


async def create(client: httpx.AsyncClient, name: str) -> httpx.Response:
    config = {"connector.class": SOURCE, "tasks.max": "1", "file": f"/tmp/{name}.txt", "topic": f"{name}-out"}
    answer = await client.post("/connectors", json={"name": name, "config": config})
    assert answer.status_code == 201, answer.text
    return answer


async def metric(client: httpx.AsyncClient, name: str) -> float | None:
    for family in text_string_to_metric_families((await client.get("/metrics")).text):
        for sample in family.samples:
            if sample.name == name:
                return sample.value
    return None


async def test_native_writes_pass_unfenced_and_emulated_ones_fail_fast_when_the_topic_is_unwritable(
    stack: Stack, admin: AIOKafkaAdminClient
) -> None:
    new, old = stack.clusters["new"], stack.clusters["old"]
    topic = f"sidecars-down-{uuid.uuid4().hex[:8]}"
    settings: dict[str, Any] = {
        "sidecars_topic": topic,
        "sidecars_topic_write_timeout_s": BOUND_S,
        "request_budget_s": BUDGET_S,
    }
    paused, stopped = f"pause-{uuid.uuid4().hex[:8]}", f"stop-{uuid.uuid4().hex[:8]}"
    async with sidecar_with(new, **settings) as front_new, sidecar_with(old, **settings) as front_old:
        # created as checked: one partition, compacted, append time, min.insync.replicas for one replica
        (described,) = (await TopicAdmin({"bootstrap_servers": stack.bootstrap}, 10000).describe([topic])).values()
        assert described is not None and described.partitions == 1
        for key in ("cleanup.policy", "message.timestamp.type", "min.compaction.lag.ms"):
            assert described.configs[key] == TOPIC_CONFIGS[key], key
        assert described.configs["min.insync.replicas"] == "1"  # the stack's one broker: one replica

        await create(front_new.client, paused)  # fenced: the topic is writable
        async with httpx.AsyncClient(base_url=old.connect_url, timeout=60) as worker_old:
            await create(worker_old, stopped)
        await unwritable(admin, stack.bootstrap, topic)

        started = time.monotonic()
        pause = await front_new.client.put(f"/connectors/{paused}/pause")
        took = time.monotonic() - started
        assert pause.status_code == 202, pause.text
        assert took < NATIVE_S, took
        warning = pause.headers.get("warning", "")
        assert warning.startswith("199 - \"Written without the sidecars' fence of connector"), warning
        assert "TooLarge" in warning, warning
        print(f"native pause with the sidecars' topic unwritable: {pause.status_code} in {took:.2f} s; {warning}")
        await eventually(
            lambda: front_new.client.get(f"/connectors/{paused}/status"),
            lambda r: r.json()["connector"]["state"] == "PAUSED",
            timeout_s=60,
            what="the connector PAUSED",
        )
        assert (await metric(front_new.client, "connector_writes_unfenced_total") or 0) >= 1
        assert await metric(front_new.client, "sidecars_topic_usable") == 0

        ready = await front_new.client.get("/readyz")
        assert ready.status_code == 200
        assert "TooLarge" in ready.json()["degraded"]["sidecars_topic"], ready.json()

        started = time.monotonic()
        stop = await front_old.client.put(f"/connectors/{stopped}/stop")  # emulated on 3.4.1: needs the fence
        took = time.monotonic() - started
        assert stop.status_code == 503, stop.text
        assert took < BUDGET_S, took
        body = stop.json()
        assert body["error_code"] == 503
        assert body["message"].startswith(
            f"Cannot claim the fence of connector {stopped}: the sidecars' topic cannot be written: "
        ), body
        assert "TooLarge" in body["message"], body
        print(f"emulated stop with the sidecars' topic unwritable: 503 in {took:.2f} s: {body['message']}")
        status = await front_old.client.get(f"/connectors/{stopped}/status")
        assert status.json()["connector"]["state"] != "STOPPED"  # nothing written without the fence

        await front_new.client.delete(f"/connectors/{paused}")
        await front_old.client.delete(f"/connectors/{stopped}")
    await admin.delete_topics([topic])


async def test_an_existing_topic_that_is_not_compacted_is_refused_and_native_writes_still_pass(
    stack: Stack, admin: AIOKafkaAdminClient
) -> None:
    new = stack.clusters["new"]
    topic = f"sidecars-delete-{uuid.uuid4().hex[:8]}"
    configs = {"cleanup.policy": "delete", "message.timestamp.type": "LogAppendTime"}
    await admin.create_topics([NewTopic(topic, 1, 1, topic_configs=configs)])
    name = f"refused-{uuid.uuid4().hex[:8]}"
    async with sidecar_with(new, sidecars_topic=topic) as front:
        ready = await front.client.get("/readyz")
        assert ready.status_code == 200
        assert ready.json()["degraded"]["sidecars_topic"] == (
            f"the sidecars' topic {topic} cannot be used: cleanup.policy is delete, not compact"
        )
        created = await create(front.client, name)
        assert "cleanup.policy is delete, not compact" in created.headers["warning"]
        pause = await front.client.put(f"/connectors/{name}/pause")
        assert pause.status_code == 202
        assert "cleanup.policy is delete, not compact" in pause.headers["warning"]
        await front.client.delete(f"/connectors/{name}")
    await admin.delete_topics([topic])


async def test_a_topic_the_sidecars_do_not_create_is_created_by_the_command_then_used(
    stack: Stack, admin: AIOKafkaAdminClient
) -> None:
    topic = f"sidecars-precreated-{uuid.uuid4().hex[:8]}"
    async with sidecar_with(stack.clusters["new"], sidecars_topic=topic, sidecars_topic_create=False) as front:
        ready = await front.client.get("/readyz")
        assert ready.status_code == 200
        assert "does not exist" in ready.json()["degraded"]["sidecars_topic"], ready.text
        assert "create-sidecars-topic" in ready.json()["degraded"]["sidecars_topic"]
        assert topic not in await admin.list_topics()
        command = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "control_plane",
            "create-sidecars-topic",
            "--bootstrap-servers",
            stack.bootstrap,
            env={**os.environ, "CONTROL_PLANE_SIDECARS_TOPIC": topic},
            stderr=asyncio.subprocess.PIPE,
        )
        _, err = await command.communicate()
        assert command.returncode == 0, err.decode()
        assert f"{topic} is ready" in err.decode()
        described = await TopicAdmin({"bootstrap_servers": stack.bootstrap}, 10_000).describe([topic])
        created = described[topic]
        assert created is not None and created.partitions == 1
        assert created.configs["cleanup.policy"] == "compact"
        await eventually(  # the next presence write finds it
            lambda: front.client.get("/readyz"),
            lambda r: "sidecars_topic" not in (r.json().get("degraded") or {}),
            what="the sidecar uses the topic once it exists",
        )
    await admin.delete_topics([topic])
