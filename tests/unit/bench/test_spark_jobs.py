"""The comparison of two output folders of one job (``tests.support.spark_outputs``: ``bench/spark_jobs.py``'s
``--before``, local mode against a Spark Connect server in the tests): its verdict "outputs the same" must
hold only when the reports (times aside) and the tables (rows in any order) are the same."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from tests.support.spark_outputs import different_outputs


def _folder(root: Path, name: str, report: dict[str, Any], plan: dict[str, Any], rows: list[dict[str, Any]]) -> Path:
    folder = root / name
    (folder / "tables" / "restore_plan").mkdir(parents=True)
    (folder / "offsets-report.json").write_text(json.dumps(report))
    (folder / "restore-plan.json").write_text(json.dumps(plan))
    pq.write_table(pa.Table.from_pylist(rows), folder / "tables" / "restore_plan" / "part-0.parquet")
    return folder


REPORT = {
    "job": "offsets-reconcile",
    "generated_at": "2026-11-27T08:00:00.000Z",
    "elapsed_s": 41.2,
    "restore_plan": {"as_of": "2026-11-27T08:00:00.000Z", "connectors": 2},
    "summary": {"source_partitions": {"total": 2, "live": 2}},
}
PLAN = {"as_of": "2026-11-27T08:00:00.000Z", "connectors": {"a": {"body": None}}}
ROWS = [{"connector": "a", "partition_json": '{"p":1}'}, {"connector": "b", "partition_json": '{"p":2}'}]


def test_the_same_outputs_at_other_times_and_in_another_row_order_are_the_same(tmp_path: Path) -> None:
    later = {
        **REPORT,
        "generated_at": "2026-11-27T09:00:00.000Z",
        "elapsed_s": 39.0,
        "restore_plan": {"as_of": "2026-11-27T09:00:00.000Z", "connectors": 2},
    }
    a = _folder(tmp_path, "a", REPORT, PLAN, ROWS)
    b = _folder(tmp_path, "b", later, {**PLAN, "as_of": "2026-11-27T09:00:00.000Z"}, ROWS[::-1])
    assert different_outputs(a, b) == []


def test_a_nested_difference_beside_a_time_is_seen(tmp_path: Path) -> None:
    other = {**REPORT, "restore_plan": {"as_of": "2026-11-27T09:00:00.000Z", "connectors": 3}}
    a = _folder(tmp_path, "a", REPORT, PLAN, ROWS)
    b = _folder(tmp_path, "b", other, PLAN, ROWS)
    assert different_outputs(a, b) == ["offsets-report.json"]


def test_a_different_row_and_a_file_only_one_folder_has_are_seen(tmp_path: Path) -> None:
    a = _folder(tmp_path, "a", REPORT, PLAN, ROWS)
    b = _folder(tmp_path, "b", REPORT, PLAN, [ROWS[0], {**ROWS[1], "partition_json": '{"p":3}'}])
    (b / "topic-audit.json").write_text("{}")
    (b / "tables" / "connectors").mkdir()
    pq.write_table(pa.Table.from_pylist([{"connector": "a"}]), b / "tables" / "connectors" / "part-0.parquet")
    assert different_outputs(a, b) == ["topic-audit.json", "tables/connectors", "tables/restore_plan"]
    assert different_outputs(b, a) == ["topic-audit.json", "tables/connectors", "tables/restore_plan"]
