"""The one test harness of the integration tests: a sidecar built from the code under test, served in this
process over real HTTP on loopback, and the helpers the tests share (a closed port, a topic read to its end).

A sidecar is ``create_app(load_settings(...))`` of the ``control_plane`` this checkout imports, served by
the sidecar's own server (``rest.server.HttpServer``, as the cli serves it) on the test session's event
loop, on a port of its own. Requests go through a real
socket, so raw paths and headers reach the app as a real client sends them. Never a process that
``make stack-up`` started earlier: the stack's sidecar addresses are not handed to the tests at all.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any, NamedTuple

import httpx
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
from aiokafka.admin import AIOKafkaAdminClient
from aiokafka.admin.config_resource import ConfigResource, ConfigResourceType

from control_plane.rest import create_app
from control_plane.rest.app import SidecarApp
from control_plane.rest.server import HttpServer
from control_plane.settings import load_settings

from .stack import Cluster
from .waiting import eventually

READY_TIMEOUT_S = 90.0


# -- a closed port ------------------------------------------------------------------------------------
def closed_port() -> int:
    """A loopback port nothing listens on (bound and released at once): connections to it are refused."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def closed_url() -> str:
    """``http://`` on a closed loopback port: a Connect worker that refuses every connection."""
    return f"http://127.0.0.1:{closed_port()}"


# -- a sidecar served in this process -----------------------------------------------------------------
@dataclass
class RunningSidecar:
    """A sidecar app served on ``url``; ``client`` talks to it over loopback HTTP."""

    app: SidecarApp
    url: str
    client: httpx.AsyncClient
    server: HttpServer

    @property
    def requests_served(self) -> int:
        """How many HTTP requests this process's server has answered."""
        return self.server.requests_served


@contextlib.asynccontextmanager
async def serve(app: SidecarApp, *, wait_ready: bool = True, timeout_s: float = 60) -> AsyncIterator[RunningSidecar]:
    """Serve ``app`` (its lifespan included: one that fails to start fails here, loudly) on a free loopback
    port until the block ends; with ``wait_ready``, only once ``GET /readyz`` answers 200 (its view read to
    the end, or a worker found)."""
    async with contextlib.AsyncExitStack() as stack:
        async with asyncio.timeout(timeout_s):
            await stack.enter_async_context(app.lifespan())
        server = HttpServer(app)
        await server.start("127.0.0.1", 0)
        stack.push_async_callback(server.stop, 10)
        url = f"http://127.0.0.1:{server.port}"
        client = await stack.enter_async_context(httpx.AsyncClient(base_url=url, timeout=60))
        if wait_ready:
            await eventually(
                lambda: client.get("/readyz"),
                lambda r: r.status_code == 200,
                timeout_s=READY_TIMEOUT_S,
                what=f"the sidecar on port {server.port} ready",
            )
        yield RunningSidecar(app, url, client, server)


def settings_for(cluster: Cluster | None, **overrides: object) -> dict[str, object]:
    """The settings of a sidecar in front of ``cluster`` (its worker's properties file), with
    ``overrides``; an override of None drops a setting (``worker_properties=None``: no properties file)."""
    base: dict[str, object] = {"worker_properties": cluster.properties} if cluster is not None else {}
    return {**base, **overrides}


@contextlib.asynccontextmanager
async def sidecar_with(
    cluster: Cluster | None, *, wait_ready: bool = True, **overrides: object
) -> AsyncIterator[RunningSidecar]:
    """A sidecar with given settings, built from the code under test, served until the block ends."""
    app = create_app(load_settings(**settings_for(cluster, **overrides)))
    async with serve(app, wait_ready=wait_ready) as running:
        yield running


class Sidecars:
    """The session's sidecar with default settings, one per cluster, started on first use and stopped
    at the end of the session."""

    def __init__(self) -> None:
        self._stack = contextlib.AsyncExitStack()
        self._running: dict[str, RunningSidecar] = {}
        self._lock = asyncio.Lock()

    async def of(self, cluster: Cluster) -> RunningSidecar:
        async with self._lock:
            if cluster.name not in self._running:
                self._running[cluster.name] = await self._stack.enter_async_context(sidecar_with(cluster))
            return self._running[cluster.name]

    async def aclose(self) -> None:
        await self._stack.aclose()


# -- a topic read to its end --------------------------------------------------------------------------
class Record(NamedTuple):
    partition: int
    offset: int
    key: bytes | None
    value: bytes | None


@dataclass(frozen=True)
class TopicLog:
    """What a topic held when it was read: its partition count and its records, partition by partition."""

    partitions: int
    records: list[Record]

    def with_key(self, key: bytes) -> list[tuple[int, bytes | None]]:
        """(partition, value) of every record with ``key``, in log order."""
        return [(r.partition, r.value) for r in self.records if r.key == key]

    def json_values(self) -> list[Any]:
        return [json.loads(r.value) for r in self.records if r.value is not None]


