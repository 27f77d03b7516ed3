"""Spark's Kafka source as the jobs set it up, on the real broker:

- ``Target.spark_kafka_options`` and ``read.read_kafka``: a partition of several polls
  (``KAFKA_POLL_RECORDS`` records each) is read whole, each record once, as written, up to the end offset
  asked for; the other partition too.
- ``session.build_session``: a job's first start has Ivy resolve the source and lists its jars; the next
  start, in a new process, takes them as listed (Ivy resolves nothing) and reads the same records."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from aiokafka import AIOKafkaProducer
from aiokafka.admin import AIOKafkaAdminClient, NewTopic
from pyspark.sql import SparkSession

from spark_jobs.class_archive import CACHE_ENV
from spark_jobs.read import read_kafka
from spark_jobs.target import KAFKA_POLL_RECORDS, Target
from tests.support.paths import ROOT
from tests.support.spark_fixtures import SPARK_MARKS, spark  # noqa: F401 - the session-scoped fixture
from tests.support.stack import Stack

pytestmark = [*SPARK_MARKS, pytest.mark.timeout(180)]

LONG = 2 * KAFKA_POLL_RECORDS + KAFKA_POLL_RECORDS // 2  # partition 0: two polls and a half
SHORT = 10  # partition 1
BEYOND = 7  # records of partition 0 past the end offset the read is given
# a job's start in a process of its own: the session (with the Kafka source), then the topic's records
READER = """
import sys
from pathlib import Path
from spark_jobs.session import SessionOptions, build_session
spark = build_session(SessionOptions(app_name="reader", kafka=True, log_file=Path(sys.argv[3])))
frame = spark.read.format("kafka").option("kafka.bootstrap.servers", sys.argv[1]).option("subscribe", sys.argv[2])
print(frame.option("startingOffsets", "earliest").load().count())
spark.stop()
"""


def record(partition: int, n: int) -> tuple[bytes, bytes]:
    return f'["src",{{"p":{partition},"n":{n}}}]'.encode(), f'{{"position":{n}}}'.encode()


@pytest.fixture(scope="module")
async def topic(stack: Stack) -> AsyncIterator[str]:
    """A topic of two partitions: LONG + BEYOND records in 0, SHORT in 1."""
    name = f"spark-read-{uuid.uuid4().hex[:8]}"
    admin = AIOKafkaAdminClient(bootstrap_servers=stack.bootstrap)
    await admin.start()
    producer = AIOKafkaProducer(bootstrap_servers=stack.bootstrap, acks="all", linger_ms=20)
    try:
        await admin.create_topics([NewTopic(name, 2, 1)])
        await producer.start()
        sent = [
            await producer.send(name, key=k, value=v, partition=p)
            for p, count in ((0, LONG + BEYOND), (1, SHORT))
            for k, v in (record(p, n) for n in range(count))
        ]
        for delivery in sent:
            await delivery
        await producer.stop()
        yield name
    finally:
        await producer.stop()
        await admin.delete_topics([name])
        await admin.close()


def test_a_partition_of_several_polls_is_read_whole_up_to_its_end(
    stack: Stack,
    topic: str,
    spark: SparkSession,  # noqa: F811 - the session fixture imported above, by name
) -> None:
    options = Target(stack.bootstrap, "configs", "status", topic).spark_kafka_options()
    assert options["kafka.max.poll.records"] == str(KAFKA_POLL_RECORDS)
    frame = read_kafka(spark, {"offsets": topic}, options, {topic: {0: LONG, 1: SHORT}})
    rows = frame.select("role", "partition", "offset", "key", "value").collect()
    assert {r["role"] for r in rows} == {"offsets"}
    for partition, count in ((0, LONG), (1, SHORT)):
        read = sorted((r["offset"], bytes(r["key"]), bytes(r["value"])) for r in rows if r["partition"] == partition)
        assert read == [(n, *record(partition, n)) for n in range(count)], f"partition {partition}"


def test_the_next_start_takes_the_jars_the_first_resolved(stack: Stack, topic: str, tmp_path: Path) -> None:
    env = {**os.environ, CACHE_ENV: str(tmp_path / "cache")}

    def start(log: Path) -> int:
        command = [sys.executable, "-c", READER, stack.bootstrap, topic, str(log)]
        done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120, check=False)
        assert done.returncode == 0, done.stderr[-2000:]
        return int(done.stdout.split()[-1])

    assert start(tmp_path / "first.log") == LONG + BEYOND + SHORT
    assert "resolving dependencies" in (tmp_path / "first.log").read_text()  # Ivy's report
    listed = list((tmp_path / "cache").glob("kafka-jars-*.txt"))
    assert len(listed) == 1 and "spark-sql-kafka" in listed[0].read_text()
    assert start(tmp_path / "second.log") == LONG + BEYOND + SHORT
    assert "resolving dependencies" not in (tmp_path / "second.log").read_text()
