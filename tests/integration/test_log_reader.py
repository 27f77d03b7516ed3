"""The tail hands on every record of a topic once, in order per partition, with the fields the broker
holds, whether as the consumer's own record or as the lean tuple it makes of a buffered fetch
(log_reader._lean_records), and with each fetch's records at once (``on_records``)."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from aiokafka import AIOKafkaProducer
from aiokafka.admin import AIOKafkaAdminClient, NewTopic

from control_plane.storage.log_reader import FetchedRecord, Record, TopicTail
from tests.support.stack import Stack

Fields = tuple[str, int, int, int, bytes | None, bytes | None]


def fields(record: Record) -> Fields:
    return (record.topic, record.partition, record.offset, record.timestamp, record.key, record.value)


async def test_every_record_once_in_order_with_its_fields(stack: Stack, unique: str) -> None:
    topic = f"tail-{unique}"
    admin = AIOKafkaAdminClient(bootstrap_servers=stack.bootstrap)
    await admin.start()
    try:
        await admin.create_topics([NewTopic(topic, 3, 1)])
    finally:
        await admin.close()
    written: list[Fields] = []
    producer = AIOKafkaProducer(bootstrap_servers=stack.bootstrap, linger_ms=10, max_batch_size=1 << 18)
    await producer.start()
    try:
        sent = []
        for i in range(30_000):
            key = None if i % 97 == 0 else f"key-é-{i % 500}".encode()
            value = None if i % 13 == 0 and i % 97 else (b"v" * (i % 300)) + str(i).encode()
            timestamp = 1_700_000_000_000 + i
            future = await producer.send(topic, value, key=key, partition=i % 3, timestamp_ms=timestamp)
            sent.append((future, timestamp, key, value))
        for future, timestamp, key, value in sent:
            metadata = await future
            written.append((topic, metadata.partition, metadata.offset, timestamp, key, value))
    finally:
        await producer.stop()

    one_by_one: list[Record] = []
    batches: list[Record] = []

    def on_records(records: Sequence[Record]) -> int:
        batches.extend(records)
        return 0

    tails = [
        TopicTail(topic, {"bootstrap_servers": stack.bootstrap}, one_by_one.append, max_records=700),
        TopicTail(topic, {"bootstrap_servers": stack.bootstrap}, lambda r: None, on_records=on_records),
    ]
    for tail in tails:
        await tail.start()
    try:
        async with asyncio.timeout(60):
            for tail in tails:
                await tail.caught_up.wait()
    finally:
        for tail in tails:
            await tail.stop()
    for got in (one_by_one, batches):
        assert sorted(map(fields, got), key=lambda f: (f[1], f[2])) == sorted(written, key=lambda f: (f[1], f[2]))
        for partition in range(3):  # in offset order per partition
            offsets = [r.offset for r in got if r.partition == partition]
            assert offsets == sorted(offsets)
    # buffered fetches were handed on as the lean tuple (the first fetch of each read, at least, was not)
    assert any(isinstance(r, FetchedRecord) for r in one_by_one + batches)
    assert tails[0].records_read == tails[1].records_read == len(written)
