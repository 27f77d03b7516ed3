"""One ASGI dispatch layer in front of Starlette: a request for a path that no route of the sidecar
answers goes straight to the pass-through, without Starlette's middleware and routing.

Starlette would send such a request through its error middleware, the metrics and runtime middleware
and a match against every route before it reaches the catch-all ``PassThrough``; that is most of the
sidecar's own cost on the proxied hop. Which paths the sidecar answers is read from the app's routes
(every route but the catch-all), so a route added to ``app.ROUTES`` is served by Starlette as before.
What the short path does is what the long one does: the same upstream request, answer framing, log line,
metric and error answers (``errors.EXCEPTION_HANDLERS``, looked up the way Starlette looks them up).
Access control (``access.guard``) runs first, for every HTTP request, before either path is chosen.
"""

from __future__ import annotations

import re
import time
from typing import Any

from starlette.applications import Starlette
from starlette.requests import ClientDisconnect, Request
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from ..metrics import Metrics
from .access import guard
from .errors import EXCEPTION_HANDLERS
from .jaxrs import JerseyRoute
from .limits import RequestLimits
from .proxy import PassThrough, answer_headers, forward, log_level, upstream_request
from .routes import route_template
from .state import RuntimeSlot, current

_NAMED_GROUP = re.compile(r"\(\?P<\w+>")


def own_paths(routes: list[Any]) -> re.Pattern[str] | None:
    """One pattern matching every path a route other than the catch-all matches; None when a route is
    not a plain ``Route`` (then every request goes through Starlette)."""
    patterns = []
    for route in routes:
        if isinstance(route, JerseyRoute):
            patterns.append(_jersey_pattern(route.path))
            continue
        if not isinstance(route, Route):
            return None
        if isinstance(route.endpoint, PassThrough):
            continue
        patterns.append(_NAMED_GROUP.sub("(?:", route.path_regex.pattern))
    return re.compile("|".join(f"(?:{p})" for p in patterns) or r"(?!)")


def _jersey_pattern(template: str) -> str:
    """A pattern of the decoded path at least as wide as ``JerseyRoute``'s match of the raw one: a
    parameter may hold anything (an encoded ``/`` decodes to more segments), a literal segment may carry
    matrix parameters, one trailing slash. Too wide only sends a request through Starlette's routing."""
    parts = []
    for segment in template.strip("/").split("/"):
        parts.append(".*" if segment.startswith("{") else re.escape(segment) + "(?:;[^/]*)?")
    return "(?s:/" + "/".join(parts) + "/?)$" if parts != [""] else "(?s:/*)$"


class SidecarApp(Starlette):
    def __init__(
        self, *args: Any, slot: RuntimeSlot, metrics: Metrics, limits: RequestLimits | None = None, **kwargs: Any
    ) -> None:
        super().__init__(*args, **kwargs)
        self._limits = limits
        self._slot = slot
        self._metrics = metrics
        self._own: re.Pattern[str] | None = None
        self._own_from: list[Any] | None = None

    def _answers(self, path: str) -> bool:
        routes = self.router.routes
        if self._own_from is not routes or self._own is None:  # (re)compiled when the routes change
            self._own_from, self._own = routes, own_paths(routes)
            if self._own is None:
                return True
        return self._own.match(path) is not None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and self._limits is not None:  # the limits, on both paths (rest.limits)
            await self._limits(scope, receive, send, self._admit)
        else:
            await self._admit(scope, receive, send)

    async def _admit(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":  # access control (rest.access): every request, before either path
            await guard(self._slot, scope, receive, send, self._route)
        else:
            await super().__call__(scope, receive, send)

    async def _route(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and not scope.get("root_path") and not self._answers(scope["path"]):
            await self._pass_through(scope, receive, send)
        else:
            await super().__call__(scope, receive, send)

    async def _pass_through(self, scope: Scope, receive: Receive, send: Send) -> None:
        started = time.perf_counter()
        status = 500
        responding = False
        try:
            runtime = current(self._slot)
            chunks: list[bytes] = []
            more = True
            while more:
                message = await receive()
                if message["type"] == "http.disconnect":  # as Request.body(): the client went away
                    raise ClientDisconnect()
                chunks.append(message.get("body", b""))
                more = message.get("more_body", False)
            body = b"".join(chunks)
            method = scope["method"]
            answer = await forward(runtime.herder, upstream_request(scope, body), log_level(runtime.settings))
            status = answer.status
            headers = answer_headers(method, answer)
            responding = True
            await send({"type": "http.response.start", "status": status, "headers": headers})
            await send({"type": "http.response.body", "body": answer.body})
        except Exception as exc:
            if responding:  # the answer has begun: nothing else can be sent (Starlette does the same)
                self._observe(scope, status, started)
                raise
            handler = next((EXCEPTION_HANDLERS[c] for c in type(exc).__mro__ if c in EXCEPTION_HANDLERS), None)
            if handler is None or handler is EXCEPTION_HANDLERS[Exception]:
                # as Starlette's ServerErrorMiddleware: the error answer, then the error goes on to the server
                response = await EXCEPTION_HANDLERS[Exception](Request(scope, receive), exc)
                self._observe(scope, 500, started)
                await response(scope, receive, send)
                raise
            response = await handler(Request(scope, receive), exc)
            status = response.status_code
            await response(scope, receive, send)
        self._observe(scope, status, started)

    def _observe(self, scope: Scope, status: int, started: float) -> None:
        self._metrics.observe(route_template(scope["path"]), scope["method"], status, time.perf_counter() - started)


__all__ = ["SidecarApp", "own_paths"]
