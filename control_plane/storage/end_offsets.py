"""The end and start offsets of many partitions at once (ListOffsets, latest and earliest), and the topics of
the cluster with their partitions (Metadata), for the sinks' lag: one consumer of no group, started on first
use and kept, whose client batches the request per partition leader."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from typing import Any

from aiokafka import AIOKafkaConsumer, TopicPartition

from .consumer_stop import stop_consumer
from .errors import GroupOperationError

READING = "end offsets"  # what the log names this consumer


class EndOffsets:
    def __init__(self, client_kwargs: dict[str, Any], request_timeout_ms: int) -> None:
        self._kwargs = client_kwargs
        self._timeout_ms = request_timeout_ms
        self._consumer: AIOKafkaConsumer | None = None
        self._starting = asyncio.Lock()  # callers side by side (the sinks' ends and starts) share one consumer

    async def ends(self, partitions: Iterable[tuple[str, int]]) -> tuple[dict[tuple[str, int], int], int]:
        """Each partition's end offset, and how many ListOffsets requests that took (one per leader)."""
        wanted = [TopicPartition(t, p) for t, p in partitions]
        if not wanted:
            return {}, 0
        consumer = await self._started()
        try:
            found = await consumer.end_offsets(wanted)
        except Exception as err:  # a broker error of any kind fails the refresh, not the sidecar
            raise GroupOperationError("ListOffsets", str(err) or type(err).__name__) from err
        cluster = consumer._client.cluster  # the metadata the request was split by
        leaders = {cluster.leader_for_partition(tp) for tp in wanted}
        return {(tp.topic, tp.partition): end for tp, end in found.items()}, len(leaders)

    async def starts(self, partitions: Iterable[tuple[str, int]]) -> dict[tuple[str, int], int]:
        """Each partition's log start offset (ListOffsets, earliest)."""
        wanted = [TopicPartition(t, p) for t, p in partitions]
        if not wanted:
            return {}
        consumer = await self._started()
        try:
            found = await consumer.beginning_offsets(wanted)
        except Exception as err:  # a broker error of any kind fails the refresh, not the sidecar
            raise GroupOperationError("ListOffsets", str(err) or type(err).__name__) from err
        return {(tp.topic, tp.partition): start for tp, start in found.items()}

    async def topics(self) -> dict[str, int]:
        """Every topic of the cluster but the internal ones (as a consumer's pattern subscription sees them,
        exclude.internal.topics), with its number of partitions."""
        consumer = await self._started()
        try:
            cluster = await consumer._client.fetch_all_metadata()
        except Exception as err:  # a broker error of any kind fails the refresh, not the sidecar
            raise GroupOperationError("Metadata", str(err) or type(err).__name__) from err
        return {t: len(cluster.partitions_for_topic(t) or ()) for t in cluster.topics(exclude_internal_topics=True)}

    async def _started(self) -> AIOKafkaConsumer:
        async with self._starting:  # else each would make one, and all but the one kept would never stop
            if self._consumer is None:
                consumer = AIOKafkaConsumer(
                    **self._kwargs, group_id=None, enable_auto_commit=False, request_timeout_ms=self._timeout_ms
                )
                try:
                    await consumer.start()
                except BaseException:  # a broker down, a cancel: its connections closed now, made again next call
                    await stop_consumer(consumer, READING)
                    raise
                self._consumer = consumer
            return self._consumer

    async def stop(self) -> None:
        if self._consumer is not None:
            consumer, self._consumer = self._consumer, None
            await stop_consumer(consumer, READING)


__all__ = ["EndOffsets"]
