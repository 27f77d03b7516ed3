"""KIP-875 offsets through the sidecar on both Connect versions: native on 4.3.1 (forwarded), done by
the sidecar through Kafka on 3.4.1. The KIP's test plan lines that apply:

- view the offsets of a running source and sink connector and see them grow;
- alter a stopped FileStreamSource back to the start of its file, resume, see the lines produced again;
  the same for a source with its own offsets topic (``offsets.storage.topic``);
- alter a stopped FileStreamSink's consumer offset back, resume, see the records written again; the same
  for a sink with an overridden group id, whose alter also deletes an offset (null);
- reset both kinds and see them start over; a second reset succeeds too;
- alter or reset a running, paused or unknown connector is refused and changes nothing;
- malformed bodies get a 400 that says what is wrong.

The sidecars are the harness's: built from the code under test and served in this process.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Awaitable, Callable
from functools import partial
from pathlib import Path
from typing import Any

import httpx
import pytest
from aiokafka import AIOKafkaProducer

from control_plane.codecs import OffsetKey, partition_for_key
from control_plane.domain.offsets_messages import framework_managed, not_found, not_stopped
from control_plane.domain.offsets_request import NO_OFFSETS
from control_plane.storage.consumer_groups import ConsumerGroups

from .harness import Sidecars, read_to_end, read_values
from .stack import Cluster, Stack
from .waiting import eventually

FILE_SOURCE = "org.apache.kafka.connect.file.FileStreamSourceConnector"
FILE_SINK = "org.apache.kafka.connect.file.FileStreamSinkConnector"


def altered(cluster: Cluster) -> str:
    """4.3.1's FileStream connectors implement alterOffsets; the sidecar cannot call it on 3.4.1."""
    return (
        "The offsets for this connector have been altered successfully"
        if cluster.newest
        else framework_managed("altered")
    )


def reset(cluster: Cluster) -> str:
    return (
        "The offsets for this connector have been reset successfully" if cluster.newest else framework_managed("reset")
    )


@pytest.fixture
async def created(cluster: Cluster) -> AsyncIterator[list[str]]:
    """Connectors a test created: deleted afterwards even when the test failed (a connector left behind
    would change what other tests see, such as the list of connectors)."""
    names: list[str] = []
    yield names
    async with httpx.AsyncClient(base_url=cluster.connect_url, timeout=30) as worker:
        for name in names:
            await worker.delete(f"/connectors/{name}")


async def create(
    client: httpx.AsyncClient, name: str, config: dict[str, str], created: list[str] | None = None
) -> None:
    if created is not None:
        created.append(name)
    answer = await client.put(f"/connectors/{name}/config", json=config)
    assert answer.status_code == 201, answer.text
    await eventually(
        lambda: client.get(f"/connectors/{name}/config"), lambda r: r.status_code == 200, what=f"{name} in the view"
    )


async def tasks_of(client: httpx.AsyncClient, name: str) -> list[str]:
    answer = await client.get(f"/connectors/{name}/status")
    return [t["state"] for t in answer.json().get("tasks", [])] if answer.status_code == 200 else ["?"]


async def running(client: httpx.AsyncClient, name: str) -> None:
    await eventually(lambda: tasks_of(client, name), lambda t: t == ["RUNNING"], what=f"{name}'s task RUNNING")


async def stop(client: httpx.AsyncClient, worker: httpx.AsyncClient, name: str) -> None:
    answer = await client.put(f"/connectors/{name}/stop")
    assert (answer.status_code, answer.content) == (204, b""), answer.text
    # the worker has shut the tasks down (3.4.1 pauses the connector and drops the tasks)
    await eventually(lambda: tasks_of(worker, name), lambda t: t == [], what=f"{name}'s tasks gone on the worker")


async def offsets(client: httpx.AsyncClient, name: str) -> list[dict[str, Any]]:
    answer = await client.get(f"/connectors/{name}/offsets")
    assert answer.status_code == 200, answer.text
    return answer.json()["offsets"]  # type: ignore[no-any-return]


async def patch(client: httpx.AsyncClient, name: str, body: object) -> httpx.Response:
    return await client.patch(f"/connectors/{name}/offsets", json=body)


