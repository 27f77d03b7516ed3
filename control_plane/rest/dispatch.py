"""One ASGI dispatch layer in front of Starlette: a request for a path that no route of the sidecar
answers goes straight to the pass-through, and one for a Connect path the sidecar answers itself goes
straight to its route; neither goes through Starlette's middleware and routing.

Starlette would send such a request through its error middleware, the metrics and runtime middleware
and a match against every route before it reaches the catch-all ``PassThrough`` or the route; that is most
of the sidecar's own cost on the proxied hop, and a quarter of it on a read the view answers. Which paths
the sidecar answers is read from the app's routes (every route but the catch-all), so a route added to
``app.ROUTES`` is served by Starlette as before; the Connect routes (``jaxrs.JerseyRoute``) lead the
routes, so the first of them that matches is the one Starlette's router would pick. What the short paths
do is what the long one does: the runtime in the scope, the route's refusals and endpoint, the answer
framing, log line, metric and error answers (``errors.EXCEPTION_HANDLERS``, looked up the way Starlette
looks them up). They stand aside (Starlette serves) when the app has middleware other than the ones whose
effect they have themselves (``lean_middleware``), a body limit or debug pages.

Every HTTP request meets, in this order and exactly once: the request limits (``rest.limits``), the
admission hook (``rest.admission``), access control (``rest.access.guard``), then either path. Under the
cli's server the short path runs below ASGI (``rest.server.SidecarProtocol`` calls ``passes_through`` and
``serve_collected``, which runs that same chain with the answer collected instead of sent as ASGI messages);
``__call__`` serves it for every other ASGI server (and in-process tests).
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from starlette.applications import Starlette
from starlette.requests import ClientDisconnect, Request
from starlette.responses import Response
from starlette.routing import Match, Route
from starlette.types import Message, Receive, Scope, Send

from ..metrics import Metrics
from ..upstream import REQUEST_DEADLINE, NoWorkerAvailable, UpstreamTimeout
from .access import Admitted, admit, enforce, guard
from .admission import Admission, Arrival, Denied, framed
from .errors import EXCEPTION_HANDLERS
from .jaxrs import JerseyRoute
from .limits import DEADLINE, SHUTTING_DOWN, RequestLimits, refusal
from .proxy import PassThrough, answer_headers, forward, log_level, upstream_request
from .routes import route_template
from .stamp import stamped
from .state import RuntimeSlot, current
from .unanswered import known_better, unanswered

Headers = list[tuple[bytes, bytes]]
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


@dataclass(slots=True)
class Reply:
    """The pass-through's answer: the worker's (headers framed for the client), or an error's. ``error``: an
    unexpected error, raised to the server once the answer is sent (as Starlette's ServerErrorMiddleware)."""

    status: int
    headers: Headers
    body: bytes
    error: Exception | None = None


def arrival_of(scope: Scope) -> Arrival:
    """What the admission hook sees of an ASGI request."""
    return Arrival(
        method=scope["method"],
        raw_path=scope.get("raw_path") or scope["path"].encode("latin-1"),
        query=scope.get("query_string", b""),
        headers=scope["headers"],
        client=scope.get("client"),
        scheme=scope.get("scheme", "http"),
    )


class SidecarApp(Starlette):
    def __init__(
        self,
        *args: Any,
        slot: RuntimeSlot,
        metrics: Metrics,
        limits: RequestLimits | None = None,
        admission: Admission | None = None,
        lean_middleware: tuple[Any, ...] = (),
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, **kwargs)
        self._lean_middleware = lean_middleware
        self._limits = limits
        self._slot = slot
        self._metrics = metrics
        self.admission = admission or Admission()
        self._own: re.Pattern[str] | None = None
        self._own_from: list[Any] | None = None
        self._templates: dict[str, str] = {}
        self._lean: dict[tuple[str, bytes | str], tuple[JerseyRoute, Scope] | None] = {}

    def _answers(self, path: str) -> bool:
        routes = self.router.routes
        if self._own_from is not routes or self._own is None:  # (re)compiled when the routes change
            self._own_from, self._own = routes, own_paths(routes)
            self._lean.clear()
            if self._own is None:
                return True
        return self._own.match(path) is not None

    def passes_through(self, scope: Scope) -> bool:
        """True for a request no route of the sidecar answers: it goes to the workers unchanged."""
        return scope["type"] == "http" and not scope.get("root_path") and not self._answers(scope["path"])

    def lean_route(self, scope: Scope) -> tuple[JerseyRoute, Scope] | None:
        """The Connect route of the sidecar that takes this request, and its match (the path parameters), when
        the request can be served without Starlette's middleware and routing (``answer``); else None."""
        if scope["type"] != "http" or scope.get("root_path") or self.debug:
            return None
        if getattr(self, "max_body_size", None) is not None:  # Starlette's body limit (1.10): its middleware
            return None
        if any(m.cls not in self._lean_middleware for m in self.user_middleware):
            return None
        key = (scope["method"], scope.get("raw_path") or scope["path"])  # what JerseyRoute.matches reads
        if key not in self._lean:
            if len(self._lean) >= 4096:  # paths hold connector names: keep the cache bounded
                self._lean.clear()
            self._lean[key] = self._lean_match(scope)
        return self._lean[key]

    def _lean_match(self, scope: Scope) -> tuple[JerseyRoute, Scope] | None:
        for route in self.router.routes:
            if not isinstance(route, JerseyRoute):  # the Connect routes lead: past them, Starlette's router decides
                return None
            match, child = route.matches(scope)
            if match is Match.FULL:
                return route, child
        return None

    def serves_below_asgi(self, scope: Scope) -> bool:
        """True for a request ``serve_collected`` serves on a short path: one that passes through, or one for a
        Connect route of the sidecar (``rest.server``)."""
        return self.passes_through(scope) or self.lean_route(scope) is not None

    def stamped(self, headers: Headers) -> Headers:
        """An answer's ``headers`` with the workers' ``Server`` and a ``Date`` where it has none: a worker's
        Jetty puts both on every answer (``rest.stamp``)."""
        runtime = self._slot.runtime
        return stamped(headers, runtime.upstream.server_header if runtime is not None else None)

    def _stamping(self, send: Send) -> Send:
        async def stamping(message: Message) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": self.stamped(list(message.get("headers", ())))}
            await send(message)

        return stamping

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":  # every answer as a worker's Jetty frames it (rest.stamp)
            send = self._stamping(send)
        if scope["type"] == "http" and self._limits is not None:  # the limits, on both paths (rest.limits)
            await self._limits(scope, receive, send, self._admit)
        else:
            await self._admit(scope, receive, send)

    async def serve_collected(self, scope: Scope, receive: Receive) -> tuple[Reply | None, BaseException | None]:
        """``__call__`` for a request the server found ``serves_below_asgi`` (``rest.server``): the same chain
        (limits, admission, access control, the forward or the route), with the answer collected rather than
        sent. The answer (None when none had begun) and the error raised after it, if any (the server logs
        it, or sends a 500). A request that goes on unchanged (no refusal, no rewrite, no audit: every read
        with access control off) is served without any ASGI message or wrapper."""
        limits = self._limits
        token = None
        if limits is not None:  # rest.limits, as RequestLimits.__call__
            refused, receive = limits.enter(scope, receive)
            if refused is not None:
                return Reply(refused[0], *refusal(*refused)), None
            token = REQUEST_DEADLINE.set(scope[DEADLINE])
        try:
            denied = None if self.admission.admits_everything else self.admission.admit(arrival_of(scope))
            if denied is not None:
                self.observe(scope, denied.status, 0.0)
                return Reply(denied.status, framed(denied), denied.body), None
            admitted = await admit(self._slot, scope, receive)
            if admitted is None:
                lean = None if self.passes_through(scope) else self.lean_route(scope)
                serving = self.pass_through(scope, receive) if lean is None else self.answer(*lean, scope, receive)
                reply = await serving
                return reply, reply.error
            return await self._collected(admitted, scope)
        except asyncio.CancelledError as exc:  # the server's grace period at shutdown ended (cli._serve)
            if limits is None:
                return None, exc
            return Reply(503, *refusal(503, SHUTTING_DOWN)), exc
        except BaseException as exc:  # noqa: BLE001 - handed to the server, as uvicorn
            return None, exc
        finally:
            if token is not None:
                REQUEST_DEADLINE.reset(token)

    async def _collected(self, admitted: Admitted, scope: Scope) -> tuple[Reply | None, BaseException | None]:
        """``access.enforce`` (a refusal, a rewritten answer, an audited request) with the answer collected."""
        return await _collect(lambda send: enforce(admitted, scope, send, self._route))

    async def _admit(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await super().__call__(scope, receive, send)
            return
        # the admission hook (rest.admission), then access control (rest.access): every request
        denied = None if self.admission.admits_everything else self.admission.admit(arrival_of(scope))
        if denied is not None:
            await self._deny(scope, send, denied)
        else:
            await guard(self._slot, scope, receive, send, self._route)

    async def _route(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self.passes_through(scope):
            await _send(send, await self.pass_through(scope, receive))
            return
        lean = self.lean_route(scope)
        if lean is None:
            await super().__call__(scope, receive, send)
        else:
            await _send(send, await self.answer(*lean, scope, receive))

    async def _deny(self, scope: Scope, send: Send, denied: Denied) -> None:
        await send({"type": "http.response.start", "status": denied.status, "headers": framed(denied)})
        await send({"type": "http.response.body", "body": denied.body})
        self.observe(scope, denied.status, 0.0)

    async def answer(self, route: JerseyRoute, match: Scope, scope: Scope, receive: Receive) -> Reply:
        """A request for a Connect route of the sidecar (``lean_route``), served as Starlette serves it: the
        runtime in the scope (``state.RuntimeScope``), the route's refusals then its endpoint
        (``JerseyRoute.handle``), an error's answer (``error_reply``); counted in the request metrics
        (``app.MetricsMiddleware``)."""
        started = time.perf_counter()
        scope["app"] = self
        scope.update(match)
        scope["path_params"] = dict(match["path_params"])  # the match is kept for the next request of the path
        scope.setdefault("state", {})["runtime"] = self._slot.runtime
        try:
            response = route.refusal(scope)
            if response is None:
                response = await route.endpoint(Request(scope, receive))
            reply = await _reply_of(response, scope, receive)
        except Exception as exc:  # noqa: BLE001 - every error has an answer (errors.EXCEPTION_HANDLERS)
            reply = await self.error_reply(scope, receive, exc)
        self.observe(scope, reply.status, time.perf_counter() - started)
        return reply

    async def error_reply(self, scope: Scope, receive: Receive, exc: Exception) -> Reply:
        """The answer of an error, from its handler (``errors.EXCEPTION_HANDLERS``, looked up the way Starlette's
        exception middleware looks it up); an unexpected one is also raised to the server once the answer is
        sent, as Starlette's ServerErrorMiddleware does."""
        handler = next((EXCEPTION_HANDLERS[c] for c in type(exc).__mro__ if c in EXCEPTION_HANDLERS), None)
        unexpected = handler is None or handler is EXCEPTION_HANDLERS[Exception]
        response = await (EXCEPTION_HANDLERS[Exception] if handler is None else handler)(Request(scope, receive), exc)
        return Reply(response.status_code, response.raw_headers, bytes(response.body), exc if unexpected else None)

    async def pass_through(self, scope: Scope, receive: Receive) -> Reply:
        """The request (its body read with ``receive``) forwarded to a worker: the worker's answer, framed
        for the client, or the answer of the error that prevented it (``errors.EXCEPTION_HANDLERS``, looked
        up the way Starlette looks them up). Counted in the request metrics."""
        started = time.perf_counter()
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
            body = chunks[0] if len(chunks) == 1 else b"".join(chunks)
            method = scope["method"]
            instead = known_better(runtime.herder, scope)  # a connector the sidecar stopped (rest.unanswered)
            if instead is None:
                try:
                    answer = await forward(runtime.herder, upstream_request(scope, body), log_level(runtime.settings))
                except (NoWorkerAvailable, UpstreamTimeout):  # a read with a view answer gets it (rest.unanswered)
                    instead = unanswered(runtime.herder, scope)
                    if instead is None:
                        raise
            reply = (
                Reply(answer.status, answer_headers(method, answer), answer.body)
                if instead is None
                else Reply(instead.status_code, instead.raw_headers, bytes(instead.body))
            )
        except Exception as exc:  # noqa: BLE001 - every error has an answer (errors.EXCEPTION_HANDLERS)
            reply = await self.error_reply(scope, receive, exc)
        self.observe(scope, reply.status, time.perf_counter() - started)
        return reply

    def observe(self, scope: Scope, status: int, elapsed_s: float) -> None:
        path = scope["path"]
        template = self._templates.get(path)
        if template is None:
            if len(self._templates) >= 4096:  # paths hold connector names: keep the cache bounded
                self._templates.clear()
            template = self._templates[path] = route_template(path)
        self._metrics.observe(template, scope["method"], status, elapsed_s)


async def _send(send: Send, reply: Reply) -> None:
    """A collected answer as ASGI messages; its error raised once it is sent."""
    await send({"type": "http.response.start", "status": reply.status, "headers": reply.headers})
    await send({"type": "http.response.body", "body": reply.body})
    if reply.error is not None:
        raise reply.error


async def _reply_of(response: Response, scope: Scope, receive: Receive) -> Reply:
    """A Starlette response's answer: read from it when it is a plain one (what every route gives), else
    collected from the messages it sends."""
    if type(response).__call__ is Response.__call__ and response.background is None:
        body = response.body  # a renderer's kept body (``outcomes.Serialized``) is not copied
        return Reply(response.status_code, response.raw_headers, body if isinstance(body, bytes) else bytes(body))
    reply, error = await _collect(lambda send: response(scope, receive, send))
    if error is not None:
        raise error
    if reply is None:
        raise RuntimeError("the response sent no answer")
    return reply


async def _collect(app: Callable[[Send], Awaitable[None]]) -> tuple[Reply | None, BaseException | None]:
    """The answer ``app`` sends (None when none had begun) and the error it raised, if any."""
    status: int | None = None
    headers: Headers = []
    chunks: list[bytes] = []

    async def collect(message: Any) -> None:
        nonlocal status, headers
        if message["type"] == "http.response.start":
            status, headers = message["status"], list(message.get("headers", ()))
        elif message["type"] == "http.response.body":
            chunks.append(message.get("body", b""))

    error: BaseException | None = None
    try:
        await app(collect)
    except asyncio.CancelledError:
        raise
    except BaseException as exc:  # noqa: BLE001 - handed to the server with the answer begun, as uvicorn
        error = exc
    if status is None:
        return None, error
    return Reply(status, headers, chunks[0] if len(chunks) == 1 else b"".join(chunks)), error


__all__ = ["Reply", "SidecarApp", "arrival_of", "own_paths"]
