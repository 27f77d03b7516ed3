"""Connect's LoggingResource on every worker version (the herder's ``newer`` decides): ``GET /admin/loggers``
(KIP-495), ``GET /admin/loggers/{logger}`` and ``PUT /admin/loggers/{logger}``, on one worker or with
``scope=cluster`` on every worker (KIP-976). Parse, one herder call, render."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response

from ..entities.responses import respond
from ..request.runtime import herder
from .params import raw_path


async def logger_levels(request: Request) -> Response:
    return await respond(request, await herder(request).newer.logger_levels())


async def logger_level(request: Request) -> Response:
    if request.method == "PUT":
        scope = request.query_params.get("scope")
        query = request.scope.get("query_string", b"").decode("latin-1")
        outcome = await herder(request).newer.set_logger_level(raw_path(request), await request.body(), scope, query)
        return await respond(request, outcome)
    return await respond(request, await herder(request).newer.logger_level(request.path_params["logger"]))
