"""The codecs against every record that the real workers (Connect 4.4.0 and 3.4.1) wrote to their config,
status and offsets topics: after a lifecycle that makes the worker write each kind of record (connector
names with '-' and ':', a config value full of characters JSON must escape, two sources, a sink on both
topics, pause/resume, restart with tasks, a failing task, on 3.5+ stop/resume, on 3.7+ a cluster-wide
logger level, then deletion), every record decodes to a known type and re-encodes to the same bytes, and
every offsets record sits in the partition that ``partition_for_key`` computes."""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

from control_plane.codecs import (
    ConnectorStatus,
    LoggerLevelRecord,
    Malformed,
    RestartRecord,
    SourceOffset,
    TargetState,
    TaskStatus,
    TopicStatus,
    UnknownKey,
    decode_config,
    decode_offset,
    decode_status,
    encode_config,
    encode_offset,
    encode_status,
    partition_for_key,
)
from tests.support.connect_answers import states, until_states
from tests.support.kafka_topics import TopicLog, read_to_end
from tests.support.stack import Cluster, Stack
from tests.support.waiting import eventually

FILE_SOURCE = "org.apache.kafka.connect.file.FileStreamSourceConnector"
FILE_SINK = "org.apache.kafka.connect.file.FileStreamSinkConnector"
PROBE = 'tab\t nl\n ctl\x01\x1f quote" backslash\\ slash/ é ü 日本 😀 \u2028 del\x7f'

Codec = tuple[Callable[[bytes | None, bytes | None], Any], Callable[[Any], tuple[bytes, bytes | None]]]


def version_at_least(cluster: Cluster, major: int, minor: int) -> bool:
    parts = [int(p) for p in cluster.version.split(".")[:2]]
    return (parts[0], parts[1]) >= (major, minor)


def check_topic(
    topic: str,
    log: TopicLog,
    codec: Codec,
    partitions: int | None = None,
    exact: Callable[[bytes | None], bool] = lambda _: True,
) -> tuple[list[Any], list[str]]:
    """Every record must decode to a known type; those ``exact`` selects (the records the workers wrote
    for this run: other tests also write records by hand, e.g. offsets a script wrote with spaces) must
    also re-encode to the same bytes and sit in the partition murmur2 gives."""
    decode, encode = codec
    decoded, problems = [], []
    for partition, offset, key, value, _ in log.records:
        where = f"{topic}[{partition}]@{offset} key={key!r} value={value!r}"
        result = decode(key, value)
        if isinstance(result, (UnknownKey, Malformed)):
            problems.append(f"{where}: {result}")
            continue
        decoded.append(result)
        if not exact(key):
            continue
        if encode(result) != (key, value):
            problems.append(f"{where}: re-encoded as {encode(result)!r}")
        if partitions is not None and key is not None and partition_for_key(key, partitions) != partition:
            problems.append(f"{where}: partition_for_key says {partition_for_key(key, partitions)}")
    return decoded, problems


CONNECTORS = ("src_a", "src_b", "sink", "broken")


def names_for(cluster: Cluster, unique: str) -> dict[str, str]:
    """Connector names with ':' and '-' (and a trailing '-<digit>' that is not a task number)."""
    tag = f"{cluster.name}-{unique}"
    return {
        "src_a": f"codec:src-a-{tag}-1",
        "src_b": f"codec:src-b-{tag}-2",
        "sink": f"codec:sink-{tag}-0",
        "broken": f"codec:broken-{tag}",
        "topic_a": f"codec-a-{tag}",
        "topic_b": f"codec-b-{tag}",
    }


async def run_lifecycle(
    cluster: Cluster, worker: httpx.AsyncClient, names: dict[str, str], unique: str, tmp_path: Path
) -> None:
    (tmp_path / "a.txt").write_text("a1\na2\n")
    (tmp_path / "b.txt").write_text("b1\n")
    out = tmp_path / "out.txt"
    configs = {
        "src_a": {
            "connector.class": FILE_SOURCE,
            "tasks.max": "1",
            "file": str(tmp_path / "a.txt"),
            "topic": names["topic_a"],
            "codec.probe": PROBE,
        },
        "src_b": {
            "connector.class": FILE_SOURCE,
            "tasks.max": "1",
            "file": str(tmp_path / "b.txt"),
            "topic": names["topic_b"],
        },
        "sink": {
            "connector.class": FILE_SINK,
            "tasks.max": "1",
            "file": str(out),
            "topics": f"{names['topic_a']},{names['topic_b']}",
        },
        "broken": {
            "connector.class": FILE_SINK,
            "tasks.max": "1",
            "file": str(tmp_path / "missing" / "dir" / "out.txt"),
            "topics": names["topic_a"],
        },
    }
    for role in CONNECTORS:
        created = await worker.post("/connectors", json={"name": names[role], "config": configs[role]})
        assert created.status_code == 201, created.text
    for role in ("src_a", "src_b", "sink"):
        await until_states(worker, names[role], "RUNNING", ["RUNNING"])
    await eventually(lambda: states(worker, names["broken"]), lambda s: s[1] == ["FAILED"], what="broken task FAILED")

    async def sunk() -> set[str]:
        return set(out.read_text().splitlines()) if out.exists() else set()

    await eventually(sunk, lambda lines: lines >= {"a1", "a2", "b1"}, what="the sink wrote both topics")

    source = names["src_a"]
    assert (await worker.put(f"/connectors/{source}/pause")).status_code == 202
    await until_states(worker, source, "PAUSED", ["PAUSED"])
    assert (await worker.put(f"/connectors/{source}/resume")).status_code == 202
    await until_states(worker, source, "RUNNING", ["RUNNING"])
    restarted = await worker.post(f"/connectors/{source}/restart", params={"includeTasks": "true"})
    # KIP-745 (3.0): 202 and a restart request in the config topic; before, the connector only (204)
    assert restarted.status_code == (202 if version_at_least(cluster, 3, 0) else 204), restarted.text
    await until_states(worker, source, "RUNNING", ["RUNNING"])

    if version_at_least(cluster, 3, 5):  # KIP-875: the two-field STOPPED target state
        assert (await worker.put(f"/connectors/{names['src_b']}/stop")).status_code == 204
        await until_states(worker, names["src_b"], "STOPPED", [])
        assert (await worker.put(f"/connectors/{names['src_b']}/resume")).status_code == 202
        await until_states(worker, names["src_b"], "RUNNING", ["RUNNING"])
    if version_at_least(cluster, 3, 7):  # KIP-976: logger-cluster- records
        namespace = f"codec.probe.{unique}"
        logged = await worker.put(f"/admin/loggers/{namespace}", params={"scope": "cluster"}, json={"level": "DEBUG"})
        assert logged.status_code == 204, logged.text


