"""The materialized view against the real workers: its answers equal the worker's, field by field,
for the same cluster state; it keeps answering (marked stale) when no worker does; bad records in the
internal topics are counted and skipped."""

from __future__ import annotations

from functools import partial
from pathlib import Path

import httpx
from aiokafka import AIOKafkaProducer
from aiokafka.admin import AIOKafkaAdminClient, NewTopic

from tests.support.connect_answers import same_answer
from tests.support.harness import InProcess
from tests.support.ports import closed_url
from tests.support.stack import Cluster, Stack
from tests.support.waiting import eventually

FILE_SOURCE = "org.apache.kafka.connect.file.FileStreamSourceConnector"
FILE_SINK = "org.apache.kafka.connect.file.FileStreamSinkConnector"


async def agree(sidecar: httpx.AsyncClient, worker: httpx.AsyncClient, path: str) -> httpx.Response:
    """Until the sidecar (answering from its view) and the worker give the same status and JSON."""
    via = await same_answer(sidecar, worker, path, timeout_s=45)
    assert via.headers.get("x-sidecar-source") == "view", f"{path} was not answered from the view"
    return via


async def test_view_answers_equal_the_workers(
    cluster: Cluster, sidecar: httpx.AsyncClient, worker: httpx.AsyncClient, unique: str, tmp_path: Path
) -> None:
    names = {k: f"view-{k}-{cluster.name}-{unique}" for k in ("running", "paused", "sink", "broken", "multi")}
    topic = f"view-{cluster.name}-{unique}"
    (tmp_path / "in.txt").write_text("one\ntwo\n")
    configs = {
        "running": {"connector.class": FILE_SOURCE, "tasks.max": "1", "file": str(tmp_path / "in.txt"), "topic": topic},
        "paused": {"connector.class": "FileStreamSource", "file": str(tmp_path / "in.txt"), "topic": topic},
        "sink": {"connector.class": FILE_SINK, "tasks.max": "2", "file": str(tmp_path / "out.txt"), "topics": topic},
        "broken": {"connector.class": FILE_SINK, "file": str(tmp_path / "no" / "dir" / "x"), "topics": topic},
        "multi": {"connector.class": FILE_SINK, "tasks.max": "3", "file": str(tmp_path / "m.txt"), "topics": topic},
    }
    for key, config in configs.items():
        answer = await sidecar.put(f"/connectors/{names[key]}/config", json=config)
        assert answer.status_code == 201, answer.text
    assert (await sidecar.put(f"/connectors/{names['paused']}/pause")).status_code == 202

    async def broken_failed() -> bool:
        status = (await worker.get(f"/connectors/{names['broken']}/status")).json()
        return [t["state"] for t in status.get("tasks", [])] == ["FAILED"]

    await eventually(broken_failed, bool, what="the broken sink's task FAILED")

    async def multi_tasks() -> int:
        return len((await worker.get(f"/connectors/{names['multi']}/status")).json().get("tasks", []))

    await eventually(multi_tasks, lambda n: n == 3, what="the three tasks of the multi-task sink")
    await agree(sidecar, worker, "/connectors")
    await agree(sidecar, worker, "/connectors?expand=status")
    await agree(sidecar, worker, "/connectors?expand=info")
    expanded = await agree(sidecar, worker, "/connectors?expand=status&expand=info")
    assert expanded.json()[names["paused"]]["status"]["connector"]["state"] == "PAUSED"
    failed_task = expanded.json()[names["broken"]]["status"]["tasks"][0]
    assert failed_task["state"] == "FAILED" and "trace" in failed_task
    assert len(expanded.json()[names["multi"]]["info"]["tasks"]) == 3
    for name in names.values():
        await agree(sidecar, worker, f"/connectors/{name}/status")
        await agree(sidecar, worker, f"/connectors/{name}/config")
        await agree(sidecar, worker, f"/connectors/{name}/tasks/0/status")
    for path in (
        f"/connectors/no-such-{unique}/status",
        f"/connectors/no-such-{unique}/config",
        f"/connectors/no-such-{unique}/tasks/0/status",
        f"/connectors/{names['running']}/tasks/7/status",
    ):
        missing = await agree(sidecar, worker, path)
        assert missing.status_code == 404

    # a config change and a deletion reach the view as they reach the worker
    changed = {**configs["running"], "batch.size": "100"}
    assert (await sidecar.put(f"/connectors/{names['running']}/config", json=changed)).status_code == 200
    changed_config = await agree(sidecar, worker, f"/connectors/{names['running']}/config")
    assert changed_config.json()["batch.size"] == "100"
    for name in names.values():
        assert (await sidecar.delete(f"/connectors/{name}")).status_code == 204
    listing = await agree(sidecar, worker, "/connectors")
    assert not set(names.values()) & set(listing.json())
    await agree(sidecar, worker, f"/connectors/{names['running']}/status")


