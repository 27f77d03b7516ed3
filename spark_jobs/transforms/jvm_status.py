"""The status topic decoded mostly in the JVM, with the sidecar's codec where the exact rules need it.

:func:`decode_status_records` gives exactly the rows of :func:`.decode.decode_status_records_per_record`:

- keys: each *distinct* key once through :func:`control_plane.codecs.parse_status_key` (the worker's
  own key parsing: task numbers, ``:connector-`` separators), joined back to its records;
- values of the exact shape the worker writes (``{"state":...,"trace":...,"worker_id":...,"generation":
  ...}`` with or without ``"version"``, or ``{"topic":{"name":...,"connector":...,"task":...,
  "discoverTimestamp":...}}``) whose strings are printable ASCII without escapes and whose integers fit
  their Java type, under a key of the matching kind: read with Spark's regular expressions;
- every other record (a trace with its escaped newlines, non-ASCII names, a malformed key or value, a
  value of another kind's shape) goes to the codec, record by record.

A value's pattern runs once a record (:func:`_groups`), and where the caller keeps the decoded records
(``keep``), the records of other shapes are found in what it keeps: the records are read and matched once.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator

import pyarrow as pa
from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql.pandas.types import to_arrow_schema
from pyspark.sql.types import BinaryType, IntegerType, StringType, StructField, StructType

from control_plane.codecs import StatusKey, parse_status_key

from .decode import POSITION, STATUS_SCHEMA, _position, _status_rows, decode_status_positioned
from .driver_codec import DRIVER_ROWS, decoded_frame, in_workers, take
from .jvm_decode import _CHAR

_TEXT = f"({_CHAR}*)"
_NONEMPTY = f"({_CHAR}+)"
_INT32 = r"(-?[1-9][0-9]{0,9}|0)"  # checked against the int range below
_INT64 = r"(-?[1-9][0-9]{0,17}|0)"  # 18 digits: always a long
_ESCAPE = r'\\[\\"/bfnrt]'  # JSON's short escapes (not \uXXXX): a trace's \n and \t
# groups: 1 state, 2 trace (with its quotes, or null), 3 worker_id, 4 generation. The trace's loop is
# possessive (``*+``): java.util.regex matches a greedy loop over an alternation by recursion, one level
# a character, and a trace of some thousands of characters overflowed the executor thread's stack (a
# StackOverflowError that ends a local Spark's JVM); a possessive loop is matched iteratively, and
# matches the same strings here (neither alternative can match the closing quote).
STATE_VALUE = (
    rf'^\{{"state":"{_NONEMPTY}","trace":(null|"(?:{_CHAR}|{_ESCAPE})*+"),"worker_id":"{_TEXT}","generation":{_INT32}'
    rf'(?:,"version":(?:null|"{_CHAR}*"))?\}}\z'
)
# groups: 1 name, 2 connector, 3 task, 4 discoverTimestamp
TOPIC_VALUE = (
    rf'^\{{"topic":\{{"name":"{_TEXT}","connector":"{_TEXT}","task":{_INT32},"discoverTimestamp":{_INT64}\}}\}}\z'
)

KEY_SCHEMA = StructType(
    [
        StructField("k", BinaryType(), True),
        StructField("key_kind", StringType(), True),  # connector, task, topic; null: the codec decides
        StructField("key_connector", StringType(), True),
        StructField("key_task", IntegerType(), True),
        StructField("key_topic", StringType(), True),
    ]
)
INT32 = (-(2**31), 2**31 - 1)


def _key_rows(batch: pa.RecordBatch) -> dict[str, list[object]]:
    out: dict[str, list[object]] = {f.name: [] for f in KEY_SCHEMA.fields}
    for key in batch.column("k").to_pylist():
        parsed = parse_status_key(key)
        known = parsed if isinstance(parsed, StatusKey) else None  # else: the codec, per record
        out["k"].append(key)
        out["key_kind"].append(known.kind.value.removeprefix("status-").rstrip("-") if known else None)
        out["key_connector"].append(known.connector if known else None)
        out["key_task"].append(known.task if known else None)
        out["key_topic"].append(known.topic if known else None)
    return out


def _keys(records: DataFrame) -> DataFrame:
    schema = to_arrow_schema(KEY_SCHEMA)

    def decode(batches: Iterable[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            yield pa.RecordBatch.from_pydict(_key_rows(batch), schema=schema)

    return in_workers(records.select(F.col("key").alias("k")).distinct(), decode, KEY_SCHEMA)


def _odd_rows(batch: pa.RecordBatch) -> dict[str, list[object]]:
    """The codec on distinct (key, value) pairs: the pair, then the decoded columns."""
    n = batch.num_rows
    positioned = pa.RecordBatch.from_pydict(
        {
            "kafka_partition": [0] * n,
            "kafka_offset": [0] * n,
            "timestamp": [0] * n,
            "key": batch.column("ok").to_pylist(),
            "value": batch.column("ov").to_pylist(),
        }
    )
    decoded = _status_rows(positioned)
    columns = {f"o_{f.name}": decoded[f.name] for f in DECODED}
    return {"ok": batch.column("ok").to_pylist(), "ov": batch.column("ov").to_pylist(), **columns}


# between the groups of a match (:func:`_groups`): a control character, which no group (of _CHAR) holds
_SEPARATOR = "\x01"


def _groups(pattern: str, n: int) -> Column:
    """The ``n`` groups of ``pattern``'s match of the whole ``text`` (group ``i`` at index ``i``), or null
    where it does not match, in one match a record: the text replaced by its groups, each after a
    separator. Matched, the replacement begins with the separator; unmatched, the text is left as it was
    (but for bytes that are not UTF-8, each read as U+FFFD), so a text that begins with the patterns' '{'
    still begins with it. ``split`` keeps empty groups (its limit is -1) and splits at one literal
    character, without a regular expression."""
    text = F.col("text")
    replaced = F.regexp_replace(text, pattern, "".join(f"{_SEPARATOR}${i}" for i in range(1, n + 1)))
    return F.when(text.startswith("{") & replaced.startswith(_SEPARATOR), F.split(replaced, _SEPARATOR))


def _group(n: int) -> Column:
    """Group ``n`` of the value's match (:func:`_shaped`'s ``groups``), null where it did not match."""
    return F.get(F.col("groups"), n)


def _int32(column: Column) -> Column:
    return column.try_cast("bigint").between(*INT32)  # "" where the pattern did not match: null


UNESCAPE = [("\\n", "\n"), ("\\t", "\t"), ("\\r", "\r"), ("\\b", "\b"), ("\\f", "\f"), ('\\"', '"'), ("\\/", "/")]


def _unescape(text: Column) -> Column:
    """A JSON string's content whose escapes are all short ones (:data:`_ESCAPE`), unescaped: each escaped
    backslash first to a placeholder (no control character is in the text raw), so that each remaining backslash
    begins an escape, read left to right as JSON does."""
    out = F.replace(text, F.lit("\\\\"), F.lit("\x00"))
    for escaped, char in UNESCAPE:
        out = F.replace(out, F.lit(escaped), F.lit(char))
    return F.replace(out, F.lit("\x00"), F.lit("\\"))


def _shaped(joined: DataFrame) -> DataFrame:
    """With ``groups``, the match of the value's pattern for its key's kind, and ``shape``: state, topic,
    tombstone, or null where the codec decides."""
    kind = F.col("key_kind")
    is_state, is_topic = kind.isin("connector", "task"), kind == "topic"
    text = joined.withColumn("text", F.col("value").cast("string")).withColumn(
        "groups", F.when(is_state, _groups(STATE_VALUE, 4)).when(is_topic, _groups(TOPIC_VALUE, 4))
    )
    return text.withColumn(
        "shape",
        F.when(kind.isNull(), None)
        .when(F.col("value").isNull(), "tombstone")
        .when(is_state & _int32(_group(4)), "state")
        .when(is_topic & _int32(_group(3)), "topic"),
    )


def _fast_columns() -> list[Column]:
    """The decoded columns of a record of a known ``shape``, read by Spark's expressions."""
    state, topic = F.col("shape") == "state", F.col("shape") == "topic"
    trace = _group(2)
    return [
        F.col("key_kind").alias("kind"),
        F.col("key_connector").alias("connector"),
        F.when(topic, _group(3).try_cast("int")).otherwise(F.col("key_task")).alias("task"),
        F.col("key_topic").alias("topic"),
        F.when(state, _group(1)).alias("state"),
        F.when(state, _group(3)).alias("worker_id"),
        F.when(state, _group(4).try_cast("int")).alias("generation"),
        F.when(state & (trace != "null"), _unescape(trace.substr(F.lit(2), F.length(trace) - 2))).alias("trace"),
        F.when(topic, _group(4).try_cast("bigint")).alias("discover_timestamp"),
        (F.col("shape") == "tombstone").alias("tombstone"),
        F.lit(None).cast("string").alias("malformed"),
    ]