async def delete_all(worker: httpx.AsyncClient, names: list[str]) -> None:
    for name in names:
        await worker.delete(f"/connectors/{name}")
    for name in names:
        get = functools.partial(worker.get, f"/connectors/{name}")
        await eventually(get, lambda r: r.status_code == 404, what=f"{name} gone")


async def test_every_internal_record_decodes_and_re_encodes_byte_for_byte(
    stack: Stack, cluster: Cluster, worker: httpx.AsyncClient, unique: str, tmp_path: Path
) -> None:
    names = names_for(cluster, unique)
    try:
        await run_lifecycle(cluster, worker, names, unique, tmp_path)
    finally:
        await delete_all(worker, [names[role] for role in CONNECTORS])

    config_topic = cluster.worker_property("config.storage.topic")
    status_topic = cluster.worker_property("status.storage.topic")
    offsets_topic = cluster.worker_property("offset.storage.topic")
    config_records = await read_to_end(stack.bootstrap, config_topic)
    status_records = await read_to_end(stack.bootstrap, status_topic)
    offset_records = await read_to_end(stack.bootstrap, offsets_topic)

    tag = f"{cluster.name}-{unique}".encode()

    def of_this_run(key: bytes | None) -> bool:
        return key is not None and (tag in key or key == b"session-key" or key.startswith(b"logger-cluster-"))

    configs, config_problems = check_topic(
        config_topic, config_records, (decode_config, encode_config), exact=of_this_run
    )
    statuses, status_problems = check_topic(
        status_topic, status_records, (decode_status, encode_status), exact=of_this_run
    )
    offsets, offset_problems = check_topic(
        offsets_topic, offset_records, (decode_offset, encode_offset), offset_records.partitions, exact=of_this_run
    )
    assert config_problems + status_problems + offset_problems == []

    # the records of this run are among them, with the names and values as written
    source, sink = names["src_a"], names["sink"]
    kinds = {type(r).__name__ for r in configs}
    assert {"ConnectorConfig", "TaskConfig", "TaskCommit", "TargetState", "SessionKey", "Tombstone"} <= kinds
    assert any(getattr(r, "properties", {}).get("codec.probe") == PROBE for r in configs)
    if version_at_least(cluster, 3, 0):  # KIP-745's restart requests
        assert RestartRecord(source, include_tasks=True, only_failed=False) in configs
    target_states = [r for r in configs if isinstance(r, TargetState) and r.connector in (source, names["src_b"])]
    expected_paused = TargetState(source, "PAUSED", "PAUSED" if version_at_least(cluster, 3, 5) else None)
    assert expected_paused in target_states
    if version_at_least(cluster, 3, 5):
        assert TargetState(names["src_b"], "PAUSED", "STOPPED") in target_states
    if version_at_least(cluster, 3, 7):
        assert LoggerLevelRecord(f"codec.probe.{unique}", "DEBUG") in configs

    tracked = {(r.topic, r.connector) for r in statuses if isinstance(r, TopicStatus)}
    assert {(names["topic_a"], source), (names["topic_a"], sink), (names["topic_b"], sink)} <= tracked
    ours = [r for r in statuses if isinstance(r, (ConnectorStatus, TaskStatus)) and r.connector.startswith("codec:")]
    assert {r.state for r in ours} >= {"RUNNING", "PAUSED", "FAILED", "UNASSIGNED"}
    assert any(isinstance(r, TaskStatus) and r.state == "FAILED" and r.trace and "\n\tat " in r.trace for r in ours)
    assert all(r.version_field == version_at_least(cluster, 4, 1) for r in ours)

    sources = {r.connector for r in offsets if isinstance(r, SourceOffset)}
    assert {source, names["src_b"]} <= sources
