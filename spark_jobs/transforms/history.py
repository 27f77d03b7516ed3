"""The config history the sidecars keep in their own topic (``codecs.config_history``, decoded by
:func:`.decode.decode_history_records`): each connector's earlier configs, and the topics only those named.

Connect's config topic is compacted: a connector's earlier configs, and the topics they named, are gone
from it. The sidecar that records for the cluster writes one record per change it reads there, keyed by
the change's config topic offset (the version); two sidecars that both recorded for a while wrote the same
keys, so the latest record of a key wins, and a tombstone (past the retention) removes the version.
"""

from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from .topics import named_topics

ORDER = ("kafka_partition", "kafka_offset")


def _latest(history: DataFrame, kind: str, columns: list[str]) -> DataFrame:
    """Per (connector, version) of ``kind``, its latest record's ``columns``; versions whose latest record is
    a tombstone left out."""
    records = history.filter(F.col("malformed").isNull() & (F.col("kind") == kind))
    latest = records.groupBy("connector", "version").agg(
        F.max_by(F.struct("tombstone", *columns), F.struct(*ORDER)).alias("r")
    )
    return latest.filter(~F.col("r.tombstone")).select("connector", "version", *(F.col(f"r.{c}") for c in columns))


def config_versions(history: DataFrame) -> DataFrame:
    """One row per version of a connector the history keeps: ``connector``, ``version`` (its config topic
    offset), ``changed_at``, ``change`` (created, updated, state, deleted), ``properties`` (the config then,
    its secrets ``[hidden]``; null once deleted), ``state``, ``type`` (of that config), ``who`` (the principal
    that wrote it through a sidecar; null: written straight to a worker, or unknown) and ``recorded_by``."""
    entries = _latest(history, "entry", ["changed_at", "change", "properties", "state", "type", "sidecar"])
    authors = _latest(history, "author", ["who"])
    return entries.join(authors, ["connector", "version"], "left").select(
        "connector",
        "version",
        "changed_at",
        "change",
        "properties",
        "state",
        "type",
        "who",
        F.col("sidecar").alias("recorded_by"),
    )


def topics_only_earlier_configs_named(
    versions: DataFrame, current_references: DataFrame, broker_topics: DataFrame | None
) -> DataFrame:
    """Topics that an earlier config of a sink named (``topics``, or ``topics.regex`` matching a topic on the
    broker) while no connector's current config names them (``current_references``: the config topic's
    sinks, :func:`.topics.sink_topic_references`): per topic and connector, the newest ``version`` that named
    it, ``via``, ``named_at`` (that version's time), ``until`` (the next version's: the first that no longer
    named it), ``who`` wrote that version. With the broker's topics: only topics that exist."""
    sinks = versions.filter((F.col("type") == "sink") & F.col("properties").isNotNull())
    named = named_topics(sinks, broker_topics, ["connector", "version"])
    last = named.groupBy("topic", "connector").agg(
        F.max_by("via", "version").alias("via"), F.max("version").alias("version")
    )
    times = versions.select("connector", "version", F.col("changed_at").alias("named_at"), "who")
    later = versions.select("connector", F.col("version").alias("later"), F.col("changed_at").alias("later_at"))
    until = (
        last.join(later, "connector")
        .filter(F.col("later") > F.col("version"))
        .groupBy("topic", "connector")
        .agg(F.min_by("later_at", "later").alias("until"))
    )  # none later: the connector's newest version still names it
    found = (
        last.join(until, ["topic", "connector"])
        .join(times, ["connector", "version"])
        .join(current_references.select("topic").distinct(), "topic", "left_anti")
    )
    if broker_topics is not None:
        found = found.join(broker_topics.select("topic"), "topic")
    return found.select("topic", "connector", "version", "via", "named_at", "until", "who")


__all__ = ["config_versions", "topics_only_earlier_configs_named"]
