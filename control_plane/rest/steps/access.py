"""Access control, a step of every request (``rest.serving.pipeline``; ``AccessControl`` is the step), after the
request limits and the admission hook, whatever the method, known or not.

In order: the request is classified (``rules.access.classify``, from the raw path as the worker reads it);
the principal is found (``Authorization``: Bearer or Basic; authentication off: an anonymous admin); probes
pass; no principal: 401 with ``WWW-Authenticate``; a principal limited to connector-name patterns gets
Connect's 404 for a connector it may not see (403 where the request would create it, or where it reaches
every connector); a role without the action: 403. Then the request goes on, with its answer rewritten
where needed: a listing filtered to the connectors the principal sees, configs masked below admin
(``rules.secrets``). Every mutating request (every method but GET, HEAD and OPTIONS) is audited once its
answer is known, refused ones included. Errors are Connect's ``{"error_code", "message"}``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import time
from collections.abc import Awaitable, Callable
from typing import Any

import orjson
from starlette.types import Message, Receive

from ...access import Access
from ...composition import Runtime
from ...domain.history import AUTHOR
from ...rules.access import (
    ANONYMOUS_ADMIN,
    Action,
    Classified,
    Principal,
    Reach,
    Role,
    classify,
    filter_listing,
)
from ...rules.access import (
    refusal as refused_by_rules,
)
from ..errors import connect_error
from ..request.exchange import Exchange, HttpReply
from ..request.principal import PRINCIPAL
from ..request.runtime import RuntimeSlot
from ..routing.router import RouteTarget
from .step import Endpoint

NOT_AUTHENTICATED = "User cannot access the resource."  # Connect's JaasBasicAuthFilter
_READ_ONLY = frozenset({"GET", "HEAD", "OPTIONS"})
_JAVA_TRIM = "".join(map(chr, range(33)))  # String.trim: every char up to U+0020

Next = Callable[[Exchange], Awaitable[HttpReply]]


class AccessControl:
    def __init__(self, slot: RuntimeSlot) -> None:
        self._slot = slot

    async def __call__(self, exchange: Exchange, target: RouteTarget, then: Endpoint) -> HttpReply:
        """Admit, refuse or rewrite one request, and audit it (see the module's docstring); ``then`` serves
        what is admitted."""
        runtime = self._slot.runtime
        if runtime is None:  # outside the lifespan nothing but /healthz answers (500 otherwise)
            return await then(exchange, target)
        access, method = runtime.access, exchange.method
        if access.credentials is None and method in _READ_ONLY:  # off: a read is an anonymous admin's, unaudited
            return await then(exchange, target)
        started = time.perf_counter()
        classified = classify(method, exchange.raw_path)
        captured = _Captured(exchange.receive) if method not in _READ_ONLY else None
        if captured is not None:
            exchange.receive = captured.receive
        principal = await _principal(access, exchange)
        refusal: tuple[int, str] | None = None
        if classified.action is not Action.PROBE:
            if principal is None:
                refusal = (401, NOT_AUTHENTICATED)
            else:
                refusal, exchange.receive = await _refusal(principal, classified, exchange, exchange.receive)
        status = 500
        try:
            if refusal is not None:
                reply = _refused(access, refusal)
            else:
                who = principal or Principal("anonymous", Role.VIEWER)
                author = AUTHOR.set(who.name) if captured is not None else None  # a write: the history names who
                serving = PRINCIPAL.set(who)
                try:
                    transform = _transform(who, classified, access)
                    reply = await _transformed(exchange, transform, lambda admitted: then(admitted, target))
                finally:
                    PRINCIPAL.reset(serving)
                    if author is not None:
                        AUTHOR.reset(author)
            status = reply.status
            return reply
        finally:
            if captured is not None:
                _audit(runtime, exchange, principal, classified, status, started, captured, refused=refusal is not None)


async def _transformed(exchange: Exchange, transform: Callable[[Any], Any] | None, then: Next) -> HttpReply:
    """The answer ``then`` gives, a successful JSON one rewritten by ``transform`` (``Content-Length`` set
    again); an answer the sidecar rewrites must come unencoded."""
    if transform is None:
        return await then(exchange)
    headers = [(n, v) for n, v in exchange.headers if n != b"accept-encoding"]
    reply = await then(dataclasses.replace(exchange, headers=headers))
    if reply.status != 200 or exchange.method == "HEAD":
        return reply
    body = reply.body
    with contextlib.suppress(orjson.JSONDecodeError):  # not JSON: no config or listing to read
        # a view's answer is kept serialized (``responses.Serialized``, a bytes subclass orjson refuses as such)
        body = orjson.dumps(transform(orjson.loads(memoryview(body))))
    headers = [(n, v) for n, v in reply.headers if n.lower() != b"content-length"]
    headers.append((b"content-length", str(len(body)).encode()))
    return HttpReply(reply.status, headers, body)


async def _principal(access: Access, exchange: Exchange) -> Principal | None:
    if access.credentials is None:
        return ANONYMOUS_ADMIN
    authorization = next((value for name, value in exchange.headers if name == b"authorization"), None)
    return await access.credentials.authenticate(None if authorization is None else authorization.decode("latin-1"))


async def _refusal(
    principal: Principal, classified: Classified, exchange: Exchange, receive: Receive
) -> tuple[tuple[int, str] | None, Receive]:
    """403 or 404 for what the principal may not do (``rules.access.refusal``), or None; the receive to go on
    with (a body read to find the name of a connector to create is handed on)."""
    method, raw = exchange.method, exchange.raw_path.decode("latin-1")
    if principal.limited and classified.reach is Reach.CREATE:
        body, receive = await _read_body(receive)
        if not _may_create(principal, body):
            return (403, f"{principal.name} ({principal.role}) may not {method} {raw}"), receive
    return refused_by_rules(principal, classified, method, raw), receive


def _may_create(principal: Principal, body: bytes) -> bool:
    """POST /connectors by a limited principal: the name in the body (as Connect trims it) must be one it
    sees; a body without a readable name is refused (the worker might read it otherwise)."""
    try:
        name = orjson.loads(body).get("name")
    except (orjson.JSONDecodeError, AttributeError):
        return False
    return isinstance(name, str) and principal.sees(name) and principal.sees(name.strip(_JAVA_TRIM))


async def _read_body(receive: Receive) -> tuple[bytes, Receive]:
    messages: list[Message] = []
    while True:
        message = await receive()
        messages.append(message)
        if message["type"] != "http.request" or not message.get("more_body", False):
            break
    body = b"".join(m.get("body", b"") for m in messages if m["type"] == "http.request")

    async def replay() -> Message:
        return messages.pop(0) if messages else await receive()

    return body, replay


def _refused(access: Access, refusal: tuple[int, str]) -> HttpReply:
    status, message = refusal
    headers = None
    if status == 401:
        headers = {"www-authenticate": f'Bearer realm="{access.realm}"'}
    response = connect_error(status, message, headers)
    if status == 401:
        response.raw_headers.append((b"www-authenticate", f'Basic realm="{access.realm}", charset="UTF-8"'.encode()))
    return HttpReply(status, response.raw_headers, bytes(response.body))


def _transform(principal: Principal, classified: Classified, access: Access) -> Callable[[Any], Any] | None:
    listing = classified.listing if principal.limited else None
    masks = classified.configs and principal.role is not Role.ADMIN
    if listing is None and not masks:
        return None

    def transform(data: Any) -> Any:
        if listing is not None:
            data = filter_listing(listing, data, principal)
        return access.secrets.mask_deep(data) if masks else data

    return transform


class _Captured:
    """The request's body as the app reads it, kept (up to what the audit copies) for the audit line."""

    def __init__(self, receive: Receive) -> None:
        self._receive = receive
        self.chunks: list[bytes] = []
        self.size = 0

    async def receive(self) -> Message:
        message = await self._receive()
        if message["type"] == "http.request":
            chunk = message.get("body", b"")
            self.size += len(chunk)
            if self.size <= 1 << 20:
                self.chunks.append(chunk)
        return message


def _audit(
    runtime: Runtime,
    exchange: Exchange,
    principal: Principal | None,
    classified: Classified,
    status: int,
    started: float,
    body: _Captured | None,
    *,
    refused: bool,
) -> None:
    client = exchange.client
    captured = b"".join(body.chunks) if body is not None and body.size <= 1 << 20 else None
    connector = classified.connector
    if classified.reach is Reach.CREATE and captured:
        try:
            named = orjson.loads(captured).get("name")
            connector = named if isinstance(named, str) else None
        except (orjson.JSONDecodeError, AttributeError):
            pass
    runtime.access.audit.record(
        who=principal.name if principal else "unauthenticated",
        role=principal.role.value if principal else None,
        client=client[0] if client else None,
        method=exchange.method,
        path=exchange.raw_path.decode("latin-1"),
        query=exchange.query.decode("latin-1"),
        connector=connector,
        status=status,
        duration_ms=(time.perf_counter() - started) * 1000,
        body=captured,
        refused=refused,
    )


__all__ = ["NOT_AUTHENTICATED", "AccessControl"]
