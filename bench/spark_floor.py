"""The floor of each Spark job, for ``bench/spark_jobs.py --floor``: the least any implementation in Spark
must do for the job's main answer, written plainly, on the same snapshot and in a session of the same
settings (``spark_jobs.session``: the JVM's options, the class archive), so that the job's time, CPU and
memory read as ratios to it.

- offsets-reconcile: the offsets topic's records, each value parsed by ``json_object_keys`` (a value
  that is not a JSON object is left out, as the job leaves out a malformed one; the cheapest of Spark's
  JSON parsers here: ``from_json`` into a map took about half as long again), one aggregation per key (its
  exact bytes: the worker finds an offset by them, Connect's ``KafkaOffsetBackingStore``) and Kafka
  partition for its last record, commits and commit times, then each of those few keys parsed by
  ``from_json`` into the connector and the partition; the job's ``source_offsets`` table.
- topic-audit: the two tables of the status topic's records. The KIP-558 topic records (the key split
  as Connect's ``KafkaStatusBackingStore`` splits it, the value by ``from_json``), one aggregation per
  topic and connector, and each tombstone told a reset or a deletion by the connector's config records
  before it: the job's ``topic_usage`` table. The connectors' and tasks' states (the key split, the value
  by ``from_json``, a tombstone a deletion), one window per connector or task in log order that keeps
  each change of state: the job's ``state_timeline`` table.

Not the codecs' exact rules (key bytes against the worker's encoding, a value's exact shape), nor the
job's other findings and small tables: :func:`different_rows` compares each of the floor's tables with the
job's on the columns both have, row for row. The floor writes each table as Spark writes it by itself
(a file a task), not the job's one file a table, which runs a table's last stage in one task.

    python -m bench.spark_floor offsets-reconcile --snapshot S.parquet --offline --out OUT [job options]
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

import pyarrow.parquet as pq
from pyspark.sql import DataFrame, Window
from pyspark.sql import functions as F

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from bench.spark_warm import READING  # noqa: E402
from spark_jobs.job import expected_records, parser, resolve, run, start_spark  # noqa: E402
from spark_jobs.progress import Progress  # noqa: E402
from spark_jobs.report import for_parquet  # noqa: E402
from spark_jobs.session import existing_session  # noqa: E402

# per job: the tables the floor writes, each the job's table of the same name holding the same answer
TABLES = {"offsets-reconcile": ("source_offsets",), "topic-audit": ("topic_usage", "state_timeline")}
# KafkaStatusBackingStore's key of a topic record: "status-topic-" + topic + ":connector-" + connector,
# split at the first ":connector-" (a topic name holds no ':')
TOPIC_KEY = r"^status-topic-(.*?):connector-(.*)$"
TOPIC_VALUE = "topic struct<name string, connector string, task int, discoverTimestamp bigint>"
# its keys of states: "status-connector-" + connector, "status-task-" + connector + "-" + the task's number
CONNECTOR_KEY, TASK_KEY = "status-connector-", r"^status-task-(.*)-([0-9]+)$"
STATE_VALUE = "state string, trace string, worker_id string, generation int"


def offsets_floor(offsets: DataFrame) -> DataFrame:
    """Per key and Kafka partition: its last record's offset (null after a tombstone), commits, tombstones,
    first and last commit time; the key parsed into its connector and partition."""
    text = F.col("value").cast("string")
    records = offsets.select(
        "key",
        F.col("partition").alias("kafka_partition"),
        F.col("offset").alias("kafka_offset"),
        "timestamp",
        F.col("value").isNull().alias("tombstone"),
        text.alias("offset_json"),
    ).filter(F.col("tombstone") | F.json_object_keys(text).isNotNull())  # null: not a JSON object
    commit = ~F.col("tombstone")
    per_key = records.groupBy("key", "kafka_partition").agg(
        F.max(F.struct("kafka_offset", "tombstone", "offset_json", "timestamp")).alias("last"),
        F.count(F.when(commit, 1)).alias("commits"),
        F.count(F.when(~commit, 1)).alias("tombstones"),
        F.min(F.when(commit, F.col("timestamp"))).alias("first_commit"),
        F.max(F.when(commit, F.col("timestamp"))).alias("last_commit"),
    )
    key = F.from_json(F.col("key").cast("string"), "array<string>")  # [connector, {partition}]
    return per_key.filter(F.size(key) == 2).select(
        key[0].alias("connector"),
        F.col("key").cast("string").alias("key_text"),
        "kafka_partition",
        key[1].alias("partition_json"),
        (~F.col("last.tombstone")).alias("live"),
        F.col("last.offset_json").alias("offset_json"),
        "commits",
        "tombstones",
        "first_commit",
        "last_commit",
        F.col("last.timestamp").alias("last_record"),
    )


def topic_usage_floor(status: DataFrame, config: DataFrame) -> DataFrame:
    """Per topic and connector: first and last seen, first discovered, whether its last record is a topic
    record (``active``) or when the tombstone that ended it came, and its tombstones told resets (the
    connector existed then, by its config records up to that time) or deletions."""
    key = F.col("key").cast("string")
    value = F.from_json(F.col("value").cast("string"), TOPIC_VALUE)
    records = (
        status.filter(key.startswith("status-topic-"))
        .select(
            F.regexp_extract(key, TOPIC_KEY, 1).alias("topic"),
            F.regexp_extract(key, TOPIC_KEY, 2).alias("connector"),
            "timestamp",
            F.col("partition").alias("kafka_partition"),
            F.col("offset").alias("kafka_offset"),
            F.col("value").isNull().alias("tombstone"),
            value["topic"]["discoverTimestamp"].alias("discovered"),
        )
        .filter(F.col("tombstone") | F.col("discovered").isNotNull())
    )
    seen = ~F.col("tombstone")
    pairs = records.groupBy("topic", "connector").agg(
        F.min(F.when(seen, F.col("timestamp"))).alias("first_seen"),
        F.max(F.when(seen, F.col("timestamp"))).alias("last_seen"),
        F.min("discovered").alias("first_discovered"),
        F.max_by(F.struct("tombstone", "timestamp"), F.struct("kafka_partition", "kafka_offset")).alias("last"),
    )
    configs = config.filter(F.col("key").cast("string").startswith("connector-")).select(
        F.substring(F.col("key").cast("string"), len("connector-") + 1, 1 << 20).alias("connector"),
        F.col("timestamp").alias("e_time"),
        F.col("offset").alias("e_offset"),
        F.col("value").isNotNull().alias("exists_after"),
    )
    tombstones = records.filter("tombstone").alias("t")
    existed = (
        tombstones.join(
            configs.alias("e"),
            (F.col("t.connector") == F.col("e.connector")) & (F.col("e_time") <= F.col("t.timestamp")),
            "left",
        )
        .groupBy("t.topic", "t.connector", "t.kafka_partition", "t.kafka_offset")
        .agg(F.max_by("exists_after", F.struct("e_time", "e_offset")).alias("existed"))
        .groupBy("topic", "connector")
        .agg(
            F.count(F.when(F.col("existed"), 1)).alias("resets"),
            F.count(F.when(~F.coalesce(F.col("existed"), F.lit(False)), 1)).alias("deletions"),
        )
    )
    return (
        pairs.filter(F.col("first_seen").isNotNull())
        .join(existed, ["topic", "connector"], "left")
        .select(
            "topic",
            "connector",
            "first_seen",
            "last_seen",
            "first_discovered",
            (~F.col("last.tombstone")).alias("active"),
            F.when(F.col("last.tombstone"), F.col("last.timestamp")).alias("ended"),
            F.coalesce("resets", F.lit(0)).alias("resets"),
            F.coalesce("deletions", F.lit(0)).alias("deletions"),
        )
    )


def state_timeline_floor(status: DataFrame) -> DataFrame:
    """Per connector and task, its records in log order where the state changed from the record before
    (a tombstone: ``DELETED``). The value is parsed once into a column, then its fields read: fields read
    from ``from_json`` in one projection are each parsed on their own (Spark's ``OptimizeJsonExprs``
    prunes the schema per field), about twice the time."""
    key = F.col("key").cast("string")
    task = key.startswith("status-task-")
    records = status.filter(key.startswith(CONNECTOR_KEY) | task).select(
        F.when(task, F.regexp_extract(key, TASK_KEY, 1))
        .otherwise(F.substring(key, len(CONNECTOR_KEY) + 1, 1 << 20))
        .alias("connector"),
        F.when(task, F.regexp_extract(key, TASK_KEY, 2).cast("int")).alias("task"),
        "timestamp",
        F.col("partition").alias("kafka_partition"),
        F.col("offset").alias("kafka_offset"),
        F.col("value").isNull().alias("tombstone"),
        F.from_json(F.col("value").cast("string"), STATE_VALUE).alias("v"),
    )
    states = records.select(
        "connector",
        "task",
        "timestamp",
        "kafka_partition",
        "kafka_offset",
        F.when(F.col("tombstone"), F.lit("DELETED")).otherwise(F.col("v.state")).alias("state"),
        F.col("v.worker_id").alias("worker_id"),
        F.col("v.generation").alias("generation"),
        F.substring_index(F.col("v.trace"), "\n", 1).alias("trace_first_line"),
    )
    in_log_order = Window.partitionBy("connector", "task").orderBy("kafka_partition", "kafka_offset")
    previous = states.filter(F.col("state").isNotNull()).withColumn("previous_state", F.lag("state").over(in_log_order))
    return previous.filter(F.col("previous_state").isNull() | (F.col("previous_state") != F.col("state")))


def floor(job: str, argv: list[str]) -> int:
    """The floor of ``job`` with the job's own options (``--snapshot``, ``--out``, the session's)."""
    args = parser(f"spark-floor {job}", __doc__.splitlines()[0], "reports/floor").parse_args(argv)
    target = resolve(args, use_sidecar=False)
    progress = Progress(f"spark-floor {job}", 3)
    owned = existing_session() is None
    spark = start_spark(args, f"{job}-floor", progress, kafka=False, records=expected_records(args, None))
    try:
        progress.step(f"{READING} {args.snapshot} with Spark's JSON functions")
        records = spark.read.parquet(str(args.snapshot))

        def of(role: str) -> DataFrame:
            return records.filter(F.col("topic") == target.topics[role])

        if job == "offsets-reconcile":
            tables = [offsets_floor(of("offsets"))]
        else:
            tables = [topic_usage_floor(of("status"), of("config")), state_timeline_floor(of("status"))]
        for name, table in zip(TABLES[job], tables, strict=True):
            for_parquet(table).write.mode("overwrite").parquet(str(args.out / "tables" / name))
        progress.step(f"written: {', '.join(TABLES[job])} in {args.out / 'tables'}")
    finally:
        if owned:
            spark.stop()
    return 0


def different_rows(table: str, job_out: Path, floor_out: Path) -> tuple[int, int, list[str]]:
    """The job's ``table`` against the floor's, on the columns both have, rows in any order: (the job's
    rows, the floor's rows, a few of the rows one of them has more often than the other, each marked
    ``job:`` or ``floor:``; none when they agree)."""
    tables = [pq.read_table(out / "tables" / table) for out in (job_out, floor_out)]
    common = [name for name in tables[0].column_names if name in tables[1].column_names]
    rows = [Counter(map(repr, t.select(common).to_pylist())) for t in tables]
    only = [sorted((rows[0] - rows[1]).elements()), sorted((rows[1] - rows[0]).elements())]
    sample = [f"job: {r}" for r in only[0][:3]] + [f"floor: {r}" for r in only[1][:3]]
    return tables[0].num_rows, tables[1].num_rows, sample


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] not in TABLES:
        print(f"usage: spark_floor.py {{{','.join(TABLES)}}} --snapshot FILE --out DIR [job options]", file=sys.stderr)
        return 2
    return run(f"spark-floor {argv[0]}", lambda: floor(argv[0], argv[1:]))


if __name__ == "__main__":
    sys.exit(main())