def positions(entries: list[dict[str, Any]]) -> list[int]:
    return [e["offset"]["position"] for e in entries]


def kafka_offsets(entries: list[dict[str, Any]]) -> dict[tuple[str, int], int]:
    return {
        (e["partition"]["kafka_topic"], e["partition"]["kafka_partition"]): e["offset"]["kafka_offset"] for e in entries
    }


async def test_source_offsets_grow_are_refused_unless_stopped_and_alter_reset_replay(
    stack: Stack,
    cluster: Cluster,
    worker: httpx.AsyncClient,
    sidecar: httpx.AsyncClient,
    created: list[str],
    unique: str,
    tmp_path: Path,
) -> None:
    client = sidecar
    tag = f"{cluster.name}-{unique}"
    plain, own = f"kip875-src-{tag}", f"kip875-src-own-{tag}"
    own_topic, worker_topic = f"kip875-own-offsets-{tag}", cluster.worker_property("offset.storage.topic")
    # where the worker keeps the offsets of the connector that names its own topic (KIP-618, 3.3; before,
    # the key means nothing to the worker and the sidecar ignores it too)
    own_kept = own_topic if cluster.at_least("3.3") else worker_topic
    files = {plain: tmp_path / "plain.txt", own: tmp_path / "own.txt"}
    topics = {plain: f"kip875-lines-{tag}", own: f"kip875-lines-own-{tag}"}
    for name, path in files.items():
        path.write_text("l1\nl2\nl3\n")
        config = {"connector.class": FILE_SOURCE, "tasks.max": "1", "file": str(path), "topic": topics[name]}
        await create(client, name, config if name == plain else {**config, "offsets.storage.topic": own_topic}, created)
    # offsets of running connectors, growing as lines are read
    for name, path in files.items():
        await eventually(partial(offsets, client, name), lambda o: positions(o) == [9], what=f"{name} at 9")
        with path.open("a") as f:
            f.write("l4\n")
        grown = await eventually(partial(offsets, client, name), lambda o: positions(o) == [12], what=f"{name} at 12")
        assert grown == [{"partition": {"filename": str(path)}, "offset": {"position": 12}}]
        if cluster.newest:
            assert grown == await offsets(worker, name)

    # refused while running, paused, and for a connector that does not exist; nothing changes
    body = {"offsets": [{"partition": {"filename": str(files[plain])}, "offset": {"position": 0}}]}
    refused = {"error_code": 400, "message": not_stopped(plain)}
    assert ((await patch(client, plain, body)).status_code, (await patch(client, plain, body)).json()) == (400, refused)
    assert (await client.delete(f"/connectors/{plain}/offsets")).json() == refused
    assert (await client.put(f"/connectors/{plain}/pause")).status_code == 202
    await eventually(lambda: tasks_of(client, plain), lambda t: t == ["PAUSED"], what="paused")
    assert (await patch(client, plain, body)).json() == refused
    assert (await client.delete(f"/connectors/{plain}/offsets")).json() == refused
    ghost = f"kip875-ghost-{tag}"
    for answer in (
        await client.get(f"/connectors/{ghost}/offsets"),
        await patch(client, ghost, body),
        await client.delete(f"/connectors/{ghost}/offsets"),
    ):
        assert (answer.status_code, answer.json()) == (404, {"error_code": 404, "message": not_found(ghost)})
    assert positions(await offsets(client, plain)) == [12]

    own_key = OffsetKey(own, {"filename": str(files[own])}).to_bytes()
    own_records = (await read_to_end(stack.bootstrap, own_kept)).with_key(own_key)
    assert own_records[-1][1] == b'{"position":12}'  # the worker's own

    # stopped: back to the start of the file, resume, the lines come again
    for name, path in files.items():
        await stop(client, worker, name)
        answer = await patch(
            client, name, {"offsets": [{"partition": {"filename": str(path)}, "offset": {"position": 0}}]}
        )
        assert (answer.status_code, answer.json()) == (200, {"message": altered(cluster)})
        assert positions(await offsets(client, name)) == [0]
    key = OffsetKey(plain, {"filename": str(files[plain])}).to_bytes()
    records = (await read_to_end(stack.bootstrap, worker_topic)).with_key(key)
    assert records[-1] == (partition_for_key(key, 25), b'{"position":0}')  # offset.storage.partitions: 25
    assert {p for p, _ in records} == {partition_for_key(key, 25)}
    assert (await read_to_end(stack.bootstrap, own_kept)).with_key(own_key)[-1][1] == b'{"position":0}'
    for name in files:
        assert (await client.put(f"/connectors/{name}/resume")).status_code == 202
    for name in files:
        values = await read_values(stack.bootstrap, topics[name], 8)
        assert values == ["l1", "l2", "l3", "l4"] * 2

    # reset: gone, twice; resumed, the connector starts over
    for name in files:
        await eventually(partial(offsets, client, name), lambda o: positions(o) == [12], what=f"{name} read again")
        await stop(client, worker, name)
        for _ in range(2):
            answer = await client.delete(f"/connectors/{name}/offsets")
            assert (answer.status_code, answer.json()) == (200, {"message": reset(cluster)})
        assert await offsets(client, name) == []
    assert (await read_to_end(stack.bootstrap, worker_topic)).with_key(key)[-1] == (partition_for_key(key, 25), None)
    assert (await read_to_end(stack.bootstrap, own_kept)).with_key(own_key)[-1][1] is None
    for name in files:
        assert (await client.put(f"/connectors/{name}/resume")).status_code == 202
    for name in files:
        assert len(await read_values(stack.bootstrap, topics[name], 12)) == 12
        assert (await client.delete(f"/connectors/{name}")).status_code == 204


