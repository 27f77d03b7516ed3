"""The sidecar's own endpoints about itself: liveness (``GET /healthz``), readiness (``GET /readyz``), its
metrics (``GET /metrics``), its OpenAPI document (``GET /_sidecar/openapi.json``), what it decided about the
cluster (``GET /_sidecar/capabilities``, ``GET /_sidecar/info``, ``GET /_sidecar/cluster``) and its
status-topic writes (``GET /_sidecar/status-writes``)."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response

from ..entities.about import capabilities_json, info_json, membership_json
from ..entities.responses import json_response
from ..request.runtime import herder, runtime


async def healthz(_: Request) -> Response:
    return json_response({"status": "ok"})


async def readyz(request: Request) -> Response:
    readiness = herder(request).reads.readiness()
    body: dict[str, object] = {"ready": readiness.ready, "checks": readiness.checks}
    if readiness.degraded:
        body["degraded"] = readiness.degraded
    return json_response(body, 200 if readiness.ready else 503)


async def metrics(request: Request) -> Response:
    registry = runtime(request).metrics
    return Response(registry.render(), media_type=registry.content_type)


async def capabilities(request: Request) -> Response:
    return json_response(capabilities_json(herder(request).reads.capabilities_info()))


async def info(request: Request) -> Response:
    return json_response(info_json(herder(request).reads.info()))


async def cluster(request: Request) -> Response:
    """``GET /_sidecar/cluster``: the workers of the cluster, from their group."""
    return json_response(membership_json(await herder(request).membership.read()))


async def status_writes(request: Request) -> Response:
    """``GET /_sidecar/status-writes``: the status-topic writes still pending, and those that failed."""
    return json_response(herder(request).reads.status_writes())


async def openapi(request: Request) -> Response:
    """``GET /_sidecar/openapi.json``: the sidecar's OpenAPI document, of the route table the request was
    routed by (``rest.routing.router``, in the scope as Starlette's router puts itself there)."""
    return Response(request.scope["router"].openapi_json(), media_type="application/json")
