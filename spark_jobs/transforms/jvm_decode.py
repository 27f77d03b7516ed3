"""The offsets topic decoded mostly in the JVM, with the sidecar's codecs where the exact-bytes rules need them.

:func:`decode_offsets` gives exactly the rows of :func:`.decode.decode_offsets_per_record` (the codec run
on every record), without running Python on every record:

- keys: each *distinct* key is decoded once by the codec (:func:`control_plane.codecs.parse_offset_key`,
  the worker's encoding of it, the partition murmur2 picks), and joined back to its records. A partition's
  commits all carry its key, so there are few distinct keys (one per source partition).
- values: a value of the shape a worker writes for almost every connector, a flat JSON object of
  printable-ASCII keys and scalars (strings without escapes, integers of at most 18 digits, booleans,
  null), no white space and no repeated member, is decoded with Spark's own regular expressions: the
  stored text, the sorted compact form, the integer rank. For that shape the text is strict JSON, Python
  reads it as a ``dict`` of the same scalars, and ``json.dumps`` writes each scalar as it is written
  there, so both ways give the same strings. Every other value (floats, escapes, non-ASCII, nesting,
  white space, not JSON at all) goes to the codec, record by record: :func:`~control_plane.codecs.
  parse_offset_value`. The test ``test_spark_jvm_decode`` runs both ways on tricky records.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import cast

import pyarrow as pa
import pyarrow.compute
from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql.pandas.types import to_arrow_schema
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

from .decode import POSITION, _key_fields, _position
from .driver_codec import DRIVER_ROWS, decoded_frame, take
from .jsonnorm import normal_json, rank_of

# Java regular expressions (rlike finds, so both ends are anchored; \z, not $, which allows a final newline)
_CHAR = r"[\x20\x21\x23-\x5b\x5d-\x7e]"  # printable ASCII but '"' and '\'
_STRING = f'"{_CHAR}*"'
_INTEGER = r"(?:-?[1-9][0-9]{0,17}|0)"  # fits a long; no "-0" (Python reads it as 0 and writes "0")
_SCALAR = f"(?:{_STRING}|{_INTEGER}|true|false|null)"
_MEMBER = f"{_STRING}:{_SCALAR}"
FLAT_OBJECT = rf"^\{{(?:{_MEMBER}(?:,{_MEMBER})*)?\}}\z"
MEMBER_PARTS = f'"({_CHAR}*)":({_SCALAR})'  # group 1: the name, group 2: the value's text

KEY_SCHEMA = StructType(
    [
        StructField("k", BinaryType(), True),
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
VALUES_SCHEMA = StructType(
    [*POSITION, StructField("key", BinaryType(), True), StructField("tombstone", BooleanType(), False), *VALUE_FIELDS]
)


def _key_rows(batch: pa.RecordBatch, partitions: int | None) -> dict[str, list[object]]:
    """Each key of the batch's ``k`` column through the codec (:data:`KEY_SCHEMA`)."""
    out: dict[str, list[object]] = {f.name: [] for f in KEY_SCHEMA.fields}
    for key in batch.column("k").to_pylist():
        parsed = parse_offset_key(key)
        row: dict[str, object] = dict.fromkeys(out)
        row["k"] = key
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


