"""``PlanAndApply``: plan and apply's one entry. The connectors a cluster should run, described in files (the
shapes ``kcctl apply`` and ``PUT /connectors/{c}/config`` take), compared with what the cluster runs, and a
plan carried out exactly (``planner``; the steps and the fingerprint: ``steps``).

Both compare with the config topic, read to its end through the sidecar's view: without one every request
is answered 503.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from ..errors import ViewNotReady
from ..outcomes import Answer, Refusal, answer_awaited
from .planner import Applied, Planner
from .steps import ANY, Plan

NO_VIEW = "Plan and apply need the sidecar's view of the config topic"


class PlanAndApply:
    def __init__(self, planner: Planner | None) -> None:
        """``planner``: None where the sidecar has no view."""
        self._planner = planner

    async def plan(
        self, documents: Sequence[tuple[Any, str]], *, prune: bool, prune_matching: re.Pattern[str] = ANY
    ) -> Answer[Plan] | Refusal:
        """``POST /_sidecar/plan``: each document's connectors (with its source) against the cluster's."""
        return await answer_awaited(lambda: self._ready().plan(documents, prune=prune, prune_matching=prune_matching))

    async def apply(
        self,
        plan: Any,
        *,
        concurrency: int | None = None,
        deadline_s: float | None = None,
        continue_on_error: bool = False,
    ) -> Answer[Applied] | Refusal:
        """``POST /_sidecar/apply``: a plan as ``plan`` answered it, carried out while it still holds."""
        return await answer_awaited(
            lambda: self._ready().apply(
                plan, concurrency=concurrency, deadline_s=deadline_s, continue_on_error=continue_on_error
            )
        )

    def _ready(self) -> Planner:
        if self._planner is None:
            raise ViewNotReady(NO_VIEW)
        return self._planner


__all__ = ["NO_VIEW", "PlanAndApply"]