async def produce(bootstrap: str, topic: str, values: list[str]) -> None:
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap)
    await producer.start()
    try:
        for value in values:
            await producer.send_and_wait(topic, json.dumps(value).encode(), partition=0)
    finally:
        await producer.stop()


async def test_sink_offsets_grow_alter_with_a_deletion_reset_and_rewrite(
    stack: Stack,
    cluster: Cluster,
    worker: httpx.AsyncClient,
    sidecar: httpx.AsyncClient,
    created: list[str],
    unique: str,
    tmp_path: Path,
) -> None:
    client = sidecar
    tag = f"{cluster.name}-{unique}"
    topic = f"kip875-records-{tag}"
    await produce(stack.bootstrap, topic, ["r1", "r2", "r3"])
    plain, override = f"kip875-sink-{tag}", f"kip875-sink-group-{tag}"
    groups = {plain: f"connect-{plain}", override: f"kip875-group-{tag}"}
    files = {plain: tmp_path / "plain.txt", override: tmp_path / "override.txt"}
    for name, path in files.items():
        config = {"connector.class": FILE_SINK, "tasks.max": "1", "file": str(path), "topics": topic}
        overridden = {**config, "consumer.override.group.id": groups[name]}
        await create(client, name, config if name == plain else overridden, created)

    def lines(name: str) -> Callable[[], Awaitable[list[str]]]:
        async def read() -> list[str]:
            return files[name].read_text().splitlines() if files[name].exists() else []

        return read

    for name in files:
        await eventually(lines(name), lambda got: got == ["r1", "r2", "r3"], what=f"{name}'s file")
        await eventually(partial(offsets, client, name), lambda o: kafka_offsets(o) == {(topic, 0): 3}, what="at 3")
    await produce(stack.bootstrap, topic, ["r4"])
    for name in files:
        grown = await eventually(
            partial(offsets, client, name), lambda o: kafka_offsets(o) == {(topic, 0): 4}, what="4"
        )
        assert grown == [{"partition": {"kafka_partition": 0, "kafka_topic": topic}, "offset": {"kafka_offset": 4}}]
        if cluster.newest:
            assert grown == await offsets(worker, name)
    refused = await patch(
        client, plain, {"offsets": [{"partition": {"kafka_topic": topic, "kafka_partition": 0}, "offset": None}]}
    )
    assert (refused.status_code, refused.json()["message"]) == (400, not_stopped(plain))

    kafka = ConsumerGroups({"bootstrap_servers": stack.bootstrap}, 5000)
    for name in files:
        await stop(client, worker, name)
        await eventually(partial(kafka.active_members, groups[name]), lambda m: m == 0, what=f"{name}'s group empty")
    # the default group back to 1; the overridden group's offset deleted (null): it starts at the earliest
    partition = {"kafka_topic": topic, "kafka_partition": 0}
    for name, offset in ((plain, {"kafka_offset": 1}), (override, None)):
        answer = await patch(client, name, {"offsets": [{"partition": partition, "offset": offset}]})
        assert (answer.status_code, answer.json()) == (200, {"message": altered(cluster)})
    assert kafka_offsets(await offsets(client, plain)) == {(topic, 0): 1}
    assert await offsets(client, override) == []
    assert await kafka.committed(groups[plain]) == {(topic, 0): 1}
    for name in files:
        assert (await client.put(f"/connectors/{name}/resume")).status_code == 202
    await eventually(
        lines(plain), lambda got: got == ["r1", "r2", "r3", "r4", "r2", "r3", "r4"], what="rewritten from 1"
    )
    await eventually(lines(override), lambda got: got == ["r1", "r2", "r3", "r4"] * 2, what="rewritten from the start")

    # reset: the group is deleted; a second reset (no group) succeeds; resumed, everything again
    for name in files:
        await eventually(partial(offsets, client, name), lambda o: kafka_offsets(o) == {(topic, 0): 4}, what="at 4")
        await stop(client, worker, name)
        await eventually(partial(kafka.active_members, groups[name]), lambda m: m == 0, what=f"{name}'s group empty")
        for _ in range(2):
            answer = await client.delete(f"/connectors/{name}/offsets")
            assert (answer.status_code, answer.json()) == (200, {"message": reset(cluster)})
        assert await offsets(client, name) == []
        assert await kafka.committed(groups[name]) == {}
        assert (await client.put(f"/connectors/{name}/resume")).status_code == 202
    before = {plain: 7, override: 8}

    def replayed_after(start: int) -> Callable[[list[str]], bool]:
        return lambda got: got[start:] == ["r1", "r2", "r3", "r4"]

    for name in files:
        await eventually(lines(name), replayed_after(before[name]), what="all again")
        assert (await client.delete(f"/connectors/{name}")).status_code == 204


