"""The application and its lifespan, the composition root: settings, then the domain; stop in reverse."""

from __future__ import annotations

import contextlib
import time
from collections.abc import AsyncIterator

from starlette.applications import Starlette
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ..metrics import Metrics
from ..settings import Settings
from ..sidecar import Sidecar
from ..upstream import ConnectUpstream
from . import offsets, ops, reads
from .errors import EXCEPTION_HANDLERS
from .proxy import proxy
from .routes import SIDECAR_PREFIX, route_template
from .status_writes import status_writes

ALL_METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]


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


def create_app(settings: Settings, upstream: ConnectUpstream | None = None) -> Starlette:
    """The sidecar as an ASGI app; ``upstream`` lets tests put a fake transport under the real client."""
    metrics = Metrics()

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        sidecar = Sidecar.from_settings(settings, upstream, metrics)
        app.state.sidecar = sidecar
        await sidecar.start()
        try:
            yield
        finally:
            await sidecar.stop()

    routes = [
        Route("/healthz", ops.healthz, methods=["GET"]),
        Route("/readyz", ops.readyz, methods=["GET"]),
        Route("/metrics", ops.metrics, methods=["GET"]),
        Route(f"{SIDECAR_PREFIX}/capabilities", ops.capabilities, methods=["GET"]),
        Route(f"{SIDECAR_PREFIX}/info", ops.info, methods=["GET"]),
        Route(f"{SIDECAR_PREFIX}/status-writes", status_writes, methods=["GET"]),
        Route(f"{SIDECAR_PREFIX}/topics/{{topic}}/connectors", reads.topic_connectors, methods=["GET"]),
        Route(f"{SIDECAR_PREFIX}/connectors/{{connector}}/topics", reads.connector_topic_usage, methods=["GET"]),
        # Connect paths the view can answer; every other method and path goes to the catch-all proxy
        Route("/connectors", reads.list_connectors, methods=["GET"]),
        Route("/connectors/{connector}/status", reads.connector_status, methods=["GET"]),
        Route("/connectors/{connector}/config", reads.connector_config, methods=["GET"]),
        Route("/connectors/{connector}/tasks/{task}/status", reads.task_status, methods=["GET"]),
        Route("/connectors/{connector}/topics", reads.connector_topics, methods=["GET"]),
        Route("/connectors/{connector}/topics/reset", reads.reset_connector_topics, methods=["PUT"]),
        # KIP-875: forwarded where the workers have them, done by the sidecar where they do not
        Route("/connectors/{connector}/stop", offsets.stop_connector, methods=["PUT"]),
        Route("/connectors/{connector}/offsets", offsets.connector_offsets, methods=["GET", "PATCH", "DELETE"]),
        Route("/{path:path}", proxy, methods=ALL_METHODS),
    ]
    app = Starlette(routes=routes, lifespan=lifespan, exception_handlers=EXCEPTION_HANDLERS)  # type: ignore[arg-type]
    app.state.settings = settings
    app.state.metrics = metrics
    app.add_middleware(MetricsMiddleware, metrics=metrics)
    return app
