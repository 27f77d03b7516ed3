"""Which topic partitions the driver reads for a sink: its ``topics``, and the topics its ``topics.regex``
matches as Java's Pattern matches them (WorkerSinkTask subscribes with the Pattern)."""

from __future__ import annotations

import asyncio
from typing import Any, cast

from aiokafka import TopicPartition

from control_plane.rules.java_regex import translate
from spark_jobs.kafka_admin import BrokerFacts, BrokerTopic, KafkaAdmin, SinkSpec, _collect_sinks


class FakeAdmin:
    """The admin calls ``_collect_sinks`` makes: groups, their committed offsets, log bounds."""

    def __init__(self, committed: dict[str, dict[TopicPartition, int]], end: int = 10) -> None:
        self._committed, self._end = committed, end

    async def groups(self) -> set[str]:
        return set(self._committed)

    async def committed(self, group: str) -> dict[TopicPartition, int]:
        return self._committed[group]

    async def log_bounds(self, tps: list[TopicPartition], as_of_ms: int | None) -> tuple[Any, Any, Any, list[str]]:
        at = dict.fromkeys(tps, self._end) if as_of_ms is not None else {}
        return dict.fromkeys(tps, 0), dict.fromkeys(tps, self._end), at, []


def topic(name: str, internal: bool = False) -> BrokerTopic:
    return BrokerTopic(name, 1, 1, "delete", True, internal)


def collect(sinks: list[SinkSpec], topics: list[BrokerTopic], committed: dict[str, dict[TopicPartition, int]]) -> Any:
    admin = cast(KafkaAdmin, FakeAdmin(committed))
    return asyncio.run(_collect_sinks(admin, sinks, topics, None, BrokerFacts(topics)))


def test_topics_regex_matches_as_java_does() -> None:
    # Java: [ab&&b] is the intersection, {b}; Python's re reads the class as {a, b, &} (and warns)
    spec = SinkSpec("s", "connect-s", True, (), translate("logs-[ab&&b]"))
    assert (spec.reads("logs-b"), spec.reads("logs-a")) == (True, False)
    got = collect([spec], [topic("logs-a"), topic("logs-b")], {})
    assert [(p.topic, p.subscribed) for p in got] == [("logs-b", True)]


def test_java_only_syntax_matches_too() -> None:
    # \Q...\E quotes (Python's re refuses \Q); a possessive quantifier; the whole name must match
    spec = SinkSpec("s", "connect-s", True, (), translate(r"\Qorders.v1\E-[0-9]++"))
    got = collect([spec], [topic("orders.v1-12"), topic("ordersXv1-12"), topic("orders.v1-12-x")], {})
    assert [p.topic for p in got] == ["orders.v1-12"]


def test_a_pattern_subscription_leaves_out_internal_topics() -> None:
    spec = SinkSpec("s", "connect-s", True, (), translate(".*"))
    got = collect([spec], [topic("__consumer_offsets", internal=True), topic("t")], {})
    assert [p.topic for p in got] == ["t"]


def test_committed_offsets_of_topics_the_sink_does_not_read_are_marked() -> None:
    committed = {"shared": {TopicPartition("mine", 0): 4, TopicPartition("theirs", 0): 7}}
    got = collect([SinkSpec("s", "shared", True, ("mine",))], [topic("mine"), topic("theirs")], committed)
    assert [(p.topic, p.committed, p.subscribed) for p in got] == [("mine", 4, True), ("theirs", 7, False)]
