"""Config history (``domain.config_history``): ``GET /_sidecar/connectors/{c}/history`` (every version kept,
newest first, each with its key-level diff; ``?limit=N&before=V``: a page), ``GET .../history/{version}``
(one, with its config), ``GET .../history/diff?from=V[&to=W]`` and ``POST .../history/{version}/rollback``
(optional body ``{"secrets": {"key": "value"}}``). Parse, one domain call, render."""

from __future__ import annotations

import orjson
from starlette.requests import Request
from starlette.responses import Response

from ...domain.config_history import ConfigHistory
from ...domain.errors import BadRequestError, Unsupported
from ..entities.responses import json_response, respond
from ..request.runtime import herder

NO_HISTORY = (
    "The config history needs the sidecars' topic (one sidecar of the cluster records it): this sidecar has "
    "no view or its fence is off (FENCE_ENABLED=false)"
)


def _history(request: Request) -> ConfigHistory:
    history = herder(request).history
    if history is None:
        raise Unsupported(NO_HISTORY)
    return history


def _version(text: str | None, what: str) -> int:
    if text is None or not text.isdigit():
        raise BadRequestError(f"{what} must be a number (a version of the connector's history), not {text!r}")
    return int(text)


async def history(request: Request) -> Response:
    query = request.query_params
    limit = _version(query["limit"], "limit") if "limit" in query else None
    before = _version(query["before"], "before") if "before" in query else None
    if limit == 0:
        raise BadRequestError("limit must be at least 1")
    return json_response(_history(request).history(request.path_params["connector"], limit=limit, before=before))


async def version(request: Request) -> Response:
    number = _version(request.path_params["version"], "The version")
    return json_response(_history(request).version(request.path_params["connector"], number))


async def diff(request: Request) -> Response:
    source = _version(request.query_params.get("from"), "from")
    to = request.query_params.get("to")
    target = _version(to, "to") if to is not None else None
    return json_response(_history(request).diff(request.path_params["connector"], source, target))


async def rollback(request: Request) -> Response:
    raw = await request.body()
    try:
        body = orjson.loads(raw) if raw.strip() else {}
    except orjson.JSONDecodeError:
        body = None
    secrets = body.get("secrets", {}) if isinstance(body, dict) else None
    if not isinstance(secrets, dict) or not all(isinstance(v, str) for v in secrets.values()):
        raise BadRequestError('The body must be empty or {"secrets": {"<key>": "<value>", ...}}')
    number = _version(request.path_params["version"], "The version")
    return await respond(request, await _history(request).rollback(request.path_params["connector"], number, secrets))
