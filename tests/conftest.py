"""Shared by every test."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import structlog

from tests.support.spark_fixtures import SPARK_MARKS


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """A test that asks for the local SparkSession (the ``spark`` fixture) starts a JVM: it is marked
    ``spark``, which keeps it out of the fast lane (``make unit``; see the Makefile), and PySpark's
    loopback sockets are not its failures (``SPARK_MARKS``)."""
    for item in items:
        if "spark" in getattr(item, "fixturenames", ()):
            for mark in SPARK_MARKS:
                item.add_marker(mark)


@pytest.fixture(autouse=True)
def _structlog_config_restored() -> Iterator[None]:
    """A test that runs an entry point (which configures logging once, for a process) must not change
    what later tests' ``structlog.testing.capture_logs`` sees."""
    saved = structlog.get_config()
    yield
    structlog.configure(**saved)
