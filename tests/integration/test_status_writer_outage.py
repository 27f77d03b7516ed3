"""The status writer against a real broker that goes away (the proposal's system tests).

A broker of its own (``broker.DedicatedBroker``: the stack's ``start_broker``, its own directory, fixed
ports) that the tests kill and start again on the same ports and data; the stack's broker is not touched.
The sidecar is served in process (``harness.serve``: its real app and lifespan, over loopback HTTP), so its
endpoints can be asked during the outage.

- broker killed while a write is pending: retries with growing backoff (metrics and log lines), then
  ``status_update_failure_total`` goes up once retries run out, while the sidecar keeps answering; the
  broker starts again and the next write succeeds;
- a 2-3 s outage (SIGTERM, start again at once): the write succeeds after retries,
  ``status_update_success_total`` goes up, and the status topic read from the beginning ends with it;
- default retry settings: a write succeeds at the first attempt, no retry.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import time
import uuid
from collections.abc import AsyncIterator
from typing import Any

import httpx
import orjson
import pytest
import structlog
from aiokafka.admin import AIOKafkaAdminClient, NewTopic
from prometheus_client.parser import text_string_to_metric_families

from control_plane.codecs import TopicStatus, decode_status, encode_status, partition_for_key
from control_plane.composition import Runtime
from control_plane.rest import create_app
from control_plane.rest.request.runtime import RuntimeSlot
from control_plane.settings import load_settings
from control_plane.storage.status_writes import Outcome, StatusWriteFailed
from tests.support.broker import DedicatedBroker
from tests.support.harness import serve
from tests.support.kafka_topics import read_to_end
from tests.support.ports import closed_url
from tests.support.waiting import answered_in_time, eventually

pytestmark = pytest.mark.timeout(120)

PARTITIONS = 5  # Connect's status.storage.partitions default
RETRY_LOG = "status write failed; retrying"
FAIL_LOG = "status write failed"


@pytest.fixture
async def status_topic(live_broker: DedicatedBroker) -> str:
    name = f"status-outage-{uuid.uuid4().hex[:8]}"
    admin = AIOKafkaAdminClient(bootstrap_servers=live_broker.bootstrap)
    await admin.start()
    try:
        await admin.create_topics([NewTopic(name, PARTITIONS, 1, topic_configs={"cleanup.policy": "compact"})])
    finally:
        await admin.close()
    return name


@contextlib.asynccontextmanager
async def sidecar(
    broker: DedicatedBroker, topic: str, **retry: Any
) -> AsyncIterator[tuple[Runtime, httpx.AsyncClient]]:
    """The sidecar app inside its lifespan, writing status records to ``topic`` on ``broker``."""
    settings = load_settings(
        connect_urls=closed_url(),  # no Connect worker needed: only the sidecar's own endpoints
        bootstrap_servers=broker.bootstrap,
        status_storage_topic=topic,
        **retry,
    )
    slot = RuntimeSlot()
    app = create_app(settings, slot=slot)
    async with serve(app, wait_ready=False) as running:  # no worker, no view: it never reports ready
        assert slot.runtime is not None
        yield slot.runtime, running.client


async def counter(client: httpx.AsyncClient, name: str, kind: str = "topic") -> float:
    """A sample of ``/metrics``, as a scraper reads it."""
    text = (await client.get("/metrics")).text
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == name and sample.labels.get("kind") == kind:
                return sample.value
    raise AssertionError(f"{name}{{kind={kind}}} not on /metrics")


async def counters(client: httpx.AsyncClient) -> dict[str, float]:
    return {
        outcome: await counter(client, f"status_update_{outcome}_total") for outcome in ("success", "retry", "failure")
    }


def topic_record(topic: str, connector: str, stamp: int) -> tuple[bytes, bytes]:
    """A KIP-558 topic-tracking record, as the sidecar writes it for a reset or on a worker's behalf."""
    key, value = encode_status(TopicStatus(topic, connector, 0, stamp))
    assert value is not None
    return key, value