DECODED = [f for f in STATUS_SCHEMA.fields if f.name not in {p.name for p in POSITION}]
ODD_SCHEMA = StructType(
    [
        StructField("ok", BinaryType(), True),
        StructField("ov", BinaryType(), True),
        *(StructField(f"o_{f.name}", f.dataType, f.nullable) for f in DECODED),
    ]
)


def _with_keys(base: DataFrame, keys: DataFrame, broadcast_keys: bool) -> DataFrame:
    return base.join(F.broadcast(keys) if broadcast_keys else keys, base["key"].eqNullSafe(keys["k"]), "left")


def _in_workers(base: DataFrame, keys: DataFrame, broadcast_keys: bool) -> DataFrame:
    """Keys, and the records of other shapes, through the codec in the Python workers."""
    shaped = _shaped(_with_keys(base, keys, broadcast_keys))
    fast = shaped.filter(F.col("shape").isNotNull()).select(*(f.name for f in POSITION), *_fast_columns())
    codec = decode_status_positioned(
        shaped.filter(F.col("shape").isNull()).select(*(f.name for f in POSITION), "key", "value")
    )
    return fast.unionByName(codec).select(*(f.name for f in STATUS_SCHEMA.fields))


def _as_it_is(frame: DataFrame) -> DataFrame:
    return frame


