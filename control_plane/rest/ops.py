"""The sidecar's own endpoints: liveness, readiness, metrics, and what it decided about the cluster."""

from __future__ import annotations

import orjson
from starlette.requests import Request
from starlette.responses import Response

from ..sidecar import Sidecar


def _json(data: object, status: int = 200) -> Response:
    return Response(orjson.dumps(data), status_code=status, media_type="application/json")


async def healthz(_: Request) -> Response:
    return _json({"status": "ok"})


async def readyz(request: Request) -> Response:
    sidecar: Sidecar = request.app.state.sidecar
    readiness = sidecar.readiness()
    return _json({"ready": readiness.ready, "checks": readiness.checks}, 200 if readiness.ready else 503)


async def metrics(request: Request) -> Response:
    registry = request.app.state.metrics
    return Response(registry.render(), media_type=registry.content_type)


async def capabilities(request: Request) -> Response:
    sidecar: Sidecar = request.app.state.sidecar
    return _json(sidecar.capabilities.as_dict())


async def info(request: Request) -> Response:
    sidecar: Sidecar = request.app.state.sidecar
    return _json(sidecar.info())