async def read_to_end(bootstrap: str, topic: str) -> TopicLog:
    """Every record of ``topic`` from the beginning to the end offsets it has now (a topic that does not
    exist reads as no partitions and no records)."""
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        # aiokafka's describe_topics asks with allow_auto_topic_creation, and the stack's broker auto-creates:
        # a topic not there yet would be created with the broker's defaults, racing the connector that
        # creates it with its own settings (KIP-158). Only a listed topic is described.
        exists = topic in await admin.list_topics()
        (description,) = await admin.describe_topics([topic]) if exists else ({"partitions": []},)
    finally:
        await admin.close()
    partitions = [TopicPartition(topic, p["partition"]) for p in description["partitions"]]
    records: list[Record] = []
    if not partitions:
        return TopicLog(0, records)
    consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap, group_id=None, enable_auto_commit=False)
    await consumer.start()
    try:
        consumer.assign(partitions)
        await consumer.seek_to_beginning(*partitions)
        end = await consumer.end_offsets(partitions)
        pending = {tp for tp in partitions if end[tp] > 0}
        while pending:
            batch = await consumer.getmany(*pending, timeout_ms=5_000)
            for tp, batch_records in batch.items():
                records += [Record(tp.partition, r.offset, r.key, r.value) for r in batch_records]
            for tp in list(pending):
                if await consumer.position(tp) >= end[tp]:
                    pending.discard(tp)
    finally:
        await consumer.stop()
    records.sort(key=lambda r: (r.partition, r.offset))
    return TopicLog(len(partitions), records)


async def topic_configs(admin: AIOKafkaAdminClient, topic: str) -> dict[str, str]:
    """``topic``'s configs as the broker describes them now (name to value)."""
    (response,) = await admin.describe_configs([ConfigResource(ConfigResourceType.TOPIC, topic)])
    (resource,) = response.to_object()["resources"]
    return {e["config_names"]: e["config_value"] for e in resource["config_entries"]}


async def group_members(bootstrap: str, group: str) -> tuple[str, int]:
    """(state, member count) of the consumer group ``group`` as its coordinator describes it now."""
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        (response,) = await admin.describe_consumer_groups([group])
    finally:
        await admin.close()
    (described,) = response.to_object()["groups"]
    return described["state"], len(described["members"])


async def produce(bootstrap: str, topic: str, values: list[str]) -> None:
    """``values`` as JSON records to partition 0 of ``topic``, in order."""
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap)
    await producer.start()
    try:
        for value in values:
            await producer.send_and_wait(topic, json.dumps(value).encode(), partition=0)
    finally:
        await producer.stop()


async def read_values(bootstrap: str, topic: str, count: int, *, timeout_s: float = 60) -> list[Any]:
    """The JSON values of ``topic`` once it holds at least ``count`` of them (a connector writing it)."""
    log = await eventually(
        lambda: read_to_end(bootstrap, topic),
        lambda t: len(t.json_values()) >= count,
        timeout_s=timeout_s,
        what=f"{count} values in {topic}",
    )
    return log.json_values()


# -- a connector's state, and the sidecar's answers against the worker's -------------------------------
async def states(client: httpx.AsyncClient, name: str) -> tuple[str | None, list[str]]:
    """(connector state, task states) of ``GET /connectors/{name}/status``; (None, []) when not 200."""
    answer = await client.get(f"/connectors/{name}/status")
    if answer.status_code != 200:
        return None, []
    body = answer.json()
    return body["connector"]["state"], [t["state"] for t in body["tasks"]]


async def until_states(client: httpx.AsyncClient, name: str, connector: str, tasks: list[str]) -> None:
    """Until ``name`` is in state ``connector`` with tasks in ``tasks``."""
    await eventually(
        lambda: states(client, name), lambda s: s == (connector, tasks), what=f"{name} {connector} {tasks}"
    )


def without_added_versions(via: Any, direct: Any) -> Any:
    """The sidecar's answer without the ``version`` it adds (KIP-891, as 4.1+ shows it) to the connector and
    task states of a worker before 4.1, whose own states have none: what else both say must be equal."""
    if isinstance(via, dict) and isinstance(direct, dict):
        added = "state" in via and "version" in via and "version" not in direct
        return {k: without_added_versions(v, direct.get(k)) for k, v in via.items() if not (added and k == "version")}
    if isinstance(via, list) and isinstance(direct, list) and len(via) == len(direct):
        return [without_added_versions(a, b) for a, b in zip(via, direct, strict=True)]
    return via


async def same_answer(
    sidecar: httpx.AsyncClient, worker: httpx.AsyncClient, path: str, *, timeout_s: float = 30
) -> httpx.Response:
    """GET ``path`` through the sidecar and from the worker until both give the same status and JSON (state
    may be moving); lists are compared in any order (e.g. GET /connectors: the worker's is a hash set's).
    Returns the sidecar's answer."""

    async def both() -> tuple[httpx.Response, httpx.Response]:
        return await sidecar.get(path), await worker.get(path)

    def agree(pair: tuple[httpx.Response, httpx.Response]) -> bool:
        via, direct = pair
        if via.status_code != direct.status_code:
            return False
        a, b = without_added_versions(via.json(), direct.json()), direct.json()
        if isinstance(a, list) and isinstance(b, list):
            a, b = (sorted(x, key=lambda item: json.dumps(item, sort_keys=True)) for x in (a, b))
        return bool(a == b)

    via, _ = await eventually(both, agree, timeout_s=timeout_s, what=f"sidecar and worker agree on {path}")
    return via