def _keys(records: DataFrame, partitions: int | None) -> DataFrame:
    """Each distinct key once, through the codec."""
    schema = to_arrow_schema(KEY_SCHEMA)

    def decode(batches: Iterable[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            yield pa.RecordBatch.from_pydict(_key_rows(batch, partitions), schema=schema)

    return records.select(F.col("key").alias("k")).distinct().mapInArrow(decode, KEY_SCHEMA)


def _codec_values(records: DataFrame) -> DataFrame:
    """The values of other shapes, record by record through the codec."""
    schema = to_arrow_schema(VALUES_SCHEMA)
    position = [f.name for f in POSITION]

    def decode(batches: Iterable[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            out: dict[str, list[object]] = {name: batch.column(name).to_pylist() for name in [*position, "key"]}
            values = batch.column("value").to_pylist()
            assert None not in values  # tombstones are the JVM's
            out.update(_value_columns(cast(list[bytes], values)), tombstone=[False] * len(values))
            yield pa.RecordBatch.from_pydict(out, schema=schema)

    return records.mapInArrow(decode, VALUES_SCHEMA)


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
    """The integers of a flat value in order, when every scalar is one (null otherwise, and for ``{}``)."""
    scalars = F.regexp_extract_all(text, F.lit(MEMBER_PARTS), 2)
    integers = scalars.try_cast("array<bigint>")  # a string, boolean or null: a null element
    all_integers = (F.size(scalars) > 0) & F.element_at(F.sort_array(integers), 1).isNotNull()  # nulls first
    return F.when(all_integers, integers)


def with_normal(frame: DataFrame) -> DataFrame:
    """``offset_normal`` filled in where :func:`decode_offsets` left it out (``normal=False``): a value
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


def _flat(text: Column) -> Column:
    return text.rlike(FLAT_OBJECT)


def _distinct_names(text: Column) -> Column:
    names = F.regexp_extract_all(text, F.lit(MEMBER_PARTS), 1)
    return F.size(F.array_distinct(names)) == F.size(names)


def _in_workers(base: DataFrame, partitions: int | None, broadcast_keys: bool) -> DataFrame:
    """Keys and unusual values through the codec in the Python workers (too many for the driver)."""
    live = F.col("value").isNotNull()
    jvm = live & _flat(F.col("text")) & _distinct_names(F.col("text"))
    shaped = base.withColumn("jvm", ~live | jvm)
    normal, marked = _normal(F.col("text"))
    fast = (
        shaped.filter("jvm")
        .withColumn("marked", marked)
        .select(
            *(f.name for f in POSITION),
            "key",
            (~live).alias("tombstone"),
            F.when(live, F.col("text")).alias("offset_json"),
            F.when(live, normal).alias("offset_normal"),
            F.when(live, _rank(F.col("text"))).alias("offset_rank"),
            F.lit(None).cast("string").alias("value_malformed"),
        )
    )
    values = fast.unionByName(
        _codec_values(shaped.filter(~F.col("jvm")).select(*(f.name for f in POSITION), "key", "value"))
    )
    keys = _keys(base, partitions)
    return values.join(F.broadcast(keys) if broadcast_keys else keys, values["key"].eqNullSafe(keys["k"]), "left")


def _in_driver(
    base: DataFrame, partitions: int | None, broadcast_keys: bool, limit: int, normal_now: bool = True
) -> DataFrame | None:
    """Each distinct key and each distinct value of an unusual shape through the codec in the driver,
    joined back; everything else in the JVM. None when they are more than ``limit``."""
    spark = base.sparkSession
    live = F.col("value").isNotNull()
    odd = live & ~(_flat(F.col("text")) & _distinct_names(F.col("text")))
    wanted = F.array(
        F.struct(F.lit(True).alias("is_key"), F.col("key").alias("b")),
        F.when(odd, F.struct(F.lit(False).alias("is_key"), F.col("value").alias("b"))),
    )
    found = base.select(F.explode(wanted).alias("w")).filter(F.col("w").isNotNull()).select("w.*").distinct()
    table = take(found, limit)
    if table is None:
        return None
    is_key = table.column("is_key")
    keys_table = table.filter(is_key).select(["b"]).rename_columns(["k"])
    odd_table = table.filter(pa.compute.invert(is_key)).select(["b"]).rename_columns(["v"])
    keys = decoded_frame(spark, keys_table, lambda b: _key_rows(b, partitions), KEY_SCHEMA)
    shaped = base.withColumn("odd", odd)
    normal, marked = _normal(F.col("text"))
    jvm = live & ~F.col("odd")
    if odd_table.num_rows:
        values = decoded_frame(spark, odd_table, _value_rows, ODD_SCHEMA)
        shaped = shaped.join(F.broadcast(values), (shaped["value"] == values["v"]) & shaped["odd"], "left")
    else:
        shaped = shaped.select("*", *(F.lit(None).cast(f.dataType).alias(f.name) for f in VALUE_FIELDS))
    values_ = shaped.withColumn("marked", marked).select(
        *(f.name for f in POSITION),
        "key",
        (~live).alias("tombstone"),
        F.when(jvm, F.col("text")).otherwise(F.col("offset_json")).alias("offset_json"),
        (F.when(jvm, normal).otherwise(F.col("offset_normal")) if normal_now else F.col("offset_normal")).alias(
            "offset_normal"
        ),
        F.when(jvm, _rank(F.col("text"))).otherwise(F.col("offset_rank")).alias("offset_rank"),
        "value_malformed",
    )
    return values_.join(F.broadcast(keys) if broadcast_keys else keys, values_["key"].eqNullSafe(keys["k"]), "left")


def decode_offsets(
    records: DataFrame,
    partitions: int | None = None,
    broadcast_keys: bool = True,
    driver_rows: int = DRIVER_ROWS,
    normal: bool = True,
) -> DataFrame:
    """The offsets topic's records as :data:`.decode.OFFSETS_SCHEMA`; ``partitions``: the topic's partition
    count (where each key belongs). ``broadcast_keys``: the distinct keys fit every executor's memory.
    Distinct keys and unusual values up to ``driver_rows`` are decoded in the driver (this runs a Spark
    job at once), more in the Python workers. ``normal=False``: ``offset_normal`` only where the codec
    decoded the value; :func:`with_normal` fills in the others (the transforms do, on the rows they keep)."""
    base = _position(records, "offsets").withColumn("text", F.col("value").cast("string"))
    joined = _in_driver(base, partitions, broadcast_keys, driver_rows, normal) if driver_rows > 0 else None
    if joined is None:
        joined = _in_workers(base, partitions, broadcast_keys)
    malformed = F.coalesce(F.col("key_malformed"), F.col("value_malformed"))
    ok = malformed.isNull()

    def unless_malformed(name: str) -> Column:
        return F.when(ok, F.col(name)).alias(name)

    return joined.select(
        *(f.name for f in POSITION),
        "key",
        *(unless_malformed(n) for n in ("connector", "partition_json", "logical_partition", "key_canonical")),
        unless_malformed("expected_kafka_partition"),
        "tombstone",
        *(unless_malformed(n) for n in ("offset_json", "offset_normal", "offset_rank")),
        malformed.alias("malformed"),
    )
