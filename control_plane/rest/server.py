"""The sidecar's HTTP server protocol: uvicorn's httptools protocol, with the pass-through and the sidecar's
own Connect routes served below ASGI.

A request no route of the sidecar answers (``SidecarApp.passes_through``), or one for a Connect path the
sidecar answers itself (``SidecarApp.lean_route``), is served on the connection itself: no ASGI messages,
no middleware, one write of the answer. Every other request is uvicorn's as
before (the ASGI app, Starlette's routing and middleware). Both ways share the parsing (httptools), the
connection's keep-alive, pipelining, flow control, ``Expect: 100-continue``, graceful shutdown (the
request's task is one of the server's tasks) and TLS (the transport's), and the same code forwards
(``SidecarApp.pass_through``), so the worker gets the same bytes and the client the same answer bytes
(framed as uvicorn frames them: ``RequestResponseCycle.send``).

A request served below ASGI goes through the app's whole chain as any other (``SidecarApp.serve_collected``:
the request limits, the admission hook, access control, then the forward), with the answer collected
instead of sent as ASGI messages; each request meets every check once, whichever way it is served.

The fast path stands aside (the request goes through ASGI as any other) when the app is not a
``SidecarApp`` (behind anything but uvicorn's proxy-headers middleware), with uvicorn's access log on,
under ``limit_concurrency``'s 503, and for a request with ``X-Forwarded-*`` headers when uvicorn's proxy
headers are on (the ASGI scope's client and scheme are then the forwarded ones).

It relies on two methods of uvicorn's ``HttpToolsProtocol`` (``_start_asgi_task``) and on the state of its
``RequestResponseCycle``; ``available()`` says False (and the cli serves with plain ``httptools``) when the
installed uvicorn lacks them.
"""

from __future__ import annotations

import asyncio
import contextvars
from typing import Any

from uvicorn.middleware.proxy_headers import ProxyHeadersMiddleware
from uvicorn.protocols.http.httptools_impl import (
    HEADER_RE,
    HEADER_VALUE_RE,
    STATUS_LINE,
    HttpToolsProtocol,
    RequestResponseCycle,
)

from .dispatch import Reply, SidecarApp

Headers = list[tuple[bytes, bytes]]
# uvicorn's own Server and Date headers off: a worker's answer has its own, and the sidecar's own answers get
# the workers' Server and a Date (rest.stamp), as a worker's Jetty puts them on every answer
HEADER_OPTIONS: dict[str, Any] = {"server_header": False, "date_header": False}
ONE_WRITE = 64 * 1024  # an answer up to this size of body goes out in one write; a larger body is written on its own


def _noop() -> None:
    return None


def sidecar_app(app: Any) -> SidecarApp | None:
    """The ``SidecarApp`` uvicorn serves, seen through its proxy-headers middleware; None for another app."""
    while isinstance(app, ProxyHeadersMiddleware):
        app = app.app
    return app if isinstance(app, SidecarApp) else None


def available() -> bool:
    return hasattr(HttpToolsProtocol, "_start_asgi_task") and hasattr(RequestResponseCycle, "run_asgi")


