"""The status writer's producer scripted per key (``ScriptedProducer``: acknowledge, raise, or wait at a
``Gate``), an observer that counts the writer's outcomes, and a writer over them with a fast backoff."""

from __future__ import annotations

import asyncio
import random
import time
from collections import Counter, defaultdict, deque
from collections.abc import Callable
from dataclasses import dataclass, field

from control_plane.backoff import ProposalBackoff
from control_plane.storage.kafka_writes import KafkaWrites, RetryPolicy
from control_plane.storage.status_writer import StatusWriter

TOPIC = "connect-status"
SEED = 99


@dataclass
class Gate:
    """A step that waits until ``opened`` is set, then acknowledges or raises ``then``."""

    opened: asyncio.Event = field(default_factory=asyncio.Event)
    then: BaseException | None = None
    entered: asyncio.Event = field(default_factory=asyncio.Event)


Step = BaseException | Gate | None


class ScriptedProducer:
    """The writer's three-method producer. Each ``send`` of a key takes that key's next scripted step
    (None acknowledges, an exception is raised, a ``Gate`` waits); past the script, ``default``."""

    def __init__(self, default: Step = None) -> None:
        self.default = default
        self.scripts: dict[bytes, deque[Step]] = defaultdict(deque)
        self.attempts: list[tuple[bytes, bytes | None, float]] = []  # key, value, monotonic time
        self.written: list[tuple[bytes, bytes | None]] = []
        self.started = self.stopped = False

    def script(self, key: bytes, *steps: Step) -> None:
        self.scripts[key].extend(steps)

    async def start(self) -> None:
        self.started = True

    async def stop(self) -> None:
        self.stopped = True

    async def send(self, topic: str, key: bytes, value: bytes | None) -> None:
        assert topic == TOPIC
        self.attempts.append((key, value, time.monotonic()))
        step = self.scripts[key].popleft() if self.scripts[key] else self.default
        if isinstance(step, Gate):
            step.entered.set()
            await step.opened.wait()
            step = step.then
        if step is not None:
            raise step
        self.written.append((key, value))

    async def enqueue(self, topic: str, key: bytes, value: bytes | None) -> asyncio.Future[None]:
        """As aiokafka's: the record is taken now (its attempt counted), acknowledged later."""
        return asyncio.ensure_future(self.send(topic, key, value))

    def values_sent(self, key: bytes) -> list[bytes | None]:
        return [value for k, value, _ in self.attempts if k == key]


class CountingObserver:
    def __init__(self) -> None:
        self.counts: Counter[tuple[str, str]] = Counter()

    def status_update_success(self, kind: str) -> None:
        self.counts["success", kind] += 1

    def status_update_retry(self, kind: str) -> None:
        self.counts["retry", kind] += 1

    def status_update_failure(self, kind: str) -> None:
        self.counts["failure", kind] += 1


class CountingWritesObserver:
    """The write path's metrics (``kafka_writes.KafkaWriteObserver``), counted per kind of topic."""

    def __init__(self) -> None:
        self.counts: Counter[tuple[str, str]] = Counter()
        self.latencies: list[tuple[str, float]] = []

    def kafka_write_attempt(self, topic_kind: str, retry: bool, seconds: float, acknowledged: bool) -> None:
        self.counts["attempt", topic_kind] += 1
        if retry:
            self.counts["retry", topic_kind] += 1
        if acknowledged:
            self.counts["acknowledged", topic_kind] += 1
        self.latencies.append((topic_kind, seconds))

    def kafka_write_failure(self, topic_kind: str) -> None:
        self.counts["failure", topic_kind] += 1


def make_writes(
    *,
    max_retries: int = 3,
    initial_ms: float = 1,
    max_ms: float = 4,
    multiplier: float = 2.0,
    jitter: float = 0.0,
    observer: object | None = None,
) -> KafkaWrites:
    """The write path with a fast backoff (no jitter unless asked)."""
    backoff = ProposalBackoff(initial_ms, max_ms, multiplier, jitter, random.Random(SEED))
    return KafkaWrites(RetryPolicy(max_retries, backoff), observer)  # type: ignore[arg-type]


def make_writer(
    producer: ScriptedProducer,
    *,
    max_retries: int = 3,
    initial_ms: float = 1,
    max_ms: float = 4,
    multiplier: float = 2.0,
    jitter: float = 0.0,
    attempt_timeout_s: float = 2.0,
    observer: object | None = None,
    writes_observer: object | None = None,
) -> StatusWriter:
    return StatusWriter(
        TOPIC,
        producer,
        make_writes(
            max_retries=max_retries,
            initial_ms=initial_ms,
            max_ms=max_ms,
            multiplier=multiplier,
            jitter=jitter,
            observer=writes_observer,
        ),
        attempt_timeout_s=attempt_timeout_s,
        observer=observer,  # type: ignore[arg-type]
    )


async def until(condition: Callable[[], bool], timeout_s: float = 2.0) -> None:
    async with asyncio.timeout(timeout_s):
        while not condition():  # noqa: ASYNC110 - the writer's internal state has no event to wait on
            await asyncio.sleep(0.001)
