"""``GET /_sidecar/status-writes``: the status-topic writes still pending, and those that failed."""

from __future__ import annotations

import orjson
from starlette.requests import Request
from starlette.responses import Response

from ..sidecar import Sidecar


async def status_writes(request: Request) -> Response:
    sidecar: Sidecar = request.app.state.sidecar
    return Response(orjson.dumps(sidecar.status_writer.snapshot()), media_type="application/json")
