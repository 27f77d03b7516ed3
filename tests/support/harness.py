"""The one test harness of the integration tests: a sidecar built from the code under test, served in this
process over real HTTP on loopback.

A sidecar is ``create_app(load_settings(...))`` of the ``control_plane`` this checkout imports, served by
the sidecar's own server (``rest.serving.server.HttpServer``, as the cli serves it) on the test session's event
loop, on a port of its own. Requests go through a real
socket, so raw paths and headers reach the app as a real client sends them. Never a process that
``make stack-up`` started earlier: the stack's sidecar addresses are not handed to the tests at all.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass

import httpx

from control_plane.rest import create_app
from control_plane.rest.serving.app import SidecarApp
from control_plane.rest.serving.server import HttpServer
from control_plane.settings import load_settings

from .stack import Cluster
from .waiting import eventually

READY_TIMEOUT_S = 90.0


# -- a sidecar served in this process -----------------------------------------------------------------
@dataclass
class RunningSidecar:
    """A sidecar app served on ``url``; ``client`` talks to it over loopback HTTP."""

    app: SidecarApp
    url: str
    client: httpx.AsyncClient
    server: HttpServer

    @property
    def requests_served(self) -> int:
        """How many HTTP requests this process's server has answered."""
        return self.server.requests_served


@contextlib.asynccontextmanager
async def serve(app: SidecarApp, *, wait_ready: bool = True, timeout_s: float = 60) -> AsyncIterator[RunningSidecar]:
    """Serve ``app`` (its lifespan included: one that fails to start fails here, loudly) on a free loopback
    port until the block ends; with ``wait_ready``, only once ``GET /readyz`` answers 200 (its view read to
    the end, or a worker found)."""
    async with contextlib.AsyncExitStack() as stack:
        async with asyncio.timeout(timeout_s):
            await stack.enter_async_context(app.lifespan())
        server = HttpServer(app)
        await server.start("127.0.0.1", 0)
        stack.push_async_callback(server.stop, 10)
        url = f"http://127.0.0.1:{server.port}"
        client = await stack.enter_async_context(httpx.AsyncClient(base_url=url, timeout=60))
        if wait_ready:
            await eventually(
                lambda: client.get("/readyz"),
                lambda r: r.status_code == 200,
                timeout_s=READY_TIMEOUT_S,
                what=f"the sidecar on port {server.port} ready",
            )
        yield RunningSidecar(app, url, client, server)


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
    """The session's sidecar with default settings, one per cluster, and the session's pair of sidecars
    per cluster (``pair_of``); started on first use and stopped at the end of the session."""

    def __init__(self) -> None:
        self._stack = contextlib.AsyncExitStack()
        self._running: dict[str, RunningSidecar] = {}
        self._pairs: dict[str, tuple[RunningSidecar, RunningSidecar]] = {}
        self._lock = asyncio.Lock()

    async def of(self, cluster: Cluster) -> RunningSidecar:
        async with self._lock:
            if cluster.name not in self._running:
                self._running[cluster.name] = await self._stack.enter_async_context(sidecar_with(cluster))
            return self._running[cluster.name]

    async def pair_of(self, cluster: Cluster) -> tuple[RunningSidecar, RunningSidecar]:
        """Two sidecars in front of ``cluster``, as the Kubernetes layouts run the sidecars of a cluster
        (``VIEW_READ_SYNC=always``, so that what one acknowledged shows through the other). They have a
        sidecars' topic of their own: with the session's sidecar (which answers its writes at once) among
        them, every read would ask Kafka (``domain.read_rule``), and the window would go untested."""
        async with self._lock:
            if cluster.name not in self._pairs:
                topic = f"{cluster.name}.pair.control-plane"
                first, second = await asyncio.gather(
                    *(
                        self._stack.enter_async_context(
                            sidecar_with(cluster, view_read_sync="always", sidecars_topic=topic)
                        )
                        for _ in "ab"
                    )
                )
                for running in (first, second):
                    await window_held(running.client)
                self._pairs[cluster.name] = (first, second)
            return self._pairs[cluster.name]

    async def aclose(self) -> None:
        await self._stack.aclose()


async def window_held(client: httpx.AsyncClient) -> None:
    """Until the sidecar knows both sidecars of its pair, and that each waits the window out after a write:
    from then on its reads are answered within the window."""

    def held(answer: httpx.Response) -> bool:
        shown = answer.json()
        return len(shown["sidecars"]) >= 2 and shown["least_write_wait_ms"] == 25.0

    await eventually(lambda: client.get("/_sidecar/cluster"), held, what="the read window held by both sidecars")


class Alternating(httpx.AsyncBaseTransport):
    """Sends each request to the next of ``urls`` in turn, as a Service spreads a client's requests over
    the pods behind it (the request's path and query kept, its scheme, host and port replaced)."""

    def __init__(self, urls: Sequence[str]) -> None:
        self._targets = [httpx.URL(u) for u in urls]
        self._turn = itertools.cycle(range(len(self._targets)))
        self._transport = httpx.AsyncHTTPTransport()

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        target = self._targets[next(self._turn)]
        request.url = request.url.copy_with(scheme=target.scheme, host=target.host, port=target.port)
        request.headers["host"] = target.netloc.decode("ascii")
        return await self._transport.handle_async_request(request)

    async def aclose(self) -> None:
        await self._transport.aclose()


InProcess = Callable[..., Awaitable[httpx.AsyncClient]]
"""The ``in_process`` fixture: ``await in_process(**overrides)``, a client of a sidecar with given settings."""
