"""The sidecar's view (``GET /connectors/{c}/offsets``) against the history, per connector.

Both sides are in the normal form of :func:`.jsonnorm.normal_json` (key order ignored): the history's
source offsets the worker would find (canonical keys), and the sink groups' committed offsets.
"""

from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import StringType, StructField, StructType

SIDECAR_OFFSETS_SCHEMA = StructType(
    [
        StructField("connector", StringType(), False),
        StructField("logical_partition", StringType(), False),
        StructField("offset_normal", StringType(), True),
    ]
)
SIDECAR_ANSWERS_SCHEMA = StructType(
    [
        StructField("connector", StringType(), False),
        StructField("error", StringType(), True),  # null when the sidecar answered 200
    ]
)


def history_view(source_now: DataFrame, sink_offsets: DataFrame, connectors: DataFrame) -> DataFrame:
    """What the history says each existing connector's offsets are, in the comparison's normal form."""
    existing = connectors.filter("exists").select("connector", "type")
    sources = source_now.select("connector", "logical_partition", "offset_normal")
    sinks = sink_offsets.filter(F.col("exists") & F.col("committed").isNotNull()).select(
        "connector",
        F.to_json(F.struct(F.col("partition").alias("kafka_partition"), F.col("topic").alias("kafka_topic"))).alias(
            "logical_partition"
        ),
        F.to_json(F.struct(F.col("committed").alias("kafka_offset"))).alias("offset_normal"),
    )
    return sources.unionByName(sinks).join(existing, "connector")


def running_connectors(connectors: DataFrame) -> DataFrame:
    """Existing connectors whose target state (config topic) is STARTED: their tasks may run, so their
    offsets may move between reading the history and asking the sidecar. STOPPED connectors have no
    tasks (KIP-875 alters offsets only then) and PAUSED ones' tasks process no records."""
    return connectors.filter(F.col("exists") & (F.col("target_state") == "STARTED")).select("connector")


def sidecar_disagreements(
    history: DataFrame, sidecar: DataFrame, answers: DataFrame, running: DataFrame | None = None
) -> DataFrame:
    """Per connector the sidecar was asked about, except the ``running`` ones (their offsets move: a
    difference says nothing): ``agrees``, the partitions only the history has, only the sidecar has (also
    with a null offset: a partition the worker knows but whose offset it cannot find), and those whose
    offsets differ; ``error`` when the sidecar did not answer."""
    asked = answers.select("connector", "error")
    if running is not None:
        asked = asked.join(running.select("connector"), "connector", "left_anti")
    ok = asked.filter(F.col("error").isNull()).select("connector")
    h = history.join(ok, "connector").select(
        "connector", "logical_partition", F.col("offset_normal").alias("h"), F.lit(True).alias("in_h")
    )
    s = sidecar.join(ok, "connector").select(
        "connector", "logical_partition", F.col("offset_normal").alias("s"), F.lit(True).alias("in_s")
    )
    joined = h.join(s, ["connector", "logical_partition"], "full_outer")
    in_h, in_s = F.coalesce(F.col("in_h"), F.lit(False)), F.coalesce(F.col("in_s"), F.lit(False))
    per_connector = joined.groupBy("connector").agg(
        F.collect_list(F.when(in_h & ~in_s, F.col("logical_partition"))).alias("only_in_history"),
        F.collect_list(F.when(in_s & ~in_h, F.col("logical_partition"))).alias("only_in_sidecar"),
        F.collect_list(
            F.when(
                in_h & in_s & ~F.col("h").eqNullSafe(F.col("s")),
                F.struct(
                    F.col("logical_partition").alias("partition"),
                    F.col("h").alias("history"),
                    F.col("s").alias("sidecar"),
                ),
            )
        ).alias("different"),
    )
    return (
        asked.join(per_connector, "connector", "left")
        .select(
            "connector",
            F.coalesce("only_in_history", F.array().cast("array<string>")).alias("only_in_history"),
            F.coalesce("only_in_sidecar", F.array().cast("array<string>")).alias("only_in_sidecar"),
            F.coalesce(
                "different", F.array().cast("array<struct<partition:string,history:string,sidecar:string>>")
            ).alias("different"),
            "error",
        )
        .withColumn(
            "agrees",
            F.col("error").isNull()
            & (F.size("only_in_history") == 0)
            & (F.size("only_in_sidecar") == 0)
            & (F.size("different") == 0),
        )
    )
