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

import pyarrow as pa
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
VALUES_SCHEMA = StructType(
    [*POSITION, StructField("key", BinaryType(), True), StructField("tombstone", BooleanType(), False), *VALUE_FIELDS]
)


def _keys(records: DataFrame, partitions: int | None) -> DataFrame:
    """Each distinct key once, through the codec."""
    schema = to_arrow_schema(KEY_SCHEMA)

    def decode(batches: Iterable[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
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
            yield pa.RecordBatch.from_pydict(out, schema=schema)

    return records.select(F.col("key").alias("k")).distinct().mapInArrow(decode, KEY_SCHEMA)


def _codec_values(records: DataFrame) -> DataFrame:
    """The values of other shapes, record by record through the codec."""
    schema = to_arrow_schema(VALUES_SCHEMA)
    position = [f.name for f in POSITION]

    def decode(batches: Iterable[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            out: dict[str, list[object]] = {name: batch.column(name).to_pylist() for name in [*position, "key"]}
            columns: dict[str, list[object]] = {f.name: [] for f in VALUE_FIELDS}
            values = batch.column("value").to_pylist()
            for value in values:
                assert value is not None  # tombstones are the JVM's
                offset = parse_offset_value(value)
                ok = not isinstance(offset, str)  # it decoded, so it is UTF-8 JSON: the text as stored
                columns["offset_json"].append(value.decode("utf-8") if ok else None)
                columns["offset_normal"].append(normal_json(offset) if ok else None)
                columns["offset_rank"].append(rank_of(offset) if ok else None)
                columns["value_malformed"].append(None if ok else offset)
            out.update(columns, tombstone=[False] * len(values))
            yield pa.RecordBatch.from_pydict(out, schema=schema)

    return records.mapInArrow(decode, VALUES_SCHEMA)


def _jvm_values(records: DataFrame) -> DataFrame:
    """Tombstones and flat values, in the JVM."""
    members = F.zip_with(
        F.col("names"), F.col("scalars"), lambda name, scalar: F.struct(name.alias("n"), scalar.alias("s"))
    )
    normal = F.concat(
        F.lit("{"),
        F.array_join(
            F.transform(F.array_sort(members), lambda m: F.concat(F.lit('"'), m["n"], F.lit('":'), m["s"])), ","
        ),
        F.lit("}"),
    )
    integers = F.forall(F.col("scalars"), lambda s: s.rlike(r"^-?[0-9]+\z"))
    rank = F.when((F.size("scalars") > 0) & integers, F.transform(F.col("scalars"), lambda s: s.cast("bigint")))
    live = F.col("value").isNotNull()
    return records.select(
        *(f.name for f in POSITION),
        "key",
        (~live).alias("tombstone"),
        F.when(live, F.col("text")).alias("offset_json"),
        F.when(live, normal).alias("offset_normal"),
        F.when(live, rank).alias("offset_rank"),
        F.lit(None).cast("string").alias("value_malformed"),
    )


def _flat(text: Column) -> Column:
    return text.rlike(FLAT_OBJECT)


def decode_offsets(records: DataFrame, partitions: int | None = None, broadcast_keys: bool = True) -> DataFrame:
    """The offsets topic's records as :data:`.decode.OFFSETS_SCHEMA`; ``partitions``: the topic's partition
    count (where each key belongs). ``broadcast_keys``: the distinct keys fit every executor's memory."""
    base = _position(records, "offsets").withColumn("text", F.col("value").cast("string"))
    parts = (
        F.regexp_extract_all(F.col("text"), F.lit(MEMBER_PARTS), 1),
        F.regexp_extract_all(F.col("text"), F.lit(MEMBER_PARTS), 2),
    )
    shaped = base.withColumn("flat", F.col("value").isNull() | _flat(F.col("text")))
    shaped = shaped.withColumn("names", F.when(F.col("flat") & F.col("value").isNotNull(), parts[0]))
    shaped = shaped.withColumn("scalars", F.when(F.col("flat") & F.col("value").isNotNull(), parts[1]))
    # a repeated member: Python keeps the last value at the first one's place; the codec decides
    jvm = F.col("flat") & (F.col("value").isNull() | (F.size(F.array_distinct("names")) == F.size("names")))
    shaped = shaped.withColumn("jvm", jvm)
    values = _jvm_values(shaped.filter("jvm")).unionByName(
        _codec_values(shaped.filter(~F.col("jvm")).select(*(f.name for f in POSITION), "key", "value"))
    )
    keys = _keys(base, partitions)
    joined = values.join(F.broadcast(keys) if broadcast_keys else keys, values["key"].eqNullSafe(keys["k"]), "left")
    malformed = F.coalesce(F.col("key_malformed"), F.col("value_malformed"))
    ok = malformed.isNull()

    def unless_malformed(name: str) -> Column:
        return F.when(ok, F.col(name)).alias(name)

    decoded = joined.select(
        *(f.name for f in POSITION),
        "key",
        *(unless_malformed(n) for n in ("connector", "partition_json", "logical_partition", "key_canonical")),
        unless_malformed("expected_kafka_partition"),
        "tombstone",
        *(unless_malformed(n) for n in ("offset_json", "offset_normal", "offset_rank")),
        malformed.alias("malformed"),
    )
    return decoded
