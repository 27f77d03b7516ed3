"""The jobs' offsets and status decoding (values in the JVM, each distinct key once through the codec) give exactly
the rows of the codec run on every record: on tricky records, and on a few hundred generated ones."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest
from pyspark.sql import Row, SparkSession
from pyspark.sql import functions as F

from control_plane.codecs.json_wire import dumps
from spark_jobs.transforms import (
    decode_offset_parts,
    decode_offsets_per_record,
    decode_status_records,
    decode_status_records_per_record,
    record_counts,
    with_normal,
)
from spark_jobs.transforms.jvm_decode import FEW, FEW_MEMBERS, FLAT_DISTINCT, flat_distinct
from tests.support.spark_records import OFFSET_PARTITIONS, History, without_key_id
from tests.support.tricky_records import KEY, STATUS_KEYS, STATUS_VALUES, TRICKY_KEYS, TRICKY_VALUES


def same_rows(spark: SparkSession, h: History) -> list[Row]:
    frame = h.frame(spark)
    order = ["kafka_partition", "kafka_offset"]
    exact = decode_offsets_per_record(frame, OFFSET_PARTITIONS).orderBy(*order).collect()
    jvm = decode_offset_parts(frame, OFFSET_PARTITIONS).frame.orderBy(*order).collect()
    # the jobs' way: the sorted form left out of the decoding, filled in on the rows kept (every row here)
    later = with_normal(decode_offset_parts(frame, OFFSET_PARTITIONS, normal=False).frame).orderBy(*order).collect()
    assert len(jvm) == len(later) == len(exact) == len(h.rows)
    for ours, deferred, theirs in zip(without_key_id(jvm), without_key_id(later), exact, strict=True):
        assert ours == theirs.asDict()
        assert deferred == theirs.asDict()
    # the rank's first element without the rank, as the steps back's candidates read it: wherever the rank
    # has one (the codec's rank: ``exact``), the record's ``offset_lead`` is it
    records = decode_offset_parts(frame, OFFSET_PARTITIONS).records.orderBy(*order).collect()
    for record, theirs in zip(records, exact, strict=True):
        if theirs["offset_rank"]:
            assert record["offset_lead"] == theirs["offset_rank"][0], theirs["offset_json"]
    return exact


def test_tricky_values_and_keys_decode_as_the_codec_does(spark: SparkSession) -> None:
    h = History()
    ts = 1000
    for value in TRICKY_VALUES:
        h.raw_offset(KEY, value, ts := ts + 1)
    for key in TRICKY_KEYS:
        for value in (b'{"position":1}', None, b'{"f":1.5}', b"[]"):
            h.raw_offset(key, value, ts := ts + 1, partition=0)  # type: ignore[arg-type]
    rows = same_rows(spark, h)
    by_value = {r["offset_json"]: r for r in rows}
    assert by_value['{"z":1,"a":2,"_":3,"A":4,"a ":5}']["offset_normal"] == '{"A":4,"_":3,"a":2,"a ":5,"z":1}'
    assert by_value['{"neg":-12,"zero":0}']["offset_rank"] == [-12, 0]
    assert sum(1 for r in rows if r["malformed"]) >= 10


def _counted(rows: list[Row]) -> list[dict[str, Any]]:
    return sorted((r.asDict() for r in rows), key=lambda r: (r["malformed"] or "", r["kafka_partition"]))


# the keys and the unusual values decoded in the driver; the keys (8) in the Python workers, the one unusual
# value in the driver; both in the workers
@pytest.mark.parametrize("driver_rows", [200_000, 1, 0], ids=["driver", "keys-in-workers", "workers"])
def test_the_counts_from_the_keys_pass_are_the_decoded_records_counts(spark: SparkSession, driver_rows: int) -> None:
    """The load's counts per reason and Kafka partition, found in the keys' pass (malformed keys, a missing
    key, tombstones, a value of unusual shape the codec reads), equal those of the decoded records. None
    (the job counts the records) where a value is malformed, or where whether one is is not known yet (the
    unusual values decoded in the workers)."""
    h = History()
    ts = 1000
    for key in TRICKY_KEYS:
        for value in (b'{"position":1}', None, b'{"f":1.5}', b'{"position":2}'):
            h.raw_offset(key, value, ts := ts + 1, partition=ts % 3)  # type: ignore[arg-type]
    parts = decode_offset_parts(h.frame(spark), OFFSET_PARTITIONS, driver_rows=driver_rows)
    if driver_rows == 0:
        assert parts.counts is None
        return
    assert parts.counts is not None
    assert _counted(parts.counts) == _counted(record_counts(parts.frame).collect())
    assert sum(r["n"] for r in parts.counts if r["malformed"]) == 12  # 3 malformed keys (one missing), 4 each
    h.raw_offset(KEY, b"[]", ts + 1)
    assert decode_offset_parts(h.frame(spark), OFFSET_PARTITIONS, driver_rows=driver_rows).counts is None


def _text(rng: random.Random) -> str:
    alphabet = ["a", "B", "_", " ", "/", ":", ",", "é", "日", "😀", '"', "\\", "\n", "\x01", "\x7f", "-", "0"]
    return "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 4)))


def _scalar(rng: random.Random) -> Any:
    return rng.choice(
        [
            lambda: rng.randint(-(10**20), 10**20),
            lambda: rng.randint(-1000, 1000),
            lambda: rng.random() * 10 ** rng.randint(-5, 9),
            lambda: _text(rng),
            lambda: rng.choice([True, False, None]),
            lambda: {"n": rng.randint(0, 9)},
        ]
    )()


def test_generated_offsets_decode_as_the_codec_does(spark: SparkSession) -> None:
    rng = random.Random(14)
    h = History()
    for ts in range(400):
        partition = {_text(rng) or "k": _scalar(rng) for _ in range(rng.randint(0, 2))}
        offset = {_text(rng): _scalar(rng) for _ in range(rng.randint(0, 3))}
        connector = rng.choice(["src", "a-b", "é"])
        key = dumps([connector, partition]) if rng.random() < 0.8 else json.dumps([connector, partition]).encode()
        if rng.random() < 0.1:
            value = None
        elif rng.random() < 0.8:
            value = dumps(offset)
        else:
            value = json.dumps(offset).encode()
        h.raw_offset(key, value, 10_000 + ts)
    same_rows(spark, h)


def test_the_shape_is_found_as_the_general_expression_finds_it(spark: SparkSession) -> None:
    """The shape's search (few members first, then the general expression) accepts exactly the texts
    :data:`FLAT_DISTINCT` accepts, and :data:`FEW_MEMBERS` exactly those of them with at most ``FEW``
    members: generated objects of 0 to 11 members, names from a few letters (so they repeat, also as
    each other's beginnings), scalars of every kind, some texts cut or spliced."""
    rng = random.Random(21)
    scalars = ["1", "-7", "0", "123456789012345678", "true", "false", "null", '"s"', '""', '"a,:b"']
    not_scalars = ["01", "-0", "1.5", "1234567890123456789", "{}", "[1]", '"é"', '"x\\"', "nul"]
    cases: list[tuple[str, int]] = []
    for _ in range(3000):
        count = rng.randint(0, FEW + 3)
        names = ["".join(rng.choice("ab1") for _ in range(rng.randint(0, 3))) for _ in range(count)]
        members = [f'"{n}":{rng.choice(not_scalars if rng.random() < 0.03 else scalars)}' for n in names]
        text = "{" + ",".join(members) + "}"
        if rng.random() < 0.1:
            at = rng.randint(0, len(text))
            text = text[:at] + rng.choice(["", ",", '"', ":", " ", "}"]) + text[at + rng.randint(0, 2) :]
        cases.append((text, count))
    frame = spark.createDataFrame(cases, "t string, members int")
    column = F.col("t")
    rows = frame.select(
        "t",
        "members",
        flat_distinct(column).alias("ours"),
        column.rlike(FLAT_DISTINCT).alias("general"),
        column.rlike(FEW_MEMBERS).alias("few"),
    ).collect()
    assert [r["t"] for r in rows if r["ours"] != r["general"]] == []
    assert [r["t"] for r in rows if r["few"] and not r["general"]] == []
    whole = [r for r in rows if r["general"] and r["t"].count('":') == r["members"]]  # not spliced
    assert [r["t"] for r in whole if r["few"] != (r["members"] <= FEW)] == []
    assert sum(r["general"] for r in rows) > 300
    assert sum(r["general"] and r["members"] > FEW for r in whole) > 10
    assert sum(not r["general"] and r["members"] <= FEW for r in rows) > 300


def test_status_records_decode_as_the_codec_does(spark: SparkSession) -> None:
    h = History()
    ts = 1000
    for key in STATUS_KEYS:
        for value in STATUS_VALUES:
            h.add("status", key, value, ts := ts + 1)
    frame = h.frame(spark)
    order = ["kafka_partition", "kafka_offset"]
    exact = decode_status_records_per_record(frame).orderBy(*order).collect()
    jvm = decode_status_records(frame).orderBy(*order).collect()
    assert len(jvm) == len(exact) == len(h.rows)
    for ours, theirs in zip(jvm, exact, strict=True):
        assert ours.asDict() == theirs.asDict()
    assert {r["state"] for r in exact if r["state"]} >= {"RUNNING", "FAILED"}
    assert {r["discover_timestamp"] for r in exact} >= {1700000000000, -1}


def test_a_long_trace_decodes_as_the_codec_does(spark: SparkSession) -> None:
    """A worker's FAILED status with a trace of thousands of lines: java.util.regex once matched the
    trace by recursion, a level a character, and overflowed the executor's stack (a StackOverflowError that
    ended the local JVM). Also a trace whose last escape is an escaped backslash before the closing quote."""
    frames = "\\tat org.example.Frame.call(Frame.java:1)\\n" * 3000
    long_trace = f'{{"state":"FAILED","trace":"org.example.Boom: deep\\n{frames}","worker_id":"w","generation":3}}'
    h = History()
    for ts, value in enumerate(
        (
            long_trace.encode(),
            b'{"state":"FAILED","trace":"ends with a backslash \\\\","worker_id":"w","generation":1}',
            b'{"state":"FAILED","trace":"an escaped quote \\" inside","worker_id":"w","generation":1}',
        ),
        start=1,
    ):
        h.add("status", b"status-task-src-0", value, ts)
    frame = h.frame(spark)
    order = ["kafka_partition", "kafka_offset"]
    exact = decode_status_records_per_record(frame).orderBy(*order).collect()
    jvm = decode_status_records(frame).orderBy(*order).collect()
    assert [r.asDict() for r in jvm] == [r.asDict() for r in exact]
    assert exact[0]["state"] == "FAILED" and exact[0]["trace"].count("\n") == 3001
