"""The application: the routes, the one error mapper, and the lifespan that runs the composition root
(``control_plane.composition.running``) and hands its typed ``Runtime`` to the handlers."""

from __future__ import annotations

import contextlib
import time
from collections.abc import AsyncIterator

from starlette.applications import Starlette
from starlette.routing import BaseRoute, Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ..composition import running
from ..metrics import Metrics
from ..settings import Settings
from ..storage.record_producer import RecordProducer
from ..upstream import Transport
from . import compat, configs, newer, offsets, ops, plugins, reads, states, topic_creation
from .admission import Admission, checks_for
from .dispatch import SidecarApp
from .errors import EXCEPTION_HANDLERS
from .jaxrs import JerseyRoute
from .limits import RequestLimits
from .openapi import OPENAPI_PATH
from .proxy import ANY_TARGET, PassThrough
from .routes import SIDECAR_PREFIX, route_template
from .state import RuntimeScope, RuntimeSlot


class MetricsMiddleware:
    """Counts and times every request, labelled by route template, method and status."""

    def __init__(self, app: ASGIApp, metrics: Metrics) -> None:
        self.app = app
        self.metrics = metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        status = 500

        async def send_and_record(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, send_and_record)
        finally:
            self.metrics.observe(route_template(scope["path"]), scope["method"], status, time.perf_counter() - started)


# Connect paths the sidecar may answer itself, matched and refused as the worker's Jetty and Jersey do
# (``jaxrs.JerseyRoute``: raw path, matrix parameters, one trailing slash, 405/415/406 and Jetty's limits):
# ``/status/`` must not reach a worker that would answer it otherwise (a connector the sidecar stopped on a
# 3.4 worker shows PAUSED there). ``resource_methods``: ConnectorsResource's methods on the path in 4.3.1.
CONNECT_ROUTES: list[BaseRoute] = [
    JerseyRoute("/connectors", reads.list_connectors, methods=["GET"], resource_methods=["GET", "POST"]),
    JerseyRoute("/connectors/{connector}/status", reads.connector_status, methods=["GET"], resource_methods=["GET"]),
    JerseyRoute(
        "/connectors/{connector}/config",
        reads.connector_config,
        methods=["GET"],
        resource_methods=["GET", "PUT", "PATCH"],
    ),
    # configurations go through the sidecar's checks (domain.connector_configs) on their way to a worker
    JerseyRoute(
        "/connectors",
        configs.create_connector,
        methods=["POST"],
        resource_methods=["GET", "POST"],
        reads_entity=["POST"],
    ),
    JerseyRoute(
        "/connectors/{connector}/config",
        configs.put_or_patch_config,
        methods=["PUT", "PATCH"],
        resource_methods=["GET", "PUT", "PATCH"],
        reads_entity=["PUT", "PATCH"],
    ),
    JerseyRoute(
        "/connector-plugins/{plugin}/config/validate",
        configs.validate_config,
        methods=["PUT"],
        resource_methods=["PUT"],
        reads_entity=["PUT"],
    ),
    JerseyRoute(
        "/connectors/{connector}/tasks/{task:int}/status", reads.task_status, methods=["GET"], resource_methods=["GET"]
    ),
    JerseyRoute("/connectors/{connector}/topics", reads.connector_topics, methods=["GET"], resource_methods=["GET"]),
    JerseyRoute(
        "/connectors/{connector}/topics/reset", reads.reset_connector_topics, methods=["PUT"], resource_methods=["PUT"]
    ),
    # KIP-875: forwarded where the workers have them, done by the sidecar where they do not
    JerseyRoute("/connectors/{connector}/stop", offsets.stop_connector, methods=["PUT"], resource_methods=["PUT"]),
    JerseyRoute(
        "/connectors/{connector}/offsets",
        offsets.connector_offsets,
        methods=["GET", "PATCH", "DELETE"],
        resource_methods=["GET", "PATCH", "DELETE"],
        reads_entity=["PATCH"],
    ),
    # the REST API of newer releases on every version (domain.newer_api); PATCH .../config and
    # initial_state on create are above
    JerseyRoute("/health", newer.health, methods=["GET"], resource_methods=["GET"]),
    JerseyRoute("/admin/loggers", newer.logger_levels, methods=["GET"], resource_methods=["GET"]),
    JerseyRoute(
        "/admin/loggers/{logger}",
        newer.logger_level,
        methods=["GET", "PUT"],
        resource_methods=["GET", "PUT"],
        reads_entity=["PUT"],
    ),
    # KIP-745 (3.0), KIP-769 (3.2): forwarded where the workers have them, composed where they do not
    JerseyRoute(
        "/connectors/{connector}/restart", compat.restart_connector, methods=["POST"], resource_methods=["POST"]
    ),
    JerseyRoute("/connector-plugins", compat.connector_plugins, methods=["GET"], resource_methods=["GET"]),
    JerseyRoute("/connector-plugins/{plugin}/config", compat.plugin_config, methods=["GET"], resource_methods=["GET"]),
    JerseyRoute("/", newer.server_info, methods=["GET"], resource_methods=["GET"]),  # domain.api_version
]

