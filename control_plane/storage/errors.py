"""The errors of Kafka-backed storage, one tree; ``retriable`` is on the class and the retry loops
read it (as aiokafka's ``errors.py`` does), never the text of a message. Foreign errors (aiokafka's)
are translated where they enter: ``is_retriable`` reads aiokafka's own ``retriable`` attribute::

    StorageError                     retriable
     ├── ReadTimeout                 yes  a read to the end of a topic did not finish in time
     ├── AttemptTimeout              yes  one produce attempt was not acknowledged in time
     ├── WriteFailed                 no   records to a topic were not (all) written; says which were
     │    ├── ConfigWriteFailed           to the config topic (in order: the ones before it were)
     │    └── OffsetsWriteFailed          to an offsets topic
     ├── StatusWriteError            no   a status-topic write cannot be, or was not, made
     │    ├── StatusStoreNotConfigured    no status.storage.topic: the writer never starts
     │    ├── StatusWriterClosed          submit() before start() or after stop(); abandoned at stop()
     │    └── StatusWriteFailed           final: retries exhausted, or an error that is not retriable
     ├── GroupOperationError         no   an admin call on a consumer group failed; ``cause`` says how
     │    └── GroupNotEmpty               the group has active members (its sink tasks have not stopped)
     ├── TopicAdminError             no   an admin call about topics or brokers failed; ``cause`` says how
     └── TopicRefused                no   a topic the sidecar keeps exists with settings it cannot work with

The domain turns these into its own errors with Connect's messages; the HTTP layer never sees them.
"""

from __future__ import annotations

from typing import ClassVar

from aiokafka.errors import KafkaError, KafkaTimeoutError


def describe_error(exc: BaseException) -> str:
    """An error as the storage's messages and logs name it: its class and its text, once (aiokafka's errors
    name themselves in their text)."""
    name, text = type(exc).__name__, str(exc)
    if not text or text == name:
        return name
    return text if text.startswith(name) else f"{name}: {text}"


class StorageError(Exception):
    retriable: ClassVar[bool] = False


class ReadTimeout(StorageError):
    """``read_to_end`` did not reach the end offsets in time."""

    retriable = True


class AttemptTimeout(StorageError):
    """One produce attempt did not finish within its time bound (a broker that is gone, or slow)."""

    retriable = True

    def __init__(self, timeout_s: float) -> None:
        super().__init__(f"no acknowledgement within {timeout_s:g} s")
        self.timeout_s = timeout_s


class WriteFailed(StorageError):
    """Records to a topic were not all written; the subclass says which were."""


class GroupOperationError(StorageError):
    def __init__(self, operation: str, cause: str) -> None:
        super().__init__(f"{operation}: {cause}")
        self.operation = operation
        self.cause = cause


class GroupNotEmpty(GroupOperationError):
    pass


class TopicAdminError(StorageError):
    def __init__(self, operation: str, cause: str) -> None:
        super().__init__(f"{operation}: {cause}")
        self.operation = operation
        self.cause = cause


class TopicMissing(StorageError):
    """The sidecars' topic does not exist and the sidecar is not to create it (``sidecars_topic_create``
    false, as a worker with ``internal.topics.automatic.creation.enable=false`` refuses to start without its
    internal topics, KIP-1209): nothing is written until it is created; the message says how."""


class TopicRefused(StorageError):
    """The sidecars' topic exists with a setting its records cannot live with (not compacted, the
    producers' clocks as timestamps, several partitions): nothing is written to it; the message says why."""


def is_retriable(exc: BaseException) -> bool:
    """The storage tree's ``retriable``; aiokafka's own attribute for its errors, and its
    ``KafkaTimeoutError``, which aiokafka leaves unmarked although Kafka's Java ``TimeoutException`` is a
    ``RetriableException`` (a broker that does not answer in time may answer the next time)."""
    if isinstance(exc, StorageError):
        return exc.retriable
    if isinstance(exc, KafkaTimeoutError):
        return True
    return isinstance(exc, KafkaError) and bool(type(exc).retriable)


__all__ = [
    "AttemptTimeout",
    "GroupNotEmpty",
    "GroupOperationError",
    "ReadTimeout",
    "StorageError",
    "TopicAdminError",
    "TopicRefused",
    "WriteFailed",
    "describe_error",
    "is_retriable",
]
