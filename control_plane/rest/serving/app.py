"""The application: the request pipeline (``pipeline``) and the lifespan that runs the composition root
(``control_plane.composition.running``) and hands its typed ``Runtime`` to the handlers.

``SidecarApp`` is served by the sidecar's own server (``server``, what ``control-plane serve`` runs), which calls
the pipeline directly, or as an ASGI app by any ASGI server or transport (the unit tests drive it with
``httpx.ASGITransport``): both only translate between their connection and the same pipeline.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

from starlette.types import Message, Receive, Scope, Send

from ...composition import Runtime, running
from ...metrics import Metrics
from ...settings import Settings
from ...storage.record_producer import RecordProducer
from ...upstream import Transport
from ..request.exchange import Exchange, HttpReply
from ..request.runtime import RuntimeSlot
from ..steps.admission import Admission, checks_for
from ..steps.limits import RequestLimits
from .pipeline import Pipeline


class SidecarApp:
    def __init__(
        self,
        settings: Settings,
        *,
        transport: Transport | None = None,
        status_producer: RecordProducer | None = None,
        slot: RuntimeSlot | None = None,
        admission: Admission | None = None,
    ) -> None:
        self.settings = settings
        self.metrics = Metrics()
        self.slot = slot or RuntimeSlot()
        self._transport = transport
        self._status_producer = status_producer
        limits = RequestLimits(settings.max_header_bytes, settings.max_body_bytes, settings.request_budget_s)
        self.pipeline = Pipeline(
            slot=self.slot,
            metrics=self.metrics,
            limits=limits,
            admission=admission or Admission(checks_for(settings)),
        )

    @contextlib.asynccontextmanager
    async def lifespan(self) -> AsyncIterator[Runtime]:
        """The composition root running (started in order, stopped in reverse), its runtime in the slot."""
        async with running(
            self.settings, self.metrics, transport=self._transport, status_producer=self._status_producer
        ) as runtime:
            self.slot.runtime = runtime
            try:
                yield runtime
            finally:
                self.slot.runtime = None

    # -- ASGI ---------------------------------------------------------------------------------------------
    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan_messages(receive, send)
            return
        if scope["type"] != "http":  # no Connect endpoint is a WebSocket
            await send({"type": "websocket.close", "code": 1000})
            return
        raw = scope.get("raw_path") or scope["path"].encode()
        exchange = Exchange(
            method=scope["method"],
            raw_path=raw.split(b"?", 1)[0],
            query=scope.get("query_string", b""),
            headers=list(scope["headers"]),
            receive=receive,
            path=scope["path"],
            client=scope.get("client"),
            scheme=scope.get("scheme", "http"),
            http_version=scope.get("http_version", "1.1"),
            server=scope.get("server"),
        )
        try:
            reply = await self.pipeline.serve(exchange)
        except asyncio.CancelledError:  # the server's grace period at shutdown ended
            with contextlib.suppress(Exception):  # refused by the server when the answer has begun
                await _send(send, self.pipeline.cut_short())
            raise
        await _send(send, reply)

    async def _lifespan_messages(self, receive: Receive, send: Send) -> None:
        """ASGI's lifespan protocol around ``lifespan``."""
        await receive()  # lifespan.startup
        started = False
        try:
            async with self.lifespan():
                started = True
                await send({"type": "lifespan.startup.complete"})
                await receive()  # lifespan.shutdown
        except Exception as exc:
            failed = "lifespan.shutdown.failed" if started else "lifespan.startup.failed"
            await send({"type": failed, "message": repr(exc)})
            raise
        await send({"type": "lifespan.shutdown.complete"})


async def _send(send: Send, reply: HttpReply) -> None:
    start: Message = {"type": "http.response.start", "status": reply.status, "headers": reply.headers}
    await send(start)
    await send({"type": "http.response.body", "body": reply.body})


def create_app(
    settings: Settings,
    *,
    transport: Transport | None = None,
    status_producer: RecordProducer | None = None,
    slot: RuntimeSlot | None = None,
    admission: Admission | None = None,
) -> SidecarApp:
    """The sidecar. ``transport`` and ``status_producer`` put fakes under the real upstream client and status
    writer; ``slot`` shows the running ``Runtime`` to the caller (tests); ``admission``: the admission hook
    (``rest.steps.admission``; by default the checks the settings ask for)."""
    return SidecarApp(settings, transport=transport, status_producer=status_producer, slot=slot, admission=admission)


__all__ = ["SidecarApp", "create_app"]
