"""The sidecar's own endpoints about itself: liveness (``GET /healthz``), readiness (``GET /readyz``), its
metrics (``GET /metrics``), its OpenAPI document (``GET /_sidecar/openapi.json``), what it decided about the
cluster (``GET /_sidecar/capabilities``, ``GET /_sidecar/info``, ``GET /_sidecar/cluster``) and its
status-topic writes (``GET /_sidecar/status-writes``)."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from ...codecs.worker_plugins import InstalledOnWorker
from ...domain.cluster.membership import Membership
from ...rules.worker_id import worker_id_of
from ..entities.responses import json_response
from ..request.runtime import herder, runtime


async def healthz(_: Request) -> Response:
    return json_response({"status": "ok"})


async def readyz(request: Request) -> Response:
    readiness = herder(request).reads.readiness()
    return json_response({"ready": readiness.ready, "checks": readiness.checks}, 200 if readiness.ready else 503)


async def metrics(request: Request) -> Response:
    registry = runtime(request).metrics
    return Response(registry.render(), media_type=registry.content_type)


async def capabilities(request: Request) -> Response:
    return json_response(herder(request).reads.capabilities_info())


async def info(request: Request) -> Response:
    return json_response(herder(request).reads.info())


async def cluster(request: Request) -> Response:
    """``GET /_sidecar/cluster``: the workers of the cluster, from their group."""
    return json_response(membership_json(await herder(request).membership.read()))


def membership_json(membership: Membership) -> dict[str, Any]:
    return {
        "group": membership.group,
        "state": membership.state,
        "protocol": membership.protocol,
        "leader_url": membership.leader_url,
        "workers": [
            {
                "id": w.member_id,
                "url": w.url,
                "host": w.host,
                "version": w.version,
                "leader": w.leader,
                "config_offset": w.config_offset,
                "plugins": _plugins_json(membership.plugins.get(worker_id_of(w.url))) if w.url else None,
            }
            for w in membership.workers
        ],
        "read_at": membership.read_at,
        "error": membership.error,
        "sidecar": membership.sidecar,
        "fences": [
            {"connector": f.connector, "sidecar": f.sidecar, "since_ms": f.since_ms, "expires_ms": f.expires_ms}
            for f in membership.fences
        ],
        "sidecars": [
            {
                "id": s.presence.sidecar,
                "url": s.presence.url,
                "version": s.presence.version,
                "workers": dict(s.presence.workers),
                "view_lag": dict(s.presence.view_lag),
                "plugins": dict(s.presence.plugins),
                "write_wait_ms": s.presence.write_wait_ms,
                "auto_restart": s.presence.auto_restart,
                "history": s.presence.history,
                "seen_ms": s.seen_ms,
            }
            for s in membership.sidecars
        ],
        "least_write_wait_ms": None if membership.least_write_wait_s is None else membership.least_write_wait_s * 1000,
    }


def _plugins_json(installed: InstalledOnWorker | None) -> dict[str, dict[str, list[str | None]]] | None:
    """A worker's installed plugins (type -> class -> versions, null where unreported); None: unknown (no
    live sidecar in front of it reports them)."""
    if installed is None:
        return None
    return {kind: {name: list(v) for name, v in classes.items()} for kind, classes in installed.plugins.items()}


async def status_writes(request: Request) -> Response:
    """``GET /_sidecar/status-writes``: the status-topic writes still pending, and those that failed."""
    return json_response(herder(request).reads.status_writes())


async def openapi(request: Request) -> Response:
    """``GET /_sidecar/openapi.json``: the sidecar's OpenAPI document, of the route table the request was
    routed by (``rest.routing.router``, in the scope as Starlette's router puts itself there)."""
    return Response(request.scope["router"].openapi_json(), media_type="application/json")
