"""KIP-875 offsets, every way (native on 3.5+, done by the sidecar through Kafka before). The KIP's test plan
lines that apply:

- view the offsets of a running source and sink connector and see them grow;
- alter a stopped FileStreamSource back to the start of its file, resume, see the lines produced again;
  the same for a source with its own offsets topic (``offsets.storage.topic``);
- alter a stopped FileStreamSink's consumer offset back, resume, see the records written again; the same
  for a sink with an overridden group id, whose alter also deletes an offset (null), and for a sink whose
  group id is a config-provider reference (``${file:...}``, resolved as the workers resolve it);
- reset both kinds and see them start over; a second reset succeeds too;
- alter or reset a running, paused or unknown connector is refused and changes nothing;
- an alter raced by a resume sent straight to the worker: acknowledged, it holds.

Where the records land is checked every way too (the worker's offsets topic, the partition Connect's
producer picks, the connector's own topic, the consumer groups).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import httpx

from control_plane.codecs import OffsetKey, partition_for_key
from control_plane.domain.offsets.messages import not_stopped
from control_plane.storage.consumer_groups import ConsumerGroups
from tests.support.kafka_topics import produce, read_to_end
from tests.support.parity import Way, lines_of, run_every_way, since
from tests.support.waiting import eventually

FILE_SOURCE = "org.apache.kafka.connect.file.FileStreamSourceConnector"
FILE_SINK = "org.apache.kafka.connect.file.FileStreamSinkConnector"


async def offsets_until(w: Way, name: str, ok: Callable[[list[dict[str, Any]]], bool], what: str) -> None:
    await w.until(w.path(name, "/offsets"), lambda r: r.status_code == 200 and ok(r.json()["offsets"]), what)


def positions(entries: list[dict[str, Any]]) -> list[int]:
    return [e["offset"]["position"] for e in entries]


def holds(path: Path, lines: list[str], start: int = 0) -> Callable[[object], bool]:
    """A file from line ``start`` on is ``lines``."""
    return lambda _: lines_of(path)[start:] == lines


async def group_empty(w: Way, kafka: ConsumerGroups, group: str) -> None:
    await eventually(partial(kafka.active_members, group), lambda m: m == 0, what=f"{w.label}: {group} empty")


async def stop(w: Way, name: str) -> None:
    await w.call("PUT", w.path(name, "/stop"))
    await w.until_states(name, "STOPPED", [])


async def source_offsets(w: Way) -> None:
    plain, own = w.connector("kip875-src"), w.connector("kip875-src-own")
    own_topic, worker_topic = w.name("kip875-own-offsets"), w.cluster.worker_property("offset.storage.topic")
    files = {plain: w.home / "plain.txt", own: w.home / "own.txt"}
    topics = {plain: w.name("kip875-lines"), own: w.name("kip875-lines-own")}
    for name, path in files.items():
        path.write_text("l1\nl2\nl3\n")
        config = {"connector.class": FILE_SOURCE, "tasks.max": "1", "file": str(path), "topic": topics[name]}
        if name == own:
            config["offsets.storage.topic"] = own_topic
        await w.call("PUT", w.path(name, "/config"), json=config)
    # offsets of running connectors, growing as lines are read
    for name, path in files.items():
        await offsets_until(w, name, lambda o: positions(o) == [9], f"{name} at 9")
        with path.open("a") as f:
            f.write("l4\n")
        await offsets_until(w, name, lambda o: positions(o) == [12], f"{name} at 12")
        await w.call("GET", w.path(name, "/offsets"))

    # refused while running, paused, and for a connector that does not exist; nothing changes
    body = {"offsets": [{"partition": {"filename": str(files[plain])}, "offset": {"position": 0}}]}
    await w.call("PATCH", w.path(plain, "/offsets"), json=body, label="PATCH offsets, running")
    await w.call("DELETE", w.path(plain, "/offsets"))
    await w.call("PUT", w.path(plain, "/pause"))
    await w.until_states(plain, "PAUSED", ["PAUSED"])
    await w.call("PATCH", w.path(plain, "/offsets"), json=body, label="PATCH offsets, paused")
    await w.call("DELETE", w.path(plain, "/offsets"))
    ghost = w.name("kip875-ghost")
    await w.call("GET", w.path(ghost, "/offsets"))
    await w.call("PATCH", w.path(ghost, "/offsets"), json=body, label="PATCH offsets, unknown")
    await w.call("DELETE", w.path(ghost, "/offsets"))
    await w.call("GET", w.path(plain, "/offsets"))
    own_key = OffsetKey(own, {"filename": str(files[own])}).to_bytes()
    assert (await read_to_end(w.stack.bootstrap, own_topic)).with_key(own_key)[-1][1] == b'{"position":12}'

    # stopped: back to the start of the file, resume, the lines come again
    for name, path in files.items():
        await stop(w, name)
        back = {"offsets": [{"partition": {"filename": str(path)}, "offset": {"position": 0}}]}
        await w.call("PATCH", w.path(name, "/offsets"), json=back, label="PATCH offsets to 0, stopped")
        await w.call("GET", w.path(name, "/offsets"))
    key = OffsetKey(plain, {"filename": str(files[plain])}).to_bytes()
    records = (await read_to_end(w.stack.bootstrap, worker_topic)).with_key(key)
    assert records[-1] == (partition_for_key(key, 25), b'{"position":0}')  # offset.storage.partitions: 25
    assert {p for p, _ in records} == {partition_for_key(key, 25)}
    assert (await read_to_end(w.stack.bootstrap, own_topic)).with_key(own_key)[-1][1] == b'{"position":0}'
    for name in files:
        await w.call("PUT", w.path(name, "/resume"))
    for name in files:
        w.note(f"records of {name}", await w.values_at_least(topics[name], 8))

    # reset: gone, twice; resumed, the connector starts over
    for name in files:
        await offsets_until(w, name, lambda o: positions(o) == [12], f"{name} read again")
        await stop(w, name)
        for _ in range(2):
            await w.call("DELETE", w.path(name, "/offsets"))
        await w.call("GET", w.path(name, "/offsets"))
    assert (await read_to_end(w.stack.bootstrap, worker_topic)).with_key(key)[-1] == (partition_for_key(key, 25), None)
    assert (await read_to_end(w.stack.bootstrap, own_topic)).with_key(own_key)[-1][1] is None
    for name in files:
        await w.call("PUT", w.path(name, "/resume"))
    for name in files:
        w.note(f"records of {name} after the reset", await w.values_at_least(topics[name], 12))
        await w.call("DELETE", w.path(name))


async def test_source_offsets_grow_are_refused_unless_stopped_and_alter_reset_replay(ways: list[Way]) -> None:
    # a connector's own offsets.storage.topic is KIP-618's (3.3): older workers ignore the key
    await run_every_way(since(ways, "3.3"), source_offsets)


async def source_through_another_address(w: Way) -> None:
    """A source whose producer reaches the worker's brokers by another address, with its own offsets topic:
    on 3.3+ that topic is on the producer's cluster, which is the worker's (the same cluster id); before 3.3
    the key means nothing and the offsets are in the worker's topic. Read, altered and reset every way."""
    name, topic, own_topic = w.connector("kip875-alias"), w.name("kip875-alias-lines"), w.name("kip875-alias-offsets")
    path = w.home / "alias.txt"
    path.write_text("l1\nl2\nl3\n")
    alias = w.stack.bootstrap.replace("127.0.0.1", "localhost")
    assert alias != w.stack.bootstrap
    config = {"connector.class": FILE_SOURCE, "tasks.max": "1", "file": str(path), "topic": topic}
    config |= {"producer.override.bootstrap.servers": alias, "offsets.storage.topic": own_topic}
    await w.call("PUT", w.path(name, "/config"), json=config)
    await offsets_until(w, name, lambda o: positions(o) == [9], f"{name} at 9")
    await w.call("GET", w.path(name, "/offsets"))
    await stop(w, name)
    back = {"offsets": [{"partition": {"filename": str(path)}, "offset": {"position": 3}}]}
    await w.call("PATCH", w.path(name, "/offsets"), json=back, label="PATCH offsets to 3, stopped")
    await w.call("GET", w.path(name, "/offsets"))
    await w.call("PUT", w.path(name, "/resume"))
    w.note("records after the alter", await w.values_at_least(topic, 5))
    await offsets_until(w, name, lambda o: positions(o) == [9], f"{name} read again")
    await stop(w, name)
    await w.call("DELETE", w.path(name, "/offsets"))
    await w.call("GET", w.path(name, "/offsets"))
    await w.call("DELETE", w.path(name))


