"""One aiokafka client per admin call, closed after it (as Connect's Worker makes one ``Admin`` per
request): nothing goes stale while a broker restarts. A call is bounded by twice the request timeout;
a timeout or a Kafka error leaves as the caller's error class, naming the operation and the cause."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from typing import Any

from aiokafka.client import AIOKafkaClient
from aiokafka.errors import KafkaError

from .errors import StorageError, describe_error


class AdminClients:
    def __init__(
        self,
        client_kwargs: dict[str, Any],
        request_timeout_ms: int,
        *,
        client_id: str,
        error: Callable[[str, str], StorageError],
        plain: tuple[type[Exception], ...] = (),
    ) -> None:
        """``error(operation, cause)`` builds what a failed call raises; ``plain``: the caller's own
        exceptions, raised as ``error`` with their message as the cause."""
        self._kwargs = {**client_kwargs, "request_timeout_ms": request_timeout_ms, "client_id": client_id}
        self._error = error
        self._plain = plain
        self.bound_s = 2 * request_timeout_ms / 1000

    @contextlib.asynccontextmanager
    async def client(self, operation: str) -> AsyncIterator[AIOKafkaClient]:
        client = AIOKafkaClient(**self._kwargs)
        try:
            async with asyncio.timeout(self.bound_s):
                await client.bootstrap()
                yield client
        except TimeoutError:
            raise self._error(operation, f"no answer from Kafka within {self.bound_s:g} s") from None
        except self._plain as err:
            raise self._error(operation, str(err)) from None
        except KafkaError as err:
            raise self._error(operation, describe_error(err)) from err
        finally:
            # a close cut short by a cancellation would leave its connections open: it finishes regardless
            await asyncio.shield(client.close())


__all__ = ["AdminClients"]
