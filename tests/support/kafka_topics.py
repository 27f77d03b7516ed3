"""A topic of the real broker as the tests read and write it: every record read to the end offsets it has
now, a topic's configs and a group's members as the broker describes them, JSON values produced."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, NamedTuple

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
from aiokafka.admin import AIOKafkaAdminClient
from aiokafka.admin.config_resource import ConfigResource, ConfigResourceType

from .waiting import eventually


class TopicRecord(NamedTuple):
    partition: int
    offset: int
    key: bytes | None
    value: bytes | None
    timestamp: int = -1  # the record's timestamp (epoch ms)


@dataclass(frozen=True)
class TopicLog:
    """What a topic held when it was read: its partition count and its records, partition by partition."""

    partitions: int
    records: list[TopicRecord]

    def with_key(self, key: bytes) -> list[tuple[int, bytes | None]]:
        """(partition, value) of every record with ``key``, in log order."""
        return [(r.partition, r.value) for r in self.records if r.key == key]

    def json_values(self) -> list[Any]:
        return [json.loads(r.value) for r in self.records if r.value is not None]


async def read_to_end(bootstrap: str, topic: str) -> TopicLog:
    """Every record of ``topic`` from the beginning to the end offsets it has now (a topic that does not
    exist reads as no partitions and no records)."""
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        # aiokafka's describe_topics asks with allow_auto_topic_creation, and the stack's broker auto-creates:
        # a topic not there yet would be created with the broker's defaults, racing the connector that
        # creates it with its own settings (KIP-158). Only a listed topic is described.
        exists = topic in await admin.list_topics()
        (description,) = await admin.describe_topics([topic]) if exists else ({"partitions": []},)
    finally:
        await admin.close()
    partitions = [TopicPartition(topic, p["partition"]) for p in description["partitions"]]
    records: list[TopicRecord] = []
    if not partitions:
        return TopicLog(0, records)
    consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap, group_id=None, enable_auto_commit=False)
    try:
        await consumer.start()  # stopped below also when this fails: its connections are open all the same
        consumer.assign(partitions)
        await consumer.seek_to_beginning(*partitions)
        end = await consumer.end_offsets(partitions)
        pending = {tp for tp in partitions if end[tp] > 0}
        while pending:
            batch = await consumer.getmany(*pending, timeout_ms=5_000)
            for tp, batch_records in batch.items():
                records += [TopicRecord(tp.partition, r.offset, r.key, r.value, r.timestamp) for r in batch_records]
            for tp in list(pending):
                if await consumer.position(tp) >= end[tp]:
                    pending.discard(tp)
    finally:
        await consumer.stop()
    records.sort(key=lambda r: (r.partition, r.offset))
    return TopicLog(len(partitions), records)


async def topic_configs(admin: AIOKafkaAdminClient, topic: str) -> dict[str, str]:
    """``topic``'s configs as the broker describes them now (name to value)."""
    (response,) = await admin.describe_configs([ConfigResource(ConfigResourceType.TOPIC, topic)])
    (resource,) = response.to_object()["resources"]
    return {e["config_names"]: e["config_value"] for e in resource["config_entries"]}


async def group_members(bootstrap: str, group: str) -> tuple[str, int]:
    """(state, member count) of the consumer group ``group`` as its coordinator describes it now."""
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        (response,) = await admin.describe_consumer_groups([group])
    finally:
        await admin.close()
    (described,) = response.to_object()["groups"]
    return described["state"], len(described["members"])


async def produce(bootstrap: str, topic: str, values: list[str]) -> None:
    """``values`` as JSON records to partition 0 of ``topic``, in order."""
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap)
    await producer.start()
    try:
        for value in values:
            await producer.send_and_wait(topic, json.dumps(value).encode(), partition=0)
    finally:
        await producer.stop()


async def read_values(bootstrap: str, topic: str, count: int, *, timeout_s: float = 60) -> list[Any]:
    """The JSON values of ``topic`` once it holds at least ``count`` of them (a connector writing it)."""
    log = await eventually(
        lambda: read_to_end(bootstrap, topic),
        lambda t: len(t.json_values()) >= count,
        timeout_s=timeout_s,
        what=f"{count} values in {topic}",
    )
    return log.json_values()


async def produce_record(bootstrap: str, topic: str, key: bytes, value: bytes | None) -> None:
    """One record as given, to partition 0 of ``topic``."""
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap)
    await producer.start()
    try:
        await producer.send_and_wait(topic, value, key=key, partition=0)
    finally:
        await producer.stop()