async def test_source_through_another_address_of_the_workers_cluster_has_its_offsets_read_and_modified(
    ways: list[Way],
) -> None:
    await run_every_way(ways, source_through_another_address)


async def sink_offsets(w: Way) -> None:
    topic = w.name("kip875-records")
    await produce(w.stack.bootstrap, topic, ["r1", "r2", "r3"])
    plain, override = w.connector("kip875-sink"), w.connector("kip875-sink-group")
    provided = w.connector("kip875-sink-provided")
    groups = {plain: f"connect-{plain}", override: w.name("kip875-group"), provided: w.name("kip875-provided")}
    files = {plain: w.home / "plain.txt", override: w.home / "override.txt", provided: w.home / "provided.txt"}
    # the group of ``provided`` named in a file (the workers' FileConfigProvider, KIP-297): its offsets are the
    # resolved group's, where the worker or the sidecar reads them
    secrets = w.home / "group.properties"
    secrets.write_text(f"group={groups[provided]}\n")
    for name, path in files.items():
        config = {"connector.class": FILE_SINK, "tasks.max": "1", "file": str(path), "topics": topic}
        if name == override:
            config["consumer.override.group.id"] = groups[name]
        if name == provided:
            config["consumer.override.group.id"] = f"${{file:{secrets}:group}}"
        await w.call("PUT", w.path(name, "/config"), json=config)

    def at(offset: int) -> Callable[[list[dict[str, Any]]], bool]:
        return lambda o: [e["offset"]["kafka_offset"] for e in o] == [offset]

    for name, path in files.items():
        await w.until(w.path(name), holds(path, ["r1", "r2", "r3"]), f"{name}'s file")
        await offsets_until(w, name, at(3), f"{name} at 3")
    await produce(w.stack.bootstrap, topic, ["r4"])
    for name in files:
        await offsets_until(w, name, at(4), f"{name} at 4")
        await w.call("GET", w.path(name, "/offsets"))
    partition = {"kafka_topic": topic, "kafka_partition": 0}
    await w.call("PATCH", w.path(plain, "/offsets"), json={"offsets": [{"partition": partition, "offset": None}]})

    kafka = ConsumerGroups({"bootstrap_servers": w.stack.bootstrap}, 5000)
    for name in files:
        await stop(w, name)
        await group_empty(w, kafka, groups[name])
    # the default group back to 1; the overridden group's offset deleted (null): it starts at the earliest
    for name, offset in ((plain, {"kafka_offset": 1}), (override, None), (provided, {"kafka_offset": 2})):
        await w.call("PATCH", w.path(name, "/offsets"), json={"offsets": [{"partition": partition, "offset": offset}]})
        await w.call("GET", w.path(name, "/offsets"))
    w.note("committed", sorted((*tp, o) for tp, o in (await kafka.committed(groups[plain])).items()))
    for name in files:
        await w.call("PUT", w.path(name, "/resume"))
    want = {
        plain: ["r1", "r2", "r3", "r4", "r2", "r3", "r4"],
        override: ["r1", "r2", "r3", "r4"] * 2,
        provided: ["r1", "r2", "r3", "r4", "r3", "r4"],
    }
    for name, path in files.items():
        await w.until(w.path(name), holds(path, want[name]), f"{name} rewritten")
        w.note(f"lines of {name}", lines_of(path))

    # reset: the group is deleted; a second reset (no group) succeeds; resumed, everything again
    for name in files:
        await offsets_until(w, name, at(4), f"{name} at 4 again")
        await stop(w, name)
        await group_empty(w, kafka, groups[name])
        for _ in range(2):
            await w.call("DELETE", w.path(name, "/offsets"))
        await w.call("GET", w.path(name, "/offsets"))
        w.note("committed after the reset", sorted((await kafka.committed(groups[name])).items()))
        await w.call("PUT", w.path(name, "/resume"))
    for name, path in files.items():
        await w.until(w.path(name), holds(path, ["r1", "r2", "r3", "r4"], len(want[name])), "all again")
        w.note(f"lines of {name} after the reset", lines_of(path))
        await w.call("DELETE", w.path(name))


