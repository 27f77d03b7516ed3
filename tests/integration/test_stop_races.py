"""An emulated stop (the workers before 3.5) raced by what a worker writes meanwhile, forced into the moments
it can land, through the stop's config writer in this process:
- a delete sent straight to a worker, after the stop checked (on the config topic read to its end) that the
  connector exists and before its records are written. The stop's read-back finds the connector gone: it
  removes the target state it wrote (as KafkaConfigBackingStore.removeConnectorConfig removes a deleted
  connector's) and answers as DistributedHerder.stopConnector answers a connector that does not exist, so a
  connector created again under the name starts as created, not STOPPED;
- task configs a leader before 3.5 writes after the stop's empty set (a reconfiguration it started before
  it read the stop; it is not serialized with the sidecar): the read-back finds them and writes the empty
  set again, so the connector ends STOPPED without tasks."""

from __future__ import annotations

from collections.abc import Sequence

import httpx
import pytest

from control_plane.codecs import ConfigRecord, TaskCommit, TaskConfig, Tombstone, encode_config
from control_plane.codecs.config import ConfigKey
from tests.support.harness import Sidecars
from tests.support.kafka_topics import produce_record
from tests.support.stack import Stack
from tests.support.waiting import eventually

FILE_SOURCE = "org.apache.kafka.connect.file.FileStreamSourceConnector"


@pytest.mark.parametrize("version", ["old", "oldest"], ids=["connect-3.4.1", "connect-2.8.2"])
async def test_a_delete_between_a_stops_check_and_its_write_leaves_no_stop_behind(
    stack: Stack, sidecars: Sidecars, unique: str, version: str
) -> None:
    cluster = stack.clusters[version]
    name = f"raced-{unique}"
    config = {"connector.class": FILE_SOURCE, "topic": f"raced-{unique}", "file": "/dev/null", "tasks.max": "1"}
    running = await sidecars.of(cluster)  # the session's, in this process: its stop's writer is reached below
    async with httpx.AsyncClient(base_url=cluster.connect_url, timeout=60) as worker:
        sidecar = running.client
        try:
            created = await sidecar.post("/connectors", json={"name": name, "config": config})
            assert created.status_code == 201, created.text
            # the stop's config writer, in this process: the delete goes to the worker when the stop, its check
            # passed, is about to write, and the write waits until the delete is in the config topic
            runtime = running.app.slot.runtime
            assert runtime is not None
            writer = runtime.herder.offsets._stopper._writer
            assert writer is not None
            write, raced = writer.write, list[str]()

            async def delete_first(records: Sequence[ConfigRecord | Tombstone[ConfigKey]]) -> None:
                if not raced:
                    raced.append(name)
                    deleted = await worker.delete(f"/connectors/{name}")
                    assert deleted.status_code == 204, deleted.text
                    await eventually(
                        lambda: sidecar.get("/connectors"), lambda r: name not in r.json(), what="the delete read"
                    )
                await write(records)

            writer.write = delete_first  # type: ignore[method-assign]
            try:
                stopped = await sidecar.put(f"/connectors/{name}/stop")
            finally:
                writer.write = write  # type: ignore[method-assign]
            assert raced == [name]
            assert (stopped.status_code, stopped.json()) == (
                404,
                {"error_code": 404, "message": f"Unknown connector {name}"},
            )

            again = await sidecar.post("/connectors", json={"name": name, "config": config})
            assert again.status_code == 201, again.text

            def running_with_its_task(answer: httpx.Response) -> bool:
                shown = answer.json() if answer.status_code == 200 else {}
                states = [shown.get("connector", {}).get("state")] + [t["state"] for t in shown.get("tasks", [])]
                return states == ["RUNNING", "RUNNING"]

            for through in (worker, sidecar):
                await eventually(
                    lambda: through.get(f"/connectors/{name}/status"),  # noqa: B023
                    running_with_its_task,
                    what=f"{name} created again RUNNING, not STOPPED",
                )
        finally:
            await worker.delete(f"/connectors/{name}")


@pytest.mark.parametrize("version", ["old", "oldest"], ids=["connect-3.4.1", "connect-2.8.2"])
async def test_task_configs_a_leader_writes_after_a_stops_empty_set_are_replaced_by_it_again(
    stack: Stack, sidecars: Sidecars, unique: str, version: str
) -> None:
    cluster = stack.clusters[version]
    name = f"late-{unique}"
    config = {"connector.class": FILE_SOURCE, "topic": f"late-{unique}", "file": "/dev/null", "tasks.max": "1"}
    running = await sidecars.of(cluster)  # the session's, in this process: its stop's writer is reached below
    async with httpx.AsyncClient(base_url=cluster.connect_url, timeout=60) as worker:
        sidecar = running.client
        try:
            created = await sidecar.post("/connectors", json={"name": name, "config": config})
            assert created.status_code == 201, created.text
            tasks = await eventually(
                lambda: worker.get(f"/connectors/{name}/tasks"),
                lambda r: r.status_code == 200 and len(r.json()) == 1,
                what=f"{name}'s task config",
            )
            task_config = tasks.json()[0]["config"]
            runtime = running.app.slot.runtime
            assert runtime is not None
            writer = runtime.herder.offsets._stopper._writer
            assert writer is not None
            write, late = writer.write, list[str]()

            async def then_late_tasks(records: Sequence[ConfigRecord | Tombstone[ConfigKey]]) -> None:
                await write(records)
                if not late:  # after the stop's records: the leader's reconfiguration lands
                    late.append(name)
                    topic = cluster.worker_property("config.storage.topic")
                    for record in (TaskConfig(name, 0, task_config), TaskCommit(name, 1)):
                        await produce_record(stack.bootstrap, topic, *encode_config(record))

            writer.write = then_late_tasks  # type: ignore[method-assign]
            try:
                stopped = await sidecar.put(f"/connectors/{name}/stop")
            finally:
                writer.write = write  # type: ignore[method-assign]
            assert late == [name]
            assert stopped.status_code == 204, stopped.text
            status = (await sidecar.get(f"/connectors/{name}/status")).json()
            assert (status["connector"]["state"], status["tasks"]) == ("STOPPED", [])
            await eventually(  # the worker's own herder read the empty set written last
                lambda: worker.get(f"/connectors/{name}/tasks"), lambda r: r.json() == [], what="no tasks on the worker"
            )
        finally:
            await worker.delete(f"/connectors/{name}")
