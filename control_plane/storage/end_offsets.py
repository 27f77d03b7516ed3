"""The end offsets of many partitions at once (ListOffsets, latest), for the sinks' lag: one consumer of no
group, started on first use and kept, whose client batches the request per partition leader."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from aiokafka import AIOKafkaConsumer, TopicPartition

from .errors import GroupOperationError


class EndOffsets:
    def __init__(self, client_kwargs: dict[str, Any], request_timeout_ms: int) -> None:
        self._kwargs = client_kwargs
        self._timeout_ms = request_timeout_ms
        self._consumer: AIOKafkaConsumer | None = None

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

    async def _started(self) -> AIOKafkaConsumer:
        if self._consumer is None:
            consumer = AIOKafkaConsumer(
                **self._kwargs, group_id=None, enable_auto_commit=False, request_timeout_ms=self._timeout_ms
            )
            await consumer.start()
            self._consumer = consumer
        return self._consumer

    async def stop(self) -> None:
        if self._consumer is not None:
            consumer, self._consumer = self._consumer, None
            await consumer.stop()


__all__ = ["EndOffsets"]
