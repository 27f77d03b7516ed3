"""The sidecar's HTTP/1.1 server: a listener whose connections (``connection``) parse each request with
``httptools`` and hand it to the app's pipeline (``pipeline``).

``HttpServer.stop`` is the graceful shutdown: stop accepting, close the idle connections, let the requests
under way finish for a grace period, then cancel them (each gets the pipeline's 503 in Connect's shape,
``Pipeline.cut_short``). ``serve`` runs it all for ``control-plane serve``: the app's lifespan (the composition
root) around the server, until SIGTERM or SIGINT.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import ssl
from typing import Any

import structlog

from .app import SidecarApp
from .connection import Connection

log = structlog.get_logger(__name__)

# an idle keep-alive connection is closed after this long: the worker's own (Connect's RestServer leaves its
# Jetty ServerConnector at Jetty's default idle timeout, 30 s). A client pool reuses a connection for a few
# seconds (httpx: 5 s): a server that closes sooner than that, or as soon, races the client's next request
# on it, which then fails (a read error, nothing retried)
KEEP_ALIVE_S = 30.0


class HttpServer:
    """The sidecar's listener. ``requests_served`` counts the requests answered (or ended)."""

    def __init__(
        self, app: SidecarApp, *, ssl_context: ssl.SSLContext | None = None, keep_alive_s: float = KEEP_ALIVE_S
    ) -> None:
        self.pipeline = app.pipeline
        self.keep_alive_s = keep_alive_s
        self.loop = asyncio.get_running_loop()
        self.connections: set[Connection] = set()
        self.requests_served = 0
        self._ssl = ssl_context
        self._tasks: set[asyncio.Task[None]] = set()
        self._server: asyncio.Server | None = None
        self._drained = asyncio.Event()

    async def start(self, host: str = "127.0.0.1", port: int = 0, *, sock: Any = None) -> None:
        """Listen on ``host:port`` (or on the bound socket ``sock``)."""
        if sock is not None:
            self._server = await self.loop.create_server(
                lambda: Connection(self), sock=sock, ssl=self._ssl, backlog=2048
            )
        else:
            self._server = await self.loop.create_server(
                lambda: Connection(self), host=host, port=port, ssl=self._ssl, backlog=2048
            )

    @property
    def port(self) -> int:
        assert self._server is not None
        return int(self._server.sockets[0].getsockname()[1])

    def track(self, task: asyncio.Task[None]) -> None:
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def lost(self, connection: Connection) -> None:
        self.connections.discard(connection)
        if not self.connections:
            self._drained.set()

    async def stop(self, grace_s: float) -> None:
        """Stop accepting; close the idle connections; let the requests under way finish for ``grace_s``,
        then cancel them (each answered 503 in Connect's shape, ``Pipeline.cut_short``)."""
        if self._server is not None:
            self._server.close()
        for connection in list(self.connections):
            connection.shutdown()
        if self.connections:
            self._drained.clear()
            log.info("waiting for the requests under way", requests=len(self._tasks), grace_s=grace_s)
            try:
                await asyncio.wait_for(self._drained.wait(), grace_s)
            except TimeoutError:
                log.warning(
                    "cancelling the requests still under way: the grace period ended", requests=len(self._tasks)
                )
                for task in list(self._tasks):
                    task.cancel()
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)
        if self._server is not None:
            await self._server.wait_closed()


async def serve(
    app: SidecarApp,
    *,
    host: str,
    port: int,
    grace_s: float,
    ssl_context: ssl.SSLContext | None = None,
    stop: asyncio.Event | None = None,
) -> None:
    """``control-plane serve``: the app's lifespan (the composition root: started in order, stopped in reverse)
    around the server, until SIGTERM or SIGINT (or ``stop``); then the graceful shutdown (``HttpServer.stop``)
    before the lifespan stops."""
    loop = asyncio.get_running_loop()
    stop = stop or asyncio.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    try:
        async with app.lifespan():
            server = HttpServer(app, ssl_context=ssl_context)
            await server.start(host, port)
            log.info("serving", url=f"{'https' if ssl_context else 'http'}://{host}:{server.port}")
            await stop.wait()
            log.info("Shutting down", grace_s=grace_s)
            await server.stop(grace_s)
    finally:
        for sig in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(Exception):
                loop.remove_signal_handler(sig)


__all__ = ["KEEP_ALIVE_S", "HttpServer", "serve"]
