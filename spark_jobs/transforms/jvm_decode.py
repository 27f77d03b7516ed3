"""The offsets topic decoded mostly in the JVM, with the sidecar's codecs where the exact-bytes rules need them.

:func:`decode_offset_parts` gives (its ``frame``) exactly the rows of
:func:`.decode.decode_offsets_per_record` (the codec run on every record), without running Python on
every record:

- keys: each *distinct* key is decoded once by the codec (:func:`control_plane.codecs.parse_offset_key`,
  the worker's encoding of it, the partition murmur2 picks), and joined back to its records. A partition's
  commits all carry its key, so there are few distinct keys (one per source partition).
- values: a value of the shape a worker writes for almost every connector, a flat JSON object of
  printable-ASCII keys and scalars (strings without escapes, integers of at most 18 digits, booleans,
  null), no white space and no repeated member, is decoded with Spark's own regular expressions: the
  stored text, the sorted compact form, the integer rank. For that shape the text is strict JSON, Python
  reads it as a ``dict`` of the same scalars, and ``json.dumps`` writes each scalar as it is written
  there, so both ways give the same strings. Every other value (floats, escapes, non-ASCII, nesting,
  white space, not JSON at all) goes to the codec, each *distinct* such value once
  (:func:`~control_plane.codecs.parse_offset_value`), joined back. tests/unit/spark_jobs/transforms/test_jvm_decode.py
  runs both ways on tricky records.

The codec runs in the driver when the distinct keys (or unusual values) are few, else in the Python
workers. The records themselves stay narrow while a job keeps them (``keep``): the value's text, the
key's id; the rest is joined or computed when a transform reads them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.compute as pc
from pyspark import StorageLevel
from pyspark.sql import Column, DataFrame, Row, Window
from pyspark.sql import functions as F
from pyspark.sql.types import (
    ArrayType,
    BinaryType,
    BooleanType,
    IntegerType,
    LongType,
    StringType,
    StructField,
    StructType,
)

from control_plane.codecs import Malformed, parse_offset_key, parse_offset_value

from ..kept import keep as keep_frame
from .decode import COUNTED, POSITION, ROLL_UP, _key_fields, _position, count_aggregates, rolled_up_counts
from .driver_codec import DRIVER_ROWS, arrow_frame, codec_frame, decoded_table, take
from .jsonnorm import normal_json, rank_of

# Java regular expressions (rlike finds, so both ends are anchored; \z, not $, which allows a final newline)
_CHAR = r"[\x20\x21\x23-\x5b\x5d-\x7e]"  # printable ASCII but '"' and '\'
_STRING = f'"{_CHAR}*"'
_INTEGER = r"(?:-?[1-9][0-9]{0,17}|0)"  # fits a long; no "-0" (Python reads it as 0 and writes "0")
_SCALAR = f"(?:{_STRING}|{_INTEGER}|true|false|null)"
# a flat object of distinct member names, in one pass: each member's name captured, and a look ahead
# that finds no later member of that name (a later member always begins ',"name":'); then either a comma
# and the next member, or the closing brace. In such a text every '"' opens or closes a string, and a
# string followed by ':' is a name, so ',"name":' is a member; the look ahead's cost is one scan of the
# rest a member (about half the time of the two expressions it replaced: the shape, then a repeated name
# searched from every position)
FLAT_DISTINCT = rf'^\{{(?:"({_CHAR}*)":{_SCALAR}(?!.*,"\1":)(?:,(?=")|(?=\}}\z)))*\}}\z'
# members a text's shape is first searched for without a look ahead or a repeated group (FEW_MEMBERS)
FEW = 8


def _few_members(most: int) -> str:
    """The shape of :data:`FLAT_DISTINCT` with at most ``most`` members, as nested optional members: each
    member's name captured, and each later name checked against the earlier ones where it begins (a name
    holds no '"', so an earlier name followed by '"' there is the same name). No scan of the rest a member
    and no loop: 10 M two-member values searched in 2.3 s against 2.8 s warm; each group costs
    every search a little, so the common counts only."""
    inner = ""
    for i in range(most, 0, -1):
        earlier = "".join(f'(?!\\{j}")' for j in range(1, i))
        inner = f'(?:{"," if i > 1 else ""}"{earlier}({_CHAR}*)":{_SCALAR}{inner})?'
    return rf"^\{{{inner}\}}\z"


FEW_MEMBERS = _few_members(FEW)
MEMBER_PARTS = f'"({_CHAR}*)":({_SCALAR})'  # group 1: the name, group 2: the value's text
# of a flat object (FLAT_DISTINCT): each member's integer in group 1, or "" where its scalar is not one
# (the empty alternative: a string, true, false or null begins with none of '-' and the digits). Found from
# the start, each match begins at a name's opening quote (a name holds no '"') while the scalars before
# it are integers, each consumed whole; what follows a first "" does not matter
MEMBER_INTEGER = f'"{_CHAR}*":(-?[0-9]+|)'
# of a flat object (FLAT_DISTINCT): its first member's integer, where its scalar is one (no match
# otherwise). The first name holds no '"', so _CHAR* takes it whole; a scalar of the shape that begins
# with '-' or a digit is an integer of at most 18 digits, taken whole. Where every scalar is an integer,
# that is the rank's first element (offsets.offsets_went_backwards' candidates)
FIRST_INTEGER = rf'^\{{"{_CHAR}*":(-?[0-9]+)'

# decode_offset_parts's ``partitions`` when the topic's partition count is not known (a snapshot): its
# records' highest partition + 1, found in the one pass over their keys
HIGHEST_PARTITION = "highest"

KEY_SCHEMA = StructType(
    [
        StructField("k", BinaryType(), True),
        StructField("key_id", LongType(), False),  # the key's rank among the distinct keys, in byte order
        StructField("connector", StringType(), True),
        StructField("partition_json", StringType(), True),
        StructField("logical_partition", StringType(), True),
        StructField("key_canonical", BooleanType(), True),
        StructField("expected_kafka_partition", IntegerType(), True),
        StructField("key_malformed", StringType(), True),
    ]
)

VALUE_FIELDS = [
    StructField("offset_json", StringType(), True),
    StructField("offset_normal", StringType(), True),
    StructField("offset_rank", ArrayType(LongType()), True),
    StructField("value_malformed", StringType(), True),
]
ODD_SCHEMA = StructType([StructField("v", BinaryType(), True), *VALUE_FIELDS])
# How the transforms read a key's records in order without sorting them again: grouped by key (its id: a
# number sorts and hashes faster than the key's bytes, which all begin alike) and Kafka partition, each
# key's records by offset (offsets.py groups and orders by these columns, in this order).
CLUSTERED = ["key_id", "kafka_partition", "kafka_offset"]


def clustered(values: DataFrame, partitions: int | None = None) -> DataFrame:
    """The records one Spark partition per key, each key's in :data:`CLUSTERED` order: a job keeps its
    offset records so, and every later aggregation or window per key reads them without a shuffle or a
    sort (Spark knows a kept frame's partitioning and order). ``partitions``: how many (None: the
    session's ``spark.sql.shuffle.partitions``); a partition's sort spills to disk past its memory."""
    by_key = values.repartition(partitions, "key_id") if partitions else values.repartition("key_id")
    return by_key.sortWithinPartitions(*CLUSTERED)


def _key_rows(batch: pa.RecordBatch, partitions: int | None) -> dict[str, list[object]]:
    """Each key of the batch's ``k`` column through the codec (:data:`KEY_SCHEMA`)."""
    out: dict[str, list[object]] = {f.name: [] for f in KEY_SCHEMA.fields}
    for key, key_id in zip(batch.column("k").to_pylist(), batch.column("key_id").to_pylist(), strict=True):
        parsed = parse_offset_key(key)
        row: dict[str, object] = dict.fromkeys(out)
        row["k"], row["key_id"] = key, key_id
        if isinstance(parsed, Malformed) or key is None:  # a missing key is malformed
            row["key_malformed"] = parsed.reason if isinstance(parsed, Malformed) else "offset key is missing"
        else:
            row.update(_key_fields(key, parsed, partitions))
        for name, item in row.items():
            out[name].append(item)
    return out


def _value_rows(batch: pa.RecordBatch) -> dict[str, list[object]]:
    """Each (non-null) value of the batch's ``v`` column through the codec (:data:`ODD_SCHEMA`)."""
    values = [bytes(v or b"") for v in batch.column("v").to_pylist()]  # never null: tombstones are the JVM's
    return {"v": batch.column("v").to_pylist(), **_value_columns(values)}


def _value_columns(values: Iterable[bytes]) -> dict[str, list[object]]:
    """Each offsets value through the codec, as the columns of :data:`VALUE_FIELDS`."""
    columns: dict[str, list[object]] = {f.name: [] for f in VALUE_FIELDS}
    for value in values:
        offset = parse_offset_value(value)
        ok = not isinstance(offset, str)  # it decoded, so it is UTF-8 JSON: the text as stored
        columns["offset_json"].append(value.decode("utf-8") if ok else None)
        columns["offset_normal"].append(normal_json(offset) if ok else None)
        columns["offset_rank"].append(rank_of(offset) if ok else None)
        columns["value_malformed"].append(None if ok else offset)
    return columns


def _key_counts(records: DataFrame) -> DataFrame:
    """Per distinct key (``k``) and Kafka partition of the records: :func:`.decode.count_aggregates`. The
    one pass over every record's key: the distinct keys (:func:`_keys`) and the load's counts
    (:func:`_counts`) are read from its few rows."""
    return records.groupBy(F.col("key").alias("k"), "kafka_partition").agg(*count_aggregates())


@dataclass(frozen=True)
class _DriverKeys:
    """The keys' pass as the driver holds it: the rows of :func:`_key_counts` (``counted``) and its distinct
    keys through the codec (``decoded``, :data:`KEY_SCHEMA`)."""

    counted: pa.Table
    decoded: pa.Table


def _partition_count(partitions: int | str | None, top: int | None) -> int | None:
    """The offsets topic's partition count: ``partitions``, or for :data:`HIGHEST_PARTITION` the records'
    highest partition (``top``) + 1."""
    if partitions == HIGHEST_PARTITION:
        return None if top is None else int(top) + 1
    return partitions if isinstance(partitions, int) else None


def _ranked(counted: pa.Table) -> pa.Table:
    """The distinct keys (``k``) of :func:`_key_counts`' rows, each with its highest Kafka partition
    (``top``) and ``key_id``: its rank in byte order, nulls last, as :func:`_keys` ranks them in Spark
    (Arrow orders binary by its unsigned bytes, as Spark does)."""
    grouped = counted.group_by("k").aggregate([("kafka_partition", "max")]).sort_by([("k", "ascending")])
    ids = pa.array(range(grouped.num_rows), pa.int64())
    return pa.table({"k": grouped.column("k"), "top": grouped.column("kafka_partition_max"), "key_id": ids})


def _keys(key_counts: DataFrame, partitions: int | str | None, limit: int) -> tuple[DataFrame, _DriverKeys | None]:
    """Each distinct key of :func:`_key_counts` once through the codec, with its ``key_id`` (its rank in
    byte order, nulls last). In the driver when :func:`_key_counts` has at most ``limit`` rows (one Spark
    job; also returned: what the driver holds, for :func:`_driver_counts`), else in the Python workers
    (None). ``partitions`` :data:`HIGHEST_PARTITION`: the records' highest partition + 1. ``key_counts``
    is kept only on the workers' way, which reads it again (here and in :func:`_counts`): the driver's
    take reads it once, and kept it would cost a job of its own."""
    counted = take(key_counts, limit) if limit > 0 else None
    if counted is not None:
        ranked = _ranked(counted)
        count = _partition_count(partitions, pc.max(ranked.column("top")).as_py())
        decoded = decoded_table(ranked, lambda batch: _key_rows(batch, count), KEY_SCHEMA)
        return arrow_frame(key_counts.sparkSession, decoded, KEY_SCHEMA), _DriverKeys(counted, decoded)
    keep_frame(key_counts, StorageLevel.MEMORY_AND_DISK)  # the frames derived from it below read it kept
    rank = F.dense_rank().over(Window.orderBy(F.col("k").asc_nulls_last())) - 1  # one partition
    grouped = key_counts.groupBy("k").agg(F.max("kafka_partition").alias("top"))
    ranked_ = grouped.withColumn("key_id", rank.cast("long"))
    highest = ranked_.agg(F.max("top")).first() if partitions == HIGHEST_PARTITION else None
    count = _partition_count(partitions, highest[0] if highest is not None else None)
    keys, _ = codec_frame(ranked_, lambda batch: _key_rows(batch, count), KEY_SCHEMA, 0)
    return keys, None


def _counts(key_counts: DataFrame, keys: DataFrame) -> list[Row]:
    """The load's counts (:data:`.decode.COUNTED`, as :func:`.decode.record_counts` gives them) from the
    keys' pass, where no value is malformed: a record is malformed when its key is."""
    reasons = keys.select(F.col("k").alias("key"), F.col("key_malformed").alias("malformed"))
    joined = key_counts.join(reasons, F.col("k").eqNullSafe(F.col("key")))
    return joined.groupBy(*COUNTED).agg(*rolled_up_counts()).collect()


def _driver_counts(driver: _DriverKeys) -> list[Row]:
    """:func:`_counts` of the rows the driver holds (no Spark job): the key counts' rows with their key's
    reason, rolled up (:data:`.decode.ROLL_UP`) per :data:`.decode.COUNTED` group."""
    decoded = driver.decoded
    reasons = dict(zip(decoded.column("k").to_pylist(), decoded.column("key_malformed").to_pylist(), strict=True))
    malformed = pa.array([reasons[k] for k in driver.counted.column("k").to_pylist()], pa.string())
    rolled = driver.counted.append_column("malformed", malformed).group_by(COUNTED).aggregate(list(ROLL_UP.items()))
    return [
        Row(**{name: r[name] for name in COUNTED}, **{name: r[f"{name}_{f}"] for name, f in ROLL_UP.items()})
        for r in rolled.to_pylist()
    ]


def _odd_values(values: DataFrame, limit: int) -> tuple[DataFrame, bool]:
    """Each distinct value of an unusual shape once through the codec (:data:`ODD_SCHEMA`), in the driver
    or the Python workers (:func:`.driver_codec.codec_frame`)."""
    distinct = values.filter(F.col("odd_value").isNotNull()).select(F.col("odd_value").alias("v")).distinct()
    return codec_frame(distinct, _value_rows, ODD_SCHEMA, limit)


def _normal(text: Column) -> tuple[Column, Column]:
    """The sorted compact form of a flat value whose names are distinct, with functions Spark compiles
    (no lambdas): each member becomes ``name\x00scalar`` (neither holds a control character), the members
    are sorted as bytes (printable ASCII: Python's order of the names; ``\x00`` puts a name before any
    longer one it begins), then joined back."""
    marked = F.regexp_replace(text, F.lit(MEMBER_PARTS + ",?"), F.lit("$1\x00$2\x01"))  # "{" m\x01 ... "}"
    members = F.split(F.expr("substring(marked, 2, length(marked) - 3)"), "\x01")
    joined = F.array_join(F.sort_array(members), "\x01")
    quoted = F.replace(F.replace(joined, F.lit("\x00"), F.lit('":')), F.lit("\x01"), F.lit(',"'))
    sorted_ = F.concat(F.lit('{"'), quoted, F.lit("}"))
    return F.when(text == "{}", F.lit("{}")).otherwise(sorted_), marked


def _rank(text: Column) -> Column:
    """The integers of a flat value (:data:`FLAT_DISTINCT`) in order, when every scalar is one (null
    otherwise, and for ``{}`` and a null text); at most 18 digits each: each fits a long. One search
    (:data:`MEMBER_INTEGER`): a member of another scalar gives "", so does any text holding one."""
    scalars = F.regexp_extract_all(text, F.lit(MEMBER_INTEGER), 1)
    integers_only = (F.size(scalars) > 0) & ~F.array_contains(scalars, "")
    return F.when(integers_only, scalars.cast("array<bigint>"))


def _lead(text: Column) -> Column:
    """A flat value's first member's integer (:data:`FIRST_INTEGER`), null where its scalar is not one:
    ``regexp_extract`` gives "" where it does not match, which is never cast (an ANSI cast fails on it).
    ``nullif``, not a ``when``: the search runs once (in a ``when``'s condition and value it ran twice)."""
    return F.nullif(F.regexp_extract(text, FIRST_INTEGER, 1), F.lit("")).cast("bigint")


def with_normal(frame: DataFrame) -> DataFrame:
    """``offset_normal`` filled in where :func:`decode_offset_parts` left it out (``normal=False``): a value
    Spark's expressions read (the codec's values always carry theirs). Only the records an output shows
    need it (a key's last one), so a job sorts each key's offset once, not each record's."""
    missing = F.col("offset_json").isNotNull() & F.col("offset_normal").isNull()
    normal, marked = _normal(F.col("offset_json"))
    columns = frame.columns
    return (
        frame.withColumn("marked", F.when(missing, marked))
        .withColumn("offset_normal", F.when(missing, normal).otherwise(F.col("offset_normal")))
        .select(*columns)
    )


def flat_distinct(text: Column) -> Column:
    """The shape Spark reads (:data:`FLAT_DISTINCT`): a flat object whose member names are distinct. Searched
    for as :data:`FEW_MEMBERS` first (``or`` evaluates its right side only where its left is false): only a
    text of more members, or not of the shape, is searched twice."""
    return text.rlike(FEW_MEMBERS) | text.rlike(FLAT_DISTINCT)


@dataclass(frozen=True)
class OffsetParts:
    """The offsets topic decoded (:func:`decode_offset_parts`), in its two parts: ``records``, one row a
    record of its own columns (position, ``key_id``, ``tombstone``, ``offset_json``, ``offset_normal``,
    ``offset_rank``, ``offset_lead``: the rank's first element wherever the rank has one, and
    ``value_malformed``), and ``keys``, one row a distinct key (:data:`KEY_SCHEMA`:
    what the key decides, ``key_malformed``). A transform that asks something of each key's records reads
    ``records`` and joins the few rows it keeps with ``keys`` (a column of a key carried on each of its
    records costs the copy of its strings on every record); ``frame`` joins them for every record."""

    records: DataFrame
    keys: DataFrame
    frame: DataFrame  # OFFSETS_SCHEMA plus key_id: every record with its key's columns
    # the records per reason and Kafka partition (.decode.record_counts's rows of ``frame``), found in the
    # keys' pass where no value is malformed; None: count ``frame``
    counts: list[Row] | None = None


def decode_offset_parts(
    records: DataFrame,
    partitions: int | str | None = None,
    broadcast_keys: bool = True,
    driver_rows: int = DRIVER_ROWS,
    normal: bool = True,
    keep: Callable[[DataFrame], DataFrame] | None = None,
) -> OffsetParts:
    """The offsets topic's records as :data:`.decode.OFFSETS_SCHEMA`, plus ``key_id`` (``frame``; the
    records' own columns and the keys' apart: :class:`OffsetParts`); ``partitions``: the
    topic's partition count (where each key belongs; :data:`HIGHEST_PARTITION`: its records' highest
    partition + 1; None: unknown). ``broadcast_keys``: the distinct keys and unusual
    values fit every executor's memory. Each distinct key, and each distinct value of an unusual shape, is
    decoded once by the codec: in the driver up to ``driver_rows`` of them (this runs Spark jobs at once),
    else in the Python workers. ``normal=False``: ``offset_normal`` only where the codec decoded the
    value; :func:`with_normal` fills in the others (the transforms do, on the rows they keep).

    ``key_id`` is the key's rank among the distinct keys (in byte order): the same for the same key bytes,
    so the transforms group by it. The records are narrow until the end: their position, ``key_id``, the
    value's text where Spark reads it (``text``) and the bytes of a value of another shape
    (``odd_value``). ``keep`` gets that frame, and what it returns is used instead (a job clusters it by
    key, see :func:`clustered`, and keeps it). The key's columns (its bytes, connector, partition, ...),
    the unusual values' decoding and the integer rank are joined or computed when read."""
    base = _position(records, "offsets")
    text, live = F.col("value").cast("string"), F.col("value").isNotNull()
    read = base.select(
        *(f.name for f in POSITION),
        "key",
        (~live).alias("tombstone"),
        F.when(live & flat_distinct(text), text).alias("text"),  # the shape Spark reads
        "value",
    )
    values = read.select(  # a projection of its own: the text's regular expressions run once a record
        *(f.name for f in POSITION),
        "key",
        "tombstone",
        "text",
        F.when(live & F.col("text").isNull(), F.col("value")).alias("odd_value"),
    )
    key_counts = _key_counts(base)
    keys, driver = _keys(key_counts, partitions, driver_rows)
    local_keys = driver is not None

    def join(left: DataFrame, right: DataFrame, on: Column | str, local: bool) -> DataFrame:
        return left.join(F.broadcast(right) if local or broadcast_keys else right, on, "left")

    ids = keys.select("k", "key_id")
    values = join(values, ids, values["key"].eqNullSafe(ids["k"]), local_keys).drop("key", "k")
    if keep is not None:
        values = keep(values)
    odd, local_odd = _odd_values(values, driver_rows)
    # whether a value may be malformed: the unusual values decoded in the workers are not known yet
    may_be_malformed = not local_odd or not odd.filter(F.col("value_malformed").isNotNull()).isEmpty()
    counts = None
    if not may_be_malformed:
        counts = _driver_counts(driver) if driver is not None else _counts(key_counts, keys)
    own = join(values, odd, values["odd_value"] == odd["v"], local_odd)
    text_ = F.col("text")  # the value's text where Spark reads it; else the codec's columns (joined above)
    sorted_form, marked = _normal(text_)
    if normal:
        own = own.withColumn("marked", marked)  # _normal's intermediate column
    value_ok = F.col("value_malformed").isNull()
    parts = own.select(
        *(f.name for f in POSITION),
        "key_id",
        "tombstone",
        F.when(value_ok, F.coalesce(text_, F.col("offset_json"))).alias("offset_json"),
        F.when(
            value_ok, F.when(text_.isNotNull(), sorted_form if normal else None).otherwise(F.col("offset_normal"))
        ).alias("offset_normal"),
        # from the text Spark reads, else the codec's
        F.coalesce(_rank(text_), F.when(value_ok, F.col("offset_rank"))).alias("offset_rank"),
        # the rank's first element where the rank has one, without the rank (a search that ends at the
        # first member); else null or, from the text Spark reads, its first member's integer
        F.coalesce(_lead(text_), F.when(value_ok, F.get(F.col("offset_rank"), 0))).alias("offset_lead"),
        "value_malformed",
    )
    keyed = join(parts, keys, "key_id", local_keys)
    malformed = F.coalesce(F.col("key_malformed"), F.col("value_malformed"))
    ok = malformed.isNull()

    def unless_malformed(name: str) -> Column:
        return F.when(ok, F.col(name)).alias(name)

    frame = keyed.select(
        *(f.name for f in POSITION),
        F.col("k").alias("key"),
        *(unless_malformed(n) for n in ("connector", "partition_json", "logical_partition")),
        *(unless_malformed(n) for n in ("key_canonical", "expected_kafka_partition")),
        "tombstone",
        *(unless_malformed(n) for n in ("offset_json", "offset_normal", "offset_rank")),
        malformed.alias("malformed"),
        "key_id",
    )
    return OffsetParts(parts, keys.withColumnRenamed("k", "key"), frame, counts)
