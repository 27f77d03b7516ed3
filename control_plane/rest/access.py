"""The one enforcement point of access control: ``guard`` runs for every HTTP request before the sidecar
chooses between its short path (the pass-through) and Starlette's routes (``dispatch.SidecarApp.__call__``),
whatever the method, known or not.

In order: the request is classified (``rules.access.classify``, from the raw path as the worker reads it);
the principal is found (``Authorization``: Bearer or Basic; authentication off: an anonymous admin); probes
pass; no principal: 401 with ``WWW-Authenticate``; a principal limited to connector-name patterns gets
Connect's 404 for a connector it may not see (403 where the request would create it, or where it reaches
every connector); a role without the action: 403. Then the request goes on, with its answer rewritten
where needed: a listing filtered to the connectors the principal sees, configs masked below admin
(``rules.secrets``). Every mutating request (every method but GET, HEAD and OPTIONS) is audited when its
answer is sent, refused ones included. Errors are Connect's ``{"error_code", "message"}``.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import orjson
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ..access import Access
from ..composition import Runtime
from ..rules.access import ANONYMOUS_ADMIN, Action, Classified, Principal, Reach, Role, classify, filter_listing
from .errors import connect_error
from .jaxrs import raw_path
from .routes import route_template
from .state import RuntimeSlot

NOT_AUTHENTICATED = "User cannot access the resource."  # Connect's JaasBasicAuthFilter
_READ_ONLY = frozenset({"GET", "HEAD", "OPTIONS"})
_JAVA_TRIM = "".join(map(chr, range(33)))  # String.trim: every char up to U+0020


@dataclass(slots=True)
class Admitted:
    """What ``admit`` decided about a request that does not simply go on: its refusal, or the rewrite of
    its answer, or its audit (with the body as the app reads it)."""

    runtime: Runtime
    classified: Classified
    principal: Principal | None
    refusal: tuple[int, str] | None
    receive: Receive
    body: _Captured | None
    started: float


async def admit(slot: RuntimeSlot, scope: Scope, receive: Receive) -> Admitted | None:
    """The first half of ``guard``: None when the request goes on unchanged (nothing to refuse, rewrite or
    audit: the servers' short path then forwards it directly), else what ``enforce`` needs."""
    runtime = slot.runtime
    if runtime is None:  # outside the lifespan nothing but /healthz answers (500 otherwise)
        return None
    access, method = runtime.access, scope["method"]
    if access.credentials is None and method in _READ_ONLY:  # off: a read is an anonymous admin's, unaudited
        return None
    started = time.perf_counter()
    classified = classify(method, raw_path(scope))
    audited = method not in _READ_ONLY
    principal = await _principal(access, scope)
    body = _Captured(receive) if audited else None
    going_on = body.receive if body is not None else receive
    refusal: tuple[int, str] | None = None
    if classified.action is not Action.PROBE:
        if principal is None:
            refusal = (401, NOT_AUTHENTICATED)
        else:
            refusal, going_on = await _refusal(principal, classified, method, raw_path(scope), going_on)
    who = principal or Principal("anonymous", Role.VIEWER)
    if refusal is None and body is None and going_on is receive and _transform(who, classified, access) is None:
        return None
    return Admitted(runtime, classified, principal, refusal, going_on, body, started)


async def guard(slot: RuntimeSlot, scope: Scope, receive: Receive, send: Send, app: ASGIApp) -> None:
    """Admit, refuse or rewrite one HTTP request, and audit it (see the module's docstring)."""
    admitted = await admit(slot, scope, receive)
    if admitted is None:
        await app(scope, receive, send)
    else:
        await enforce(admitted, scope, send, app)


async def enforce(admitted: Admitted, scope: Scope, send: Send, app: ASGIApp) -> None:
    """The second half of ``guard``: the refusal sent, or the request passed on to ``app`` with its answer
    rewritten where needed; audited when it changes something."""
    runtime, classified, principal = admitted.runtime, admitted.classified, admitted.principal
    refusal, receive, started = admitted.refusal, admitted.receive, admitted.started
    access, method = runtime.access, scope["method"]
    status = 500
    try:
        if refusal is not None:
            status = refusal[0]
            await _refuse(access, refusal, scope, receive, send)
            runtime.metrics.observe(route_template(scope["path"]), method, status, time.perf_counter() - started)
            return
        assert principal is not None or classified.action is Action.PROBE
        who = principal or Principal("anonymous", Role.VIEWER)
        transform = _transform(who, classified, access)
        if transform is not None:  # an answer the sidecar rewrites must come unencoded
            scope = {**scope, "headers": [(n, v) for n, v in scope["headers"] if n.lower() != b"accept-encoding"]}
            send = _Rewriting(send, transform, method == "HEAD")

        async def observed(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        await app(scope, receive, observed)
    finally:
        if admitted.body is not None:
            _audit(runtime, scope, principal, classified, status, started, admitted.body, refused=refusal is not None)


async def _principal(access: Access, scope: Scope) -> Principal | None:
    if access.credentials is None:
        return ANONYMOUS_ADMIN
    authorization = next((value for name, value in scope["headers"] if name == b"authorization"), None)
    return await access.credentials.authenticate(None if authorization is None else authorization.decode("latin-1"))


async def _refusal(
    principal: Principal, classified: Classified, method: str, raw: bytes, receive: Receive
) -> tuple[tuple[int, str] | None, Receive]:
    """403 or 404 for what the principal may not do, or None; the receive to go on with (a body read to
    find the name of a connector to create is handed on)."""
    denied = (403, f"{principal.name} ({principal.role}) may not {method} {raw.decode('latin-1')}")
    if principal.limited:
        if classified.reach is Reach.CLUSTER:
            return denied, receive
        name = classified.connector
        if classified.reach is Reach.CONNECTOR and name is not None and not principal.sees(name):
            return (denied if classified.creates else (404, f"Connector {name} not found")), receive
        if classified.reach is Reach.CREATE:
            body, receive = await _read_body(receive)
            if not _may_create(principal, body):
                return denied, receive
    if not principal.may(classified.action):
        return denied, receive
    return None, receive


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


async def _refuse(access: Access, refusal: tuple[int, str], scope: Scope, receive: Receive, send: Send) -> None:
    status, message = refusal
    headers = None
    if status == 401:
        headers = {"www-authenticate": f'Bearer realm="{access.realm}"'}
    response = connect_error(status, message, headers)
    if status == 401:
        response.raw_headers.append((b"www-authenticate", f'Basic realm="{access.realm}", charset="UTF-8"'.encode()))
    await response(scope, receive, send)


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


class _Rewriting:
    """A ``send`` that holds a successful JSON answer back and sends it rewritten (``Content-Length`` set
    again); any other answer goes unchanged."""

    def __init__(self, send: Send, transform: Callable[[Any], Any], head: bool) -> None:
        self._send = send
        self._transform = transform
        self._head = head
        self._start: Message | None = None
        self._chunks: list[bytes] = []

    async def __call__(self, message: Message) -> None:
        if message["type"] == "http.response.start" and message["status"] == 200 and not self._head:
            self._start = message
            return
        if message["type"] != "http.response.body" or self._start is None:
            await self._send(message)
            return
        self._chunks.append(message.get("body", b""))
        if message.get("more_body", False):
            return
        body = b"".join(self._chunks)
        with contextlib.suppress(orjson.JSONDecodeError):  # not JSON: no config or listing to read
            body = orjson.dumps(self._transform(orjson.loads(body)))
        headers = [(n, v) for n, v in self._start["headers"] if n.lower() != b"content-length"]
        headers.append((b"content-length", str(len(body)).encode()))
        await self._send({**self._start, "headers": headers})
        await self._send({"type": "http.response.body", "body": body})


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
    scope: Scope,
    principal: Principal | None,
    classified: Classified,
    status: int,
    started: float,
    body: _Captured | None,
    *,
    refused: bool,
) -> None:
    client = scope.get("client")
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
        method=scope["method"],
        path=raw_path(scope).decode("latin-1"),
        query=bytes(scope.get("query_string", b"")).decode("latin-1"),
        connector=connector,
        status=status,
        duration_ms=(time.perf_counter() - started) * 1000,
        body=captured,
        refused=refused,
    )


Guard = Callable[[RuntimeSlot, Scope, Receive, Send, ASGIApp], Awaitable[None]]

__all__ = ["NOT_AUTHENTICATED", "Admitted", "Guard", "admit", "enforce", "guard"]
