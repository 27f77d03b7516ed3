"""Connect's RootResource on every worker version (the herder's ``newer`` decides): ``GET /``, the Connect
version the sidecar provides with the cluster's commit and id, and ``GET /health``, the worker's health
(KIP-1017). Parse, one herder call, render."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response

from ..entities.responses import respond
from ..request.runtime import herder


async def server_info(request: Request) -> Response:
    return await respond(request, await herder(request).newer.server_info())


async def health(request: Request) -> Response:
    return await respond(request, await herder(request).newer.health())
