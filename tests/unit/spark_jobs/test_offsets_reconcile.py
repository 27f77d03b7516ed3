"""The sinks offsets-reconcile reads and plans: one whose consumer reads another Kafka cluster (the
connector's ``consumer.override.bootstrap.servers``, else the worker's ``consumer.bootstrap.servers``) or
whose ``topics.regex`` the sidecar does not translate exactly is not planned, and says why."""

from __future__ import annotations

from typing import Any

import pytest
from pyspark.sql import Row

from spark_jobs.offsets_reconcile import _sink_specs
from spark_jobs.target import Target

BOOTSTRAP = "broker-1:9092,broker-2:9092"


def target(consumer_bootstrap: str | None = None) -> Target:
    return Target(BOOTSTRAP, "configs", "status", "offsets", consumer_bootstrap=consumer_bootstrap)


def sink(name: str, props: dict[str, str], exists: bool = True) -> Row:
    return Row(connector=name, type="sink", exists=exists, properties={"topics": "t", **props})


@pytest.mark.parametrize(
    ("props", "consumer_bootstrap", "skipped"),
    [
        pytest.param({}, None, False, id="the-workers-cluster"),
        pytest.param({}, "BROKER-2:9092, broker-1:9092", False, id="worker-prefix-the-same-brokers"),
        pytest.param({}, "other:9092", True, id="worker-consumer-prefix"),
        pytest.param({"consumer.override.bootstrap.servers": "other:9092"}, None, True, id="connector-override"),
        pytest.param({"consumer.override.bootstrap.servers": BOOTSTRAP}, "other:9092", False, id="override-back"),
    ],
)
def test_a_sink_reading_another_cluster_is_neither_read_nor_planned(
    props: dict[str, str], consumer_bootstrap: str | None, skipped: bool
) -> None:
    specs, reasons = _sink_specs([sink("s", props), sink("gone", props, exists=False)], target(consumer_bootstrap))
    assert [s.connector for s in specs] == ([] if skipped else ["s", "gone"])
    assert list(reasons) == (["s"] if skipped else [])  # a deleted connector has no plan to skip
    if skipped:
        assert reasons["s"].startswith("its consumer reads another Kafka cluster (other:9092)")


def test_a_topics_regex_not_translated_exactly_is_reported_not_guessed() -> None:
    rows: list[Any] = [
        Row(connector="uni", type="sink", exists=True, properties={"topics.regex": r"\p{L}+"}),
        Row(connector="ok", type="sink", exists=True, properties={"topics.regex": "logs-[ab&&b]"}),
        Row(connector="src", type="source", exists=True, properties={"topic": "x"}),
    ]
    specs, reasons = _sink_specs(rows, target())
    assert list(reasons) == ["uni"] and "topics.regex" in reasons["uni"] and "not supported" in reasons["uni"]
    by_name = {s.connector: s for s in specs}
    assert by_name["uni"].regex is None  # its group is still read (lag, orphans); it reads no topic known here
    assert by_name["ok"].regex is not None and by_name["ok"].reads("logs-b") and not by_name["ok"].reads("logs-a")