async def test_sink_offsets_grow_alter_with_a_deletion_reset_and_rewrite(ways: list[Way]) -> None:
    await run_every_way(ways, sink_offsets)


async def resumed_while_altered(w: Way) -> None:
    """A stopped source's alter, and a resume sent straight to the worker while the alter is on its way.
    Whichever lands first, an alter answered 200 holds: the connector, running again, reads from the
    position it was given; an alter that came second is Connect's 400 and changes nothing."""
    name = w.connector("kip875-race")
    path, topic = w.home / "race.txt", w.name("kip875-race-lines")
    path.write_text("l1\nl2\nl3\n")
    config = {"connector.class": FILE_SOURCE, "tasks.max": "1", "file": str(path), "topic": topic}
    await w.call("PUT", w.path(name, "/config"), json=config)
    await offsets_until(w, name, lambda o: positions(o) == [9], f"{name} at 9")
    await stop(w, name)
    back = {"offsets": [{"partition": {"filename": str(path)}, "offset": {"position": 0}}]}
    sent = asyncio.Event()

    async def on_its_way(request: httpx.Request) -> None:
        if request.method == "PATCH":
            sent.set()

    w.client.event_hooks["request"].append(on_its_way)
    try:
        alter = asyncio.create_task(w.call("PATCH", w.path(name, "/offsets"), json=back, record=False))
        await sent.wait()
        async with httpx.AsyncClient(base_url=w.cluster.connect_url, timeout=60) as worker:
            assert (await worker.put(w.path(name, "/resume"))).status_code == 202
        altered = await alter
    finally:
        w.client.event_hooks["request"].remove(on_its_way)
    await w.until_states(name, "RUNNING", ["RUNNING"])
    with path.open("a") as f:
        f.write("l4\n")
    await offsets_until(w, name, lambda o: positions(o) == [12], f"{name} at 12")
    lines = ["l1", "l2", "l3"] + (["l1", "l2", "l3", "l4"] if altered.status_code == 200 else ["l4"])
    if altered.status_code != 200:
        assert (altered.status_code, altered.json()["message"]) == (400, not_stopped(name))
    assert await w.values(topic) == lines, f"{w.label}: the alter answered {altered.status_code}"
    w.note("an acknowledged alter holds", True)