class SidecarProtocol(HttpToolsProtocol):
    """uvicorn's ``httptools`` protocol; a request that passes through, or for a Connect route of the sidecar,
    is served here."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.sidecar = None if self.access_log else sidecar_app(self.app)
        self._forwarded_headers = bool(self.config.proxy_headers)

    def _start_asgi_task(self, cycle: RequestResponseCycle, app: Any) -> None:
        sidecar = self.sidecar
        scope: Any = cycle.scope
        if sidecar is None or app is not self.app or not sidecar.serves_below_asgi(scope) or self._forwarded(cycle):
            super()._start_asgi_task(cycle, app)
            return
        coro = self._serve(sidecar, cycle)
        if self.config.reset_contextvars:  # as uvicorn does
            task = self.loop.create_task(coro, context=contextvars.Context())
        else:
            task = self.loop.create_task(coro)
        task.add_done_callback(self.tasks.discard)
        self.tasks.add(task)

    def _forwarded(self, cycle: RequestResponseCycle) -> bool:
        return self._forwarded_headers and any(name.startswith(b"x-forwarded-") for name, _ in cycle.scope["headers"])

    async def _serve(self, sidecar: SidecarApp, cycle: RequestResponseCycle) -> None:
        """``RequestResponseCycle.run_asgi`` of a request served below ASGI: the app's whole chain (limits, the
        admission hook, access control: ``SidecarApp.serve_collected``), then the answer in one write."""
        scope: Any = cycle.scope
        try:
            reply, error = await sidecar.serve_collected(scope, cycle.receive)  # type: ignore[arg-type]
            if reply is not None:
                await self._answer(cycle, reply)
            if error is not None:
                raise error
            if reply is None:
                raise RuntimeError("ASGI callable returned without starting response.")
        except BaseException as exc:  # as run_asgi: logged, a 500 if nothing was sent, else the connection closed
            self.logger.error("Exception in ASGI application\n", exc_info=exc)
            if not cycle.response_started:
                await cycle.send_500_response()
            else:
                cycle.transport.close()
        finally:
            cycle.on_response = _noop

    async def _answer(self, cycle: RequestResponseCycle, reply: Reply) -> None:
        """``RequestResponseCycle.send`` of a whole answer (start and body) in one write: the same bytes."""
        if cycle.flow.write_paused and not cycle.disconnected:
            await cycle.flow.drain()
        if cycle.disconnected:
            return
        cycle.response_started = True
        cycle.waiting_for_100_continue = False
        status, body = reply.status, reply.body
        head_only = cycle.scope["method"] == "HEAD"
        content = [STATUS_LINE[status]]
        keep_alive = cycle.keep_alive
        has_close = False
        chunked: bool | None = None
        length = 0
        headers = [*cycle.default_headers, *reply.headers] if cycle.default_headers else reply.headers
        if self.sidecar is not None:  # the worker's Server and a Date where the answer has none (rest.stamp)
            headers = self.sidecar.stamped(headers)
        # uvicorn's checks of each name and value, each made once on them all: "!" is allowed in a name,
        # a tab in a value, so joined they hold a refused byte exactly when one of them does
        if HEADER_RE.search(b"!".join([name for name, _ in headers])):
            raise RuntimeError("Invalid HTTP header name.")
        if HEADER_VALUE_RE.search(b"\t".join([value for _, value in headers])):
            raise RuntimeError("Invalid HTTP header value.")
        for name, value in headers:
            name = name.lower()
            if name == b"content-length" and chunked is None:
                length = int(value.decode())
                chunked = False
            elif name == b"transfer-encoding" and value.lower() == b"chunked":
                length = 0
                chunked = True
            elif name == b"connection" and b"close" in [t.lower().strip() for t in value.split(b",")]:
                keep_alive = False
                has_close = True
            content += (name, b": ", value, b"\r\n")
        if not keep_alive and not has_close:
            content.append(b"connection: close\r\n")
        if chunked is None and not head_only and status not in (204, 304):
            chunked = True
            content.append(b"transfer-encoding: chunked\r\n")
        content.append(b"\r\n")
        tail: list[bytes] = []
        if head_only:
            pass
        elif chunked:
            if body:
                content.append(b"%x\r\n" % len(body))
                tail = [body, b"\r\n0\r\n\r\n"]
            else:
                content.append(b"0\r\n\r\n")
        elif len(body) != length:
            raise RuntimeError(f"Response content {'longer' if len(body) > length else 'shorter'} than Content-Length")
        else:
            tail = [body]
        cycle.keep_alive = keep_alive
        if tail and len(body) > ONE_WRITE:  # a large body is not copied into one buffer with the head
            cycle.transport.write(b"".join(content))
            for part in tail:
                cycle.transport.write(part)
        else:
            cycle.transport.write(b"".join(content + tail))
        cycle.response_complete = True
        cycle.message_event.set()
        if not keep_alive:
            cycle.transport.close()
        cycle.on_response()


def protocol() -> type[asyncio.Protocol] | str:
    """What the cli gives uvicorn as ``http``: this protocol, or plain ``httptools`` when it is not available."""
    return SidecarProtocol if available() else "httptools"


__all__ = ["HEADER_OPTIONS", "SidecarProtocol", "available", "protocol", "sidecar_app"]
