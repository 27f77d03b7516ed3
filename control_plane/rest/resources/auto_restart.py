"""Auto-restart (``domain.auto_restart``): ``GET /_sidecar/auto-restarts``, the schedule and every connector
with a choice or a restart; ``GET``, ``PUT`` (``{"enabled": true|false}``) and ``DELETE`` (back to the
settings) of ``/_sidecar/connectors/{c}/auto-restart``. Parse, one domain call, render."""

from __future__ import annotations

import orjson
from starlette.requests import Request
from starlette.responses import Response

from ...domain.auto_restart import AutoRestarter
from ...domain.errors import BadRequestError, Unsupported
from ..entities.responses import json_response
from ..request.runtime import herder

NO_TOPIC = (
    "Auto-restart needs the sidecars' topic (one sidecar of the cluster restarts, under the connector's "
    "fence): this sidecar has no view or its fence is off (FENCE_ENABLED=false)"
)


def _restarter(request: Request) -> AutoRestarter:
    restarter = herder(request).auto_restart
    if restarter is None:
        raise Unsupported(NO_TOPIC)
    return restarter


async def overview(request: Request) -> Response:
    return json_response(_restarter(request).overview())


async def connector(request: Request) -> Response:
    return json_response(_restarter(request).report_of(request.path_params["connector"]))


async def choose(request: Request) -> Response:
    try:
        body = orjson.loads(await request.body())
    except orjson.JSONDecodeError:
        body = None
    enabled = body.get("enabled") if isinstance(body, dict) else None
    if not isinstance(enabled, bool):
        raise BadRequestError('The body must be {"enabled": true} or {"enabled": false}')
    return json_response(await _restarter(request).choose(request.path_params["connector"], enabled))


async def forget(request: Request) -> Response:
    return json_response(await _restarter(request).choose(request.path_params["connector"], None))
