"""The frames a run of a job keeps (``persist``), each released when the run ends, and only those: on a shared
Spark (a Spark Connect server, a test process's one session) the sessions share one cache manager, so
``catalog.clearCache()`` would drop every other session's kept frames too, and a kept frame left behind
would answer a later run's identical plan (the same snapshot path, read again after it changed) from the
old data.

    with run_frames():
        frame = keep(decoded, StorageLevel.DISK_ONLY)
        ...
    # every frame kept inside is unpersisted here, also when the run failed
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from pyspark import StorageLevel
from pyspark.sql import DataFrame

_kept: ContextVar[list[DataFrame] | None] = ContextVar("spark_jobs_kept_frames", default=None)


def keep(frame: DataFrame, level: StorageLevel) -> DataFrame:
    """``frame`` persisted at ``level``, released at the end of the run around it (:func:`run_frames`)."""
    frame.persist(level)
    kept = _kept.get()
    if kept is not None:
        kept.append(frame)
    return frame


@contextmanager
def run_frames() -> Iterator[list[DataFrame]]:
    """The run's kept frames, unpersisted when the block ends (the last kept first)."""
    kept: list[DataFrame] = []
    token = _kept.set(kept)
    try:
        yield kept
    finally:
        _kept.reset(token)
        for frame in reversed(kept):
            frame.unpersist()