async def test_broker_down_retries_then_fails_and_the_next_write_after_restart_succeeds(
    live_broker: DedicatedBroker, status_topic: str
) -> None:
    retry = {
        "status_storage_retry_max_retries": 4,
        "status_storage_retry_initial_backoff_ms": 100,
        "status_storage_retry_max_backoff_ms": 5000,
        "status_storage_retry_backoff_multiplier": 2.0,
        "status_storage_retry_jitter_factor": 0.2,
        "status_write_request_timeout_ms": 500,
    }
    key, first = topic_record("orders", "sink-a", 1)
    _, second = topic_record("orders", "sink-a", 2)
    async with sidecar(live_broker, status_topic, **retry) as (side, client):
        writer = side.status_writer
        assert await writer.write(key, first, "topic") is Outcome.WRITTEN  # connected, metadata known
        before = await counters(client)

        await asyncio.to_thread(live_broker.kill, signal.SIGKILL)
        with structlog.testing.capture_logs() as logs:
            started = time.monotonic()
            ticket = writer.submit(key, second, "topic")  # returns at once, as for a topics reset's 202

            # while the write is pending the sidecar answers, and lists it
            await eventually(
                lambda: client.get("/_sidecar/status-writes"),
                lambda r: [p["attempts"] >= 1 for p in r.json()["pending"]] == [True],
                timeout_s=5,
                what="the write pending after its first attempt",
            )
            asked = time.monotonic()
            assert (await client.get("/healthz")).status_code == 200
            listing = (await client.get("/_sidecar/status-writes")).json()
            assert time.monotonic() - asked < 1.0
            (pending,) = listing["pending"]
            assert pending["key"] == key.decode() and pending["kind"] == "topic" and pending["attempts"] >= 1

            with pytest.raises(StatusWriteFailed) as caught:
                await ticket.result()
            took = time.monotonic() - started
        assert caught.value.attempts == 5  # the first attempt and max.retries = 4 retries
        assert took < 10, f"retries took {took:.1f}s"

        after = await counters(client)
        assert after["retry"] - before["retry"] == 4
        assert after["failure"] - before["failure"] == 1
        assert after["success"] == before["success"]

        retries = [line for line in logs if line["event"] == RETRY_LOG and line["key"] == key.decode()]
        assert [(r["log_level"], r["attempt"]) for r in retries] == [("warning", n) for n in (1, 2, 3, 4)]
        backoffs = [r["backoff_ms"] for r in retries]
        for n, backoff in enumerate(backoffs):  # 100 × 2^n, plus up to 20 % jitter
            assert 100 * 2**n <= backoff <= 100 * 2**n * 1.2 + 1, backoffs
        assert backoffs == sorted(backoffs) and backoffs[-1] > 4 * backoffs[0]
        assert all(r["error"] for r in retries)
        (failure,) = [line for line in logs if line["event"] == FAIL_LOG]
        assert failure["log_level"] == "error" and failure["attempts"] == 5

        (failed,) = (await client.get("/_sidecar/status-writes")).json()["failed"]
        assert failed["key"] == key.decode() and failed["attempts"] == 5

        # the broker comes back (same ports, same data): the next write succeeds
        live_broker.start()
        await asyncio.to_thread(live_broker.wait_ready)
        assert await writer.write(key, second, "topic") is Outcome.WRITTEN
        final = await counters(client)
        assert final["success"] - after["success"] == 1
        assert final["failure"] == after["failure"]
        assert (await client.get("/_sidecar/status-writes")).json()["failed"] == []


async def test_a_short_outage_is_ridden_out_and_the_topic_ends_with_the_last_value(
    live_broker: DedicatedBroker, status_topic: str
) -> None:
    retry = {
        "status_storage_retry_max_retries": 10,
        "status_storage_retry_initial_backoff_ms": 100,
        "status_storage_retry_max_backoff_ms": 1000,
        "status_write_request_timeout_ms": 1000,
    }
    key, first = topic_record("payments", "sink-b", 10)
    _, last = topic_record("payments", "sink-b", 20)
    async with sidecar(live_broker, status_topic, **retry) as (side, client):
        writer = side.status_writer
        assert await writer.write(key, first, "topic") is Outcome.WRITTEN
        before = await counters(client)

        down = time.monotonic()
        await asyncio.to_thread(live_broker.kill, signal.SIGTERM)  # a clean restart: back in 2-3 s
        ticket = writer.submit(key, last, "topic")
        # the subject of the test, so a fixed time: the broker stays down a moment longer (the outage is
        # the stop, this second, and the start)
        await asyncio.sleep(1.0)
        live_broker.start()
        assert await ticket.result() is Outcome.WRITTEN
        outage = time.monotonic() - down

        after = await counters(client)
        assert after["retry"] > before["retry"], "the write should have needed retries"
        assert after["success"] - before["success"] == 1
        assert after["failure"] == before["failure"]
        assert (await client.get("/_sidecar/status-writes")).json() == {
            "topic": status_topic,
            "running": True,
            "pending": [],
            "failed": [],
        }
    print(f"outage {outage:.1f}s, {after['retry'] - before['retry']:.0f} retries")

    ours = (await read_to_end(live_broker.bootstrap, status_topic)).with_key(key)
    assert ours[0] == (partition_for_key(key, PARTITIONS), first)
    assert ours[-1][1] == last  # the topic ends with the last value written (a retry may repeat it)
    assert {value for _, value in ours} == {first, last}
    assert {partition for partition, _ in ours} == {partition_for_key(key, PARTITIONS)}
    decoded = decode_status(key, ours[-1][1])
    assert isinstance(decoded, TopicStatus) and decoded.discover_timestamp == 20