async def test_an_alter_acknowledged_while_a_resume_lands_holds(ways: list[Way]) -> None:
    await run_every_way(ways, resumed_while_altered)


def sink_entry(topic: object, partition: object, offset: object) -> dict[str, Any]:
    return {"partition": {"kafka_topic": topic, "kafka_partition": partition}, "offset": offset}


# bodies Connect reads, then refuses for their contents (SinkUtils: 400; the admin client and OffsetUtils: 500)
SINK_BODIES: dict[str, list[dict[str, Any]]] = {
    "null partition": [{"partition": None, "offset": None}],
    "no partition key": [{"partition": {"kafka_topic": "t"}, "offset": None}],
    "null topic": [sink_entry(None, 0, None)],
    "partition x": [sink_entry("<topic>", "x", {"kafka_offset": 1})],
    "offset x": [sink_entry("<topic>", 0, {"kafka_offset": "x"})],
    "no offset key": [sink_entry("<topic>", 0, {})],
    "number topic": [sink_entry(5, 0, {"kafka_offset": 1})],
    "empty topic": [sink_entry("", 0, {"kafka_offset": 1})],
    "negative partition": [sink_entry("<topic>", -1, {"kafka_offset": 1})],
    "negative offset": [sink_entry("<topic>", 0, {"kafka_offset": -1})],
    "no such topic": [sink_entry("<none>", 0, {"kafka_offset": 1})],
    "no such partition": [sink_entry("<topic>", 7, {"kafka_offset": 1})],
}
SOURCE_BODIES: dict[str, list[dict[str, Any]]] = {
    "map in a partition": [{"partition": {"filename": {"x": 1}}, "offset": {"position": 0}}],
    "array in an offset": [{"partition": {"filename": "f"}, "offset": {"position": [1]}}],
    "number beyond a long": [{"partition": {"filename": "f"}, "offset": {"position": 2**70}}],
}


