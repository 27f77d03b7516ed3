"""A run releases the frames it kept, and only those: another session's (or another run's) kept frames on
the same Spark stay kept (``spark_jobs.kept``)."""

from __future__ import annotations

import pytest
from pyspark import StorageLevel
from pyspark.sql import DataFrame, SparkSession

from spark_jobs.kept import keep, run_frames


def cached(frame: DataFrame) -> bool:
    """Whether Spark keeps ``frame`` (read each time: it changes under the test's feet)."""
    return bool(frame.is_cached)


def test_a_run_unpersists_what_it_kept_and_nothing_else(spark: SparkSession) -> None:
    others = spark.range(5).persist(StorageLevel.MEMORY_AND_DISK)  # another session's, on a shared Spark
    try:
        with run_frames() as kept:
            mine = keep(spark.range(7), StorageLevel.DISK_ONLY)
            derived = keep(mine.selectExpr("id * 2 AS n"), StorageLevel.MEMORY_AND_DISK)
            assert cached(mine) and cached(derived) and kept == [mine, derived]
            assert derived.count() == 7
        assert not cached(mine) and not cached(derived)
        assert cached(others)
    finally:
        others.unpersist()


def test_a_failed_run_releases_its_frames_too(spark: SparkSession) -> None:
    kept: list[DataFrame] = []

    def failing_run() -> None:
        with run_frames():
            kept.append(keep(spark.range(3), StorageLevel.DISK_ONLY))
            raise RuntimeError("the run failed")

    with pytest.raises(RuntimeError, match="the run failed"):
        failing_run()
    assert kept and not cached(kept[0])


def test_outside_a_run_a_kept_frame_is_the_callers_to_release(spark: SparkSession) -> None:
    frame = keep(spark.range(3), StorageLevel.DISK_ONLY)
    assert cached(frame)
    frame.unpersist()
