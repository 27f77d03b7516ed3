"""The sidecars' topic's writer (storage/sidecar_topic.py): concurrent writes share one producer; a write
that fails for good replaces it for the writes after it, and never stops it under the others. The topic is
created as Connect creates its config topic, with ``min.insync.replicas`` from its replication factor; an
existing one is refused or warned about per setting; a write ends at its bound and says the topic's
trouble."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest
from aiokafka.errors import NotEnoughReplicasError

from control_plane.backoff import ProposalBackoff
from control_plane.storage.errors import AttemptTimeout, TopicMissing, TopicRefused
from control_plane.storage.kafka_writes import KafkaWrites, RetryPolicy
from control_plane.storage.sidecar_topic import TOPIC_CONFIGS, SidecarTopic, check
from control_plane.storage.topic_admin import CreationOutcome, ExistingTopic, NewTopic
from tests.support.scripted_producer import TOPIC, ScriptedProducer


class Producer:
    """Sends ``a`` only to fail it for good (once ``b`` is under way); ``b`` once ``a`` has failed."""

    def __init__(self, a_failed: asyncio.Event, b_sent: asyncio.Event) -> None:
        self.a_failed, self.b_sent = a_failed, b_sent
        self.stopped = False

    async def start(self) -> None: ...

    async def send(self, topic: str, key: bytes, value: bytes | None) -> None:
        if self.stopped:
            raise RuntimeError("the producer is not started")  # AiokafkaRecordProducer's
        if key == b"a":
            await self.b_sent.wait()
            self.a_failed.set()
            raise ValueError("not retriable")
        self.b_sent.set()
        await self.a_failed.wait()
        await asyncio.sleep(0)  # the failed write's own handling runs first
        if self.stopped:
            raise RuntimeError("the producer is not started")

    async def stop(self) -> None:
        self.stopped = True


async def test_a_write_that_fails_for_good_never_stops_the_producer_under_another() -> None:
    a_failed, b_sent = asyncio.Event(), asyncio.Event()
    made: list[Producer] = []

    def factory() -> Any:
        made.append(Producer(a_failed, b_sent))
        return made[-1]

    writes = KafkaWrites(RetryPolicy(0, ProposalBackoff(1, 1, 1.0, 0.0)))
    topic = SidecarTopic("sidecars", None, factory, 1.0, writes, replication_factor=1)  # type: ignore[arg-type]
    topic._ensured = True
    a, b = await asyncio.gather(topic.write(b"a", b"{}"), topic.write(b"b", b"{}"), return_exceptions=True)
    assert isinstance(a, ValueError) and b is None  # b rode on the producer a's failure gave up
    assert len(made) == 1 and made[0].stopped  # stopped once both were done with it
    await topic.write(b"c", b"{}")  # the next write makes a new one
    assert len(made) == 2 and not made[1].stopped


# -- created as Connect creates its config topic, checked when it exists


class Admin:
    """What ``SidecarTopic`` asks the brokers about its topic: the broker's default replication factor
    (``default_rf``), an existing topic (``existing``), and the creations it was sent."""

    def __init__(self, default_rf: int = 3, existing: ExistingTopic | None = None) -> None:
        self.default_rf, self.existing = default_rf, existing
        self.created: list[NewTopic] = []

    def _outcome(self, topic: NewTopic) -> CreationOutcome:
        if self.existing is not None:
            return CreationOutcome(topic.name, "TopicAlreadyExistsError", "exists", None, None, {})
        rf = self.default_rf if topic.replication_factor == -1 else topic.replication_factor
        return CreationOutcome(topic.name, None, None, 1, rf, dict(topic.configs))

    async def try_create(self, topics: list[NewTopic]) -> list[CreationOutcome]:
        return [self._outcome(t) for t in topics]

    async def create(self, topics: list[NewTopic]) -> list[CreationOutcome]:
        self.created += topics
        return [self._outcome(t) for t in topics]

    async def describe(self, names: list[str]) -> dict[str, ExistingTopic | None]:
        return dict.fromkeys(names, self.existing)


def sidecar_topic(admin: Admin, producer: Any = None, **kwargs: Any) -> SidecarTopic:
    writes = KafkaWrites(RetryPolicy(0, ProposalBackoff(1, 1, 1.0, 0.0)))
    name = kwargs.pop("name", "sidecars")
    topic_admin: Any = admin
    return SidecarTopic(
        name, topic_admin, lambda: producer, 1.0, writes, replication_factor=kwargs.pop("rf", -1), **kwargs
    )


@pytest.mark.parametrize(
    ("rf", "default_rf", "min_isr"),
    [
        pytest.param(-1, 3, "2", id="broker-default-3"),
        pytest.param(-1, 1, "1", id="broker-default-1"),
        pytest.param(2, 3, "1", id="two-replicas"),
        pytest.param(5, 1, "2", id="five-replicas"),
    ],
)
async def test_created_compacted_with_one_partition_and_min_insync_replicas_from_its_replicas(
    rf: int, default_rf: int, min_isr: str
) -> None:
    admin = Admin(default_rf)
    topic = sidecar_topic(admin, rf=rf)
    await topic.ensure()
    (created,) = admin.created
    assert (created.partitions, created.replication_factor) == (1, rf)  # -1 sent as is: the broker's default
    assert created.configs == {**TOPIC_CONFIGS, "min.insync.replicas": min_isr}
    assert created.configs["cleanup.policy"] == "compact"
    assert topic.trouble() is None


def existing(partitions: int = 1, replicas: int = 3, configs: dict[str, str] | None = None) -> ExistingTopic:
    return ExistingTopic(
        "sidecars", partitions, replicas, {**TOPIC_CONFIGS, "min.insync.replicas": "2", **(configs or {})}
    )


@pytest.mark.parametrize(
    ("topic", "refusals", "warnings"),
    [
        pytest.param(existing(), [], [], id="as-created"),
        pytest.param(
            existing(configs={"cleanup.policy": "delete"}), ["cleanup.policy is delete, not compact"], [], id="delete"
        ),
        pytest.param(
            existing(configs={"message.timestamp.type": "CreateTime"}),
            ["message.timestamp.type is CreateTime, not LogAppendTime"],
            [],
            id="create-time",
        ),
        pytest.param(existing(partitions=3), ["it has 3 partitions, not 1"], [], id="partitions"),
        pytest.param(existing(configs={"min.compaction.lag.ms": "0"}), [], ["min.compaction.lag.ms is 0"], id="lag"),
        pytest.param(
            existing(configs={"min.insync.replicas": "1"}), [], ["min.insync.replicas is 1 with 3"], id="isr-low"
        ),
        pytest.param(existing(1, 1, configs={"min.insync.replicas": "2"}), [], ["no write can succeed"], id="isr-high"),
    ],
)
def test_an_existing_topic_is_refused_or_warned_per_setting(
    topic: ExistingTopic, refusals: list[str], warnings: list[str]
) -> None:
    got_refusals, got_warnings = check(topic)
    assert got_refusals == refusals
    assert len(got_warnings) == len(warnings) and all(w in g for w, g in zip(warnings, got_warnings, strict=True))


async def test_a_refused_topic_is_never_written_and_says_why() -> None:
    producer = ScriptedProducer()
    topic = sidecar_topic(Admin(existing=existing(configs={"cleanup.policy": "delete"})), producer)
    await topic.ensure()
    with pytest.raises(TopicRefused, match=r"the sidecars' topic sidecars cannot be used: cleanup\.policy is delete"):
        await topic.write(b"k", b"v")
    assert producer.attempts == []
    assert topic.trouble() == "the sidecars' topic sidecars cannot be used: cleanup.policy is delete, not compact"


async def test_a_write_that_fails_marks_the_topic_unwritable_until_one_succeeds() -> None:
    producer = ScriptedProducer()
    producer.script(b"k", NotEnoughReplicasError())
    topic = sidecar_topic(Admin(), producer, write_timeout_s=0.5, name=TOPIC)
    await topic.ensure()
    with pytest.raises(NotEnoughReplicasError):
        await topic.write(b"k", b"v")
    assert (topic.trouble() or "").startswith("NotEnoughReplicasError")
    await topic.write(b"k", b"v")
    assert topic.trouble() is None


async def test_a_write_while_the_brokers_do_not_answer_ends_at_its_bound() -> None:
    """The topic not created yet and the admin call hanging (a stalled broker): the write still ends at its
    bound, not the admin client's."""

    class Hanging(Admin):
        async def try_create(self, topics: list[NewTopic]) -> list[CreationOutcome]:
            await asyncio.Event().wait()
            raise AssertionError

    topic = sidecar_topic(Hanging(), ScriptedProducer(), write_timeout_s=0.2)
    started = time.monotonic()
    with pytest.raises(AttemptTimeout):
        await topic.write(b"k", b"v")
    assert time.monotonic() - started < 0.5
    assert topic.trouble() is not None


async def test_a_topic_the_sidecar_is_not_to_create_must_exist_and_is_written_once_it_does() -> None:
    """``sidecars_topic_create`` false (the worker's ``internal.topics.automatic.creation.enable=false``,
    KIP-1209): a missing topic is not created, the trouble says how to create it, and a write is refused
    until ``create-sidecars-topic`` (``create``) made it."""
    producer, admin = ScriptedProducer(), Admin()
    topic = sidecar_topic(admin, producer, name=TOPIC, create=False)
    await topic.ensure()
    assert admin.created == []
    assert "does not exist" in (topic.trouble() or "") and "create-sidecars-topic" in (topic.trouble() or "")
    with pytest.raises(TopicMissing):
        await topic.write(b"k", b"v")
    assert producer.attempts == [] and admin.created == []
    assert await sidecar_topic(admin, name=TOPIC, create=False).create() == (True, None)  # the command's way
    (created,) = admin.created
    admin.existing = ExistingTopic(TOPIC, 1, 3, dict(created.configs))
    await topic.write(b"k", b"v")  # it exists now: checked, then written
    assert topic.trouble() is None and len(admin.created) == 1
