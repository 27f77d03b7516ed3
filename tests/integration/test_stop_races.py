"""An emulated stop (the workers before 3.5) raced by what a worker writes meanwhile, forced into the moments
it can land, through the stop's config writer in this process:
- a delete sent straight to a worker, after the stop checked (on the config topic read to its end) that the
  connector exists and before its records are written. The stop's read-back finds the connector gone: it
  removes the target state it wrote (as KafkaConfigBackingStore.removeConnectorConfig removes a deleted
  connector's) and answers as DistributedHerder.stopConnector answers a connector that does not exist, so a
  connector created again under the name starts as created, not STOPPED;
- task configs a leader before 3.5 writes after the stop's empty set (a reconfiguration it started before
  it read the stop; it is not serialized with the sidecar): the read-back finds them and writes the empty
  set again, so the connector ends STOPPED without tasks;
- the connector restarted by its worker between the stop's two records (as a rebalance that moves it starts
  it again): the worker has read the STOPPED target state, not yet the empty task set, and generates no
  task configs; the empty set ends it STOPPED without tasks, and no task config is written after the stop's
  records."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence

import httpx
import pytest

from control_plane.codecs import ConfigRecord, TaskCommit, TaskConfig, Tombstone, encode_config
from control_plane.codecs.config import ConfigKey
from tests.support.connect_answers import until_states
from tests.support.harness import RunningSidecar, Sidecars
from tests.support.kafka_topics import produce_record, read_to_end
from tests.support.stack import Stack
from tests.support.waiting import eventually

FILE_SOURCE = "org.apache.kafka.connect.file.FileStreamSourceConnector"
VERSIONS = pytest.mark.parametrize("version", ["old", "oldest"], ids=["connect-3.4.1", "connect-2.8.2"])

Hook = Callable[[], Awaitable[None]]


def source(name: str) -> dict[str, str]:
    return {"connector.class": FILE_SOURCE, "topic": name, "file": "/dev/null", "tasks.max": "1"}


async def raced_stop(
    running: RunningSidecar,
    name: str,
    *,
    before: Hook | None = None,
    between: Hook | None = None,
    after: Hook | None = None,
) -> httpx.Response:
    """``PUT /connectors/{name}/stop`` through ``running`` (a sidecar in this process), with ``before`` run when the
    stop, its check passed, is about to write its records, ``between`` once it has written the first of them (each
    is then written on its own, in the stop's order), or ``after`` once it has written them; the stop's config
    writer is given back however the stop ends."""
    runtime = running.app.slot.runtime
    assert runtime is not None
    writer = runtime.herder.offsets._stopper._writer
    assert writer is not None
    write, hooked = writer.write, list[str]()

    async def raced(records: Sequence[ConfigRecord | Tombstone[ConfigKey]]) -> None:
        first = not hooked
        hooked.append(name)
        if first and before is not None:
            await before()
        if first and between is not None:
            await write(records[:1])
            await between()
            await write(records[1:])
        else:
            await write(records)
        if first and after is not None:
            await after()

    writer.write = raced  # type: ignore[method-assign]
    try:
        stopped = await running.client.put(f"/connectors/{name}/stop")
    finally:
        writer.write = write  # type: ignore[method-assign]
    assert hooked, "the stop wrote nothing"
    return stopped


async def stopped_without_tasks(
    stopped: httpx.Response, sidecar: httpx.AsyncClient, worker: httpx.AsyncClient, name: str
) -> None:
    """The stop answered 204; the sidecar shows the connector STOPPED without tasks, and the worker's own
    herder, once it read the empty set written last, has none."""
    assert (stopped.status_code, stopped.content) == (204, b""), stopped.text
    status = (await sidecar.get(f"/connectors/{name}/status")).json()
    assert (status["connector"]["state"], status["tasks"]) == ("STOPPED", [])
    await eventually(
        lambda: worker.get(f"/connectors/{name}/tasks"), lambda r: r.json() == [], what="no tasks on the worker"
    )


@VERSIONS
async def test_a_delete_between_a_stops_check_and_its_write_leaves_no_stop_behind(
    stack: Stack, sidecars: Sidecars, unique: str, version: str
) -> None:
    cluster = stack.clusters[version]
    name = f"raced-{unique}"
    running = await sidecars.of(cluster)  # the session's, in this process: its stop's writer is reached
    sidecar = running.client
    async with httpx.AsyncClient(base_url=cluster.connect_url, timeout=60) as worker:
        try:
            created = await sidecar.post("/connectors", json={"name": name, "config": source(name)})
            assert created.status_code == 201, created.text

            async def delete() -> None:  # straight to the worker; the write waits until the delete is read
                deleted = await worker.delete(f"/connectors/{name}")
                assert deleted.status_code == 204, deleted.text
                await eventually(
                    lambda: sidecar.get("/connectors"), lambda r: name not in r.json(), what="the delete read"
                )

            stopped = await raced_stop(running, name, before=delete)
            assert (stopped.status_code, stopped.json()) == (
                404,
                {"error_code": 404, "message": f"Unknown connector {name}"},
            )

            again = await sidecar.post("/connectors", json={"name": name, "config": source(name)})
            assert again.status_code == 201, again.text
            for through in (worker, sidecar):  # created again RUNNING, not STOPPED
                await until_states(through, name, "RUNNING", ["RUNNING"])
        finally:
            await worker.delete(f"/connectors/{name}")


@VERSIONS
async def test_task_configs_a_leader_writes_after_a_stops_empty_set_are_replaced_by_it_again(
    stack: Stack, sidecars: Sidecars, unique: str, version: str
) -> None:
    cluster = stack.clusters[version]
    name = f"late-{unique}"
    running = await sidecars.of(cluster)  # the session's, in this process: its stop's writer is reached
    sidecar = running.client
    async with httpx.AsyncClient(base_url=cluster.connect_url, timeout=60) as worker:
        try:
            created = await sidecar.post("/connectors", json={"name": name, "config": source(name)})
            assert created.status_code == 201, created.text
            tasks = await eventually(
                lambda: worker.get(f"/connectors/{name}/tasks"),
                lambda r: r.status_code == 200 and len(r.json()) == 1,
                what=f"{name}'s task config",
            )
            task_config = tasks.json()[0]["config"]

            async def late_tasks() -> None:  # the leader's reconfiguration, as it writes it
                topic = cluster.worker_property("config.storage.topic")
                for record in (TaskConfig(name, 0, task_config), TaskCommit(name, 1)):
                    await produce_record(stack.bootstrap, topic, *encode_config(record))

            stopped = await raced_stop(running, name, after=late_tasks)
            await stopped_without_tasks(stopped, sidecar, worker, name)
        finally:
            await worker.delete(f"/connectors/{name}")


@VERSIONS
async def test_a_connector_restarted_between_a_stops_two_records_generates_no_tasks(
    stack: Stack, sidecars: Sidecars, unique: str, version: str
) -> None:
    cluster = stack.clusters[version]
    name = f"between-{unique}"
    running = await sidecars.of(cluster)  # the session's, in this process: its stop's writer is reached
    sidecar = running.client
    topic = cluster.worker_property("config.storage.topic")
    async with httpx.AsyncClient(base_url=cluster.connect_url, timeout=60) as worker:
        try:
            created = await sidecar.post("/connectors", json={"name": name, "config": source(name)})
            assert created.status_code == 201, created.text
            await until_states(worker, name, "RUNNING", ["RUNNING"])
            first: list[int] = []

            async def restarted() -> None:  # the connector started again from what the worker has read so far
                log = await read_to_end(stack.bootstrap, topic)
                first.append(max(r.offset for r in log.records if r.key in stop_keys))
                await eventually(  # the worker has read the first record: the connector's state follows it
                    lambda: worker.get(f"/connectors/{name}/status"),
                    lambda r: (
                        r.json()["connector"]["state"] != "RUNNING"
                        or all(t["state"] != "RUNNING" for t in r.json()["tasks"])
                    ),
                    what="the stop's first record applied by the worker",
                )
                answer = await worker.post(f"/connectors/{name}/restart")
                assert answer.status_code in (200, 202, 204), answer.text
                # a request of the herder's queue, after the reconfiguration the restart asked for
                assert (await worker.get(f"/connectors/{name}/tasks")).status_code == 200

            stop_keys = {f"target-state-{name}".encode(), f"commit-{name}".encode()}
            stopped = await raced_stop(running, name, between=restarted)
            await stopped_without_tasks(stopped, sidecar, worker, name)
            log = await read_to_end(stack.bootstrap, topic)
            task_keys = (f"task-{name}-".encode(), f"commit-{name}".encode())
            since = [
                (r.key, r.value) for r in log.records if r.offset > first[0] and r.key and r.key.startswith(task_keys)
            ]
            assert since == [(f"commit-{name}".encode(), b'{"tasks":0}')], since  # the stop's own, nothing else
        finally:
            await worker.delete(f"/connectors/{name}")
