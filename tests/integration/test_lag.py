"""Lag and freshness against the real workers, on every release of the stack: a FileStreamSink's consumer lag
per partition, read from the broker on the refresh interval, as its records come and while it is paused; a
FileStreamSource's freshness from the offsets topic, its newest commit and the count of them."""

from __future__ import annotations

import time
import uuid
from pathlib import Path
from typing import Any

from tests.support.harness import sidecar_with
from tests.support.kafka_topics import produce
from tests.support.stack import Cluster
from tests.support.waiting import eventually

SINK = "org.apache.kafka.connect.file.FileStreamSinkConnector"
SOURCE = "org.apache.kafka.connect.file.FileStreamSourceConnector"


async def test_a_sinks_lag_and_a_sources_freshness(cluster: Cluster, tmp_path: Path) -> None:
    unique = uuid.uuid4().hex[:6]
    sink, source, topic = f"lag-{unique}-sink", f"lag-{unique}-source", f"lag-{unique}"
    bootstrap = cluster.worker_property("bootstrap.servers")
    lines = tmp_path / "lines.txt"
    lines.write_text("a\nb\nc\n")
    async with sidecar_with(cluster, lag_refresh_s=0.5) as running:
        client = running.client

        async def lag_of(name: str) -> dict[str, Any]:
            answer = await client.get(f"/_sidecar/connectors/{name}/lag")
            assert answer.status_code == 200, answer.text
            return dict(answer.json())

        try:
            await produce(bootstrap, topic, ["r1", "r2", "r3"])
            sink_config = {"connector.class": SINK, "tasks.max": "1", "topics": topic, "file": str(tmp_path / "out")}
            assert (await client.put(f"/connectors/{sink}/config", json=sink_config)).status_code == 201
            source_config = {"connector.class": SOURCE, "tasks.max": "1", "topic": topic + "-src", "file": str(lines)}
            assert (await client.put(f"/connectors/{source}/config", json=source_config)).status_code == 201
            caught_up = await eventually(
                lambda: lag_of(sink),
                lambda r: r["partitions"] and r["lag"] == 0,
                timeout_s=60,
                what="the sink caught up",
            )
            assert caught_up["group"] == f"connect-{sink}" and caught_up["error"] is None
            assert caught_up["partitions"] == [{"topic": topic, "partition": 0, "committed": 3, "end": 3, "lag": 0}]
            assert (await client.put(f"/connectors/{sink}/pause")).status_code == 202
            await produce(bootstrap, topic, ["r4", "r5"])
            behind = await eventually(
                lambda: lag_of(sink), lambda r: r["lag"] == 2, timeout_s=30, what="the paused sink 2 behind"
            )
            assert behind["partitions"][0]["end"] == 5 and behind["max_partition_lag"] == 2
            fresh = await eventually(
                lambda: lag_of(source), lambda r: r["commits"] > 0, timeout_s=60, what="the source's first commit"
            )
            assert fresh["type"] == "source" and fresh["partitions"][0]["partition"] == {"filename": str(lines)}
            assert abs(fresh["last_commit_ms"] - time.time() * 1000) < 60_000
            overview = (await client.get("/_sidecar/lag")).json()
            assert sink in [s["connector"] for s in overview["sinks"]]
            assert source in [s["connector"] for s in overview["sources"]]
            assert overview["refresh_requests"] >= 3  # a FindCoordinator and an OffsetFetch per group, a ListOffsets
            metrics = (await client.get("/metrics")).text
            assert f'sink_lag_records{{connector="{sink}"}} 2.0' in metrics
            assert f'source_offset_commit_age_seconds{{connector="{source}"}}' in metrics
        finally:
            for name in (sink, source):
                await client.delete(f"/connectors/{name}")


async def test_a_sink_that_fails_before_its_first_commit_shows_the_records_it_has_to_read(
    cluster: Cluster, tmp_path: Path
) -> None:
    """A sink whose converter cannot read its topic's records (JSON with schemas, records that are not JSON;
    errors.tolerance none) fails on the first batch and never commits: its lag is the records of the
    partition from the log start, marked as not committed, on the JSON and on /metrics."""
    unique = uuid.uuid4().hex[:6]
    sink, topic = f"lag-{unique}-unreadable", f"lag-{unique}-unreadable"
    bootstrap = cluster.worker_property("bootstrap.servers")
    async with sidecar_with(cluster, lag_refresh_s=0.5) as running:
        client = running.client

        async def lag_of() -> dict[str, Any]:
            answer = await client.get(f"/_sidecar/connectors/{sink}/lag")
            assert answer.status_code == 200, answer.text
            return dict(answer.json())

        async def task_state() -> str | None:
            answer = await client.get(f"/connectors/{sink}/status")
            tasks = answer.json().get("tasks", []) if answer.status_code == 200 else []
            return str(tasks[0]["state"]) if tasks else None

        try:
            await produce(bootstrap, topic, ["not json 1", "not json 2", "not json 3"])
            config = {
                "connector.class": SINK,
                "tasks.max": "1",
                "topics": topic,
                "file": str(tmp_path / "out"),
                "value.converter": "org.apache.kafka.connect.json.JsonConverter",
                "value.converter.schemas.enable": "true",
                "errors.tolerance": "none",
            }
            assert (await client.put(f"/connectors/{sink}/config", json=config)).status_code == 201
            await eventually(task_state, lambda s: s == "FAILED", timeout_s=60, what="the sink's task failed")
            shown = await eventually(
                lag_of, lambda r: r["partitions"], timeout_s=30, what="the sink's partition in its lag"
            )
            assert (shown["lag"], shown["uncommitted_partitions"], shown["uncommitted_records"]) == (3, 1, 3)
            assert shown["partitions"] == [
                {
                    "topic": topic,
                    "partition": 0,
                    "committed": None,
                    "end": 3,
                    "no_commit_yet": True,
                    "log_start": 0,
                    "offset_reset": "earliest",
                    "lag": 3,
                }
            ]
            metrics = (await client.get("/metrics")).text
            assert f'sink_lag_records{{connector="{sink}"}} 3.0' in metrics
            assert f'sink_uncommitted_records{{connector="{sink}"}} 3.0' in metrics
            assert f'sink_uncommitted_partitions{{connector="{sink}"}} 1.0' in metrics
        finally:
            await client.delete(f"/connectors/{sink}")
