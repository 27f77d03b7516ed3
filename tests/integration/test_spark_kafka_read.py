"""Spark's Kafka source as the jobs set it up (``Target.spark_kafka_options``, ``read.read_kafka``), on the
real broker: a partition of several polls (``KAFKA_POLL_RECORDS`` records each) is read whole, each
record once, as written, up to the end offset asked for; the other partition too."""

from __future__ import annotations

import uuid

import pytest
from aiokafka import AIOKafkaProducer
from aiokafka.admin import AIOKafkaAdminClient, NewTopic
from pyspark.sql import SparkSession

from spark_jobs.read import read_kafka
from spark_jobs.target import KAFKA_POLL_RECORDS, Target
from tests.spark_fixtures import SPARK_MARKS, spark  # noqa: F401 - the session-scoped fixture

from .stack import Stack

pytestmark = [*SPARK_MARKS, pytest.mark.timeout(180)]

LONG = 2 * KAFKA_POLL_RECORDS + KAFKA_POLL_RECORDS // 2  # partition 0: two polls and a half
SHORT = 10  # partition 1
BEYOND = 7  # records of partition 0 past the end offset the read is given


def record(partition: int, n: int) -> tuple[bytes, bytes]:
    return f'["src",{{"p":{partition},"n":{n}}}]'.encode(), f'{{"position":{n}}}'.encode()


async def test_a_partition_of_several_polls_is_read_whole_up_to_its_end(
    stack: Stack,
    spark: SparkSession,  # noqa: F811 - the session fixture imported above, by name
) -> None:
    topic = f"spark-read-{uuid.uuid4().hex[:8]}"
    admin = AIOKafkaAdminClient(bootstrap_servers=stack.bootstrap)
    await admin.start()
    producer = AIOKafkaProducer(bootstrap_servers=stack.bootstrap, acks="all", linger_ms=20)
    try:
        await admin.create_topics([NewTopic(topic, 2, 1)])
        await producer.start()
        sent = [
            await producer.send(topic, key=k, value=v, partition=p)
            for p, count in ((0, LONG + BEYOND), (1, SHORT))
            for k, v in (record(p, n) for n in range(count))
        ]
        for delivery in sent:
            await delivery
        await producer.stop()
        options = Target(stack.bootstrap, "configs", "status", topic).spark_kafka_options()
        frame = read_kafka(spark, {"offsets": topic}, options, {topic: {0: LONG, 1: SHORT}})
        rows = frame.select("role", "partition", "offset", "key", "value").collect()
    finally:
        await producer.stop()
        await admin.delete_topics([topic])
        await admin.close()
    assert options["kafka.max.poll.records"] == str(KAFKA_POLL_RECORDS)
    assert {r["role"] for r in rows} == {"offsets"}
    for partition, count in ((0, LONG), (1, SHORT)):
        read = sorted((r["offset"], bytes(r["key"]), bytes(r["value"])) for r in rows if r["partition"] == partition)
        assert read == [(n, *record(partition, n)) for n in range(count)], f"partition {partition}"
