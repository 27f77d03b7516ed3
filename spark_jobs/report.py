"""Writing a job's results: Parquet tables for analysts, a small JSON report for dashboards and for the
sidecar to serve, and a short human summary. Times are milliseconds since the epoch inside the jobs;
the JSON shows them as ISO-8601 (UTC) and the Parquet tables as timestamps."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from control_plane.rules.times import iso

TIME_COLUMNS = {
    "timestamp",
    "at",
    "from_time",
    "created",
    "deleted",
    "first_commit",
    "last_commit",
    "last_record",
    "first_seen",
    "last_seen",
    "first_discovered",
    "last_used",
    "ended",
    "now",
    "last_change",
    "changed_at",
    "named_at",
    "until",
    "first_kept",
}
JSON_COLUMNS = {"partition_json", "offset_json", "from_offset", "to_offset"}


def _json_value(name: str, value: Any) -> Any:
    if value is None:
        return None
    if name in TIME_COLUMNS and isinstance(value, int):
        return iso(value)
    if name in JSON_COLUMNS and isinstance(value, str):
        return json.loads(value)
    if hasattr(value, "asDict"):
        return {k: _json_value(k, v) for k, v in value.asDict(recursive=False).items()}
    if isinstance(value, list):
        return [_json_value(name, v) for v in value]
    if isinstance(value, dict):
        return {k: _json_value(k, v) for k, v in value.items()}
    if isinstance(value, (bytes, bytearray)):
        return bytes(value).decode("utf-8", "replace")
    return value


def rows(df: DataFrame, limit: int | None = None, order: list[str] | None = None) -> list[dict[str, Any]]:
    """The rows as JSON-ready dicts (times as ISO strings, JSON columns parsed, key order kept)."""
    if order:
        df = df.orderBy(*order)
    if limit is not None:
        df = df.limit(limit)
    return [{k: _json_value(k, v) for k, v in row.asDict(recursive=False).items()} for row in df.collect()]


FINDING_ROWS = 10_000  # a finding of at most this many rows is counted from its collected rows


def finding(df: DataFrame, limit: int, order: list[str]) -> dict[str, Any]:
    """A finding for the JSON report: its full count and at most ``limit`` rows. One Spark action: the
    first :data:`FINDING_ROWS` rows in ``order`` are collected, and a finding with no more rows than that
    is counted from them; only a larger one is counted by a second action."""
    cap = max(limit, FINDING_ROWS)
    top = df.orderBy(*order).limit(cap + 1).collect() if order else df.limit(cap + 1).collect()
    count = len(top) if len(top) <= cap else df.count()
    shown = [{k: _json_value(k, v) for k, v in row.asDict(recursive=False).items()} for row in top[:limit]]
    return {"count": count, "truncated": count > len(shown), "items": shown}


def finding_of_rows(items: list[dict[str, Any]], limit: int) -> dict[str, Any]:
    """A finding from rows the driver already holds (in the finding's order, as ``Row.asDict()``)."""
    shown = [{k: _json_value(k, v) for k, v in item.items()} for item in items[:limit]]
    return {"count": len(items), "truncated": len(items) > len(shown), "items": shown}


def for_parquet(df: DataFrame) -> DataFrame:
    """Millisecond columns as timestamps."""
    return df.select(
        *(
            F.timestamp_millis(F.col(f.name)).alias(f.name)
            if f.name in TIME_COLUMNS and f.dataType.typeName() == "long"
            else F.col(f.name)
            for f in df.schema.fields
        )
    )


def write_tables(out: Path, tables: dict[str, DataFrame]) -> dict[str, str]:
    written = {}
    for name, df in tables.items():
        path = out / "tables" / name
        for_parquet(df).coalesce(1).write.mode("overwrite").parquet(str(path))
        written[name] = os.path.relpath(path, out)
    return written


def write_json(path: Path, data: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    tmp.replace(path)
