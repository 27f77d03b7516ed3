"""Auto-restart (``domain.auto_restart``): ``GET /_sidecar/auto-restarts``, the schedule and every connector
with a choice or a restart; ``GET``, ``PUT`` (``{"enabled": true|false}``) and ``DELETE`` (back to the
settings) of ``/_sidecar/connectors/{c}/auto-restart``. Parse, one domain call, render."""

from __future__ import annotations

from typing import Any

import orjson
from starlette.requests import Request
from starlette.responses import Response

from ...domain.auto_restart import BudgetUse, ConnectorRestarts, RestartsOverview
from ...domain.errors import BadRequestError
from ..entities.responses import answered
from ..request.runtime import herder


def restarts_json(report: ConnectorRestarts) -> dict[str, Any]:
    return {
        "connector": report.connector,
        "enabled": report.enabled,
        "chosen_by": report.chosen_by,
        "restarts": report.restarts,
        "last_restart_ms": report.last_restart_ms,
        "next_restart_ms": report.next_restart_ms,
        "last_error": None
        if report.last_error is None
        else {"status": report.last_error.status, "message": report.last_error.message},
        "gave_up": report.gave_up,
        "gave_up_reason": report.gave_up_reason,
        "held_back": report.held_back,
        "by_sidecar": report.by_sidecar,
        "tasks": {str(task): {"restarts": n} for task, n in report.tasks.items()},
    }


def budget_json(use: BudgetUse) -> dict[str, Any]:
    return {
        "restarts": use.budget.restarts,
        "window_s": use.budget.window_s,
        "spent": use.spent,
        "held_back": list(use.held_back),
    }


def overview_json(overview: RestartsOverview) -> dict[str, Any]:
    return {
        "enabled": overview.selection.enabled,
        "connectors_pattern": overview.selection.pattern.pattern,
        "backoff_unit_s": overview.backoff.unit_s,
        "backoff_cap_s": overview.backoff.cap_s,
        "max_restarts": overview.backoff.max_restarts,
        "acting_sidecar": overview.acting_sidecar,
        "budget": None if overview.budget is None else budget_json(overview.budget),
        "connectors": [restarts_json(c) for c in overview.connectors],
    }


async def overview(request: Request) -> Response:
    return answered(herder(request).auto_restart.overview(), overview_json)


async def connector(request: Request) -> Response:
    return answered(herder(request).auto_restart.report(request.path_params["connector"]), restarts_json)


async def choose(request: Request) -> Response:
    try:
        body = orjson.loads(await request.body())
    except orjson.JSONDecodeError:
        body = None
    enabled = body.get("enabled") if isinstance(body, dict) else None
    if not isinstance(enabled, bool):
        raise BadRequestError('The body must be {"enabled": true} or {"enabled": false}')
    return answered(await herder(request).auto_restart.choose(request.path_params["connector"], enabled), restarts_json)


async def forget(request: Request) -> Response:
    return answered(await herder(request).auto_restart.choose(request.path_params["connector"], None), restarts_json)
