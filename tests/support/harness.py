"""The one test harness of the integration tests: a sidecar built from the code under test, served in this
process over real HTTP on loopback.

A sidecar is ``create_app(load_settings(...))`` of the ``control_plane`` this checkout imports, served by
a ``uvicorn.Server`` as a task on the test session's event loop, on a port of its own (a socket bound to
port 0 before the server starts, so no other process can take it meanwhile). Requests go through a real
socket, so raw paths and headers reach the app as a real client sends them. Never a process that
``make stack-up`` started earlier: the stack's sidecar addresses are not handed to the tests at all.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import AsyncIterator, Awaitable, Callable, Generator
from dataclasses import dataclass
from typing import Any

import httpx
import uvicorn
from starlette.applications import Starlette

from control_plane.rest import create_app
from control_plane.rest.server import HEADER_OPTIONS, SidecarProtocol
from control_plane.settings import load_settings

from .stack import Cluster
from .waiting import eventually

READY_TIMEOUT_S = 90.0


# -- a sidecar served in this process -----------------------------------------------------------------
class _InProcessServer(uvicorn.Server):
    """uvicorn's server without its signal handlers: Ctrl-C stays pytest's, and the session's loop is
    shared with the tests (``serve`` runs as a task on it)."""

    @contextlib.contextmanager
    def capture_signals(self) -> Generator[None, None, None]:
        yield


@dataclass
class RunningSidecar:
    """A sidecar app served on ``url``; ``client`` talks to it over loopback HTTP."""

    app: Starlette
    url: str
    client: httpx.AsyncClient
    server: uvicorn.Server

    @property
    def requests_served(self) -> int:
        """How many HTTP requests this process's server has answered (uvicorn's own count)."""
        return int(self.server.server_state.total_requests)


@contextlib.asynccontextmanager
async def serve(app: Starlette, *, wait_ready: bool = True, timeout_s: float = 60) -> AsyncIterator[RunningSidecar]:
    """Serve ``app`` (its lifespan included) on a free loopback port until the block ends; with
    ``wait_ready``, only once ``GET /readyz`` answers 200 (its view read to the end, or a worker found)."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    config = uvicorn.Config(
        app,
        lifespan="on",  # a lifespan that fails to start fails the server, loudly
        ws="none",
        http=SidecarProtocol,  # as the cli serves (rest.server: the pass-through below ASGI)
        log_config=None,  # the process's logging stays the tests' (structlog capture_logs and all)
        access_log=False,
        timeout_graceful_shutdown=10,
        **HEADER_OPTIONS,  # as the cli serves: the worker's Server and Date (rest.stamp)
    )
    server = _InProcessServer(config)
    task = asyncio.create_task(server.serve(sockets=[sock]), name=f"sidecar-on-{port}")
    try:
        await eventually(_started(server, task), bool, timeout_s=timeout_s, what=f"the sidecar serving on port {port}")
        url = f"http://127.0.0.1:{port}"
        async with httpx.AsyncClient(base_url=url, timeout=60) as client:
            running = RunningSidecar(app, url, client, server)
            if wait_ready:
                await eventually(
                    lambda: client.get("/readyz"),
                    lambda r: r.status_code == 200,
                    timeout_s=READY_TIMEOUT_S,
                    what=f"the sidecar on port {port} ready",
                )
            yield running
    finally:
        server.should_exit = True
        await task
        sock.close()


def _started(server: uvicorn.Server, task: asyncio.Task[None]) -> Any:
    async def probe() -> bool:
        if task.done():  # the lifespan failed, or the server could not start: say why
            task.result()
            raise AssertionError("the sidecar's server stopped before it started")
        return bool(server.started)

    return probe


def settings_for(cluster: Cluster | None, **overrides: object) -> dict[str, object]:
    """The settings of a sidecar in front of ``cluster`` (its worker's properties file), with
    ``overrides``; an override of None drops a setting (``worker_properties=None``: no properties file)."""
    base: dict[str, object] = {"worker_properties": cluster.properties} if cluster is not None else {}
    return {**base, **overrides}


@contextlib.asynccontextmanager
async def sidecar_with(
    cluster: Cluster | None, *, wait_ready: bool = True, **overrides: object
) -> AsyncIterator[RunningSidecar]:
    """A sidecar with given settings, built from the code under test, served until the block ends."""
    app = create_app(load_settings(**settings_for(cluster, **overrides)))
    async with serve(app, wait_ready=wait_ready) as running:
        yield running


class Sidecars:
    """The session's sidecar with default settings, one per cluster, started on first use and stopped
    at the end of the session."""

    def __init__(self) -> None:
        self._stack = contextlib.AsyncExitStack()
        self._running: dict[str, RunningSidecar] = {}
        self._lock = asyncio.Lock()

    async def of(self, cluster: Cluster) -> RunningSidecar:
        async with self._lock:
            if cluster.name not in self._running:
                self._running[cluster.name] = await self._stack.enter_async_context(sidecar_with(cluster))
            return self._running[cluster.name]

    async def aclose(self) -> None:
        await self._stack.aclose()


InProcess = Callable[..., Awaitable[httpx.AsyncClient]]
"""The ``in_process`` fixture: ``await in_process(**overrides)``, a client of a sidecar with given settings."""