# -- malformed bodies -------------------------------------------------------------------------------
SOURCE_PARTITION = {"filename": "/tmp/kip875-in.txt"}
BAD_BODIES = [
    pytest.param("source", b"{not json", "The request body is not valid JSON (", id="not-json"),
    pytest.param(
        "source", b"[1]", "The request body must be a JSON object with the key 'offsets', not an array", id="array"
    ),
    pytest.param("source", b"{}", NO_OFFSETS, id="no-offsets"),
    pytest.param("sink", b'{"offsets":[]}', NO_OFFSETS, id="empty-offsets"),
    pytest.param(
        "source",
        b'{"offsets":"x"}',
        '\'offsets\' must be an array of {"partition": {...}, "offset": {...}} objects, not a string',
        id="offsets-not-array",
    ),
    pytest.param(
        "source",
        b'{"offsets":[1]}',
        "offsets[0] must be an object with the keys 'partition' and 'offset', not a number",
        id="entry-number",
    ),
    pytest.param(
        "source",
        b'{"offsets":[{"partition":{"a":1},"offset":null,"extra":1}]}',
        "offsets[0] has the unknown key 'extra'; an entry has only 'partition' and 'offset'",
        id="unknown-key",
    ),
    pytest.param(
        "sink",
        b'{"offsets":[{"partition":"t-0","offset":{"kafka_offset":1}}]}',
        "offsets[0].partition must be an object, not a string",
        id="partition-not-object",
    ),
    pytest.param(
        "source",
        b'{"offsets":[{"partition":{"filename":"f"},"offset":7}]}',
        "offsets[0].offset must be an object or null (to reset the partition), not a number",
        id="offset-number",
    ),
    pytest.param(
        "source",
        b'{"offsets":[{"offset":{"position":1}}]}',
        "offsets[0].partition is missing or null; a source partition is an object",
        id="source-no-partition",
    ),
    pytest.param(
        "source",
        b'{"offsets":[{"partition":{"filename":["f"]},"offset":null}]}',
        "offsets[0].partition.filename is an array: offsets may only contain primitive types as values "
        "(string, number, boolean, null), but field filename contains ARRAY",
        id="source-array-value",
    ),
    pytest.param(
        "sink",
        b'{"offsets":[{"partition":{"kafka_topic":"TOPIC"},"offset":{"kafka_offset":1}}]}',
        "offsets[0]: The partition for a sink connector offset must contain the keys 'kafka_topic' and "
        "'kafka_partition'",
        id="sink-no-partition-key",
    ),
    pytest.param(
        "sink",
        b'{"offsets":[{"partition":{"kafka_topic":"TOPIC","kafka_partition":"x"},"offset":{"kafka_offset":1}}]}',
        "offsets[0]: Failed to parse the following Kafka partition value in the provided offsets: 'x'. "
        "Partition values for sink connectors need to be integers.",
        id="sink-partition-string",
    ),
    pytest.param(
        "sink",
        b'{"offsets":[{"partition":{"kafka_topic":"TOPIC","kafka_partition":0},"offset":{"kafka_offset":"y"}}]}',
        "offsets[0]: Failed to parse the following Kafka offset value in the provided offsets: 'y'. "
        "Offset values for sink connectors need to be integers.",
        id="sink-offset-string",
    ),
    pytest.param(
        "sink",
        b'{"offsets":[{"partition":{"kafka_topic":"TOPIC","kafka_partition":0},"offset":{}}]}',
        "offsets[0]: The offset for a sink connector should either be null or contain the key 'kafka_offset'",
        id="sink-offset-no-key",
    ),
    pytest.param(
        "sink",
        b'{"offsets":[{"partition":{"kafka_topic":"TOPIC","kafka_partition":0},"offset":{"kafka_offset":-1}}]}',
        "offsets[0].offset.kafka_offset is -1; offsets are not negative",
        id="sink-negative-offset",
    ),
    pytest.param(
        "sink",
        b'{"offsets":[{"partition":{"kafka_topic":"TOPIC","kafka_partition":0},"offset":{"kafka_offset":1}},'
        b'{"partition":{"kafka_topic":"no-such-topic-kip875","kafka_partition":0},"offset":{"kafka_offset":1}}]}',
        "offsets[1]: the topic 'no-such-topic-kip875' does not exist",
        id="sink-topic-missing",
    ),
    pytest.param(
        "sink",
        b'{"offsets":[{"partition":{"kafka_topic":"TOPIC","kafka_partition":3},"offset":{"kafka_offset":1}}]}',
        "offsets[0]: partition 3 of topic 'TOPIC' does not exist (the topic has 1 partition)",
        id="sink-partition-missing",
    ),
]


