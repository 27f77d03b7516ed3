"""Stopping an aiokafka consumer whatever state it is in: the one way the sidecar's consumers end."""

from __future__ import annotations

import asyncio

import structlog
from aiokafka import AIOKafkaConsumer
from aiokafka.errors import KafkaError

log = structlog.get_logger(__name__)


async def stop_consumer(consumer: AIOKafkaConsumer | None, reading: str) -> None:
    """A consumer (of ``reading``, for the log) stopped, also one whose start failed (a broker down: it holds
    connections all the same). A Kafka error on the way (a fetch under way that times out) is logged, not
    raised: the consumer is over either way (as ``KafkaBasedLog.stop`` logs a consumer that fails to close).
    aiokafka's close can also let the cancellation of its own fetch task escape: that is its error too,
    unless this stop itself is being cancelled. Either way its close stopped before closing its client
    (``AIOKafkaConsumer.stop`` closes the client last): the client's connections are closed here, or they
    would stay open until the garbage collector finds them."""
    if consumer is None:
        return
    try:
        await consumer.stop()
        return
    except KafkaError as err:
        log.warning("a consumer did not stop cleanly", reading=reading, error=repr(err))
    except asyncio.CancelledError:
        task = asyncio.current_task()
        if task is not None and task.cancelling():
            raise
        log.warning("a consumer did not stop cleanly", reading=reading, error="its fetch was cancelled")
    client = getattr(consumer, "_client", None)  # aiokafka's own
    if client is not None:
        try:
            await client.close()
        except (KafkaError, OSError) as err:
            log.warning("a consumer's connections did not close cleanly", reading=reading, error=repr(err))


__all__ = ["stop_consumer"]
