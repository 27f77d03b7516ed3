"""The floor's answer check (``bench.spark_floor.different_rows``) and the order of a benchmark's pairs of
runs (``bench.spark_jobs.order``): the floor agrees only when every row of the job's main table is the
floor's on the columns both have, and each pair alternates which side runs first."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from bench.spark_floor import different_rows
from bench.spark_jobs import order

JOB_ROWS = [
    {"connector": "a", "kafka_partition": 1, "offset_json": '{"p":1}', "offset_normal": '{"p":1}'},
    {"connector": "b", "kafka_partition": 2, "offset_json": '{"p":2}', "offset_normal": '{"p":2}'},
]


def _table(root: Path, name: str, rows: list[dict[str, Any]]) -> Path:
    folder = root / name / "tables" / "source_offsets"
    folder.mkdir(parents=True)
    pq.write_table(pa.Table.from_pylist(rows), folder / "part-0.parquet")
    return root / name


def test_the_floor_agrees_on_the_columns_both_have_in_any_row_order(tmp_path: Path) -> None:
    floor = [{k: v for k, v in r.items() if k != "offset_normal"} for r in reversed(JOB_ROWS)]
    job, theirs = _table(tmp_path, "job", JOB_ROWS), _table(tmp_path, "floor", floor)
    assert different_rows("source_offsets", job, theirs) == (2, 2, [])


def test_a_row_only_one_side_has_is_named_with_its_side(tmp_path: Path) -> None:
    floor = [JOB_ROWS[0], {**JOB_ROWS[1], "offset_json": '{"p":3}'}]
    job, theirs = _table(tmp_path, "job", JOB_ROWS), _table(tmp_path, "floor", floor)
    rows, floor_rows, only = different_rows("source_offsets", job, theirs)
    assert (rows, floor_rows) == (2, 2)
    assert [line.split(":")[0] for line in only] == ["job", "floor"]
    assert '{"p":2}' in only[0] and '{"p":3}' in only[1]


def test_a_row_twice_on_one_side_is_a_difference(tmp_path: Path) -> None:
    job = _table(tmp_path, "job", [*JOB_ROWS, JOB_ROWS[1]])
    theirs = _table(tmp_path, "floor", [*JOB_ROWS, JOB_ROWS[0]])
    rows, floor_rows, only = different_rows("source_offsets", job, theirs)
    assert (rows, floor_rows) == (3, 3)
    assert [line.split(":")[0] for line in only] == ["job", "floor"]


def test_pairs_alternate_which_side_runs_first() -> None:
    assert [order("floor", r) for r in range(3)] == [["after", "floor"], ["floor", "after"], ["after", "floor"]]
    assert [order("before", r) for r in range(2)] == [["before", "after"], ["after", "before"]]
    assert order(None, 1) == ["after"]