@pytest.fixture(scope="module")
async def malformed_targets(
    cluster: Cluster, stack: Stack, sidecars: Sidecars
) -> AsyncIterator[tuple[httpx.AsyncClient, dict[str, str], str]]:
    """Per Connect version: the session's sidecar, a source and a sink connector (running: the body is
    checked before the state), and the sink's topic."""
    tag = f"{cluster.name}-bad"
    topic = f"kip875-bad-{cluster.name}"
    await produce(stack.bootstrap, topic, ["x"])
    client = (await sidecars.of(cluster)).client
    names = {"source": f"kip875-bad-src-{tag}", "sink": f"kip875-bad-sink-{tag}"}
    await create(
        client,
        names["source"],
        {"connector.class": FILE_SOURCE, "file": SOURCE_PARTITION["filename"], "topic": topic},
    )
    await create(client, names["sink"], {"connector.class": FILE_SINK, "file": "/tmp/kip875-out.txt", "topics": topic})
    yield client, names, topic
    for name in names.values():
        await client.delete(f"/connectors/{name}")


@pytest.mark.parametrize(("kind", "body", "message"), BAD_BODIES)
async def test_malformed_bodies_get_a_400_that_says_what_is_wrong(
    malformed_targets: tuple[httpx.AsyncClient, dict[str, str], str], kind: str, body: bytes, message: str
) -> None:
    client, names, topic = malformed_targets
    content = body.replace(b"TOPIC", topic.encode())
    answer = await client.patch(
        f"/connectors/{names[kind]}/offsets", content=content, headers={"content-type": "application/json"}
    )
    assert answer.status_code == 400, answer.text
    assert answer.json()["error_code"] == 400
    assert answer.json()["message"].startswith(message.replace("TOPIC", topic)), answer.json()["message"]
