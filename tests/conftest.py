"""Shared by every test."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import structlog


@pytest.fixture(autouse=True)
def _structlog_config_restored() -> Iterator[None]:
    """A test that runs an entry point (which configures logging once, for a process) must not change
    what later tests' ``structlog.testing.capture_logs`` sees."""
    saved = structlog.get_config()
    yield
    structlog.configure(**saved)
