"""The Spark jobs' tests: the one local SparkSession (``spark``) for the transforms on small frames, whose raw
records ``tests.support.spark_records`` writes with the sidecar's own encoders, so every frame holds the
bytes a worker would write. A test that asks for ``spark`` is marked ``spark`` (tests/conftest.py)."""

from __future__ import annotations

from tests.support.spark_fixtures import spark  # noqa: F401 - the session-scoped fixture