def body_of_case(w: Way, entries: list[dict[str, Any]], topic: str) -> dict[str, Any]:
    text = json.dumps({"offsets": entries}).replace("<topic>", topic).replace("<none>", w.name("kip875-none"))
    return {"offsets": json.loads(text)["offsets"]}


async def two_connectors(w: Way, base: str) -> tuple[str, str, str]:
    """A FileStream source and a sink of this way, running; the sink's topic."""
    source, sink, topic = w.connector(f"{base}-src"), w.connector(f"{base}-snk"), w.name(f"{base}-records")
    await produce(w.stack.bootstrap, topic, ["r1"])
    (w.home / "in.txt").write_text("l1\n")
    await w.call(
        "PUT",
        w.path(source, "/config"),
        json={"connector.class": FILE_SOURCE, "tasks.max": "1", "file": str(w.home / "in.txt"), "topic": topic},
    )
    await w.call(
        "PUT",
        w.path(sink, "/config"),
        json={"connector.class": FILE_SINK, "tasks.max": "1", "file": str(w.home / "out.txt"), "topics": topic},
    )
    for name in (source, sink):
        await w.until_states(name, "RUNNING", ["RUNNING"])
    return source, sink, topic


async def refused_bodies(w: Way, source: str, sink: str, topic: str, state: str) -> None:
    for what, entries in SINK_BODIES.items():
        body = body_of_case(w, entries, topic)
        await w.call("PATCH", w.path(sink, "/offsets"), json=body, label=f"PATCH sink offsets, {state}: {what}")
    for what, entries in SOURCE_BODIES.items():
        body = body_of_case(w, entries, topic)
        await w.call("PATCH", w.path(source, "/offsets"), json=body, label=f"PATCH source offsets, {state}: {what}")


async def contents_checked_as_connect_does(w: Way) -> None:
    source, sink, topic = await two_connectors(w, "kip875-bodies")
    for name in (source, sink):
        await stop(w, name)
    await refused_bodies(w, source, sink, topic, "stopped")
    # an entry without a partition: the connector's alterOffsets decides (FileStream's 3.6+ hook lets a null
    # offset pass); the key [name, null] it leaves is never listed (OffsetUtils.processPartitionKey)
    await w.call("PATCH", w.path(source, "/offsets"), json={"offsets": [{}]}, label="PATCH source offsets: {}")
    for name in (source, sink):
        await w.call("GET", w.path(name, "/offsets"))  # nothing listed was written
        await w.call("DELETE", w.path(name))


async def test_alter_bodies_connect_reads_are_refused_with_its_codes_and_words(ways: list[Way]) -> None:
    """SinkUtils's 400s word for word; what the worker's admin client or OffsetUtils refuses, 500 with
    Connect's message naming the connector; nothing written. An entry without a partition is taken."""
    await run_every_way(ways, contents_checked_as_connect_does)


async def state_before_contents(w: Way) -> None:
    source, sink, topic = await two_connectors(w, "kip875-running")
    await refused_bodies(w, source, sink, topic, "running")
    await w.call("PATCH", w.path(source, "/offsets"), json={"offsets": [{}]}, label="PATCH source offsets, running: {}")
    for name in (source, sink):
        await w.call("DELETE", w.path(name))


async def test_the_state_is_checked_before_the_body(ways: list[Way]) -> None:
    """A running connector: Connect's "must be in the STOPPED state", whatever the body holds; the body goes
    to a worker that alters offsets as it came, and the emulation checks in the same order
    (``offsets.connector_offsets``)."""
    await run_every_way(ways, state_before_contents)
