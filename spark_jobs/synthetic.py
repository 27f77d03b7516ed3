"""Synthetic history of Connect's three internal topics, as a worker writes it, into a snapshot file (the
format ``control-plane export`` writes): per connector a config, a target state, task configs and status
records, KIP-558 topic records; offset commits spread over connectors x partitions source partitions
(keys placed by murmur2 like the producer), with a reset now and then, a few offsets that go backwards, a
tenth of the connectors deleted; and each sink's config history (an earlier config, then its own) in the
sidecars' topic. The Spark benchmark (``bench/spark_jobs.py``) runs the jobs on it, and
:mod:`.build_class_archive` trains the class archive's JVM on a small one.
"""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from control_plane.codecs import (
    ConnectorConfig,
    ConnectorStatus,
    OffsetKey,
    SourceOffset,
    TargetState,
    TaskConfig,
    TaskStatus,
    Tombstone,
    TopicStatus,
    encode_config,
    encode_offset,
    encode_status,
    partition_for_key,
)
from control_plane.codecs.config import ConfigKey, ConfigKind
from control_plane.codecs.config_history import HistoryEntry, encode_entry
from control_plane.codecs.status import StatusKey, StatusKind
from control_plane.export import parquet_schema

TOPICS = {"config": "bench-configs", "status": "bench-status", "offsets": "bench-offsets"}
HISTORY_TOPIC = "connect-cluster.control-plane"  # the sidecars' topic of the default group.id: the config history
PARTITIONS = {"bench-configs": 1, "bench-status": 5, "bench-offsets": 25}
SCHEMA = parquet_schema()  # the snapshot format control-plane export writes
CHUNK = 500_000


class Writer:
    def __init__(self, path: Path) -> None:
        self.out = pq.ParquetWriter(path, SCHEMA)
        self.cols: dict[str, list[object]] = {name: [] for name in SCHEMA.names}
        self.next_offset: dict[tuple[str, int], int] = {}
        self.count = 0

    def add(self, topic: str, key: bytes, value: bytes | None, ts: int, partition: int | None = None) -> None:
        if partition is None:
            partition = partition_for_key(key, PARTITIONS[topic])
        offset = self.next_offset.get((topic, partition), 0)
        self.next_offset[(topic, partition)] = offset + 1
        for name, item in zip(SCHEMA.names, (topic, partition, offset, ts, key, value), strict=True):
            self.cols[name].append(item)
        self.count += 1
        if len(self.cols["topic"]) >= CHUNK:
            self.flush()

    def flush(self) -> None:
        if self.cols["topic"]:
            self.out.write_table(pa.table(self.cols, schema=SCHEMA))
            self.cols = {name: [] for name in SCHEMA.names}

    def close(self) -> None:
        self.flush()
        self.out.close()


STATES = ("RUNNING", "PAUSED", "RUNNING", "FAILED", "RESTARTING", "RUNNING", "STOPPED", "RUNNING")


def generate(path: Path, records: int, connectors: int, partitions: int, status_records: int) -> dict[str, int]:
    w = Writer(path)
    ts = 1_700_000_000_000
    names = [f"bench-{i:05d}" for i in range(connectors)]
    for i, name in enumerate(names):
        topic = f"bench-topic-{i % 200:03d}"
        props = {"connector.class": "org.example.BenchSource", "tasks.max": "1", "topic": topic}
        if i % 10 == 9:  # a sink; its earlier config, in the config history, named another topic
            props = {"connector.class": "org.example.BenchSink", "tasks.max": "1", "topics": topic}
            earlier = {**props, "topics": f"bench-earlier-{i % 200:03d}"}
            for version, (change, config) in enumerate((("created", earlier), ("updated", props))):
                entry = HistoryEntry(2 * i + version, name, ts, change, {**config, "name": name}, "STARTED", "s1")
                w.add(HISTORY_TOPIC, *encode_entry(entry), ts, partition=0)
        w.add(TOPICS["config"], *encode_config(ConnectorConfig(name, props)), ts)
        w.add(TOPICS["config"], *encode_config(TaskConfig(name, 0, props)), ts)
        w.add(TOPICS["config"], *encode_config(TargetState.of(name, "STARTED")), ts)
        for state in ("UNASSIGNED", "RUNNING"):
            w.add(TOPICS["status"], *encode_status(ConnectorStatus(name, state, None, "w1:8083", 1)), ts)
            w.add(TOPICS["status"], *encode_status(TaskStatus(name, 0, state, None, "w1:8083", 1)), ts)
        w.add(TOPICS["status"], *encode_status(TopicStatus(topic, name, 0, ts)), ts)
    keys = [
        encode_offset(Tombstone(OffsetKey(name, {"file": f"/data/{name}/{p}.log", "shard": p})))[0]
        for name in names
        for p in range(partitions)
    ]
    kafka_partitions = [partition_for_key(k, PARTITIONS[TOPICS["offsets"]]) for k in keys]
    positions = [0] * len(keys)
    for n in range(records):
        k = n % len(keys)
        ts += 1
        if n % 100_003 == 50_000:  # a reset
            w.add(TOPICS["offsets"], keys[k], None, ts, kafka_partitions[k])
            positions[k] = 0
            continue
        step = -500 if n % 1_000_003 == 7 else 100  # now and then an alter backwards
        positions[k] = max(0, positions[k] + step)
        value = encode_offset(SourceOffset("x", None, {"position": positions[k], "generation": 1}))[1]
        w.add(TOPICS["offsets"], keys[k], value, ts, kafka_partitions[k])
    for n in range(status_records):  # state changes, and topics used, reset and used again
        ts += 1
        name, kind = names[n % connectors], n % 4
        if kind == 3:
            topic = f"bench-topic-{(n // connectors) % 400:03d}"
            if (n // connectors) % 3 == 2:
                w.add(TOPICS["status"], *encode_status(Tombstone(StatusKey(StatusKind.TOPIC, name, topic=topic))), ts)
            else:
                w.add(TOPICS["status"], *encode_status(TopicStatus(topic, name, 0, ts)), ts)
        else:
            state = STATES[(n // connectors) % len(STATES)]
            trace = "org.example.Boom: no\n\tat org.example.Task.poll(Task.java:1)" if state == "FAILED" else None
            record = (
                ConnectorStatus(name, state, None, "w1:8083", n)
                if kind == 0
                else TaskStatus(name, 0, state, trace, "w1:8083", n)
            )
            w.add(TOPICS["status"], *encode_status(record), ts)
    for i, name in enumerate(names):
        if i % 10 == 5:  # a tenth deleted; their offsets stay
            w.add(TOPICS["config"], *encode_config(Tombstone(ConfigKey(ConfigKind.CONNECTOR, name))), ts + 1)
    w.close()
    return {"total": w.count, "offsets": records, "status": status_records}


def worker_properties(path: Path, bootstrap: str, names: dict[str, str]) -> Path:
    """A worker properties file naming the bootstrap servers and the three topics (role -> name)."""
    keys = (("config", "config"), ("status", "status"), ("offset", "offsets"))
    path.write_text(f"bootstrap.servers={bootstrap}\n" + "".join(f"{k}.storage.topic={names[r]}\n" for k, r in keys))
    return path
