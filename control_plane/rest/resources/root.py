"""Endpoints of newer Connect releases the sidecar provides on every worker version (``domain.newer``):
``GET /``, ``GET /health``, the loggers (``LoggingResource``) and a plugin's configuration definitions
(``ConnectorPluginsResource.getConnectorConfigDef``). Each parses, makes one herder call, and renders."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response

from ..entities.responses import respond
from ..request.runtime import herder
from .configs import raw_path


async def server_info(request: Request) -> Response:
    return await respond(request, await herder(request).newer.server_info())


async def health(request: Request) -> Response:
    return await respond(request, await herder(request).newer.health())


async def logger_levels(request: Request) -> Response:
    return await respond(request, await herder(request).newer.logger_levels())


async def logger_level(request: Request) -> Response:
    if request.method == "PUT":
        scope = request.query_params.get("scope")
        query = request.scope.get("query_string", b"").decode("latin-1")
        outcome = await herder(request).newer.set_logger_level(raw_path(request), await request.body(), scope, query)
        return await respond(request, outcome)
    return await respond(request, await herder(request).newer.logger_level(request.path_params["logger"]))