async def test_view_serves_reads_marked_stale_when_no_worker_answers(
    cluster: Cluster, sidecar: httpx.AsyncClient, in_process: InProcess, unique: str, tmp_path: Path
) -> None:
    name = f"view-stale-{cluster.name}-{unique}"
    config = {"connector.class": FILE_SOURCE, "file": str(tmp_path / "in.txt"), "topic": f"stale-{unique}"}
    assert (await sidecar.put(f"/connectors/{name}/config", json=config)).status_code == 201
    await eventually(
        lambda: sidecar.get(f"/connectors/{name}/status"),
        lambda r: r.status_code == 200 and r.json()["connector"]["state"] == "RUNNING",
        what="connector RUNNING",
    )
    for read_from in ("view", "upstream"):
        dead = await in_process(connect_urls=closed_url(), read_from=read_from, worker_probe_s=0.2)
        status = await eventually(
            partial(dead.get, f"/connectors/{name}/status"),
            lambda r: r.headers.get("x-sidecar-stale") == "true",
            what=f"stale answer with read_from={read_from}",
        )
        assert status.status_code == 200
        assert status.json()["connector"]["state"] == "RUNNING"
        assert float(status.headers["x-sidecar-view-age-seconds"]) >= 0
        missing = await dead.get(f"/connectors/nope-{unique}/status")
        assert missing.status_code == 404 and missing.headers.get("x-sidecar-stale") == "true"
        assert missing.json() == {"error_code": 404, "message": f"No status found for connector nope-{unique}"}
        # the passed-through reads with a view answer (rest.steps.unanswered): the worker's answer, from the view
        for path in (f"/connectors/{name}", f"/connectors/{name}/tasks"):
            fallback = await dead.get(path)
            assert fallback.status_code == 200 and fallback.headers.get("x-sidecar-stale") == "true", fallback.text
            assert fallback.json() == (await sidecar.get(path)).json()
        missing = await dead.get(f"/connectors/nope-{unique}")
        assert missing.status_code == 404 and missing.headers.get("x-sidecar-stale") == "true"
        assert missing.json() == {"error_code": 404, "message": f"Connector nope-{unique} not found"}
        # what the view cannot answer still fails in Connect's shape
        plugins = await dead.get("/connector-plugins")
        assert plugins.status_code == 503 and plugins.json()["error_code"] == 503
    assert (await sidecar.delete(f"/connectors/{name}")).status_code == 204


async def test_bad_records_are_counted_and_skipped(stack: Stack, in_process: InProcess, unique: str) -> None:
    """Bad records in topics of their own (the workers' topics stay clean for the codec test)."""
    topics = {kind: f"junk-{kind}-{unique}" for kind in ("config", "status", "offset")}
    admin = AIOKafkaAdminClient(bootstrap_servers=stack.bootstrap)
    await admin.start()
    try:
        await admin.create_topics(
            [NewTopic(t, 1, 1, topic_configs={"cleanup.policy": "compact"}) for t in topics.values()]
        )
    finally:
        await admin.close()
    client = await in_process(**{f"{kind}_storage_topic": topic for kind, topic in topics.items()})
    producer = AIOKafkaProducer(bootstrap_servers=stack.bootstrap)
    await producer.start()
    try:
        status_topic = topics["status"]
        await producer.send_and_wait(status_topic, key=b"status-connector-junk", value=b"{not json")
        await producer.send_and_wait(status_topic, key=b"no-such-prefix-x", value=b"{}")
    finally:
        await producer.stop()

    def skipped(text: str, reason: str) -> float:
        for line in text.splitlines():
            if line.startswith(f'view_records_skipped_total{{reason="{reason}",topic="status"}}'):
                return float(line.rsplit(" ", 1)[1])
        return 0.0

    metrics = await eventually(
        lambda: client.get("/metrics"),
        lambda r: skipped(r.text, "malformed") >= 1 and skipped(r.text, "unknown_key") >= 1,
        what="skipped records counted",
    )
    assert "view_ready 1.0" in metrics.text
    assert (await client.get("/readyz")).json() == {"ready": True, "checks": {"view_caught_up": True}}
