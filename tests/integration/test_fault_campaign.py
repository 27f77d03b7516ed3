"""The fault campaign's short form (docs/chaos.md): for each of the newest and the old Connect release, a
broker, a worker and three sidecar processes of the campaign's own, a workload of concurrent operations
through the sidecars while faults stall and kill the worker, the sidecars and the broker and make the
sidecars' topic unwritable; then the checker over the recorded history. The long form is ``make chaos``."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.chaos.campaign import Plan, run
from tests.support.deploy_local import local_stack

CAMPAIGN_S = 30.0  # of workload and faults, per release (start-up and the quiet spell come on top)
SEED = 7


@pytest.mark.timeout(420)
@pytest.mark.parametrize("version", [local_stack.NEW_VERSION, local_stack.OLD_VERSION])
async def test_no_check_finds_a_violation_under_faults(version: str, tmp_path: Path) -> None:
    result = await run(Plan(version, CAMPAIGN_S, SEED, tmp_path))
    print(result.report())
    print(f"history: {result.save(tmp_path)}")
    assert result.history.faults, "no fault was injected"
    assert result.violations == [], result.report()
