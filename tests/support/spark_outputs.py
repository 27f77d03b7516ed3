"""Two output folders of one Spark job compared: its JSON reports without what differs between two runs
of the same job on the same records (when each ran, how long it took), and its Parquet tables row for
row in any order. Local mode against a cluster or a Spark Connect server (the tests), one version of
the code against another (bench/spark_jobs.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

# per output file: the paths of what differs between two runs of the same code on the same records
RUN_TIMES: dict[str, tuple[tuple[str, ...], ...]] = {
    "offsets-report.json": (("generated_at",), ("elapsed_s",), ("restore_plan", "as_of")),
    "restore-plan.json": (("as_of",),),
    "topic-audit.json": (("generated_at",), ("elapsed_s",)),
}


def without_run_times(name: str, data: Any) -> Any:
    """``data`` (the JSON file ``name``) without its :data:`RUN_TIMES` (changed in place, returned)."""
    for *parents, key in RUN_TIMES.get(name, ()):
        within = data
        for parent in parents:
            within = within.get(parent) if isinstance(within, dict) else None
        if isinstance(within, dict):
            within.pop(key, None)
    return data


def different_outputs(a: Path, b: Path) -> list[str]:
    """What differs between two output folders of one job: its JSON files (:data:`RUN_TIMES` aside) and
    its Parquet tables, row for row in any order."""
    found = []
    for name in sorted({p.name for folder in (a, b) for p in folder.glob("*.json")}):
        ours, theirs = (
            without_run_times(name, json.loads(f.read_text())) if f.is_file() else None for f in (a / name, b / name)
        )
        if ours != theirs:
            found.append(name)
    for name in sorted({p.name for folder in (a, b) for p in (folder / "tables").glob("*") if p.is_dir()}):
        tables = (a / "tables" / name, b / "tables" / name)
        rows = [sorted(map(repr, pq.read_table(t).to_pylist())) if t.is_dir() else None for t in tables]
        if rows[0] != rows[1]:
            found.append(f"tables/{name}")
    return found
