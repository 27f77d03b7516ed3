"""kafka-connect-py (PyPI; a Connect REST client nobody here wrote) pointed at the sidecar on both workers,
and at Connect 4.4.0 directly: the same operations give the same results (the sidecar as a drop-in). Its client is
synchronous (requests): each call runs in a thread, so that the in-process sidecar keeps serving."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest
from kafka_connect import KafkaConnect
from requests import HTTPError

from tests.support.harness import RunningSidecar, Sidecars
from tests.support.stack import Cluster, Stack
from tests.support.waiting import eventually

SOURCE = "org.apache.kafka.connect.file.FileStreamSourceConnector"
Steps = list[tuple[str, Any]]


def normalized(value: Any, name: str) -> Any:
    """A result without what differs between two connectors and two workers: the connector's name, worker
    ids, versions, traces."""
    if isinstance(value, dict):
        return {
            k.replace(name, "<c>"): normalized(v, name)
            for k, v in value.items()
            if k not in ("worker_id", "version", "trace", "commit", "kafka_cluster_id")
        }
    if isinstance(value, list):
        return [normalized(v, name) for v in value]
    return value.replace(name, "<c>") if isinstance(value, str) else value


async def call(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    return await asyncio.to_thread(fn, *args, **kwargs)


async def state(client: KafkaConnect, name: str) -> tuple[str, list[str]] | None:
    try:
        status = await call(client.get_connector_status, name)
    except HTTPError:  # no status yet
        return None
    return status["connector"]["state"], [t["state"] for t in status["tasks"]]


async def scenario(client: KafkaConnect, name: str) -> Steps:
    """The client's operations on one connector, each result recorded once the connector settled."""
    steps: Steps = []

    async def settled(connector: str, tasks: list[str]) -> None:
        await eventually(lambda: state(client, name), lambda s: s == (connector, tasks), what=f"{name} {connector}")
        steps.append((f"status {connector}", normalized(await call(client.get_connector_status, name), name)))

    config = {"connector.class": SOURCE, "file": f"/tmp/absent-{name}", "topic": name, "tasks.max": "1"}
    info = await call(client.get_cluster_info)
    steps.append(("cluster info", sorted(info)))
    steps.append(("create", normalized(await call(client.create_connector, {"name": name, "config": config}), name)))
    await settled("RUNNING", ["RUNNING"])
    steps.append(("listed", name in await call(client.list_connectors)))
    expanded = await call(client.list_connectors, expand="status")
    steps.append(("listed with status", normalized(expanded[name], name)))
    steps.append(("config", normalized(await call(client.get_connector_config, name), name)))
    updated = await call(client.update_connector, name, {**config, "topic": f"updated-{name}"})
    steps.append(("update", normalized(updated, name)["config"]))
    await call(client.pause_connector, name)
    await settled("PAUSED", ["PAUSED"])
    await call(client.resume_connector, name)
    await settled("RUNNING", ["RUNNING"])
    steps.append(("restart", await call(client.restart_connector, name)))
    restarted = await call(client.restart_connector, name, include_tasks=True, only_failed=True)
    steps.append(("restart failed ones", sorted(restarted)))
    await settled("RUNNING", ["RUNNING"])
    steps.append(("tasks", [t["id"]["task"] for t in await call(client.list_connector_tasks, name)]))
    steps.append(("task status", normalized(await call(client.get_connector_task_status, name, 0), name)))
    await call(client.stop_connector, name)
    await settled("STOPPED", [])
    await call(client.resume_connector, name)
    await settled("RUNNING", ["RUNNING"])
    plugins = await call(client.list_connector_plugins)
    steps.append(("plugins", sorted((p["class"], p["type"]) for p in plugins)))
    validated = await call(client.validate_connector_config, SOURCE, {"connector.class": SOURCE, "name": name})
    # the framework's groups of the worker's own release: 3.3 added "Exactly Once Support" and "offsets.topic"
    # (KIP-618), which a 2.8 worker does not have and the sidecar does not invent
    steps.append(("validate", (validated["error_count"], validated["groups"][:5])))
    steps.append(("definition fields", {tuple(c["definition"]) for c in validated["configs"]} > set()))
    await call(client.delete_connector, name)
    await eventually(lambda: call(client.list_connectors), lambda names: name not in names, what=f"{name} deleted")
    return steps


@pytest.mark.timeout(600)
async def test_kafka_connect_py_as_against_4_4_0(
    stack: Stack, cluster: Cluster, sidecars: Sidecars, unique: str
) -> None:
    running: RunningSidecar = await sidecars.of(cluster)
    through, newest = KafkaConnect(running.url), KafkaConnect(stack.clusters["new"].connect_url)
    names = f"kcpy-{cluster.name}-{unique}", f"kcpy-ref-{cluster.name}-{unique}"
    try:
        via = await scenario(through, names[0])
        direct = await scenario(newest, names[1])
    finally:  # a scenario that failed half-way leaves no connector behind on the shared stack
        for client, name in zip((through, newest), names, strict=True):
            if name in await call(client.list_connectors):
                await call(client.delete_connector, name)
    assert via == direct
