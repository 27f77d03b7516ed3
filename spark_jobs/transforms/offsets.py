"""Source offsets from the offsets topic's full history (decoded by :func:`.jvm_decode.decode_offset_parts`:
the transforms that ask something of every key's records read its ``records`` and join its ``keys`` to
the rows they keep; the others read its ``frame``).

Compaction semantics: per key (its exact bytes) and Kafka partition, the record with the highest offset
wins and a tombstone deletes. The worker finds an offset by the exact bytes of its key, so a partition
is identified here by its key bytes; ``logical_partition`` (key order ignored) groups the keys that
mean the same source partition.
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame, Window, WindowSpec
from pyspark.sql import functions as F
from pyspark.sql.types import IntegerType, LongType, StructField, StructType

from .decode import partition_aggregates
from .jvm_decode import OffsetParts, with_normal

PHYSICAL = ["connector", "key", "kafka_partition"]
# grouped by the key first: the order a job keeps the records in (jvm_decode.CLUSTERED), so each key's
# records are aggregated as they come, with no shuffle and no sort; the key decides its connector
BY_KEY = ["key_id", "kafka_partition"]
# what a record's key alone decides (jvm_decode.KEY_SCHEMA): the same on each of the key's records
KEY_COLUMNS = ["connector", "key", "partition_json", "logical_partition", "key_canonical", "expected_kafka_partition"]


def _order() -> Column:
    """The restore plan's order of a key's records: time first (the worker's "then"), then position."""
    return F.struct("timestamp", "kafka_partition", "kafka_offset")


def _keyed(parts: OffsetParts, per_key: DataFrame) -> DataFrame:
    """``per_key`` (rows with a ``key_id``) with the columns of its key, the keys the codec read only."""
    keys = parts.keys.filter(F.col("key_malformed").isNull()).select("key_id", *KEY_COLUMNS)
    return per_key.join(keys, "key_id")


def _valid_records(parts: OffsetParts) -> DataFrame:
    """The records whose value the codec read (those of a malformed key go with their key: :func:`_keyed`)."""
    return parts.records.filter(F.col("value_malformed").isNull())


def key_summary(parts: OffsetParts, as_of_ms: int | None = None) -> DataFrame:
    """What the history (:func:`offset_history`) and the restore plan (:func:`source_restore_plan`, as
    of ``as_of_ms``; None: now) ask of each key's records, in one aggregation over the valid records: per
    key and Kafka partition (:data:`BY_KEY`) one row, with its key's columns (:data:`KEY_COLUMNS`),
    ``last`` (the record with the highest offset), the commit and tombstone counts and times, ``now`` and
    ``then`` and ``first_offset``. ``now`` is ``last``, the log's last record: the offset the worker holds
    (Connect's KafkaOffsetBackingStore reads the topic in order into a map: a key's last record wins, a
    tombstone removes it). ``then`` is the last record at or before as-of in the restore plan's order
    (time, then position), and ``now`` as of now. Both carry that order (``o``) for the key's records in
    other Kafka partitions (:func:`source_restore_plan`, :func:`offsets_now`). The records' own columns
    only: the key's are joined to the few rows."""
    commit = ~F.col("tombstone")
    aggregates = [
        F.max(F.struct("kafka_offset", "tombstone", "offset_json", "offset_normal", "timestamp")).alias("last"),
        F.count(F.when(commit, 1)).alias("commits"),
        F.count(F.when(~commit, 1)).alias("tombstones"),
        F.min(F.when(commit, F.col("timestamp"))).alias("first_commit"),
        F.max(F.when(commit, F.col("timestamp"))).alias("last_commit"),
        F.min("kafka_offset").alias("first_offset"),
    ]
    if as_of_ms is not None:
        # the greatest of structs that lead with what orders them (unique in a group: the offset), so the rest
        # is never compared: one buffer a column, where max_by keeps the value and its ordering apart
        ordered = F.struct(_order().alias("o"), F.struct("tombstone", "offset_json").alias("r"))
        then = F.when(F.col("timestamp") <= F.lit(as_of_ms), ordered)
        aggregates.append(F.max(then).alias("then"))  # max skips the nulls: the records after as-of
    per_key = _valid_records(parts).groupBy(*BY_KEY).agg(*aggregates)
    last = F.col("last")
    now = F.struct(
        F.struct(
            last["timestamp"].alias("timestamp"), "kafka_partition", last["kafka_offset"].alias("kafka_offset")
        ).alias("o"),
        F.struct(last["tombstone"].alias("tombstone"), last["offset_json"].alias("offset_json")).alias("r"),
    )
    per_key = per_key.withColumn("now", now)
    if as_of_ms is None:
        per_key = per_key.withColumn("then", F.col("now"))
    return _keyed(parts, per_key)


def offset_history(summary: DataFrame) -> DataFrame:
    """Per connector and partition (key bytes, Kafka partition), from :func:`key_summary`: the latest
    offset (null once deleted), ``live``, the number of commits and of tombstones, the first and last
    commit time."""
    return with_normal(
        summary.select(
            *PHYSICAL,
            "partition_json",
            "logical_partition",
            "key_canonical",
            "expected_kafka_partition",
            (~F.col("last.tombstone")).alias("live"),
            F.col("last.offset_json").alias("offset_json"),
            F.col("last.offset_normal").alias("offset_normal"),
            "commits",
            "tombstones",
            "first_commit",
            "last_commit",
            F.col("last.timestamp").alias("last_record"),
        )
    )


def orphaned_offsets(history: DataFrame, sink_orphans: DataFrame, connectors: DataFrame) -> DataFrame:
    """Live source offsets, and committed sink group offsets (:func:`.sinks.orphaned_sink_offsets`), of
    connectors that do not exist now (deleted, or never in the config topic): per connector, its kind,
    partitions, last commit and when it was deleted."""
    existing = connectors.filter("exists").select("connector")
    known = connectors.select("connector", "deleted")
    sources = (
        history.filter("live")
        .join(existing, "connector", "left_anti")
        .groupBy("connector")
        .agg(F.count("*").alias("partitions"), F.max("last_commit").alias("last_commit"))
        .select(
            "connector",
            F.lit("source").alias("type"),
            F.lit(None).cast("string").alias("group"),
            "partitions",
            "last_commit",
        )
    )
    sinks = sink_orphans.join(existing, "connector", "left_anti").select(
        "connector", "type", "group", "partitions", F.lit(None).cast("long").alias("last_commit")
    )
    return sources.unionByName(sinks).join(known, "connector", "left")


def non_canonical_keys(history: DataFrame) -> DataFrame:
    """Live keys the worker would not find or could confuse: bytes that differ from the worker's own
    encoding, one source partition under several keys, or a key outside the partition its hash picks."""
    live = history.filter("live")
    per_logical = Window.partitionBy("connector", "logical_partition")
    reasons = F.array_compact(
        F.array(
            F.when(~F.col("key_canonical"), F.lit("key bytes differ from the worker's encoding")),
            F.when(
                F.col("keys_for_partition") > 1,
                F.concat(
                    F.lit("the same source partition under "),
                    F.col("keys_for_partition").cast("string"),
                    F.lit(" keys"),
                ),
            ),
            F.when(
                F.col("expected_kafka_partition").isNotNull()
                & (F.col("expected_kafka_partition") != F.col("kafka_partition")),
                F.concat(
                    F.lit("in Kafka partition "),
                    F.col("kafka_partition").cast("string"),
                    F.lit(", the default partitioner picks "),
                    F.col("expected_kafka_partition").cast("string"),
                ),
            ),
        )
    )
    return (
        live.withColumn("keys_for_partition", F.size(F.collect_set("key").over(per_logical)))
        .withColumn("reasons", reasons)
        .filter(F.size("reasons") > 0)
        .select(
            "connector",
            "partition_json",
            F.decode("key", "UTF-8").alias("key_text"),
            "key_canonical",
            "kafka_partition",
            "expected_kafka_partition",
            "offset_json",
            "last_commit",
            "reasons",
        )
    )


# the keys with a possible step back that the exact window reads alone (more: it reads every record)
CANDIDATE_KEYS = 10_000


def _in_order() -> WindowSpec:
    """Each key's records (per :data:`BY_KEY`) in offset order: the order a job keeps them in, so a window
    over it needs no shuffle and no sort (jvm_decode.clustered)."""
    return Window.partitionBy(*BY_KEY).orderBy("kafka_offset")


def _after_a_commit(before: Column) -> Column:
    """A commit whose record before it (``before``, the same key's) is one too: a tombstone in between is
    a reset, not a step back."""
    return ~F.col("tombstone") & ~F.coalesce(before["tombstone"], F.lit(True))


def step_candidates(parts: OffsetParts) -> DataFrame:
    """The keys (``key_id``) where a commit's rank may be lower than the one before it: its first element
    (``offset_lead``) is not higher. A rank lower than another of its length has a first element no higher,
    and a rank with a first element has it as ``offset_lead``, so no other key holds a step back
    (:func:`offsets_went_backwards`). One window over every record, of one column: the lead before a
    record's, null where that record is a tombstone (a tombstone has no lead; one in between is a reset,
    not a step back), has no rank's first element, or is not there (the key's first record); a tombstone's
    own lead is null too. So two leads are a commit after a commit (:func:`_after_a_commit`), with no struct
    built a record (about 0.5 s of 3 over 10 M records). The rank's search and array, and the
    texts, are left to the exact window, on the candidates' records."""
    lead, before = F.col("offset_lead"), F.col("lead_before")
    maybe = (
        _valid_records(parts)
        .withColumn("lead_before", F.lag(lead).over(_in_order()))
        .filter(lead.isNotNull() & before.isNotNull() & (lead <= before))
    )
    return maybe.select("key_id").distinct()  # kept clustered by key (jvm_decode.clustered): no shuffle


def offsets_went_backwards(parts: OffsetParts) -> DataFrame:
    """Commits whose offset is lower than the one before it for the same key (offsets ordered as tuples
    of their integer values, in the map's order). A tombstone in between is a reset, not a step back.
    Runs a Spark job at once: the keys that may hold one (:func:`step_candidates`); the exact window reads
    their records only (none: it reads none), or every record past :data:`CANDIDATE_KEYS` of them."""
    records = _valid_records(parts)
    candidates = step_candidates(parts).collect()  # no limit: a limit reads the partitions a few at a time
    if len(candidates) <= CANDIDATE_KEYS:  # a key's records all, so each still follows the one before it
        records = records.filter(F.col("key_id").isin([r["key_id"] for r in candidates]))
    before = F.lag(F.struct("tombstone", "offset_rank", "offset_json", "timestamp")).over(_in_order())
    rank, earlier = F.col("offset_rank"), F.col("before.offset_rank")
    steps = (
        records.withColumn("before", before)
        .filter(
            _after_a_commit(F.col("before"))
            & rank.isNotNull()
            & earlier.isNotNull()
            & (F.size(rank) == F.size(earlier))
            & (rank < earlier)
        )
        .select(
            "key_id",
            F.col("before.offset_json").alias("from_offset"),
            F.col("offset_json").alias("to_offset"),
            F.col("before.timestamp").alias("from_time"),
            F.col("timestamp").alias("at"),
            "kafka_partition",
            "kafka_offset",
        )
    )
    return _keyed(parts, steps).select(
        "connector", "partition_json", "from_offset", "to_offset", "from_time", "at", "kafka_partition", "kafka_offset"
    )


def offsets_now(summary: DataFrame) -> DataFrame:
    """The live offsets now of the keys the worker finds (canonical bytes), from :func:`key_summary`'s
    ``now`` (each Kafka partition's last record, the worker's; across a key's Kafka partitions the latest
    of those, as :func:`source_restore_plan` reads it): connector, key, partition_json, logical_partition,
    offset_json, offset_normal. The summary's few rows, not the records again."""
    latest = F.max_by(
        F.struct(
            F.col("now.r.tombstone").alias("tombstone"),
            "partition_json",
            "logical_partition",
            F.col("now.r.offset_json").alias("offset_json"),
            F.col("last.offset_normal").alias("offset_normal"),
        ),
        F.col("now.o"),
    )
    return with_normal(
        summary.filter("key_canonical")
        .groupBy("key_id")
        .agg(F.first("connector").alias("connector"), F.first("key").alias("key"), latest.alias("last"))
        .filter(~F.col("last.tombstone"))
        .select(
            "connector",
            "key",
            "last.partition_json",
            "last.logical_partition",
            "last.offset_json",
            "last.offset_normal",
        )
    )


PARTITION_STATS_SCHEMA = StructType(
    [
        StructField("kafka_partition", IntegerType(), False),
        StructField("n", LongType(), False),
        StructField("low", LongType(), False),
        StructField("high", LongType(), False),
    ]
)


def partition_stats(decoded: DataFrame) -> DataFrame:
    """Per Kafka partition of the records: :func:`partition_aggregates` (:data:`PARTITION_STATS_SCHEMA`)."""
    return decoded.groupBy("kafka_partition").agg(*partition_aggregates())


def first_missing_offsets(decoded: DataFrame, stats: DataFrame | None = None) -> DataFrame:
    """Per Kafka partition of the offsets topic: ``first_missing``, the lowest offset not retained (a
    record removed by compaction or retention, or a transaction marker's slot), null when the partition
    holds every record from offset 0. All records count here, malformed ones too. A partition whose
    offsets are exactly 0 .. count - 1 (offsets are unique) needs no ordering; only the others are sorted.
    ``stats``: :func:`partition_stats` of ``decoded`` when known already (a job counts them as it loads)."""
    offsets = decoded.select("kafka_partition", "kafka_offset")
    stats = partition_stats(offsets) if stats is None else stats
    complete = (F.col("low") == 0) & (F.col("high") == F.col("n") - 1)
    gappy = [r["kafka_partition"] for r in stats.filter(~complete).select("kafka_partition").collect()]
    whole = stats.filter(complete).select("kafka_partition", F.lit(None).cast("long").alias("first_missing"))
    if not gappy:
        return whole
    ordered = Window.partitionBy("kafka_partition").orderBy("kafka_offset")
    position = F.row_number().over(ordered) - 1  # offsets are unique: offset > position once one is missing
    found = (
        offsets.filter(F.col("kafka_partition").isin(gappy))
        .withColumn("position", position)
        .groupBy("kafka_partition")
        .agg(F.min(F.when(F.col("kafka_offset") != F.col("position"), F.col("position"))).alias("first_missing"))
    )
    return whole.unionByName(found)


def source_restore_plan(summary: DataFrame, first_missing: DataFrame, connectors: DataFrame) -> DataFrame:
    """Per existing source connector and partition (the keys the worker finds), what a restore to the
    summary's as-of (:func:`key_summary`) does, given each Kafka partition's ``first_missing`` offset
    (:func:`first_missing_offsets`), as columns ``partition_json``, ``offset_json``, ``action``, ``based_on``
    and ``reason``:

    - the last retained record at or before as-of is a commit: ``set`` to it (``based_on`` offsets_topic).
      Compaction keeps a suffix of a key's records, so that record is the offset it had then.
    - it is a tombstone: the partition had no offset then; ``reset`` (KIP-875's null offset, ``based_on``
      tombstone) when it has one now, nothing when it has none.
    - no record at or before as-of is retained, but the Kafka partition holds every record from offset 0
      up to the key's first one: the key did not exist then; ``reset`` (``based_on`` no_record_yet) when
      it has an offset now, nothing otherwise.
    - no record at or before as-of is retained and records were removed before the key's first retained
      one (compaction, retention, or a transaction marker's slot): what it had then cannot be known;
      ``unknown`` (``based_on`` history_not_retained) with the ``reason``, never a null offset, which
      would reset it. The body leaves it out.
    """
    # per key and Kafka partition (the summary's rows of the keys the worker finds): its last record, its
    # last at or before as-of and its first offset; then per key over those few rows
    per_kafka_partition = (
        summary.filter("key_canonical")
        .select("kafka_partition", "connector", "key", "partition_json", "now", "then", "first_offset")
        .join(F.broadcast(first_missing), "kafka_partition", "left")
        .withColumn("complete", F.col("first_missing").isNull() | (F.col("first_missing") > F.col("first_offset")))
    )
    keys = per_kafka_partition.groupBy("connector", "key", "partition_json").agg(
        F.max_by(F.col("now.r"), F.col("now.o")).alias("now"),
        F.max_by(F.col("then.r"), F.col("then.o")).alias("then"),
        F.bool_and("complete").alias("complete"),
        F.min_by(F.struct("kafka_partition", "first_offset", "first_missing"), "complete").alias("gap"),
    )
    sources = connectors.filter(F.col("exists") & (F.col("type") == "source")).select("connector")
    live_now = ~F.col("now.tombstone")
    had_record = F.col("then").isNotNull()
    action = (
        F.when(had_record & ~F.col("then.tombstone"), "set")
        .when(had_record | F.col("complete"), F.when(live_now, "reset"))
        .otherwise("unknown")
    )
    based_on = (
        F.when(had_record & ~F.col("then.tombstone"), "offsets_topic")
        .when(had_record, "tombstone")
        .when(F.col("complete"), "no_record_yet")
        .otherwise("history_not_retained")
    )
    reason = F.format_string(
        "no record of this partition at or before as-of is retained, and partition %d of the offsets topic "
        "lost records before its first retained one (offset %d; the first missing offset is %d): its offset "
        "then cannot be known; it has %s now",
        F.col("gap.kafka_partition"),
        F.col("gap.first_offset"),
        F.col("gap.first_missing"),
        F.when(live_now, "an offset").otherwise("none"),
    )
    return (
        keys.join(sources, "connector")
        .withColumn("action", action)
        .filter(F.col("action").isNotNull())
        .select(
            "connector",
            "partition_json",
            F.when(F.col("action") == "set", F.col("then.offset_json")).alias("offset_json"),
            "action",
            based_on.alias("based_on"),
            F.when(F.col("action") == "unknown", reason).alias("reason"),
        )
    )