ROUTES: list[BaseRoute] = [
    *CONNECT_ROUTES,  # first: Starlette tries the routes in order, and a Connect path is the usual request
    Route("/healthz", ops.healthz, methods=["GET"]),
    Route("/readyz", ops.readyz, methods=["GET"]),
    Route("/metrics", ops.metrics, methods=["GET"]),
    Route(f"{SIDECAR_PREFIX}/capabilities", ops.capabilities, methods=["GET"]),
    Route(f"{SIDECAR_PREFIX}/info", ops.info, methods=["GET"]),
    Route(OPENAPI_PATH, ops.openapi, methods=["GET"]),
    Route(f"{SIDECAR_PREFIX}/status-writes", ops.status_writes, methods=["GET"]),
    Route(f"{SIDECAR_PREFIX}/summary", states.summary, methods=["GET"]),
    Route(f"{SIDECAR_PREFIX}/state-changes", states.state_changes, methods=["GET"]),
    Route(f"{SIDECAR_PREFIX}/topics/{{topic}}/connectors", reads.topic_connectors, methods=["GET"]),
    Route(f"{SIDECAR_PREFIX}/connectors/{{connector}}/topics", reads.connector_topic_usage, methods=["GET"]),
    Route(f"{SIDECAR_PREFIX}/topic-creation/preview", topic_creation.preview, methods=["POST"]),
    Route(
        f"{SIDECAR_PREFIX}/connectors/{{connector}}/topic-creation", topic_creation.connector_preview, methods=["GET"]
    ),
    Route(
        f"{SIDECAR_PREFIX}/connectors/{{connector}}/plugin-versions", plugins.connector_plugin_versions, methods=["GET"]
    ),
    Route(f"{SIDECAR_PREFIX}/plugin-versions", plugins.config_plugin_versions, methods=["PUT"]),
    # every other method and path goes through to the workers, every method, known or not
    Route(f"/{{path:{ANY_TARGET}}}", PassThrough()),
]


def create_app(
    settings: Settings,
    *,
    transport: Transport | None = None,
    status_producer: RecordProducer | None = None,
    slot: RuntimeSlot | None = None,
    admission: Admission | None = None,
) -> Starlette:
    """The sidecar as an ASGI app. ``transport`` and ``status_producer`` put fakes under the real upstream
    client and status writer; ``slot`` shows the running ``Runtime`` to the caller (tests); ``admission``:
    the admission hook (``rest.admission``; by default the checks the settings ask for)."""
    metrics = Metrics()
    slot = slot or RuntimeSlot()

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        async with running(settings, metrics, transport=transport, status_producer=status_producer) as runtime:
            slot.runtime = runtime
            try:
                yield
            finally:
                slot.runtime = None

    # Starlette, with paths the sidecar never answers sent straight to the pass-through (rest.dispatch)
    limits = RequestLimits(settings.max_header_bytes, settings.max_body_bytes, settings.request_budget_s)
    app = SidecarApp(
        routes=ROUTES,
        lifespan=lifespan,
        exception_handlers=EXCEPTION_HANDLERS,
        slot=slot,
        metrics=metrics,
        limits=limits,
        admission=admission or Admission(checks_for(settings)),
        lean_middleware=(RuntimeScope, MetricsMiddleware),  # what SidecarApp.answer does itself
    )
    app.add_middleware(RuntimeScope, slot=slot)
    app.add_middleware(MetricsMiddleware, metrics=metrics)
    return app
