"""Connector and task states for dashboards, against the real workers of every cluster: a sink task that
runs, then really fails on the worker (a record its JsonConverter cannot read, no error tolerance), shows in
the sidecar's gauges on /metrics, in GET /_sidecar/summary (with the worker's own trace, and since the
status record that said FAILED) and in the timeline (RUNNING, then FAILED, at the records' timestamps);
deleting the connector ends its gauges and shows DESTROYED. And every query of deploy/monitoring/ names a
metric a real sidecar exports."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import httpx
from aiokafka import AIOKafkaProducer
from aiokafka.admin import AIOKafkaAdminClient, NewTopic
from prometheus_client.parser import text_string_to_metric_families

from tests.support.connect_answers import until_states
from tests.support.monitoring import alert_queries, dashboard_queries, exported_names, metric_names
from tests.support.stack import Cluster, Stack
from tests.support.waiting import eventually

FILE_SINK = "org.apache.kafka.connect.file.FileStreamSinkConnector"
JSON = "org.apache.kafka.connect.json.JsonConverter"
STRING = "org.apache.kafka.connect.storage.StringConverter"


async def gauges(sidecar: httpx.AsyncClient, name: str) -> dict[str, dict[str, float]]:
    """``connector_state`` and ``connector_tasks`` of ``name`` on the sidecar's /metrics: family -> state -> value."""
    text = (await sidecar.get("/metrics")).text
    found: dict[str, dict[str, float]] = {"connector_state": {}, "connector_tasks": {}}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name in found and sample.labels.get("connector") == name:
                found[sample.name][sample.labels["state"]] = sample.value
    return found


async def changes(sidecar: httpx.AsyncClient, **params: str) -> list[dict[str, Any]]:
    answer = await sidecar.get("/_sidecar/state-changes", params=params)
    assert answer.status_code == 200, answer.text
    assert answer.headers["x-sidecar-source"] == "view"
    changes: list[dict[str, Any]] = answer.json()["changes"]
    return changes


def task_states(timeline: list[dict[str, Any]], task: int | None) -> list[str]:
    return [c["state"] for c in timeline if c["task"] == task]


async def create_topic(bootstrap: str, topic: str) -> None:
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        await admin.create_topics([NewTopic(topic, num_partitions=1, replication_factor=1)])
    finally:
        await admin.close()


async def produce_raw(bootstrap: str, topic: str, value: bytes) -> None:
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap)
    await producer.start()
    try:
        await producer.send_and_wait(topic, value, partition=0)
    finally:
        await producer.stop()


async def test_a_task_failing_on_the_worker_shows_in_the_gauges_the_summary_and_the_timeline(
    cluster: Cluster, stack: Stack, sidecar: httpx.AsyncClient, worker: httpx.AsyncClient, unique: str, tmp_path: Path
) -> None:
    name = f"dash-{cluster.name}-{unique}"
    await create_topic(stack.bootstrap, name)
    config = {
        "connector.class": FILE_SINK,
        "tasks.max": "1",
        "topics": name,
        "file": str(tmp_path / "out.txt"),
        "key.converter": STRING,
        "value.converter": JSON,
        "value.converter.schemas.enable": "false",
    }
    assert (await sidecar.put(f"/connectors/{name}/config", json=config)).status_code == 201
    try:
        await until_states(worker, name, "RUNNING", ["RUNNING"])
        await eventually(
            lambda: gauges(sidecar, name),
            lambda g: g == {"connector_state": {"RUNNING": 1.0}, "connector_tasks": {"RUNNING": 1.0}},
            what="the running connector's gauges",
        )
        before_ms = int(time.time() * 1000)

        await produce_raw(stack.bootstrap, name, b"this is no JSON {")
        await until_states(worker, name, "RUNNING", ["FAILED"])
        direct = (await worker.get(f"/connectors/{name}/status")).json()["tasks"][0]

        # the gauges: what alert rules on failed tasks read
        await eventually(
            lambda: gauges(sidecar, name),
            lambda g: g == {"connector_state": {"RUNNING": 1.0}, "connector_tasks": {"FAILED": 1.0}},
            what="the failed task's gauges",
        )

        # the summary: the failed task with the worker's trace, since the record that said FAILED
        summary = (await sidecar.get("/_sidecar/summary")).json()
        failed = [t for t in summary["failed"]["tasks"] if t["connector"] == name]
        assert len(failed) == 1, summary["failed"]
        (task,) = failed
        assert task["task"] == 0 and task["worker_id"] == direct["worker_id"]
        assert task["trace"] == direct["trace"] and "DataException" in task["trace"]
        assert before_ms - 1_000 <= task["since_ms"] <= int(time.time() * 1000)
        assert summary["tasks"]["by_state"]["FAILED"] >= 1 and summary["connectors"]["by_state"]["RUNNING"] >= 1
        assert summary["connectors"]["total"] == sum(summary["connectors"]["by_state"].values())

        # the timeline: the task RUNNING, then FAILED, at the FAILED record's own timestamp
        timeline = await changes(sidecar, connector=name)
        assert {c["connector"] for c in timeline} == {name}
        assert task_states(timeline, 0)[-2:] == ["RUNNING", "FAILED"], timeline
        failure = [c for c in timeline if c["task"] == 0][-1]
        assert failure["previous"] == "RUNNING" and failure["timestamp_ms"] == task["since_ms"]
        assert failure["time"] == task["since"] and failure["worker_id"] == direct["worker_id"]
        assert "RUNNING" in task_states(timeline, None)
        stamps = [(c["timestamp_ms"]) for c in timeline]
        assert stamps == sorted(stamps)
        # asked since a time: only what the records stamped from then on (a rebalance may add its own)
        since = await changes(sidecar, connector=name, since=str(before_ms))
        assert (0, "FAILED") in [(c["task"], c["state"]) for c in since]
        assert all(c["timestamp_ms"] >= before_ms for c in since) and len(since) < len(timeline)
        assert await changes(sidecar, connector=name, limit="1") == timeline[-1:]
    finally:
        assert (await sidecar.delete(f"/connectors/{name}")).status_code == 204

    await eventually(
        lambda: gauges(sidecar, name),
        lambda g: g == {"connector_state": {}, "connector_tasks": {}},
        what="no gauges once deleted",
    )
    ended = await eventually(
        lambda: changes(sidecar, connector=name),
        lambda timeline: "DESTROYED" in task_states(timeline, None),
        what="the deletion in the timeline",
    )
    summary = (await sidecar.get("/_sidecar/summary")).json()
    assert name not in {t["connector"] for t in summary["failed"]["tasks"]}
    assert task_states(ended, None)[-1] == "DESTROYED"


async def test_every_monitoring_query_names_a_metric_a_real_sidecar_exports(
    cluster: Cluster, sidecar: httpx.AsyncClient
) -> None:
    await eventually(lambda: sidecar.get("/readyz"), lambda r: r.status_code == 200, what="the sidecar ready")
    exported = exported_names((await sidecar.get("/metrics")).text)
    queries = dashboard_queries() + alert_queries()
    unknown = {where: sorted(metric_names(expr) - exported) for where, expr in queries if metric_names(expr) - exported}
    assert not unknown, f"on {cluster.version}: {unknown}"
