"""The ways of the parity suite (``tests.support.parity.every_way``): a sidecar in front of every cluster of
the stack, and the newest worker directly; each test runs its scenario every way (``run_every_way``)."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.support.harness import Sidecars
from tests.support.parity import Way, every_way
from tests.support.stack import Stack

pytestmark = pytest.mark.timeout(300)


@pytest.fixture
async def ways(stack: Stack, sidecars: Sidecars, tmp_path: Path) -> AsyncIterator[list[Way]]:
    async with every_way(stack, sidecars, tmp_path, uuid.uuid4().hex[:6]) as running:
        yield running
