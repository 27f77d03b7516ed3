"""``POST /connectors/{c}/restart`` with KIP-745's ``includeTasks`` and ``onlyFailed``
(ConnectorsResource.restartConnector), in Connect's shapes and codes on every worker version: the herder's
``newer`` decides whether the workers do it or the sidecar composes it. Parse, one herder call, render."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response

from ...domain.newer import RestartRequest
from ..entities import render
from ..entities.responses import respond
from ..request.runtime import herder
from .params import query_bool


async def restart_connector(request: Request) -> Response:
    restart = RestartRequest(
        request.path_params["connector"],
        only_failed=query_bool(request, "onlyFailed", False),
        include_tasks=query_bool(request, "includeTasks", False),
    )
    return await respond(request, await herder(request).newer.restart(restart), render.connector_state_json)