async def test_defaults_write_at_the_first_attempt_without_retries(
    live_broker: DedicatedBroker, status_topic: str
) -> None:
    key, value = topic_record("defaults", "sink-c", 30)
    async with sidecar(live_broker, status_topic) as (side, client):
        settings = side.settings
        assert (
            settings.status_storage_retry_max_retries,
            settings.status_storage_retry_initial_backoff_ms,
            settings.status_storage_retry_max_backoff_ms,
            settings.status_storage_retry_backoff_multiplier,
            settings.status_storage_retry_jitter_factor,
        ) == (5, 300, 10000, 2.0, 0.25)
        with structlog.testing.capture_logs() as logs:
            assert await side.status_writer.write(key, value, "topic") is Outcome.WRITTEN
            tombstone = await side.status_writer.write(key, None, "topic")  # a reset's tombstone
        assert tombstone is Outcome.WRITTEN
        assert await counters(client) == {"success": 2, "retry": 0, "failure": 0}
        assert not [line for line in logs if line["event"] in (RETRY_LOG, FAIL_LOG)]
    records = [(r.key, r.value) for r in (await read_to_end(live_broker.bootstrap, status_topic)).records]
    assert records == [(key, value), (key, None)]
    assert orjson.loads(value)["topic"]["name"] == "defaults"


async def test_topics_reset_during_an_outage_answers_202_and_lands_when_the_broker_returns(
    live_broker: DedicatedBroker, status_topic: str
) -> None:
    """A KIP-558 reset through HTTP while the broker is down, end to end."""
    config_topic = f"configs-outage-{uuid.uuid4().hex[:8]}"
    admin = AIOKafkaAdminClient(bootstrap_servers=live_broker.bootstrap)
    await admin.start()
    try:
        await admin.create_topics([NewTopic(config_topic, 1, 1, topic_configs={"cleanup.policy": "compact"})])
    finally:
        await admin.close()
    connector = f"reset-{uuid.uuid4().hex[:6]}"
    settings = load_settings(
        connect_urls=closed_url(),  # no worker answers: the view alone serves topics and reset
        bootstrap_servers=live_broker.bootstrap,
        status_storage_topic=status_topic,
        config_storage_topic=config_topic,
        # no worker properties file: the worker's tracking switches are stated, so the view serves tracking
        topic_tracking_enable=True,
        topic_tracking_allow_reset=True,
        status_storage_retry_max_retries=30,
        status_storage_retry_initial_backoff_ms=200,
        status_storage_retry_max_backoff_ms=1000,
        status_write_request_timeout_ms=1500,
    )
    slot = RuntimeSlot()
    app = create_app(settings, slot=slot)
    async with serve(app, wait_ready=False) as running:
        assert slot.runtime is not None
        side = slot.runtime
        client = running.client
        for topic in ("orders", "payments"):
            key, value = topic_record(topic, connector, int(time.time() * 1000))
            await side.status_writer.write(key, value, "topic")
        topics = await _wait_for(client, connector, ["orders", "payments"])
        assert topics == ["orders", "payments"]
        before = await counters(client)

        # the broker's stop and start off the event loop, as in production: the sidecar goes on meanwhile
        await asyncio.to_thread(live_broker.kill, signal.SIGTERM)
        started = time.monotonic()
        reset = await client.put(f"/connectors/{connector}/topics/reset")
        assert reset.status_code == 202 and time.monotonic() - started < 1.0
        pending = (await client.get("/_sidecar/status-writes")).json()["pending"]
        assert {row["kind"] for row in pending} == {"topic"} and len(pending) == 2
        assert (await client.get("/healthz")).status_code == 200
        retried = await eventually(
            lambda: counters(client), lambda c: c["retry"] > before["retry"], what="a retry while the broker is down"
        )
        assert retried["retry"] > before["retry"]

        live_broker.start()
        await asyncio.to_thread(live_broker.wait_ready)
        assert await _wait_for(client, connector, []) == []
        # the acknowledgement may reach the writer just after the view read the tombstones back
        answer = await eventually(
            lambda: client.get("/_sidecar/status-writes"),
            lambda r: r.json()["pending"] == [],
            timeout_s=30,
            what="no status write pending",
        )
        writes = answer.json()
        assert writes["pending"] == [] and writes["failed"] == []
        after = await counters(client)
        assert after["success"] == before["success"] + 2 and after["failure"] == before["failure"]
    last = {r.key: r.value for r in (await read_to_end(live_broker.bootstrap, status_topic)).records}
    for topic in ("orders", "payments"):
        assert last[topic_record(topic, connector, 0)[0]] is None  # the topic ends consistent with the view


async def _wait_for(client: httpx.AsyncClient, connector: str, expected: list[str], timeout_s: float = 60) -> list[str]:
    async def topics() -> list[str] | None:
        answer = await answered_in_time(client.get(f"/connectors/{connector}/topics"))
        return sorted(answer.json()[connector]["topics"]) if answer.status_code == 200 else None

    found = await eventually(
        topics, lambda t: t == expected, timeout_s=timeout_s, what=f"{connector}'s topics {expected}"
    )
    return found or []
