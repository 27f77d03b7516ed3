"""Connectors as the config topic's history tells them (compaction semantics: the last record of a key
wins, a tombstone deletes): which exist now, their latest configuration, kind and target state."""

from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import StringType, StructField, StructType

from control_plane.rules.connectors import connector_type

from .driver_codec import local_frame

TYPES_SCHEMA = StructType([StructField("connector", StringType(), False), StructField("type", StringType(), True)])
ORDER = ("kafka_partition", "kafka_offset")  # the config topic has one partition


def _latest(df: DataFrame, *keys: str) -> DataFrame:
    return df.groupBy(*keys).agg(
        F.max_by(F.struct("tombstone", "properties", "target_state", "timestamp"), F.struct(*ORDER)).alias("latest"),
        F.min(F.when(~F.col("tombstone"), F.col("timestamp"))).alias("first_seen"),
    )


def _types(configs: DataFrame) -> DataFrame:
    """connector -> type: the shared rule (``rules.connectors.connector_type``) on each connector's latest
    configuration, in the driver (a connector is one row; no Python worker for it). The job has no plugin
    list, so it decides from the class name and the sink topic keys. No configuration retained (only a
    deleting tombstone): ``unknown``, not a guess."""
    rows = configs.select("connector", "last_properties").collect()
    types = [(r["connector"], connector_type(r["last_properties"])) for r in rows]
    return local_frame(configs.sparkSession, types, TYPES_SCHEMA)


def connector_configs(config: DataFrame) -> DataFrame:
    """One row per connector the config topic ever named: ``exists`` (the latest ``connector-<c>`` record
    is not a tombstone), ``properties`` (latest config; kept after deletion), ``type`` (sink, source, or
    unknown when no config is retained), ``target_state``, ``created`` (first config), ``deleted`` (time
    of the deleting tombstone)."""
    valid = config.filter(F.col("malformed").isNull() & F.col("connector").isNotNull())
    configs = valid.filter(F.col("kind") == "connector")
    latest = _latest(configs, "connector")
    # the last non-null config, for a deleted connector's kind and topics
    last_config = (
        configs.filter(~F.col("tombstone"))
        .groupBy("connector")
        .agg(F.max_by("properties", F.struct(*ORDER)).alias("last_properties"))
    )
    states = (
        valid.filter((F.col("kind") == "target-state") & ~F.col("tombstone"))
        .groupBy("connector")
        .agg(F.max_by("target_state", F.struct(*ORDER)).alias("target_state"))
    )
    props = F.col("last_properties")
    joined = latest.join(last_config, "connector", "left")
    return (
        joined.join(_types(joined), "connector", "left")
        .join(states, "connector", "left")
        .select(
            "connector",
            (~F.col("latest.tombstone")).alias("exists"),
            "type",
            props.alias("properties"),
            F.coalesce("target_state", F.lit("STARTED")).alias("target_state"),
            F.col("first_seen").alias("created"),
            F.when(F.col("latest.tombstone"), F.col("latest.timestamp")).alias("deleted"),
        )
    )


def connector_events(config: DataFrame) -> DataFrame:
    """Every ``connector-<c>`` record as (connector, timestamp, ``exists_after``), to tell what existed when."""
    return config.filter(
        F.col("malformed").isNull() & (F.col("kind") == "connector") & F.col("connector").isNotNull()
    ).select("connector", "timestamp", "kafka_offset", (~F.col("tombstone")).alias("exists_after"))