def decode_status_records(
    records: DataFrame,
    broadcast_keys: bool = True,
    driver_rows: int = DRIVER_ROWS,
    keep: Callable[[DataFrame], DataFrame] | None = None,
) -> DataFrame:
    """The status topic's records as :data:`.decode.STATUS_SCHEMA`. Distinct keys, and distinct records of
    other shapes, up to ``driver_rows`` go through the codec in the driver (this runs Spark jobs at once),
    more in the Python workers. ``keep`` (the caller's ``persist``, as :func:`.jvm_decode.decode_offset_parts`
    takes it; None: nothing kept) holds the decoded records: the records of other shapes are then found in
    what it keeps, without matching the values again, and their decoded rows joined to it are kept in turn."""
    if keep is None:
        keep = _as_it_is
    base = _position(records, "status")
    spark = base.sparkSession
    found = take(base.select(F.col("key").alias("k")).distinct(), driver_rows) if driver_rows > 0 else None
    if found is None:
        return keep(_in_workers(base, _keys(base), broadcast_keys))
    keys = decoded_frame(spark, found, _key_rows, KEY_SCHEMA)
    shaped = _shaped(_with_keys(base, keys, broadcast_keys))
    odd = F.col("shape").isNull()
    matched = keep(  # the decoded columns, and the key and value of a record of another shape
        shaped.select(
            *(f.name for f in POSITION),
            *_fast_columns(),
            "shape",
            F.when(odd, F.col("key")).alias("ok"),
            F.when(odd, F.col("value")).alias("ov"),
        )
    )
    pairs = take(matched.filter(odd).select("ok", "ov").distinct(), driver_rows)
    if pairs is None:  # many: the codec in the Python workers
        codec = decode_status_positioned(
            matched.filter(odd).select(
                *(f.name for f in POSITION), F.col("ok").alias("key"), F.col("ov").alias("value")
            )
        )
        columns = [f.name for f in STATUS_SCHEMA.fields]
        return keep(matched.filter(~odd).select(*columns).unionByName(codec.select(*columns)))
    if pairs.num_rows == 0:
        return matched.select(*(f.name for f in STATUS_SCHEMA.fields))
    decoded = decoded_frame(spark, pairs, _odd_rows, ODD_SCHEMA)
    on = matched["ok"].eqNullSafe(decoded["ok"]) & matched["ov"].eqNullSafe(decoded["ov"]) & matched["shape"].isNull()
    joined = matched.join(F.broadcast(decoded), on, "left")
    known = F.col("shape").isNotNull()
    return keep(
        joined.select(
            *(f.name for f in POSITION),
            *(F.when(known, F.col(f.name)).otherwise(F.col(f"o_{f.name}")).alias(f.name) for f in DECODED),
        )
    )
