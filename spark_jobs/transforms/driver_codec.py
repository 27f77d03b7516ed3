"""The codecs run in the driver on the few rows that need them (distinct keys, values of unusual shapes,
the config topic), so that a job starts no Python worker for them.

A Python worker costs its start (an interpreter importing pyarrow and the codecs, per executor and per
stage) and its memory beside the JVM; the rows the exact-bytes rules need are few (each distinct key
once, the rare value that Spark's expressions do not read), so the driver takes them with one
``toArrow`` and hands back a small frame for a broadcast join. More than :data:`DRIVER_ROWS` rows: the
caller falls back to the Python workers (``mapInArrow``), as before.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence

import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.pandas.types import to_arrow_schema
from pyspark.sql.types import StructType

from ..session import code_for_workers, is_connect

DRIVER_ROWS = 200_000  # rows the driver decodes itself; more go to the Python workers
Rows = Callable[[pa.RecordBatch], dict[str, list[object]]]  # a codec over a batch: columns of a schema


def take(frame: DataFrame, limit: int) -> pa.Table | None:
    """``frame``'s rows as an Arrow table, or None when it has more than ``limit``."""
    table = frame.limit(limit + 1).toArrow()
    return None if table.num_rows > limit else table


def decoded_table(table: pa.Table, rows: Rows, schema: StructType) -> pa.Table:
    """``rows`` (a batch in, columns of ``schema`` out) over ``table`` in the driver."""
    arrow = to_arrow_schema(schema)
    batches = [pa.RecordBatch.from_pydict(rows(batch), schema=arrow) for batch in table.to_batches()]
    if not batches:  # from Arrow too (one empty chunk): a frame of an empty Python list starts a Python worker
        batches = [pa.RecordBatch.from_pydict({name: [] for name in arrow.names}, schema=arrow)]
    return pa.Table.from_batches(batches, schema=arrow)


# The first Spark release whose Spark Connect server reads every record batch of the Arrow stream a local
# relation sends (SPARK-53342, "Fix Arrow converter to handle multiple record batches in single IPC stream")
EVERY_BATCH_FROM = (4, 0, 1)


def reads_first_batch_only(server_version: str) -> bool:
    """Whether a Spark Connect server of ``server_version`` (``spark.version``: the server's, not this
    client's) keeps only the first record batch of a local relation: 4.0.0 and older."""
    release = tuple(int(part) for part in server_version.split("-", 1)[0].split(".")[:3] if part.isdigit())
    return release < EVERY_BATCH_FROM


def arrow_frame(spark: SparkSession, table: pa.Table, schema: StructType) -> DataFrame:
    """``table`` as a local frame of ``schema``. On a Spark Connect server that reads only the first record
    batch (:func:`reads_first_batch_only`: a table of 27,875 rows in 3 batches became a frame of 10,000 on
    4.0.0) its columns go in one chunk each; a classic session and newer servers read every batch."""
    if table.num_rows and len(table.to_batches()) > 1 and is_connect(spark) and reads_first_batch_only(spark.version):
        table = table.combine_chunks()
    return spark.createDataFrame(table, schema)


def decoded_frame(spark: SparkSession, table: pa.Table, rows: Rows, schema: StructType) -> DataFrame:
    """:func:`decoded_table` as a local frame."""
    return arrow_frame(spark, decoded_table(table, rows, schema), schema)


def codec_frame(frame: DataFrame, rows: Rows, schema: StructType, limit: int) -> tuple[DataFrame, bool]:
    """``rows`` (a batch in, columns of ``schema`` out) over ``frame``: in the driver when it has at most
    ``limit`` rows (True: a small local frame, fit for a broadcast), else in the Python workers."""
    table = take(frame, limit) if limit > 0 else None
    if table is not None:
        return decoded_frame(frame.sparkSession, table, rows, schema), True
    arrow = to_arrow_schema(schema)

    def decode(batches: Iterable[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            yield pa.RecordBatch.from_pydict(rows(batch), schema=arrow)

    return in_workers(frame, decode, schema), False


def in_workers(
    frame: DataFrame, decode: Callable[[Iterable[pa.RecordBatch]], Iterator[pa.RecordBatch]], schema: StructType
) -> DataFrame:
    """``frame.mapInArrow(decode, schema)``, the Python workers' code sent first where it must be
    (a Spark Connect server: :func:`..session.code_for_workers`)."""
    code_for_workers(frame.sparkSession)
    return frame.mapInArrow(decode, schema)


def local_frame(spark: SparkSession, rows: Sequence[Sequence[object]], schema: StructType) -> DataFrame:
    """A frame of the driver's ``rows`` (tuples in ``schema``'s order), handed to the JVM as Arrow.
    ``createDataFrame`` of a Python list pickles the rows through a Python worker, which would start one
    (and keep its memory) for a few rows."""
    arrow = to_arrow_schema(schema)
    columns = {f.name: [row[i] for row in rows] for i, f in enumerate(schema.fields)}
    return arrow_frame(spark, pa.Table.from_pydict(columns, schema=arrow), schema)
