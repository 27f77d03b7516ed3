"""A bulk request (pure): the action, the selector, ``dry_run`` and the restart options, read from the
request's JSON; and, per connector, the single request the action stands for (its method, path and query),
which the access rules check as they would check that request sent on its own.

| action | the single request | carried out by |
|---|---|---|
| ``pause``, ``resume`` | ``PUT /connectors/{c}/pause``, ``.../resume`` | the worker (forwarded) |
| ``stop`` | ``PUT /connectors/{c}/stop`` | the worker (3.5+), else the sidecar (KIP-875) |
| ``restart`` | ``POST /connectors/{c}/restart?includeTasks=&onlyFailed=`` | the worker (3.0+), else composed |
| ``delete`` | ``DELETE /connectors/{c}`` | the worker (forwarded) |
| ``auto-restart-on``, ``-off`` | ``PUT /_sidecar/connectors/{c}/auto-restart`` | the sidecar's auto-restart |
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from ..errors import BadRequestError
from .selector import Selector, selector_of

PAUSE, RESUME, STOP, RESTART, DELETE = "pause", "resume", "stop", "restart", "delete"
AUTO_RESTART_ON, AUTO_RESTART_OFF = "auto-restart-on", "auto-restart-off"
ACTIONS = (PAUSE, RESUME, STOP, RESTART, DELETE, AUTO_RESTART_ON, AUTO_RESTART_OFF)
KEYS = frozenset({"action", "selector", "dry_run", "include_tasks", "only_failed"})


@dataclass(frozen=True)
class BulkRequest:
    action: str
    selector: Selector
    dry_run: bool = False
    include_tasks: bool = False  # restart: Connect's includeTasks
    only_failed: bool = False  # restart: Connect's onlyFailed


@dataclass(frozen=True)
class SingleRequest:
    """The request one connector's action stands for: what the access rules classify and, where the workers
    do the action, what is forwarded to them."""

    method: str
    path: str  # percent-encoded, as a client sends it
    query: bytes = b""


def request_of(body: Any) -> BulkRequest:
    """The bulk request of a JSON body; a ``BadRequestError`` naming what is wrong."""
    if not isinstance(body, dict):
        raise BadRequestError('The body must be {"action": "pause", "selector": {...}, "dry_run": false}')
    unknown = sorted(set(body) - KEYS)
    if unknown:
        raise BadRequestError(f"Unknown key(s) {', '.join(unknown)}: expected {', '.join(sorted(KEYS))}")
    action = body.get("action")
    if action not in ACTIONS:
        raise BadRequestError(f"Unknown action {action!r}: expected one of {', '.join(ACTIONS)}")
    flags = {key: body.get(key, False) for key in ("dry_run", "include_tasks", "only_failed")}
    for key, value in flags.items():
        if not isinstance(value, bool):
            raise BadRequestError(f"{key} must be true or false")
    if action != RESTART and (flags["include_tasks"] or flags["only_failed"]):
        raise BadRequestError("include_tasks and only_failed are options of the restart action")
    if "selector" not in body:
        raise BadRequestError("The body names no selector")
    return BulkRequest(action, selector_of(body["selector"]), **flags)


def single_request(request: BulkRequest, connector: str) -> SingleRequest:
    """The single request ``request``'s action stands for on ``connector``."""
    name = quote(connector, safe="")
    if request.action in (AUTO_RESTART_ON, AUTO_RESTART_OFF):
        return SingleRequest("PUT", f"/_sidecar/connectors/{name}/auto-restart")
    if request.action == DELETE:
        return SingleRequest("DELETE", f"/connectors/{name}")
    if request.action == RESTART:
        query = f"includeTasks={str(request.include_tasks).lower()}&onlyFailed={str(request.only_failed).lower()}"
        return SingleRequest("POST", f"/connectors/{name}/restart", query.encode())
    return SingleRequest("PUT", f"/connectors/{name}/{request.action}")


__all__ = [
    "ACTIONS",
    "AUTO_RESTART_OFF",
    "AUTO_RESTART_ON",
    "DELETE",
    "PAUSE",
    "RESTART",
    "RESUME",
    "STOP",
    "BulkRequest",
    "SingleRequest",
    "request_of",
    "single_request",
]
