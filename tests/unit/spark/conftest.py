"""Transform tests on small frames: the one local SparkSession (``spark``) and builders of raw records
written with the sidecar's own encoders, so every frame holds the bytes a worker would write."""

from __future__ import annotations

import pytest

from tests.support.spark_fixtures import SPARK_MARKS, spark  # noqa: F401 - the session-scoped fixture


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "/unit/spark/" in str(item.path):
            for mark in SPARK_MARKS:
                item.add_marker(mark)
